package io.ringshift.simulation.internal;

import io.ringshift.protocol.AvroBytes;
import io.ringshift.protocol.EpochRecords;
import io.ringshift.protocol.RecordSerdes;
import io.ringshift.ring.Member;
import io.ringshift.ring.RingRange;
import io.ringshift.ring.RingSnapshot;
import io.ringshift.schemas.avro.EpochRecord;
import io.ringshift.schemas.avro.EpochState;
import io.ringshift.schemas.avro.MembershipAction;
import io.ringshift.schemas.avro.MembershipEvent;
import io.ringshift.schemas.avro.RangeCopyTask;
import io.ringshift.schemas.avro.RejectedEvent;
import io.ringshift.schemas.avro.TaskStatus;
import io.ringshift.storage.Entry;
import io.ringshift.storage.Fence;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * The protocol's invariants, checked as the world runs (after every step that could break one) and at the end of a
 * scenario: no acknowledged write lost, no stale read, no old copy deleted before its grace period, the last copy of a
 * value never deleted, every published snapshot accepted by every reader and published once, every epoch ended, no
 * fence of an epoch that can no longer be published, every accepted request with an outcome. The first violation stops
 * the scenario.
 */
final class Invariants {
  private final World w;
  private String violation;
  private long violationStep;
  /** The next value number of each key, and the acknowledged ones: (number, epoch) in order. */
  private final Map<String, Integer> nextIndex = new HashMap<>();
  private final Map<String, List<long[]>> acks = new LinkedHashMap<>();
  private final List<String> written = new ArrayList<>();
  /** Published rings by epoch, and when the checks saw each published. */
  private final TreeMap<Long, RingSnapshot> published = new TreeMap<>();
  private final Map<Long, byte[]> publishedChecksums = new HashMap<>();
  private final Map<Long, Long> publishedAt = new HashMap<>();
  private final Map<Long, Boolean> publishedWithMarks = new HashMap<>();
  /** Each published epoch's filling marks: replicas placed but not read from. */
  private final Map<Long, List<io.ringshift.protocol.FillingRange>> marks = new HashMap<>();
  private final SimKafka.Reader epochs;
  /** Epochs whose last cutover record is STAGED, and the highest stage a CONVERGED record of each named. */
  private final Set<Long> staged = new HashSet<>();
  private final Map<Long, Integer> converged = new HashMap<>();

  Invariants(World w) {
    this.w = w;
    this.epochs = w.kafka.reader().assignAll(World.EPOCHS);
    w.kafka.onVisible(World.EPOCHS, this::readEpochs);
    SimKafka.Reader rejects = w.kafka.reader().assignAll(World.REJECTED);
    w.kafka.onVisible(World.REJECTED, () -> rejects.readToEnd(r -> {
      RejectedEvent e = RecordSerdes.rejectedEvent().deserialize(r.value);
      w.trace.note(w.loop.now(), "ring.rejected: request " + e.getRequestId() + ": " + e.getReason());
    }));
    if (w.taskRecords) {
      SimKafka.Reader tasks = w.kafka.reader().assignAll(World.TASKS);
      w.kafka.onVisible(World.TASKS, () -> tasks.observeToEnd(r -> {
        RangeCopyTask t = r.value == null ? null : RecordSerdes.rangeCopyTask().deserialize(r.value);
        w.trace.note(w.loop.now(), "tasks: " + r.key + (t == null ? " deleted" : " " + t.getKind() + " "
            + t.getSources() + " -> " + t.getTarget() + (t.getFenceRequested() ? " fence" : "")));
      }));
      SimKafka.Reader statuses = w.kafka.reader().assignAll(World.STATUS);
      w.kafka.onVisible(World.STATUS, () -> statuses.observeToEnd(r -> {
        TaskStatus t = r.value == null ? null : RecordSerdes.taskStatus().deserialize(r.value);
        w.trace.note(w.loop.now(), "status: " + r.key + (t == null ? " deleted" : " " + t.getState() + " by "
            + t.getWorkerId() + (t.getBlockedReason() == null ? "" : ": " + t.getBlockedReason())
            + (t.getError() == null ? "" : ": " + t.getError())));
      }));
    }
  }

  void violation(String what) {
    if (violation == null) {
      violation = what;
      violationStep = w.loop.steps();
      w.trace.note(w.loop.now(), "VIOLATION " + what);
    }
  }

  String violation() {
    return violation;
  }

  long violationStep() {
    return violationStep;
  }

  // ---- publications

  private void readEpochs() {
    epochs.readToEnd(r -> {
      EpochRecord e = World.epochOf(r);
      if (e == null) {
        return;
      }
      w.trace.note(w.loop.now(), "ring.epochs: " + e.getState() + " epoch " + e.getEpoch() + " plan "
          + e.getPlanVersion() + (e.getCause() == null ? "" : " cause " + e.getCause().getAction() + " "
              + e.getCause().getNodeId()) + (e.getReason() == null ? "" : ": " + e.getReason()));
      switch (e.getState()) {
        case STAGED -> staged.add(e.getEpoch());
        case FENCE_CUTOVER, REVERTED -> staged.remove(e.getEpoch());
        case CONVERGED -> converged.merge(e.getEpoch(), e.getStage() == null ? 0 : e.getStage(), Math::max);
        default -> {
        }
      }
      if (e.getState() != EpochState.PUBLISHED) {
        return;
      }
      byte[] checksum = AvroBytes.toArray(e.getTargetChecksum());
      byte[] known = publishedChecksums.get(e.getEpoch());
      if (known != null) {
        if (!Arrays.equals(known, checksum)) {
          violation("epoch " + e.getEpoch() + " was published twice, with different rings");
        }
        return;
      }
      if (!published.isEmpty() && e.getEpoch() < published.lastKey()) {
        violation("epoch " + e.getEpoch() + " was published after epoch " + published.lastKey());
      }
      publishedChecksums.put(e.getEpoch(), checksum);
      published.put(e.getEpoch(), EpochRecords.rebuild(e));
      publishedAt.put(e.getEpoch(), w.loop.now());
      publishedWithMarks.put(e.getEpoch(), e.getFilling() != null && !e.getFilling().isEmpty());
      marks.put(e.getEpoch(), e.getFilling() == null ? List.of()
          : io.ringshift.protocol.RingSnapshotCodec.fromAvro(e.getFilling()));
      w.count("epochs published");
    });
  }

  /**
   * Whether a client write refused by a fence of {@code epoch} now is one transition stages exist to spare: the epoch
   * is staged and its participants have not all reached stage 1 yet, so the writer may still route by the previous
   * ring. A copy fences only after CONVERGED 1 once it knows the epoch is staged; a fence before that was taken
   * before the worker knew how the epoch is cut over.
   */
  boolean refusedBeforeStage1(long epoch) {
    return staged.contains(epoch) && converged.getOrDefault(epoch, 0) < 1;
  }

  RingSnapshot latestPublishedRing() {
    return published.isEmpty() ? null : published.lastEntry().getValue();
  }

  /** Whether the last published epoch carries filling marks (a failure epoch whose repair is not published). */
  boolean lastPublishedHasMarks() {
    return !published.isEmpty() && publishedWithMarks.getOrDefault(published.lastKey(), false);
  }

  long publishedAt(long epoch) {
    return publishedAt.getOrDefault(epoch, -1L);
  }

  // ---- writes and reads

  int nextIndex(String key) {
    int i = nextIndex.merge(key, 1, Integer::sum);
    if (i == 1) {
      written.add(key);
    }
    return i;
  }

  void acknowledged(String key, int index, long epoch) {
    acks.computeIfAbsent(key, k -> new ArrayList<>()).add(new long[] {index, epoch, w.loop.now()});
  }

  String anyWrittenKey() {
    return written.isEmpty() ? null : written.get(w.random.nextInt(written.size()));
  }

  /** The last acknowledged value number of {@code key} among writes acknowledged at an epoch up to {@code epoch}. */
  private long lastAcked(String key, long epoch) {
    long last = 0;
    for (long[] a : acks.getOrDefault(key, List.of())) {
      if (a[1] <= epoch) {
        last = Math.max(last, a[0]);
      }
    }
    return last;
  }

  /** The last value number of {@code key} acknowledged before {@code time}, at any epoch. */
  private long lastAckedBefore(String key, long time) {
    long last = 0;
    for (long[] a : acks.getOrDefault(key, List.of())) {
      if (a[2] < time) {
        last = Math.max(last, a[0]);
      }
    }
    return last;
  }

  static long indexOf(String value) {
    if (value == null) {
      return 0;
    }
    return Long.parseLong(value.substring(value.lastIndexOf('|') + 1));
  }

  /**
   * A read of {@code key} from {@code replica}, which the client's ring of {@code epoch} offers as readable: it must
   * return every write acknowledged at that epoch or an earlier one (docs/architecture.md, invariant 8).
   */
  void read(String client, String key, String replica, long epoch, long startedAt, String value, boolean inStage) {
    long got = indexOf(value);
    if (inStage) {
      // In a transition stage, with its lease held, the reader is within one stage of every live writer, and neighbouring
      // stages are safe together: it sees every write acknowledged before it started, at any epoch.
      long before = lastAckedBefore(key, startedAt);
      if (got < before) {
        violation("stale read in a transition stage: " + client + " routing by epoch " + epoch + " read " + key
            + " from " + replica + " as value #" + got + ", but #" + before + " was acknowledged before the read, at "
            + "epoch " + ackEpoch(key, before));
        return;
      }
      w.count("reads in a transition stage");
    }
    long want = lastAcked(key, epoch);
    if (got < want) {
      violation("stale read: " + client + " routing by epoch " + epoch + " read " + key + " from " + replica
          + " as value #" + got + ", but #" + want + " was acknowledged at epoch " + ackEpoch(key, want));
    }
  }

  private long ackEpoch(String key, long index) {
    for (long[] a : acks.getOrDefault(key, List.of())) {
      if (a[0] == index) {
        return a[1];
      }
    }
    return -1;
  }

  // ---- deletes

  /**
   * {@code node} deleted {@code before} (what it held in {@code range}) for epoch {@code epoch}. Nothing of an epoch
   * already published may be deleted from a node that the latest published ring makes a replica; a cleanup
   * ({@code byCleanup}) may delete only what the node stopped replicating at least the grace period ago; and nothing
   * may delete the last copy of an acknowledged value.
   */
  void deleted(String node, RingRange range, long epoch, List<Entry> before, boolean byCleanup) {
    if (published.isEmpty()) {
      return;
    }
    long latest = published.lastKey();
    if (epoch <= latest) {
      Long replicaAt = null;
      for (Long e : published.descendingKeySet()) {
        if (replicates(published.get(e), marks.getOrDefault(e, List.of()), node, range)) {
          replicaAt = e;
          break;
        }
      }
      if (replicaAt != null && replicaAt == latest) {
        violation("a cleanup of epoch " + epoch + " deleted " + before.size() + " keys of " + range + " from " + node
            + ", which replicates part of it in the latest published epoch " + latest + " ("
            + describe(published.get(latest), node, range) + "; the node routes by epoch "
            + (w.nodes.get(node).router == null ? -1 : w.nodes.get(node).router.epoch()) + ")");
      } else if (replicaAt != null) {
        long left = published.higherKey(replicaAt);
        long since = w.loop.now() - publishedAt.get(left);
        // A node declared failed is written off: the grace period keeps the old copies of nodes that leave in order.
        // Once a published epoch after the copy's left it out and the node was failed, what it held then is gone (a
        // copy of a plan superseded by the FAIL may clear it a moment later; after a new JOIN, a copy to it clears it).
        boolean writtenOff = w.everFailed.contains(node) && published.tailMap(replicaAt, false).values().stream()
            .anyMatch(ring -> ring.member(node) == null);
        // A copy clearing its target (a node joining again) is no cleanup: it clears what the node held before it
        // left, as it does before the copy's epoch is published (docs/worker.md, "COPY and REPAIR").
        if (since < w.scenario.graceMillis() && !writtenOff && byCleanup) {
          violation("a cleanup of epoch " + epoch + " deleted " + before.size() + " keys of " + range + " from " + node
              + " " + since + " ms after epoch " + left + ", which took the range from it, was published; the grace "
              + "period is " + w.scenario.graceMillis() + " ms");
        }
      }
    }
    for (Entry e : before) {
      String key = new String(e.key(), StandardCharsets.UTF_8);
      long want = lastAcked(key, Long.MAX_VALUE);
      if (want == 0 || indexOf(new String(e.value(), StandardCharsets.UTF_8)) < want) {
        continue;
      }
      boolean elsewhere = false;
      for (SimNode other : w.nodes.values()) {
        if (!other.id.equals(node) && other.state != null) {
          byte[] v = other.state.get(e.key()).orElse(null);
          if (v != null && indexOf(new String(v, StandardCharsets.UTF_8)) >= want) {
            elsewhere = true;
            break;
          }
        }
      }
      if (!elsewhere) {
        violation(node + " deleted the last copy of " + key + " #" + want + " (epoch " + epoch + ", " + range + ")");
        return;
      }
    }
  }

  private static String describe(RingSnapshot ring, String node, RingRange range) {
    StringBuilder out = new StringBuilder();
    for (int r = 0; r < ring.tokenCount(); r++) {
      boolean empty = ring.rangeStart(r) == ring.rangeEnd(r) && ring.tokenCount() > 1;
      RingRange of = RingRange.of(ring.rangeStart(r), ring.rangeEnd(r));
      if (!empty && ring.replicasOfRange(r).contains(node) && of.intersects(range)) {
        out.append(of).append(" -> ").append(ring.replicasOfRange(r).ids()).append(' ');
      }
    }
    return out.toString().trim();
  }

  /**
   * Whether {@code node} is a readable replica of some position of {@code range} in {@code ring}: a replica whose
   * (range, node) no filling mark covers. A filling replica holds nothing clients read, so deleting it is no loss.
   */
  private static boolean replicates(RingSnapshot ring, List<io.ringshift.protocol.FillingRange> marks, String node,
      RingRange range) {
    if (ring.member(node) == null) {
      return false;
    }
    List<RingRange> marked = marks.stream().filter(m -> m.node().equals(node)).map(m -> m.range()).toList();
    for (int r = 0; r < ring.tokenCount(); r++) {
      boolean empty = ring.rangeStart(r) == ring.rangeEnd(r) && ring.tokenCount() > 1;
      RingRange of = RingRange.of(ring.rangeStart(r), ring.rangeEnd(r));
      if (empty || !ring.replicasOfRange(r).contains(node) || !of.intersects(range)) {
        continue;
      }
      // The positions both ranges share: readable unless marks cover them all.
      for (RingRange part : overlap(of, range)) {
        if (marked.isEmpty() || part.firstGap(marked).isPresent()) {
          return true;
        }
      }
    }
    return false;
  }

  /** The positions {@code a} and {@code b} share, as ranges. */
  private static List<RingRange> overlap(RingRange a, RingRange b) {
    List<RingRange> out = new ArrayList<>();
    java.util.TreeSet<Long> cuts = new java.util.TreeSet<>(Long::compareUnsigned);
    for (long p : new long[] {a.start(), a.end(), b.start(), b.end()}) {
      cuts.add(p);
    }
    List<Long> points = new ArrayList<>(cuts);
    for (int i = 0; i < points.size(); i++) {
      long start = points.get(i == 0 ? points.size() - 1 : i - 1);
      long end = points.get(i);
      if (a.contains(end) && b.contains(end)) {
        out.add(points.size() == 1 ? RingRange.of(start, start) : RingRange.of(start, end));
      }
    }
    return out;
  }

  // ---- the end

  /** The checks of a world gone quiet: every epoch ended, fences, outcomes, data. */
  void atTheEnd() {
    if (violation != null) {
      return;
    }
    readEpochs();
    List<EpochRecord> records = new ArrayList<>();
    for (SimKafka.Rec r : w.kafka.committed(World.EPOCHS)) {
      EpochRecord e = World.epochOf(r);
      if (e != null && World.CLUSTER.equals(e.getClusterId())) {
        records.add(e);
      }
    }
    epochsEnded(records);
    if (violation != null) {
      return;
    }
    fences(records);
    if (violation != null) {
      return;
    }
    outcomes(records);
    if (violation != null) {
      return;
    }
    data();
  }

  /** Every plan ended PUBLISHED, REJECTED, CANCELLED or SUPERSEDED, and every READY was answered. */
  private void epochsEnded(List<EpochRecord> records) {
    Map<String, EpochState> plans = new LinkedHashMap<>();
    Map<Long, Boolean> readyAnswered = new LinkedHashMap<>();
    for (EpochRecord e : records) {
      String plan = e.getEpoch() + "/" + e.getPlanVersion();
      switch (e.getState()) {
        case PLANNED -> plans.putIfAbsent(plan, EpochState.PLANNED);
        case READY -> {
          plans.put(plan, EpochState.READY);
          readyAnswered.put(e.getEpoch(), false);
        }
        case SUPERSEDED, CANCELLED -> plans.put(plan, e.getState());
        case PUBLISHED, REJECTED -> {
          readyAnswered.put(e.getEpoch(), true);
          plans.replaceAll((p, s) -> p.startsWith(e.getEpoch() + "/") && s == EpochState.READY ? e.getState() : s);
        }
        default -> { }
      }
    }
    plans.forEach((plan, state) -> {
      if (state == EpochState.PLANNED) {
        violation("epoch/plan " + plan + " never ended: still PLANNED " + (w.scenario.quietMillis() / 1000)
            + " s after the last fault (a wedge)");
      }
    });
    readyAnswered.forEach((epoch, answered) -> {
      if (!answered) {
        violation("READY epoch " + epoch + " was never published or rejected");
      }
    });
    RingSnapshot last = latestPublishedRing();
    if (last != null && publishedWithMarks.getOrDefault(last.epoch(), false)) {
      violation("the last published epoch " + last.epoch() + " still has filling marks: its repair was never "
          + "published");
    }
  }

  /** No node keeps a fence of an epoch that is not published and can no longer be (nothing is in flight now). */
  private void fences(List<EpochRecord> records) {
    long latest = published.isEmpty() ? -1 : published.lastKey();
    for (SimNode node : w.nodes.values()) {
      if (node.state == null) {
        continue;
      }
      for (Fence f : node.state.fences()) {
        if (f.epoch() > latest || (!publishedAt.containsKey(f.epoch()) && f.epoch() <= latest
            && endedUnpublished(records, f.epoch()))) {
          violation(node.id + " keeps a fence of " + f.range() + " at epoch " + f.epoch() + ", which was never "
              + "published and no longer can be (latest published " + latest + "): writes of the active epoch to "
              + "that range are refused for good");
          return;
        }
      }
    }
  }

  private static boolean endedUnpublished(List<EpochRecord> records, long epoch) {
    for (EpochRecord e : records) {
      if (e.getEpoch() == epoch && (e.getState() == EpochState.CANCELLED || e.getState() == EpochState.REJECTED)) {
        return true;
      }
    }
    return false;
  }

  /**
   * Every request an operator or a health manager sent ended with an outcome its requester can see: refused (a
   * record on ring.rejected with its request id), carried out (the last published membership shows it, or a later
   * request of the same node superseded it), or cancelled (a CANCEL of its node, later, was carried out). A CANCEL
   * itself is carried out (a CANCELLED record names it) or refused.
   */
  private void outcomes(List<EpochRecord> records) {
    Set<String> refused = new HashSet<>();
    for (SimKafka.Rec r : w.kafka.committed(World.REJECTED)) {
      RejectedEvent rejected = RecordSerdes.rejectedEvent().deserialize(r.value);
      if (rejected.getRequestId() != null) {
        refused.add(rejected.getRequestId());
      }
    }
    Set<String> cancelledBy = new HashSet<>();
    List<MembershipEvent> cancels = new ArrayList<>();
    for (EpochRecord e : records) {
      if (e.getState() == EpochState.CANCELLED && e.getCause() != null) {
        cancelledBy.add(e.getCause().getRequestId());
        cancels.add(e.getCause());
      }
    }
    List<MembershipEvent> sent = new ArrayList<>();
    for (SimKafka.Rec r : w.kafka.committed(World.MEMBERSHIP)) {
      if (r.value != null) {
        sent.add(RecordSerdes.membershipEvent().deserialize(r.value));
      }
    }
    RingSnapshot last = latestPublishedRing();
    for (int i = 0; i < sent.size(); i++) {
      MembershipEvent e = sent.get(i);
      if (e.getAction() == MembershipAction.INIT || refused.contains(e.getRequestId())) {
        continue;
      }
      if (e.getAction() == MembershipAction.CANCEL) {
        if (!cancelledBy.contains(e.getRequestId())) {
          violation("CANCEL " + e.getRequestId() + " of epoch " + e.getEpoch() + " has no outcome: neither refused nor "
              + "carried out");
        }
        continue;
      }
      boolean superseded = false;
      for (int j = i + 1; j < sent.size(); j++) {
        MembershipEvent later = sent.get(j);
        if (later.getNodeId().equals(e.getNodeId()) && later.getAction() != MembershipAction.CANCEL) {
          superseded = true;
          break;
        }
      }
      boolean cancelled = cancels.stream().anyMatch(c -> c.getNodeId().equals(e.getNodeId())
          && c.getTimestampMillis() >= e.getTimestampMillis());
      if (superseded || cancelled || last == null) {
        continue;
      }
      Member member = last.member(e.getNodeId());
      boolean shown = switch (e.getAction()) {
        case JOIN -> member != null;
        case DRAIN, FAIL, REMOVE -> member == null;
        case SET_WEIGHT -> member != null && member.weight() == e.getWeight();
        default -> true;
      };
      if (!shown) {
        violation(e.getAction() + " of " + e.getNodeId() + " (request " + e.getRequestId() + ") has no outcome: not "
            + "refused, not cancelled, and the last published epoch " + last.epoch() + " does not carry it out");
        return;
      }
    }
  }

  /** Every acknowledged write is on every replica of its key in the last published ring. */
  private void data() {
    RingSnapshot last = latestPublishedRing();
    if (last == null) {
      return;
    }
    for (Map.Entry<String, List<long[]>> e : acks.entrySet()) {
      String key = e.getKey();
      long want = lastAcked(key, Long.MAX_VALUE);
      byte[] k = key.getBytes(StandardCharsets.UTF_8);
      io.ringshift.ring.ReplicaSet replicas = last.replicasOf(k);
      for (int i = 0; i < replicas.size(); i++) {
        Member replica = replicas.get(i);
        SimNode node = w.nodes.get(replica.id());
        byte[] v = node == null || node.state == null ? null : node.state.get(k).orElse(null);
        long got = v == null ? 0 : indexOf(new String(v, StandardCharsets.UTF_8));
        if (got < want) {
          violation("acknowledged write lost: " + key + " #" + want + " (acknowledged at epoch "
              + ackEpoch(key, want) + ") is #" + got + " on " + replica.id() + ", a replica in the last published "
              + "epoch " + last.epoch());
          return;
        }
      }
    }
  }

  /** Keys on nodes the last published ring does not place them on, once every cleanup had its time. */
  long strays() {
    RingSnapshot last = latestPublishedRing();
    if (last == null) {
      return 0;
    }
    long strays = 0;
    for (SimNode node : w.nodes.values()) {
      if (node.state == null) {
        continue;
      }
      for (Entry e : node.state.contents()) {
        if (!last.replicasAt(e.position()).contains(node.id)) {
          strays++;
        }
      }
    }
    return strays;
  }
}
