package io.ringshift.publisher.internal;

import io.ringshift.ring.Member;
import io.ringshift.ring.RingRange;
import io.ringshift.ring.RingSnapshot;
import io.ringshift.protocol.EpochRecords;
import io.ringshift.protocol.AvroBytes;
import io.ringshift.protocol.CodecException;
import io.ringshift.protocol.FillingRange;
import io.ringshift.protocol.PublishedSnapshot;
import io.ringshift.protocol.RingSnapshotCodec;
import io.ringshift.protocol.SigningKey;
import io.ringshift.schemas.avro.EpochRecord;
import io.ringshift.schemas.avro.EpochState;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.function.IntFunction;
import java.util.function.Supplier;
import java.util.stream.Collectors;

/**
 * Decides what to do with one READY epoch record, given what the cluster has published and the epoch's tasks.
 * Pure: no Kafka, no clock (the time is passed in), no I/O; {@link PublisherState} feeds it.
 *
 * <p>Design. The checks run in the order of {@link Check}, cheapest and most fundamental first, and the first
 * that fails decides the reason. The sequence comes first because a replayed READY of an epoch already published
 * with the same ring is not a failure at all: it is ignored, and nothing is written (idempotent replay). The
 * completeness checks are the safety argument of the whole protocol: a client reads from the replicas of the
 * published ring that carry no filling mark, so every replica of the ring that is not complete must be marked, and
 * only those. What is complete is tracked epoch by epoch, per (range, node) ({@link Completeness}): a replica of
 * epoch k is complete when it was a complete replica in epoch k-1, or a VERIFIED copy or repair task of epoch k
 * filled it. A mark on a complete replica would keep clients off a good copy until the next epoch, and a missing
 * one would send them to an incomplete one. (It used to be measured against the last published ring with no marks,
 * which let a marked epoch bring back a node that an earlier failure epoch removed, unmarked: it was a replica in
 * that ring, so nothing counted as added, though it had missed every write since.) Tasks must copy from complete
 * replicas. Ranges are compared as sets of ring positions, since diffs, coalesced tasks
 * and coalesced marks cut the ring at different places. Reasons name ranges in unsigned decimal, as filling marks
 * and ring diffs print them.
 *
 * <p>The checks that read the tasks do not reject at first sight: they answer {@link Verdict.NotYet}, because the
 * tasks the publisher has read may lag behind the READY record (Kafka commits a transaction partition by
 * partition, so the tombstones of a superseded plan's tasks can become readable after the READY record written in
 * the same transaction). The caller reads the control topics again and decides again, and rejects only when its
 * patience is spent ({@link DecisionQueue}). Every other check depends on the record and the published history
 * alone, which a second look cannot change, and rejects at once.
 *
 * <p>Marks are allowed only on a ring with at least R zones: with fewer, removing a node can move other surviving
 * replicas out of a range (docs/placement.md, section 7). Such a survivor misses the writes of the failure epoch,
 * and since it was a replica of that range in the last complete ring, a later epoch that gives the range back to
 * it adds nothing the marks would cover: it would be read as complete. The orchestrator publishes a failure
 * epoch at once only when the ring keeps R zones; this check is the defence in depth.
 */
public final class EpochCheck {
  /** At most this many offending items are named in a reason; the count says how many there are. */
  static final int NAMED = 3;

  private EpochCheck() {}

  /**
   * What the cluster has published, as the checks need it.
   *
   * @param publishedChecksums checksum of every epoch the cluster has published, by epoch; empty if none
   * @param lastEpoch the last published epoch, -1 if none
   * @param lastChecksum its checksum, null if none
   * @param lastPublished the last published epoch's record (its membership, parameters and filling marks); null if
   *     none
   * @param lastPublishedRing rebuilds {@code lastPublished} (and may keep the ring); throws {@link CodecException}
   *     when it does not rebuild
   * @param highestRejected the highest epoch of the cluster a REJECTED record names, -1 if none: after a rejection
   *     the orchestrator rolls back and plans again under numbers above it, which are never the rejected ones
   * @param highestReverted the highest epoch of the cluster a REVERTED record names, -1 if none: clients saw a stage
   *     of it, so its number is never published with any ring
   * @param dead the numbers REJECTED, CANCELLED and REVERTED records name, in order: an epoch after the last
   *     published one follows it when a number between them is dead (the orchestrator rolled back and planned again
   *     above it; the chain check still ties the epoch to the last published one)
   */
  public record History(Map<Long, byte[]> publishedChecksums, long lastEpoch, byte[] lastChecksum,
      EpochRecord lastPublished, Supplier<RingSnapshot> lastPublishedRing, long highestRejected,
      long highestReverted, java.util.NavigableSet<Long> dead) {
    /** A cluster that has published nothing. */
    public static History none() {
      return new History(Map.of(), -1, null, null, () -> null, -1, -1, java.util.Collections.emptyNavigableSet());
    }

    /**
     * Whether a number strictly between the last published epoch and {@code epoch} is dead: the orchestrator never
     * uses such a number again, and plans (or has planned) the next epoch above it. Not only above the highest: an
     * epoch staged while a later plan, chained to it, is cancelled or rejected is still the next to publish.
     */
    boolean deadBetween(long epoch) {
      Long first = firstDead();
      return first != null && first < epoch;
    }

    /** The lowest dead number above the last published epoch, or null. */
    Long firstDead() {
      return dead.higher(lastEpoch);
    }

    boolean any() {
      return lastChecksum != null;
    }
  }

  /**
   * The verdict on {@code ready}: {@link Verdict.Publish}, {@link Verdict.Ignore}, {@link Verdict.Reject} for a
   * check that reads no tasks, {@link Verdict.NotYet} for one that does.
   *
   * @param tasks the live COPY and REPAIR tasks of the record's cluster and epoch, with their latest statuses, as
   *     read from {@code ring.tasks} and {@code ring.task-status} after the record
   * @param nowMillis the time for the written record's {@code timestampMillis}
   * @throws IllegalArgumentException when {@code ready} is not a READY record
   */
  public static Verdict decide(EpochRecord ready, History history, List<TaskBook.Entry> tasks, SigningKey key,
      long nowMillis) {
    if (ready.getState() != EpochState.READY) {
      throw new IllegalArgumentException("only READY records are decided; this one is " + ready.getState());
    }
    long epoch = ready.getEpoch();
    RingCheck checked = checkRing(ready, history, nowMillis);
    if (checked.verdict() != null) {
      return checked.verdict();
    }
    RingSnapshot ring = checked.ring();

    // TASKS.
    List<TaskBook.Entry> unverified = tasks.stream().filter(t -> !t.verified()).toList();
    if (!unverified.isEmpty()) {
      return notYet(ready, nowMillis, Check.TASKS, "%d of the %d COPY/REPAIR tasks of epoch %d are not VERIFIED on "
          + "ring.task-status: %s", unverified.size(), tasks.size(), epoch, name(unverified.stream()
          .map(t -> t.task().getTaskId() + " (" + t.stateName() + ")").toList()));
    }
    if (ready.getDiffSummary() != null && ready.getDiffSummary().getTasks() != tasks.size()) {
      return notYet(ready, nowMillis, Check.TASKS, "ring.tasks holds %d live COPY/REPAIR tasks of epoch %d, but "
          + "its diffSummary.tasks is %d", tasks.size(), epoch, ready.getDiffSummary().getTasks());
    }

    // SOURCES, ADDITIONS and FILLING.
    List<FillingRange> filling;
    PublishedSnapshot unsigned;
    try {
      filling = RingSnapshotCodec.fromAvro(ready.getFilling());
      unsigned = PublishedSnapshot.unsigned(ring, history.lastChecksum(), filling);
    } catch (CodecException e) {
      return reject(ready, nowMillis, Check.FILLING, "epoch %d: %s", epoch, e.getMessage());
    }
    Verdict completeness = checkCompleteness(ready, ring, history, tasks, filling, nowMillis);
    if (completeness != null) {
      return completeness;
    }

    PublishedSnapshot signed = unsigned.signedBy(key);
    EpochRecord published = EpochRecord.newBuilder(ready)
        .setState(EpochState.PUBLISHED)
        .setSignature(ByteBuffer.wrap(signed.signature()))
        .setSigningKeyId(signed.signingKeyId())
        .setTimestampMillis(nowMillis)
        .build();
    return new Verdict.Publish(signed, published);
  }


  /** A record's ring, rebuilt and checked, or the verdict of the first check it fails. */
  record RingCheck(RingSnapshot ring, Verdict verdict) {}

  /**
   * The checks that need the record and the published history alone: SEQUENCE, CHAIN, REBUILD, CHECKSUM and
   * PLACEMENT, for a READY record and for the PLANNED record of a change published in stages.
   */
  static RingCheck checkRing(EpochRecord ready, History history, long nowMillis) {
    String cluster = ready.getClusterId();
    long epoch = ready.getEpoch();
    byte[] target = AvroBytes.toArray(ready.getTargetChecksum());
    byte[] previous = AvroBytes.toArray(ready.getPreviousChecksum());

    // SEQUENCE and CHAIN.
    if (history.any()) {
      long last = history.lastEpoch();
      if (epoch <= last) {
        byte[] published = history.publishedChecksums().get(epoch);
        if (published != null && Arrays.equals(published, target)) {
          return new RingCheck(null, new Verdict.Ignore("epoch " + epoch + " of cluster " + cluster + " is already "
              + "published with this ring (checksum " + AvroBytes.hex(target) + ")"));
        }
        return failed(ready, nowMillis, Check.SEQUENCE, "epoch %d is older than the last published epoch %d of "
            + "cluster %s, and %s; only epoch %d can be published next", epoch, last, cluster, published == null
            ? "was never published" : "was published with checksum " + AvroBytes.hex(published) + ", not "
            + AvroBytes.hex(target), last + 1);
      }
      if (epoch <= history.highestReverted()) {
        return failed(ready, nowMillis, Check.SEQUENCE, "a stage of epoch %d of cluster %s was published and reverted "
            + "(the highest reverted epoch is %d); readers saw that number with another ring, so it is never published, "
            + "and only an epoch above it can be", epoch, cluster, history.highestReverted());
      }
      boolean afterRollback = history.deadBetween(epoch);
      if (epoch != last + 1 && !afterRollback) {
        return failed(ready, nowMillis, Check.SEQUENCE, "epoch %d does not follow the last published epoch %d of "
            + "cluster %s; published epochs are consecutive (numbers of rejected and cancelled epochs aside), so only "
            + "epoch %d can be published next%s", epoch, last, cluster, last + 1, history.firstDead() != null
            ? ", or an epoch above the rejected or cancelled epoch " + history.firstDead() : "");
      }
      if (!Arrays.equals(previous, history.lastChecksum())) {
        return failed(ready, nowMillis, Check.CHAIN, "epoch %d names previousChecksum %s, but the last published "
            + "epoch %d of cluster %s has checksum %s", epoch, AvroBytes.hex(previous), last, cluster,
            AvroBytes.hex(history.lastChecksum()));
      }
    } else if (previous != null) {
      return failed(ready, nowMillis, Check.CHAIN, "epoch %d would be the first published epoch of cluster %s, so "
          + "its previousChecksum must be null; it names %s", epoch, cluster, AvroBytes.hex(previous));
    }

    // REBUILD and CHECKSUM.
    RingSnapshot ring;
    try {
      ring = EpochRecords.rebuild(ready);
    } catch (CodecException e) {
      return failed(ready, nowMillis, Check.REBUILD, "the membership and parameters of epoch %d do not rebuild to "
          + "a ring: %s", epoch, e.getMessage());
    }
    if (!Arrays.equals(ring.checksum(), target)) {
      return failed(ready, nowMillis, Check.CHECKSUM, "the membership and parameters of epoch %d rebuild to "
          + "checksum %s, but the record's targetChecksum is %s", epoch, ring.checksumHex(), AvroBytes.hex(target));
    }

    // PLACEMENT.
    String misplaced = placementViolation(ring);
    if (misplaced != null) {
      return failed(ready, nowMillis, Check.PLACEMENT, "epoch %d: %s", epoch, misplaced);
    }

    return new RingCheck(ring, null);
  }

  private static RingCheck failed(EpochRecord ready, long nowMillis, Check check, String format, Object... args) {
    return new RingCheck(null, reject(ready, nowMillis, check, format, args));
  }

  /**
   * The SOURCES, ADDITIONS and FILLING checks, on what is complete epoch by epoch ({@link Completeness}); null when
   * all pass.
   */
  private static Verdict checkCompleteness(EpochRecord ready, RingSnapshot ring, History history,
      List<TaskBook.Entry> tasks, List<FillingRange> filling, long nowMillis) {
    long epoch = ready.getEpoch();
    RingSnapshot previous = null;
    List<FillingRange> previousMarks = List.of();
    if (history.lastPublished() != null) {
      try {
        previous = history.lastPublishedRing().get();
        previousMarks = RingSnapshotCodec.fromAvro(history.lastPublished().getFilling());
      } catch (CodecException e) {
        return reject(ready, nowMillis, Check.REBUILD, "the last published epoch %d, against which epoch %d's "
            + "complete replicas are found, does not rebuild: %s", history.lastPublished().getEpoch(), epoch,
            e.getMessage());
      }
    }
    Completeness.Result found = Completeness.check(previous, previousMarks, ring, filling,
        tasks.stream().map(TaskBook.Entry::task).toList());
    String before = previous == null ? "(the cluster's first published epoch: it holds no data yet, so every "
        + "replica is complete)" : "in the published epoch " + history.lastPublished().getEpoch();

    if (!found.incompleteSources().isEmpty()) {
      return notYet(ready, nowMillis, Check.SOURCES, "%d task source(s) of epoch %d were no complete replica of "
          + "their task's range %s; a task may copy only from a complete replica, or it copies the gaps of one "
          + "still filling: %s", found.incompleteSources().size(), epoch, before, name(found.incompleteSources()
          .stream().map(f -> f.node() + " for task " + f.detail() + " (first incomplete position "
              + Long.toUnsignedString(f.firstPosition()) + ")").toList()));
    }
    if (!found.unmarked().isEmpty()) {
      return notYet(ready, nowMillis, Check.ADDITIONS, "epoch %d gives %d replica range(s) that are not complete "
          + "(no complete replica %s, and no VERIFIED COPY/REPAIR task of epoch %d filled them) and that no filling "
          + "mark covers: %s", epoch, found.unmarked().size(), before, epoch, name(found.unmarked().stream().map(f -> f.node() + " on " + decimal(f.range())
              + " (first uncovered position " + Long.toUnsignedString(f.firstPosition()) + ")").toList()));
    }

    // Marks only on a ring with at least R zones.
    if (!filling.isEmpty() && ring.zones().size() < ring.replicas()) {
      return reject(ready, nowMillis, Check.FILLING, "epoch %d carries %d filling mark(s), but its ring has %d "
          + "zone(s) %s for R = %d replicas; marks need at least R zones, because with fewer a removal can move "
          + "surviving replicas out of a range, which would miss the epoch's writes and later be read as complete",
          epoch, filling.size(), ring.zones().size(), ring.zones(), ring.replicas());
    }
    if (!found.marksOnComplete().isEmpty()) {
      return reject(ready, nowMillis, Check.FILLING, "%d filling mark(s) of epoch %d name pairs that are no "
          + "replica of its ring or were complete replicas %s; only a replica that is not complete can be marked: "
          + "%s", found.marksOnComplete().size(), epoch, before, name(found.marksOnComplete().stream()
              .map(f -> f.detail() + " (position " + Long.toUnsignedString(f.firstPosition()) + ")").toList()));
    }
    if (!found.marksOnFilled().isEmpty()) {
      return notYet(ready, nowMillis, Check.FILLING, "%d filling mark(s) of epoch %d cover replicas that a VERIFIED "
          + "task of the epoch filled; marks must be exactly the replicas that are not complete: %s",
          found.marksOnFilled().size(), epoch, name(found.marksOnFilled().stream()
              .map(f -> new FillingRange(f.range().start(), f.range().end(), f.node()) + " (VERIFIED task "
                  + f.detail() + ")").toList()));
    }
    return null;
  }

  /** The first placement rule a range of {@code ring} breaks, or null. */
  static String placementViolation(RingSnapshot ring) {
    return placementViolation(ring.tokenCount(), r -> RingRange.of(ring.rangeStart(r), ring.rangeEnd(r)),
        r -> ring.replicasOfRange(r).members(), ring.replicasPerRange(), ring.zones().size() >= ring.replicas());
  }

  /**
   * The first placement rule a range breaks, or null: each range has {@code expected} replicas, all distinct
   * nodes, and when {@code distinctZones} all in distinct zones. Checked range by range rather than trusted to
   * the ring library, whose output is what is being checked.
   */
  static String placementViolation(int ranges, IntFunction<RingRange> range, IntFunction<List<Member>> replicas,
      int expected, boolean distinctZones) {
    for (int r = 0; r < ranges; r++) {
      List<Member> set = replicas.apply(r);
      List<String> ids = set.stream().map(Member::id).toList();
      if (set.size() != expected) {
        return String.format(Locale.ROOT, "range %s has %d replicas %s; it must have min(R, nodes) = %d",
            decimal(range.apply(r)), set.size(), ids, expected);
      }
      if (new HashSet<>(ids).size() != ids.size()) {
        return String.format(Locale.ROOT, "range %s names a node twice among its replicas %s; replicas must be "
            + "distinct nodes", decimal(range.apply(r)), ids);
      }
      if (distinctZones) {
        Set<String> zones = new HashSet<>();
        for (Member m : set) {
          if (!zones.add(m.zone())) {
            return String.format(Locale.ROOT, "range %s places two of its replicas %s in zone %s; the ring has at "
                + "least R zones, so replicas must be in distinct zones", decimal(range.apply(r)), ids, m.zone());
          }
        }
      }
    }
    return null;
  }

  private static RingRange taskRange(TaskBook.Entry t) {
    return RingRange.of(t.task().getRangeStart(), t.task().getRangeEnd());
  }

  /** {@code (start, end]} in unsigned decimal, the form of the reasons the publisher has always written. */
  static String decimal(RingRange range) {
    return "(" + Long.toUnsignedString(range.start()) + ", " + Long.toUnsignedString(range.end()) + "]";
  }

  /** A failed check on the tasks: not final until the caller has read them again ({@link Verdict.NotYet}). */
  private static Verdict.NotYet notYet(EpochRecord ready, long nowMillis, Check check, String format,
      Object... args) {
    return new Verdict.NotYet(reject(ready, nowMillis, check, format, args));
  }

  private static Verdict.Reject reject(EpochRecord ready, long nowMillis, Check check, String format,
      Object... args) {
    String reason = check.name() + ": " + String.format(Locale.ROOT, format, args);
    EpochRecord rejected = EpochRecord.newBuilder(ready)
        .setState(EpochState.REJECTED)
        .setReason(reason)
        .setSignature(null)
        .setSigningKeyId(null)
        .setTimestampMillis(nowMillis)
        .build();
    return new Verdict.Reject(check, rejected);
  }

  /** The first {@link #NAMED} items, and how many more. */
  private static String name(List<String> items) {
    String named = items.stream().limit(NAMED).collect(Collectors.joining(", "));
    return items.size() > NAMED ? named + " and " + (items.size() - NAMED) + " more" : named;
  }
}
