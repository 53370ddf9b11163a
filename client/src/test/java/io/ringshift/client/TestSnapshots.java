package io.ringshift.client;

import io.ringshift.client.internal.AcceptedSnapshot;
import io.ringshift.ring.RingBuilder;
import io.ringshift.ring.RingSnapshot;
import io.ringshift.protocol.FillingRange;
import io.ringshift.protocol.PublishedSnapshot;
import io.ringshift.protocol.RingSnapshotCodec;
import io.ringshift.protocol.SigningKey;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;

/** Signed snapshot chains for the client's tests, built with the ring library and encoded by the codec. */
public final class TestSnapshots {
  public static final String CLUSTER = "test-cluster";
  private static final RingSnapshotCodec CODEC = new RingSnapshotCodec();

  private TestSnapshots() {}

  /** A ring of {@code nodes} members {@code node-00...} over 3 zones, 16 tokens each, 3 replicas. */
  public static RingSnapshot ring(String cluster, long epoch, int nodes) {
    RingBuilder builder = RingSnapshot.builder().clusterId(cluster).epoch(epoch).vnodes(16).replicas(3);
    for (int n = 0; n < nodes; n++) {
      builder.addMember(String.format("node-%02d", n), "az-" + (n % 3 + 1));
    }
    return builder.build();
  }

  /** Epochs 1 to {@code length} of {@link #CLUSTER}, one node joining per epoch, chained and signed. */
  public static List<PublishedSnapshot> chain(SigningKey key, int length) {
    List<PublishedSnapshot> chain = new ArrayList<>();
    byte[] previous = null;
    for (int epoch = 1; epoch <= length; epoch++) {
      RingSnapshot ring = ring(CLUSTER, epoch, 3 + epoch);
      chain.add(PublishedSnapshot.unsigned(ring, previous, List.of()).signedBy(key));
      previous = ring.checksum();
    }
    return chain;
  }

  /** The snapshot that follows {@code previous}: one more node, chained, signed. */
  public static PublishedSnapshot next(PublishedSnapshot previous, SigningKey key) {
    RingSnapshot ring = ring(previous.clusterId(), previous.epoch() + 1, previous.ring().memberCount() + 1);
    return PublishedSnapshot.unsigned(ring, previous.checksum(), List.of()).signedBy(key);
  }

  /**
   * A failure epoch: {@code complete} minus {@code failed}, following it, with the filling marks the
   * orchestrator would compute.
   */
  public static PublishedSnapshot failureEpoch(PublishedSnapshot complete, String failed, SigningKey key) {
    RingSnapshot ring = complete.ring().toBuilder()
        .epoch(complete.epoch() + 1)
        .members(complete.ring().members().stream().filter(m -> !m.id().equals(failed)).toList())
        .build();
    List<FillingRange> marks = FillingRange.between(complete.ring(), ring);
    return PublishedSnapshot.unsigned(ring, complete.checksum(), marks).signedBy(key);
  }

  /**
   * The PUBLISHED record the publisher writes to the epochs topic with {@code snapshot} (its signature and what it
   * signs; the members and parameters of its ring), single-object encoded.
   */
  public static byte[] publishedRecord(PublishedSnapshot snapshot) {
    RingSnapshot ring = snapshot.ring();
    io.ringshift.schemas.avro.EpochRecord record = io.ringshift.schemas.avro.EpochRecord.newBuilder()
        .setClusterId(ring.clusterId())
        .setEpoch(ring.epoch())
        .setPlanVersion(0)
        .setState(io.ringshift.schemas.avro.EpochState.PUBLISHED)
        .setCause(io.ringshift.schemas.avro.MembershipEvent.newBuilder().setClusterId(ring.clusterId())
            .setNodeId("node-00").setAction(io.ringshift.schemas.avro.MembershipAction.JOIN).setRequestId("r")
            .setRequestedBy("test").setTimestampMillis(0).build())
        .setMembers(ring.members().stream().map(m -> new io.ringshift.schemas.avro.MemberSpec(m.id(), m.zone(),
            m.weight(), io.ringshift.schemas.avro.MemberSpecState.valueOf(m.state().name()), java.util.List.of())).toList())
        .setVnodes(ring.vnodes())
        .setReplicas(ring.replicas())
        .setHashId(ring.hashId())
        .setPolicyId(ring.policyId())
        .setMembershipDigest(java.nio.ByteBuffer.wrap(new byte[32]))
        .setTargetChecksum(java.nio.ByteBuffer.wrap(snapshot.checksum()))
        .setPreviousChecksum(snapshot.previousChecksum() == null ? null
            : java.nio.ByteBuffer.wrap(snapshot.previousChecksum()))
        .setFilling(RingSnapshotCodec.toAvro(snapshot.filling()))
        .setSignature(java.nio.ByteBuffer.wrap(snapshot.signature()))
        .setSigningKeyId(snapshot.signingKeyId())
        .setTimestampMillis(0)
        .build();
    return io.ringshift.protocol.RecordSerdes.epochRecord().serialize(record);
  }

  public static byte[] encode(PublishedSnapshot snapshot) {
    return CODEC.encode(snapshot);
  }

  /** The snapshot as the client holds it after accepting it, published at {@code publishedAtMillis}. */
  public static AcceptedSnapshot accepted(PublishedSnapshot snapshot, long publishedAtMillis) {
    return new AcceptedSnapshot(snapshot, encode(snapshot), publishedAtMillis);
  }

  /** The snapshot's Avro record, changed by {@code change} and encoded again: how a forger edits bytes. */
  public static byte[] alter(PublishedSnapshot snapshot, Consumer<io.ringshift.schemas.avro.RingSnapshot> change) {
    io.ringshift.schemas.avro.RingSnapshot record = CODEC.toRecord(snapshot);
    change.accept(record);
    return RingSnapshotCodec.singleObjectSerde().serialize(record);
  }
}
