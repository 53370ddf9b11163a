package io.ringshift.audit;

import io.ringshift.ring.Member;
import io.ringshift.ring.PlacementPolicy;
import io.ringshift.ring.RingBuilder;
import io.ringshift.ring.RingSnapshot;
import io.ringshift.protocol.EpochRecords;
import io.ringshift.protocol.FillingRange;
import io.ringshift.protocol.PublishedSnapshot;
import io.ringshift.protocol.RecordSerdes;
import io.ringshift.protocol.RingSnapshotCodec;
import io.ringshift.protocol.SigningKey;
import io.ringshift.schemas.avro.DiffSummary;
import io.ringshift.schemas.avro.EpochRecord;
import io.ringshift.schemas.avro.EpochState;
import io.ringshift.schemas.avro.MemberSpec;
import io.ringshift.schemas.avro.MembershipAction;
import io.ringshift.schemas.avro.MembershipEvent;
import io.ringshift.ring.RingDiff;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.UUID;
import java.util.function.UnaryOperator;

/**
 * One cluster's history as the orchestrator and the publisher write it, for tests: for each epoch a PLANNED, a
 * READY and a PUBLISHED {@link EpochRecord} (filled as the orchestrator's AvroMapping fills them, plus the
 * publisher's signature), and the signed snapshot the publisher puts on {@code ring.snapshots}. A failure epoch
 * carries the filling marks {@link FillingRange#between} derives from the last complete epoch; the repair epoch
 * after it has the same members and none.
 */
public final class History {
  public static final long T0 = 1_780_000_000_000L;

  private final String cluster;
  private SigningKey key;
  private final int vnodes;
  private final int replicas;
  private final RingSnapshotCodec codec = new RingSnapshotCodec();
  private final List<EpochRecord> records = new ArrayList<>();
  private final List<SnapshotRecord> snapshots = new ArrayList<>();
  private final Map<Long, PublishedSnapshot> published = new TreeMap<>();
  private List<Member> members = List.of();
  private RingSnapshot previous;
  private RingSnapshot lastComplete;
  private long epoch;
  private PlacementPolicy policy = PlacementPolicy.HASHED;
  /** Tokens the next epoch gives a member instead of the allocator's (a writer that chose its own). */
  private final Map<String, long[]> chosenTokens = new java.util.HashMap<>();

  public History(String cluster, SigningKey key, int vnodes, int replicas) {
    this.cluster = cluster;
    this.key = key;
    this.vnodes = vnodes;
    this.replicas = replicas;
  }

  /** INIT of 9 nodes in 3 zones, JOIN node-010, FAIL node-002, its repair, DRAIN node-005: epochs 1 to 5. */
  public static History standard(String cluster, SigningKey key) {
    return new History(cluster, key, 16, 3).init(9, 3).join("node-010", "az-1").fail("node-002").repair()
        .drain("node-005");
  }

  /** The cluster's placement policy; set before {@link #init}. */
  public History policy(PlacementPolicy placement) {
    this.policy = placement;
    return this;
  }

  /** A JOIN whose record gives the joiner these tokens instead of those the balanced allocator chooses. */
  public History joinWithTokens(String node, String zone, long[] tokens) {
    chosenTokens.put(node, tokens);
    return join(node, zone);
  }

  /** Later epochs are signed by {@code next}: the publisher's key was rotated. */
  public History rotateTo(SigningKey next) {
    this.key = next;
    return this;
  }

  public History init(int nodes, int zones) {
    List<Member> initial = new ArrayList<>();
    for (int i = 1; i <= nodes; i++) {
      initial.add(Member.of(String.format(Locale.ROOT, "node-%03d", i), "az-" + (1 + (i - 1) % zones)));
    }
    return publish(MembershipAction.INIT, "", initial, UnaryOperator.identity(), false);
  }

  public History join(String node, String zone) {
    List<Member> next = new ArrayList<>(members);
    next.add(Member.of(node, zone));
    return publish(MembershipAction.JOIN, node, next, UnaryOperator.identity(), false);
  }

  public History drain(String node) {
    return publish(MembershipAction.DRAIN, node, without(node), UnaryOperator.identity(), false);
  }

  public History setWeight(String node, double weight) {
    List<Member> next = members.stream().map(m -> m.id().equals(node) ? m.withWeight(weight) : m).toList();
    return publish(MembershipAction.SET_WEIGHT, node, next, UnaryOperator.identity(), false);
  }

  /** A failure epoch: published at once, with filling marks. */
  public History fail(String node) {
    return fail(node, UnaryOperator.identity());
  }

  /** A failure epoch whose publisher got the filling marks wrong: {@code tamper} changes them before signing. */
  public History fail(String node, UnaryOperator<List<FillingRange>> tamper) {
    return publish(MembershipAction.FAIL, node, without(node), tamper, true);
  }

  /** The repair epoch after a failure: the same members, no marks. */
  /**
   * A JOIN the publisher rejected: READY and REJECTED records, nothing published; its number is never used again
   * (the orchestrator rolls back and plans the next epoch above it).
   */
  public History rejectedJoin(String node, String zone) {
    epoch++;
    List<Member> next = new ArrayList<>(members);
    next.add(Member.of(node, zone));
    RingSnapshot ring = previous.toBuilder().epoch(epoch).members(next).build();
    PublishedSnapshot unsigned = PublishedSnapshot.unsigned(ring, previous.checksum(), List.of());
    MembershipEvent cause = MembershipEvent.newBuilder().setClusterId(cluster).setNodeId(node)
        .setAction(MembershipAction.JOIN).setRequestId("rejected-" + epoch).setRequestedBy("test")
        .setTimestampMillis(T0 + epoch * 1000).build();
    EpochRecord ready = EpochRecord.newBuilder(record(unsigned, EpochState.READY, cause, previous, 1)).build();
    records.add(ready);
    records.add(EpochRecord.newBuilder(ready).setState(EpochState.REJECTED).setReason("SOURCES: for the test")
        .build());
    return this;
  }

  /**
   * A join published in transition stages (docs/protocol.md): PLANNED, STAGED 1 (its snapshot on ring.snapshots),
   * CONVERGED 1, READY, STAGED 2 (its snapshot), PUBLISHED (the FINAL snapshot), CONVERGED 3; or, when
   * {@code cancelled}, CANCELLED and REVERTED after the first stage, the previous snapshot published again, and the
   * number never used again.
   */
  public History stagedJoin(String node, String zone, boolean cancelled) {
    epoch++;
    List<Member> next = new ArrayList<>(members);
    next.add(Member.of(node, zone));
    RingSnapshot ring = previous.toBuilder().epoch(epoch).members(next).build();
    MembershipEvent cause = MembershipEvent.newBuilder().setClusterId(cluster).setNodeId(node)
        .setAction(MembershipAction.JOIN).setRequestId("staged-" + epoch).setRequestedBy("test")
        .setTimestampMillis(T0 + epoch * 1000).build();
    PublishedSnapshot unsigned = PublishedSnapshot.unsigned(ring, previous.checksum(), List.of());
    EpochRecord planned = record(unsigned, EpochState.PLANNED, cause, previous,
        RingDiff.between(previous, ring).changes().size());
    records.add(planned);
    EpochRecord last = records.stream().filter(r -> r.getState() == EpochState.PUBLISHED)
        .reduce((a, b) -> b).orElseThrow();
    for (io.ringshift.protocol.TransitionStage stage : List.of(io.ringshift.protocol.TransitionStage.WRITE_BOTH_READ_OLD,
        io.ringshift.protocol.TransitionStage.WRITE_BOTH_READ_NEW)) {
      PublishedSnapshot staged = PublishedSnapshot.transition(ring, previous, stage).signedBy(key);
      records.add(EpochRecord.newBuilder(planned).setState(EpochState.STAGED).setStage(stage.order())
          .setSignature(ByteBuffer.wrap(staged.signature())).setSigningKeyId(staged.signingKeyId())
          .setPreviousEpoch(last.getEpoch()).setPreviousMembers(last.getMembers()).build());
      snapshots.add(new SnapshotRecord(cluster, codec.encode(staged), 0, snapshots.size()));
      if (stage == io.ringshift.protocol.TransitionStage.WRITE_BOTH_READ_OLD) {
        records.add(EpochRecord.newBuilder(planned).setState(EpochState.CONVERGED).setStage(1).build());
        if (cancelled) {
          records.add(EpochRecord.newBuilder(planned).setState(EpochState.CANCELLED).setReason("by alice").build());
          records.add(EpochRecord.newBuilder(planned).setState(EpochState.REVERTED).setReason("cancelled").build());
          snapshots.add(new SnapshotRecord(cluster, codec.encode(published.get(last.getEpoch())), 0,
              snapshots.size()));
          return this;
        }
        records.add(EpochRecord.newBuilder(planned).setState(EpochState.READY).build());
      }
    }
    PublishedSnapshot signed = unsigned.signedBy(key);
    records.add(EpochRecord.newBuilder(planned).setState(EpochState.PUBLISHED)
        .setSignature(ByteBuffer.wrap(signed.signature())).setSigningKeyId(signed.signingKeyId()).build());
    records.add(EpochRecord.newBuilder(planned).setState(EpochState.CONVERGED).setStage(3).build());
    snapshots.add(new SnapshotRecord(cluster, codec.encode(signed), 0, snapshots.size()));
    published.put(epoch, signed);
    members = next;
    previous = ring;
    lastComplete = ring;
    return this;
  }

  public History repair() {
    return publish(MembershipAction.FAIL, records.get(records.size() - 1).getCause().getNodeId(), members,
        UnaryOperator.identity(), false);
  }

  private List<Member> without(String node) {
    return members.stream().filter(m -> !m.id().equals(node)).toList();
  }

  private History publish(MembershipAction action, String node, List<Member> next,
      UnaryOperator<List<FillingRange>> tamper, boolean failure) {
    epoch++;
    // As the orchestrator builds the next ring: from the previous one, so that balanced tokens are kept.
    RingBuilder builder = previous == null
        ? RingSnapshot.builder().clusterId(cluster).policy(policy).vnodes(vnodes).replicas(replicas)
        : previous.toBuilder();
    chosenTokens.forEach(builder::tokens);
    chosenTokens.clear();
    RingSnapshot ring = builder.epoch(epoch).members(next).build();
    List<FillingRange> filling = failure ? tamper.apply(FillingRange.between(lastComplete, ring)) : List.of();
    PublishedSnapshot signed =
        PublishedSnapshot.unsigned(ring, previous == null ? null : previous.checksum(), filling).signedBy(key);
    MembershipEvent cause = MembershipEvent.newBuilder()
        .setClusterId(cluster)
        .setNodeId(node)
        .setAction(action)
        .setRequestId(UUID.nameUUIDFromBytes((cluster + "/" + epoch).getBytes(java.nio.charset.StandardCharsets.UTF_8))
            .toString())
        .setRequestedBy("test")
        .setTimestampMillis(T0 + epoch * 1000)
        .build();
    // As the orchestrator counts them: a failure epoch has no tasks; its repair has one per replica to fill.
    boolean repair = action == MembershipAction.FAIL && !failure;
    int tasks = failure || previous == null ? 0
        : repair ? FillingRange.between(lastComplete, ring).size() : RingDiff.between(previous, ring).changes().size();
    EpochRecord planned = record(signed, EpochState.PLANNED, cause, previous, tasks);
    records.add(planned);
    records.add(EpochRecord.newBuilder(planned).setState(EpochState.READY).build());
    records.add(EpochRecord.newBuilder(planned)
        .setState(EpochState.PUBLISHED)
        .setSignature(ByteBuffer.wrap(signed.signature()))
        .setSigningKeyId(signed.signingKeyId())
        .setTimestampMillis(planned.getTimestampMillis() + 2)
        .build());
    snapshots.add(new SnapshotRecord(cluster, codec.encode(signed), 0, snapshots.size()));
    published.put(epoch, signed);
    members = next;
    previous = ring;
    if (filling.isEmpty()) {
      lastComplete = ring;
    }
    return this;
  }

  /** The record of a snapshot in a state, as AvroMapping.epochRecord fills it (no signature). */
  private static EpochRecord record(PublishedSnapshot s, EpochState state, MembershipEvent cause,
      RingSnapshot previous, int tasks) {
    RingSnapshot ring = s.ring();
    List<MemberSpec> specs = EpochRecords.specs(ring);
    RingDiff diff = previous == null ? null : RingDiff.between(previous, ring);
    byte[] previousChecksum = s.previousChecksum();
    return EpochRecord.newBuilder()
        .setClusterId(ring.clusterId())
        .setEpoch(ring.epoch())
        .setPlanVersion(0)
        .setState(state)
        .setCause(cause)
        .setMembers(specs)
        .setVnodes(ring.vnodes())
        .setReplicas(ring.replicas())
        .setHashId(ring.hashId())
        .setPolicyId(ring.policyId())
        .setMembershipDigest(ByteBuffer.wrap(new byte[32]))
        .setTargetChecksum(ByteBuffer.wrap(ring.checksum()))
        .setPreviousChecksum(previousChecksum == null ? null : ByteBuffer.wrap(previousChecksum))
        .setDiffSummary(diff == null ? null : DiffSummary.newBuilder()
            .setChangedRanges(diff.changes().size())
            .setChangedFraction(diff.changedFraction())
            .setMovedReplicaFraction(diff.movedReplicaFraction())
            .setPrimaryMovedFraction(diff.primaryMovedFraction())
            .setIdealMovedFraction(diff.idealMovedFraction())
            .setTasks(tasks)
            .setEstimatedBytes(0)
            .build())
        .setTimestampMillis(cause.getTimestampMillis() + 1)
        .setFilling(RingSnapshotCodec.toAvro(s.filling()))
        .build();
  }

  /**
   * The snapshot bytes with one character of the signing key id changed ('0' and '1' swap places in ASCII): the
   * bytes still decode, to the same epoch, but are not what the publisher wrote.
   */
  public static byte[] withKeyIdAltered(byte[] encoded, String keyId) {
    byte[] id = keyId.getBytes(java.nio.charset.StandardCharsets.US_ASCII);
    for (int at = encoded.length - id.length; at >= 0; at--) {
      if (java.util.Arrays.equals(encoded, at, at + id.length, id, 0, id.length)) {
        byte[] altered = encoded.clone();
        altered[at + id.length - 1] ^= 0x01;
        return altered;
      }
    }
    throw new IllegalArgumentException("the bytes do not contain key id " + keyId);
  }

  public String cluster() {
    return cluster;
  }

  public long latestEpoch() {
    return epoch;
  }

  /** Every record written to ring.epochs, in order (fresh copies: tests change them). */
  public List<EpochRecord> epochs() {
    return records.stream().map(r -> EpochRecord.newBuilder(r).build()).toList();
  }

  /** The PUBLISHED record of an epoch (a fresh copy). */
  public EpochRecord publishedRecord(long e) {
    return epochs().stream().filter(r -> r.getEpoch() == e && r.getState() == EpochState.PUBLISHED).findFirst()
        .orElseThrow();
  }

  /** One snapshot record per epoch, as the publisher wrote them (before any compaction). */
  public List<SnapshotRecord> snapshots() {
    return List.copyOf(snapshots);
  }

  public PublishedSnapshot snapshot(long e) {
    return published.get(e);
  }

  public SigningKey key() {
    return key;
  }

  /**
   * A snapshot of the same epoch whose member {@code node} has another weight, with a consistent checksum but the
   * original signature: what someone who can write to ring.snapshots but lacks the key could publish.
   */
  public static byte[] forgedWithWeight(PublishedSnapshot original, String node, double weight) {
    List<Member> members = original.ring().members().stream()
        .map(m -> m.id().equals(node) ? m.withWeight(weight) : m).toList();
    RingSnapshot ring = original.ring().toBuilder().members(members).build();
    io.ringshift.schemas.avro.RingSnapshot record = new RingSnapshotCodec()
        .toRecord(PublishedSnapshot.unsigned(ring, original.previousChecksum(), original.filling()));
    record.setSignature(ByteBuffer.wrap(original.signature()));
    record.setSigningKeyId(original.signingKeyId());
    return RecordSerdes.ringSnapshot().serialize(record);
  }
}
