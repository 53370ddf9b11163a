package io.ringshift.audit;

import io.ringshift.protocol.AvroBytes;
import io.ringshift.protocol.EpochRecords;
import io.ringshift.ring.Member;
import io.ringshift.ring.PlacementPolicy;
import io.ringshift.ring.ReplicaSet;
import io.ringshift.ring.RingBuilder;
import io.ringshift.ring.RingException;
import io.ringshift.ring.RingSnapshot;
import io.ringshift.protocol.CodecException;
import io.ringshift.protocol.FillingRange;
import io.ringshift.protocol.PublishedSnapshot;
import io.ringshift.protocol.RecordSerdes;
import io.ringshift.protocol.RingSnapshotCodec;
import io.ringshift.protocol.TrustedKeys;
import io.ringshift.schemas.avro.EpochRecord;
import io.ringshift.schemas.avro.EpochState;
import io.ringshift.schemas.avro.MembershipAction;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * Replays a cluster's audit log and proves every published snapshot from it (docs/architecture.md, invariants 3 and 5).
 * Pure: it takes the records already read, so it is tested without a broker.
 *
 * <p>Design: for every {@code PUBLISHED} {@link EpochRecord} of a cluster, in log order, the snapshot is rebuilt from
 * the record alone, the way a client rebuilds it from {@code ring.snapshots}: the ring from members and parameters
 * with the ring library, then {@code PublishedSnapshot.unsigned(ring, previousChecksum, filling)} carrying the
 * record's signature. The rebuilt snapshot must have the record's checksum, follow the previously published one
 * (epoch + 1, previous checksum; the first has none), place distinct replicas, carry exactly the filling marks
 * that {@link FillingRange#between} derives from the last complete published ring, and be signed by a trusted key.
 * Its encoding is then compared byte for byte with every record of that cluster and epoch still on
 * {@code ring.snapshots}; that topic is compacted, so older epochs are usually gone, which proves nothing either
 * way ({@link SnapshotBytes#COMPACTED}): the log alone suffices to rebuild them. A snapshot on the topic that no
 * {@code PUBLISHED} record accounts for, and two {@code PUBLISHED} records for one epoch, are discrepancies too.
 *
 * <p>The replay stops at the first discrepancy: everything after it would be measured against a chain that is
 * already broken. Clusters are replayed in id order.
 */
public final class AuditReplay {
  private static final HexFormat HEX = HexFormat.of();
  private static final RingSnapshotCodec CODEC = new RingSnapshotCodec();

  private AuditReplay() {}

  /** The check a discrepancy broke. */
  public enum Check {
    /** A record of {@code ring.epochs} or {@code ring.snapshots} that cannot be decoded. */
    UNREADABLE("unreadable record"),
    /** A second {@code PUBLISHED} record for an epoch. */
    DUPLICATE_EPOCH("duplicate epoch"),
    /** A published epoch that is not the previous published epoch + 1. */
    EPOCH_SEQUENCE("epoch sequence"),
    /** The record's membership and parameters do not build a ring. */
    REBUILD("rebuild"),
    /** The rebuilt ring does not have the record's target checksum. */
    CHECKSUM("checksum"),
    /**
     * Balanced policy: the record's tokens are not those the balanced allocator gives from the previous published
     * ring (or, for the first epoch, from none), or the policy changed.
     */
    TOKENS("allocated tokens"),
    /** The record's previous checksum is not the checksum of the previously published epoch. */
    CHAIN("hash chain"),
    /** A range whose replicas repeat a node, or a zone while the ring has at least R zones. */
    REPLICAS("replicas"),
    /** Filling marks other than those derived from the last complete published ring. */
    FILLING("filling marks"),
    /** The signature is missing, by an untrusted key, or does not verify. */
    SIGNATURE("signature"),
    /** A snapshot on {@code ring.snapshots} whose bytes differ from the rebuilt snapshot's encoding. */
    SNAPSHOT_BYTES("snapshot bytes"),
    /** A snapshot on {@code ring.snapshots} for which no {@code PUBLISHED} record exists. */
    UNPUBLISHED_SNAPSHOT("snapshot without PUBLISHED record");

    private final String label;

    Check(String label) {
      this.label = label;
    }

    /** How the check is named in output: {@code snapshot bytes}, {@code hash chain}. */
    public String label() {
      return label;
    }
  }

  /** What {@code ring.snapshots} still holds of a verified epoch. */
  public enum SnapshotBytes {
    /** Every record of the epoch on {@code ring.snapshots} equals the rebuilt encoding byte for byte. */
    MATCH,
    /** No record of the epoch is left, and a later epoch's snapshot is: compaction removed it. */
    COMPACTED,
    /**
     * No record of the epoch and none later: the newest published snapshot is not on the topic (it was published
     * while audit read the topics, or it was deleted).
     */
    ABSENT;

    public String label() {
      return name().toLowerCase(Locale.ROOT);
    }
  }

  /**
   * One published epoch as the replay saw it.
   *
   * @param ok whether it passed every check; only the last epoch of a failed replay is not ok
   * @param checksum the record's target checksum, hex
   * @param signingKeyId the record's key id, or null when unsigned
   * @param snapshot what {@code ring.snapshots} holds of it; null when the epoch failed
   */
  public record EpochResult(String cluster, long epoch, boolean ok, String checksum, String signingKeyId, int members,
      String cause, SnapshotBytes snapshot) {
    public EpochResult {
      Objects.requireNonNull(cluster, "cluster");
      Objects.requireNonNull(checksum, "checksum");
      Objects.requireNonNull(cause, "cause");
      if (ok && snapshot == null) {
        throw new IllegalArgumentException("epoch " + epoch + " passed, so what ring.snapshots holds of it is known");
      }
    }
  }

  /**
   * A discrepancy: which check failed, on which cluster and epoch, and the two values that differ.
   *
   * @param epoch the epoch, or null when the record that failed names none (an unreadable record)
   * @param expected what the check required, with where that value comes from
   * @param found what the log or the topic holds instead, with where
   */
  public record Failure(String cluster, Long epoch, Check check, String expected, String found) {
    public Failure {
      Objects.requireNonNull(cluster, "cluster");
      Objects.requireNonNull(check, "check");
      Objects.requireNonNull(expected, "expected");
      Objects.requireNonNull(found, "found");
    }

    /** {@code cluster default epoch 4: checksum: expected ..., found ...}. */
    public String message() {
      return String.format(Locale.ROOT, "cluster %s %s: %s: expected %s, found %s", cluster,
          epoch == null ? "(epoch unknown)" : "epoch " + epoch, check.label(), expected, found);
    }
  }

  /**
   * The replay of one cluster: its published epochs up to the first failure, and its record counts.
   *
   * @param records epoch records of the cluster, any state
   * @param published PUBLISHED records among them (up to the first failure)
   * @param snapshots records of the cluster on {@code ring.snapshots}
   */
  public record ClusterResult(String cluster, int records, int published, int snapshots, List<EpochResult> epochs) {
    public ClusterResult {
      epochs = List.copyOf(epochs);
    }
  }

  /** The whole replay; {@code failure} is null when every check passed. */
  public record Result(List<ClusterResult> clusters, Failure failure) {
    public Result {
      clusters = List.copyOf(clusters);
    }

    public boolean passed() {
      return failure == null;
    }

    /** Epochs verified (passed), over all clusters. */
    public int verified() {
      return (int) clusters.stream().flatMap(c -> c.epochs().stream()).filter(EpochResult::ok).count();
    }

    /** Verified epochs whose snapshot was on the topic, over all clusters. */
    public int count(SnapshotBytes bytes) {
      return (int) clusters.stream().flatMap(c -> c.epochs().stream()).filter(e -> e.snapshot() == bytes).count();
    }
  }

  /** An undecodable record, reported as the audit's failure before any replay. */
  public static Failure unreadable(String cluster, String where, String problem) {
    return new Failure(cluster, null, Check.UNREADABLE, "a record this version can decode",
        where + ": " + problem);
  }

  /**
   * Replays every cluster that appears in {@code epochs} or {@code snapshots}.
   *
   * @param epochs records of {@code ring.epochs} in log order (all states; only PUBLISHED ones are replayed)
   * @param snapshots records of {@code ring.snapshots} in log order
   * @param trusted the publisher keys whose signatures are accepted
   */
  public static Result verify(List<EpochRecord> epochs, List<SnapshotRecord> snapshots, TrustedKeys trusted) {
    Objects.requireNonNull(trusted, "trusted");
    Map<String, List<EpochRecord>> epochsByCluster = new TreeMap<>();
    for (EpochRecord e : epochs) {
      epochsByCluster.computeIfAbsent(e.getClusterId(), c -> new ArrayList<>()).add(e);
    }
    Map<String, List<SnapshotRecord>> snapshotsByCluster = new TreeMap<>();
    for (SnapshotRecord s : snapshots) {
      snapshotsByCluster.computeIfAbsent(s.key(), c -> new ArrayList<>()).add(s);
      epochsByCluster.computeIfAbsent(s.key(), c -> new ArrayList<>());
    }
    List<ClusterResult> results = new ArrayList<>();
    for (var entry : epochsByCluster.entrySet()) {
      ClusterReplay replay = new ClusterReplay(entry.getKey(), trusted,
          snapshotsByCluster.getOrDefault(entry.getKey(), List.of()));
      Failure failure = replay.run(entry.getValue());
      results.add(replay.result(entry.getValue().size()));
      if (failure != null) {
        return new Result(results, failure);
      }
    }
    return new Result(results, null);
  }

  private static String time(EpochRecord e) {
    return Instant.ofEpochMilli(e.getTimestampMillis()).toString();
  }

  /** The replay of one cluster's records; {@link #run} once. */
  private static final class ClusterReplay {
    private final String cluster;
    private final TrustedKeys trusted;
    /** The cluster's snapshots on ring.snapshots by the epoch they name. */
    private final Map<Long, List<SnapshotRecord>> snapshotsByEpoch = new TreeMap<>();
    /** The first of the cluster's snapshots that does not decode, and why; null when all decode. */
    private Failure undecodable;
    private int snapshotCount;
    private final List<EpochResult> results = new ArrayList<>();
    private int published;

    /**
     * The numbers REJECTED, CANCELLED and REVERTED records name: never published. The orchestrator never uses the
     * number of a rolled-back or cancelled epoch again, so the next published epoch comes after one of them.
     */
    private final java.util.TreeSet<Long> dead = new java.util.TreeSet<>();
    /** The transition stage snapshots STAGED records rebuild to, verified, by epoch. */
    private final Map<Long, List<byte[]>> stages = new TreeMap<>();
    /** The last published epoch and its ring; null before the first. */
    private RingSnapshot previous;
    /** The last published ring without filling marks: the ring whose replicas all hold their data. */
    private RingSnapshot lastComplete;

    ClusterReplay(String cluster, TrustedKeys trusted, List<SnapshotRecord> snapshots) {
      this.cluster = cluster;
      this.trusted = trusted;
      this.snapshotCount = snapshots.size();
      for (SnapshotRecord s : snapshots) {
        try {
          // The Avro record only, not decodePublished: a tampered snapshot must still be found by its epoch so that
          // it is compared with (and fails against) that epoch's rebuilt bytes.
          long epoch = RecordSerdes.ringSnapshot().deserialize(s.value()).getEpoch();
          snapshotsByEpoch.computeIfAbsent(epoch, k -> new ArrayList<>()).add(s);
        } catch (CodecException e) {
          if (undecodable == null) {
            undecodable = unreadable(cluster, s.position(), e.getMessage());
          }
        }
      }
    }

    ClusterResult result(int records) {
      return new ClusterResult(cluster, records, published, snapshotCount, results);
    }

    Failure run(List<EpochRecord> records) {
      Map<Long, EpochRecord> publishedAt = new LinkedHashMap<>();
      for (EpochRecord e : records) {
        if (e.getState() == EpochState.REJECTED || e.getState() == EpochState.CANCELLED
            || e.getState() == EpochState.REVERTED) {
          dead.add(e.getEpoch());
        }
        if (e.getState() == EpochState.STAGED) {
          Failure stage = verifyStage(e);
          if (stage != null) {
            return stage;
          }
          continue;
        }
        if (e.getState() != EpochState.PUBLISHED) {
          continue;
        }
        published++;
        EpochRecord earlier = publishedAt.putIfAbsent(e.getEpoch(), e);
        Failure failure = earlier != null
            ? new Failure(cluster, e.getEpoch(), Check.DUPLICATE_EPOCH,
                "one PUBLISHED record per epoch (the first written at " + time(earlier) + ", checksum "
                    + AvroBytes.hex(earlier.getTargetChecksum()) + ")",
                "a second one written at " + time(e) + ", checksum " + AvroBytes.hex(e.getTargetChecksum()))
            : verify(e);
        if (failure != null) {
          results.add(new EpochResult(cluster, e.getEpoch(), false, AvroBytes.hex(e.getTargetChecksum()), e.getSigningKeyId(),
              e.getMembers().size(), EpochRecords.cause(e.getCause(), false), null));
          return failure;
        }
      }
      if (undecodable != null) {
        return undecodable;
      }
      for (var entry : snapshotsByEpoch.entrySet()) {
        if (!publishedAt.containsKey(entry.getKey())) {
          List<byte[]> verified = stages.getOrDefault(entry.getKey(), List.of());
          if (entry.getValue().stream().allMatch(s -> verified.stream().anyMatch(v -> Arrays.equals(v, s.value())))) {
            continue; // the stages of a transition in flight, or of one reverted
          }
          SnapshotRecord s = entry.getValue().get(0);
          return new Failure(cluster, entry.getKey(), Check.UNPUBLISHED_SNAPSHOT,
              "a PUBLISHED record on ring.epochs for every snapshot on ring.snapshots",
              "a snapshot of epoch " + entry.getKey() + " at " + s.position() + " and no PUBLISHED record of it");
        }
      }
      return null;
    }

    /** Every check of one PUBLISHED record, in order; null when all pass. */
    private Failure verify(EpochRecord e) {
      long epoch = e.getEpoch();
      // After a rejection the orchestrator rolls back and plans again under numbers above the rejected ones; after a
      // cancel the next epoch comes after the cancelled one; an epoch staged before a later plan was cancelled is
      // still the next: a dead number between the two is enough (the chain check ties the epoch to the previous).
      boolean afterRollback = previous != null && deadBetween(previous.epoch(), epoch);
      if (previous != null && epoch != previous.epoch() + 1 && !afterRollback) {
        return new Failure(cluster, epoch, Check.EPOCH_SEQUENCE,
            "epoch " + (previous.epoch() + 1) + " (the previous published epoch " + previous.epoch() + " + 1)"
                + (dead.higher(previous.epoch()) != null ? ", or an epoch above the rejected or cancelled epoch "
                    + dead.higher(previous.epoch()) : ""),
            "epoch " + epoch);
      }
      RingSnapshot ring;
      try {
        ring = EpochRecords.rebuild(e);
      } catch (CodecException ex) {
        return new Failure(cluster, epoch, Check.REBUILD, "members and parameters that build a ring",
            ex.getMessage());
      }
      byte[] target = AvroBytes.toArray(e.getTargetChecksum());
      if (!Arrays.equals(target, ring.checksum())) {
        return new Failure(cluster, epoch, Check.CHECKSUM,
            ring.checksumHex() + " (the ring rebuilt from the record's members and parameters)",
            HEX.formatHex(target) + " (the record's targetChecksum)");
      }
      Failure tokens = tokens(ring);
      if (tokens != null) {
        return tokens;
      }
      byte[] previousChecksum = AvroBytes.toArray(e.getPreviousChecksum());
      Failure chain = chain(epoch, previousChecksum);
      if (chain != null) {
        return chain;
      }
      Failure replicas = replicas(ring);
      if (replicas != null) {
        return replicas;
      }
      List<FillingRange> filling;
      try {
        filling = RingSnapshotCodec.fromAvro(e.getFilling());
      } catch (CodecException ex) {
        return new Failure(cluster, epoch, Check.FILLING, "marks sorted by start, then node", ex.getMessage());
      }
      boolean failureEpoch = e.getCause() != null && e.getCause().getAction() == MembershipAction.FAIL
          && e.getDiffSummary() != null && e.getDiffSummary().getTasks() == 0;
      Failure marks = filling(epoch, ring, filling, failureEpoch);
      if (marks != null) {
        return marks;
      }
      PublishedSnapshot unsigned = PublishedSnapshot.unsigned(ring, previousChecksum, filling);
      if (e.getSignature() == null || e.getSigningKeyId() == null) {
        return new Failure(cluster, epoch, Check.SIGNATURE, "a signature and its key id",
            e.getSignature() == null && e.getSigningKeyId() == null ? "neither"
                : e.getSignature() == null ? "key id " + e.getSigningKeyId() + " without a signature"
                    : "a signature without a key id");
      }
      PublishedSnapshot signed = withSignature(unsigned, e);
      try {
        trusted.verify(signed);
      } catch (CodecException ex) {
        String expected = ex.reason() == CodecException.Reason.UNKNOWN_KEY
            ? "a key id among the trusted keys " + new TreeSet<>(trusted.ids())
            : "a signature by " + e.getSigningKeyId() + " over the rebuilt snapshot that verifies";
        return new Failure(cluster, epoch, Check.SIGNATURE, expected,
            ex.reason() + ": " + ex.getMessage());
      }
      byte[] rebuilt = CODEC.encode(signed);
      Failure bytes = snapshotBytes(epoch, rebuilt, ring.checksumHex());
      if (bytes != null) {
        return bytes;
      }
      results.add(new EpochResult(cluster, epoch, true, ring.checksumHex(), e.getSigningKeyId(), ring.memberCount(),
          EpochRecords.cause(e.getCause(), false), presence(epoch)));
      previous = ring;
      if (filling.isEmpty()) {
        lastComplete = ring;
      }
      return null;
    }

    /**
     * Under the balanced policy, the tokens must be those the allocator gives (docs/placement.md, section 12): from
     * the previous published ring's tokens for the record's membership, or from none for the first epoch.
     */
    private Failure tokens(RingSnapshot ring) {
      if (previous != null && previous.policy() != ring.policy()) {
        return new Failure(cluster, ring.epoch(), Check.TOKENS, "policy " + previous.policyId() + " (of published "
            + "epoch " + previous.epoch() + "; a cluster's policy is fixed at INIT)", "policy " + ring.policyId());
      }
      if (ring.policy() != PlacementPolicy.BALANCED) {
        return null;
      }
      RingSnapshot allocated;
      try {
        RingBuilder builder = previous == null
            ? RingSnapshot.builder().clusterId(ring.clusterId()).policy(PlacementPolicy.BALANCED)
                .vnodes(ring.vnodes()).replicas(ring.replicas())
            : previous.toBuilder();
        allocated = builder.epoch(ring.epoch()).members(ring.members()).build();
      } catch (RingException ex) {
        return new Failure(cluster, ring.epoch(), Check.TOKENS, "a membership the balanced allocator places",
            ex.getMessage());
      }
      if (Arrays.equals(allocated.checksum(), ring.checksum())) {
        return null;
      }
      long[][] want = allocated.tokensByMember();
      long[][] have = ring.tokensByMember();
      for (int m = 0; m < want.length; m++) {
        if (!Arrays.equals(want[m], have[m])) {
          return new Failure(cluster, ring.epoch(), Check.TOKENS,
              "member " + ring.members().get(m).id() + " with the tokens the balanced allocator gives from "
                  + (previous == null ? "no ring" : "published epoch " + previous.epoch()) + " "
                  + describeTokens(want[m]),
              "the record's " + describeTokens(have[m]));
        }
      }
      return new Failure(cluster, ring.epoch(), Check.TOKENS, "ring " + allocated.checksumHex(),
          "ring " + ring.checksumHex());
    }

    private static String describeTokens(long[] tokens) {
      StringBuilder text = new StringBuilder(tokens.length + " tokens [");
      for (int i = 0; i < Math.min(4, tokens.length); i++) {
        text.append(i == 0 ? "" : ", ").append(HEX.toHexDigits(tokens[i]));
      }
      return text.append(tokens.length > 4 ? ", ...]" : "]").toString();
    }

    private Failure chain(long epoch, byte[] previousChecksum) {
      if (previous == null) {
        return previousChecksum == null ? null : new Failure(cluster, epoch, Check.CHAIN,
            "no previous checksum (the cluster's first published epoch follows none)",
            "previousChecksum " + HEX.formatHex(previousChecksum));
      }
      if (!Arrays.equals(previousChecksum, previous.checksum())) {
        return new Failure(cluster, epoch, Check.CHAIN,
            previous.checksumHex() + " (the checksum of published epoch " + previous.epoch() + ")",
            (previousChecksum == null ? "none" : HEX.formatHex(previousChecksum)) + " (the record's previousChecksum)");
      }
      return null;
    }

    /** Whether a number strictly between {@code last} and {@code epoch} is dead (rejected, cancelled, reverted). */
    private boolean deadBetween(long last, long epoch) {
      Long next = dead.higher(last);
      return next != null && next < epoch;
    }

    /**
     * A STAGED record (docs/protocol.md, "Transition stages"): its ring and the previous one rebuild, the previous one
     * is the last published ring (the chain), and the signature verifies over the stage snapshot; that snapshot is
     * then one the epoch's snapshots on ring.snapshots may be.
     */
    private Failure verifyStage(EpochRecord e) {
      long epoch = e.getEpoch();
      RingSnapshot ring;
      RingSnapshot before;
      try {
        ring = EpochRecords.rebuild(e);
        before = EpochRecords.rebuildPrevious(e);
      } catch (RuntimeException ex) {
        return new Failure(cluster, epoch, Check.REBUILD, "a STAGED record whose ring and previous ring build",
            ex.getMessage());
      }
      Failure chain = chain(epoch, before.checksum());
      if (chain != null) {
        return chain;
      }
      io.ringshift.protocol.TransitionStage stage = null;
      for (io.ringshift.protocol.TransitionStage s : io.ringshift.protocol.TransitionStage.values()) {
        if (e.getStage() != null && s.order() == e.getStage() && s.writesBoth()) {
          stage = s;
        }
      }
      if (stage == null || e.getSignature() == null || e.getSigningKeyId() == null) {
        return new Failure(cluster, epoch, Check.SIGNATURE, "a STAGED record with a transition stage (1 or 2), a "
            + "signature and its key id", "stage " + e.getStage() + ", key id " + e.getSigningKeyId());
      }
      PublishedSnapshot signed = PublishedSnapshot.transition(ring, before, stage)
          .withSignature(AvroBytes.toArray(e.getSignature()), e.getSigningKeyId());
      try {
        trusted.verify(signed);
      } catch (CodecException ex) {
        return new Failure(cluster, epoch, Check.SIGNATURE, "a signature by " + e.getSigningKeyId()
            + " over the rebuilt stage " + stage + " that verifies", ex.reason() + ": " + ex.getMessage());
      }
      stages.computeIfAbsent(epoch, k -> new ArrayList<>()).add(CODEC.encode(signed));
      return null;
    }

    /** Distinct nodes in every replica set, and distinct zones when the ring has at least R zones. */
    private Failure replicas(RingSnapshot ring) {
      boolean zonesSuffice = ring.zones().size() >= ring.replicas();
      Set<String> nodes = new HashSet<>();
      Set<String> zones = new HashSet<>();
      for (int r = 0; r < ring.tokenCount(); r++) {
        ReplicaSet set = ring.replicasOfRange(r);
        nodes.clear();
        zones.clear();
        for (int i = 0; i < set.size(); i++) {
          Member m = set.get(i);
          if (!nodes.add(m.id()) || (zonesSuffice && !zones.add(m.zone()))) {
            return new Failure(cluster, ring.epoch(), Check.REPLICAS,
                zonesSuffice ? "distinct nodes in distinct zones (" + ring.zones().size() + " zones >= R = "
                    + ring.replicas() + ")" : "distinct nodes",
                "range (" + HEX.toHexDigits(ring.rangeStart(r)) + ", " + HEX.toHexDigits(ring.rangeEnd(r))
                    + "] placed on " + set.ids() + " in zones "
                    + set.members().stream().map(Member::zone).toList());
          }
        }
      }
      return null;
    }

    /**
     * Marks, when the record has any or is a failure epoch (a FAIL published without tasks), must be those
     * between the last complete published ring and this one, and only a ring with at least R zones may carry
     * them (docs/protocol.md, Filling marks).
     */
    private Failure filling(long epoch, RingSnapshot ring, List<FillingRange> marks, boolean failureEpoch) {
      if (marks.isEmpty() && (!failureEpoch || lastComplete == null)) {
        return null;
      }
      if (!marks.isEmpty() && ring.zones().size() < ring.replicas()) {
        return new Failure(cluster, epoch, Check.FILLING,
            "no marks: a ring with fewer zones than R (" + ring.zones().size() + " < " + ring.replicas()
                + ") is published only once repaired",
            marks.size() + " marks");
      }
      if (lastComplete == null) {
        return new Failure(cluster, epoch, Check.FILLING,
            "no marks (no complete epoch was published before, so no replica can be missing data)",
            marks.size() + " marks");
      }
      List<FillingRange> derived = FillingRange.between(lastComplete, ring);
      if (!derived.equals(marks)) {
        return new Failure(cluster, epoch, Check.FILLING,
            derived.size() + " marks " + describe(derived) + " (derived from published epoch "
                + lastComplete.epoch() + ", the last complete one)",
            marks.size() + " marks " + describe(marks) + " (the record's filling)");
      }
      return null;
    }

    private Failure snapshotBytes(long epoch, byte[] rebuilt, String checksumHex) {
      List<byte[]> staged = stages.getOrDefault(epoch, List.of());
      for (SnapshotRecord s : snapshotsByEpoch.getOrDefault(epoch, List.of())) {
        if (!Arrays.equals(rebuilt, s.value()) && staged.stream().noneMatch(v -> Arrays.equals(v, s.value()))) {
          return new Failure(cluster, epoch, Check.SNAPSHOT_BYTES,
              rebuilt.length + " bytes of the snapshot rebuilt from ring.epochs (checksum " + checksumHex
                  + ") and encoded",
              s.value().length + " bytes at " + s.position() + ", " + difference(rebuilt, s.value(), trusted));
        }
      }
      return null;
    }

    private SnapshotBytes presence(long epoch) {
      if (snapshotsByEpoch.containsKey(epoch)) {
        return SnapshotBytes.MATCH;
      }
      return snapshotsByEpoch.keySet().stream().anyMatch(later -> later > epoch) ? SnapshotBytes.COMPACTED
          : SnapshotBytes.ABSENT;
    }
  }

  /** The snapshot carrying the record's signature (checked later, with the trusted keys). */
  private static PublishedSnapshot withSignature(PublishedSnapshot unsigned, EpochRecord e) {
    return unsigned.withSignature(AvroBytes.toArray(e.getSignature()), e.getSigningKeyId());
  }

  /**
   * Where two encodings first differ, what the found bytes decode to and whether their signature verifies: a
   * forgery clients refuse is a different finding from a trusted key having signed a snapshot the log does not
   * record.
   */
  private static String difference(byte[] expected, byte[] found, TrustedKeys trusted) {
    int at = Arrays.mismatch(expected, found);
    PublishedSnapshot s;
    try {
      s = CODEC.decodePublished(found);
    } catch (CodecException e) {
      return "first difference at byte " + at + "; they do not decode (" + e.reason() + "): " + e.getMessage();
    }
    String signature;
    try {
      trusted.verify(s);
      signature = "its signature verifies with trusted key " + s.signingKeyId();
    } catch (CodecException e) {
      signature = "its signature does not verify (" + e.reason() + ")";
    }
    return "first difference at byte " + at + "; they decode to epoch " + s.epoch() + " with checksum "
        + s.ring().checksumHex() + " and " + s.filling().size() + " filling marks; " + signature;
  }

  private static String describe(List<FillingRange> marks) {
    int shown = Math.min(3, marks.size());
    StringBuilder text = new StringBuilder("[");
    for (int i = 0; i < shown; i++) {
      text.append(i == 0 ? "" : ", ").append(marks.get(i));
    }
    return text.append(marks.size() > shown ? ", ...]" : "]").toString();
  }
}
