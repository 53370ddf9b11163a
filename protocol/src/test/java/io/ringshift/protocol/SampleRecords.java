package io.ringshift.protocol;

import io.ringshift.schemas.avro.ClusterState;
import io.ringshift.schemas.avro.DiffSummary;
import io.ringshift.schemas.avro.InFlightEpoch;
import io.ringshift.schemas.avro.RejectedEvent;
import io.ringshift.schemas.avro.EpochRecord;
import io.ringshift.schemas.avro.EpochState;
import io.ringshift.schemas.avro.MemberSpec;
import io.ringshift.schemas.avro.MemberSpecState;
import io.ringshift.schemas.avro.MembershipAction;
import io.ringshift.schemas.avro.MembershipEvent;
import io.ringshift.schemas.avro.PublishedEpoch;
import io.ringshift.schemas.avro.UnpublishedEpoch;
import io.ringshift.schemas.avro.RangeCopyTask;
import io.ringshift.schemas.avro.TaskKind;
import io.ringshift.schemas.avro.TaskState;
import io.ringshift.schemas.avro.TaskStatus;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;
import org.apache.avro.specific.SpecificRecord;

/**
 * One record of each type with every optional field set ({@code full}) and with every optional field null
 * ({@code minimal}). Fresh instances on every call, since generated records are mutable.
 */
final class SampleRecords {
  private static final long T0 = 1_780_000_000_000L;

  private SampleRecords() {}

  /** A record type, its serde and its two samples. */
  record Sample<T extends SpecificRecord>(
      String name, Class<T> type, AvroSerde<T> serde, Supplier<T> full, Supplier<T> minimal) {
    @Override
    public String toString() {
      return name;
    }
  }

  static List<Sample<?>> all() {
    return List.of(
        new Sample<>("MembershipEvent", MembershipEvent.class, RecordSerdes.membershipEvent(),
            SampleRecords::fullMembershipEvent, SampleRecords::minimalMembershipEvent),
        new Sample<>("EpochRecord", EpochRecord.class, RecordSerdes.epochRecord(),
            SampleRecords::fullEpochRecord, SampleRecords::minimalEpochRecord),
        new Sample<>("RangeCopyTask", RangeCopyTask.class, RecordSerdes.rangeCopyTask(),
            SampleRecords::fullRangeCopyTask, SampleRecords::minimalRangeCopyTask),
        new Sample<>("TaskStatus", TaskStatus.class, RecordSerdes.taskStatus(),
            SampleRecords::fullTaskStatus, SampleRecords::minimalTaskStatus),
        new Sample<>("RingSnapshot", io.ringshift.schemas.avro.RingSnapshot.class, RecordSerdes.ringSnapshot(),
            SampleRecords::fullRingSnapshot, SampleRecords::minimalRingSnapshot),
        new Sample<>("RejectedEvent", RejectedEvent.class, RecordSerdes.rejectedEvent(),
            SampleRecords::fullRejectedEvent, SampleRecords::minimalRejectedEvent),
        new Sample<>("ClusterState", ClusterState.class, RecordSerdes.clusterState(),
            SampleRecords::fullClusterState, SampleRecords::minimalClusterState),
        new Sample<>("WorkerBudgets", io.ringshift.schemas.avro.WorkerBudgets.class, RecordSerdes.workerBudgets(),
            SampleRecords::fullWorkerBudgets, SampleRecords::minimalWorkerBudgets),
        new Sample<>("HotKeysReport", io.ringshift.schemas.avro.HotKeysReport.class, RecordSerdes.hotKeysReport(),
            SampleRecords::fullHotKeysReport, SampleRecords::minimalHotKeysReport),
        new Sample<>("ParticipantReport", io.ringshift.schemas.avro.ParticipantReport.class,
            RecordSerdes.participantReport(), SampleRecords::fullParticipantReport,
            SampleRecords::minimalParticipantReport));
  }

  static io.ringshift.schemas.avro.ParticipantReport fullParticipantReport() {
    return io.ringshift.schemas.avro.ParticipantReport.newBuilder()
        .setClusterId("c1").setParticipantId("node-3/5f1c").setKind(io.ringshift.schemas.avro.ParticipantKind.NODE)
        .setEpoch(7).setStage(1).setChecksum(bytes(32, 4)).setStagesSupported(true).setLeaseMillis(10_000)
        .setReportedAtMillis(T0).setUnversionedWritesAtMillis(T0 - 5).build();
  }

  /** Before its first snapshot. */
  static io.ringshift.schemas.avro.ParticipantReport minimalParticipantReport() {
    return io.ringshift.schemas.avro.ParticipantReport.newBuilder()
        .setClusterId("c1").setParticipantId("web-7/0a2b").setKind(io.ringshift.schemas.avro.ParticipantKind.CLIENT)
        .setEpoch(-1).setStage(3).setChecksum(null).setStagesSupported(true).setLeaseMillis(10_000)
        .setReportedAtMillis(T0).setUnversionedWritesAtMillis(null).build();
  }

  static io.ringshift.schemas.avro.HotKeysReport fullHotKeysReport() {
    return io.ringshift.schemas.avro.HotKeysReport.newBuilder()
        .setClusterId("c1").setClientId("web-7").setLookups(1_000_000)
        .setKeys(List.of(new io.ringshift.schemas.avro.HotKeyShare(java.nio.ByteBuffer.wrap("user:0".getBytes(
            java.nio.charset.StandardCharsets.UTF_8)), 0.102, 0.001)))
        .setTimestampMillis(T0).build();
  }

  /** No field is optional; no key yet. */
  static io.ringshift.schemas.avro.HotKeysReport minimalHotKeysReport() {
    return io.ringshift.schemas.avro.HotKeysReport.newBuilder()
        .setClusterId("c1").setClientId("web-7").setLookups(0).setKeys(List.of()).setTimestampMillis(T0).build();
  }

  static io.ringshift.schemas.avro.WorkerBudgets fullWorkerBudgets() {
    return io.ringshift.schemas.avro.WorkerBudgets.newBuilder()
        .setGroupId("ringshift-workers").setPerSourceBytesPerSecond(40L << 20)
        .setSourceBytesPerSecond(Map.of("node-07", 10L << 20))
        .setPerZoneLinkBytesPerSecond(200L << 20).setZoneLinkBytesPerSecond(Map.of("az-1>az-2", 50L << 20))
        .setTimestampMillis(T0).build();
  }

  /** No field is optional; the maps are empty. */
  static io.ringshift.schemas.avro.WorkerBudgets minimalWorkerBudgets() {
    return io.ringshift.schemas.avro.WorkerBudgets.newBuilder()
        .setGroupId("ringshift-workers").setPerSourceBytesPerSecond(0).setPerZoneLinkBytesPerSecond(0)
        .setTimestampMillis(T0).build();
  }

  static RejectedEvent fullRejectedEvent() {
    return RejectedEvent.newBuilder()
        .setSourceTopic("ring.membership")
        .setSourcePartition(2)
        .setSourceOffset(1234)
        .setKey("eu-west%2Fcache/node-0003")
        .setValue(bytes(40, 7))
        .setReason("JOIN of node node-0003: it is already a member of cluster eu-west/cache")
        .setClusterId("eu-west/cache")
        .setRequestId("5b0f3c1e-8a51-4d7e-9d52-0c8e1f0a7b21")
        .setTimestampMillis(T0 + 10)
        .build();
  }

  static RejectedEvent minimalRejectedEvent() {
    return RejectedEvent.newBuilder()
        .setSourceTopic("ring.membership")
        .setSourcePartition(0)
        .setSourceOffset(0)
        .setReason("malformed membership event: not a single-object message")
        .setTimestampMillis(T0 + 11)
        .build();
  }

  static ClusterState fullClusterState() {
    return ClusterState.newBuilder()
        .setClusterId("eu-west/cache")
        .setVnodes(256)
        .setPolicyId("balanced-tokens/zone-aware-walk/v1")
        .setReplicas(3)
        .setActiveEpoch(42)
        .setActiveMembers(members())
        .setActiveChecksum(bytes(32, 8))
        .setInFlight(InFlightEpoch.newBuilder()
            .setEpoch(43)
            .setPlanVersion(2)
            .setMembers(members())
            .setChecksum(bytes(32, 9))
            .setCause(minimalMembershipEvent())
            .setDeadNodes(List.of("node-0007"))
            .setVerifiedTaskIds(List.of("eu-west%2Fcache/43/copy/0000000000000001-0000000000000002/node-0001"))
            .setCaughtUpTaskIds(List.of("eu-west%2Fcache/43/repair/0000000000000002-0000000000000003/node-0002"))
            .setFenceRequested(true)
            .build())
        .setQueue(List.of(minimalMembershipEvent()))
        .setPublished(PublishedEpoch.newBuilder().setEpoch(41).setMembers(members()).setChecksum(bytes(32, 11))
            .build())
        .setComplete(PublishedEpoch.newBuilder().setEpoch(40).setMembers(members()).setChecksum(bytes(32, 12))
            .build())
        .setUnpublished(List.of(UnpublishedEpoch.newBuilder().setEpoch(42).setChecksum(bytes(32, 8))
            .setCause(minimalMembershipEvent())
            .setTaskIds(List.of("eu-west%2Fcache/42/cleanup/0000000000000001-0000000000000002/node-0003"))
            .build()))
        .setSkippedEpochs(2)
        .setRejectedAttempts(1)
        .setHeld("epoch 39 was rejected by the publisher (SEQUENCE: ...)")
        .setReplannedChanges(List.of(minimalMembershipEvent()))
        .setStrays(List.of(io.ringshift.schemas.avro.StrayCopy.newBuilder().setNode("node-0007").setZone("az-2")
            .setRangeStart(-5L).setRangeEnd(17L).build()))
        .build();
  }

  static ClusterState minimalClusterState() {
    return ClusterState.newBuilder()
        .setClusterId("eu-west/cache")
        .setVnodes(256)
        .setReplicas(3)
        .setActiveEpoch(1)
        .setActiveMembers(members())
        .setActiveChecksum(bytes(32, 10))
        .setQueue(List.of())
        .build();
  }

  static List<MemberSpec> members() {
    List<MemberSpec> members = new ArrayList<>();
    members.add(member("node-0001", "az-1", 1.0, MemberSpecState.ACTIVE));
    members.add(member("node-0002", "az-2", 2.5, MemberSpecState.ACTIVE));
    members.add(member("node-0003", "az-3", 0.75, MemberSpecState.FILLING));
    members.add(member("nœud-ünïcode", "az-1", 1.0, MemberSpecState.ACTIVE));
    return members;
  }

  static MemberSpec member(String id, String zone, double weight, MemberSpecState state) {
    return MemberSpec.newBuilder().setId(id).setZone(zone).setWeight(weight).setState(state).build();
  }

  /** An INIT event, the one action that uses the membership fields, with zone and weight set as well. */
  static MembershipEvent fullMembershipEvent() {
    return MembershipEvent.newBuilder()
        .setClusterId("eu-west/cache")
        .setNodeId("")
        .setAction(MembershipAction.INIT)
        .setZone("az-1")
        .setWeight(2.5)
        .setRequestId("5b0f3c1e-8a51-4d7e-9d52-0c8e1f0a7b21")
        .setRequestedBy("alice")
        .setTimestampMillis(T0)
        .setInitialMembers(members())
        .setPolicyId("balanced-tokens/zone-aware-walk/v1")
        .setVnodes(256)
        .setReplicas(3)
        .setEpoch(7L)
        .build();
  }

  static MembershipEvent minimalMembershipEvent() {
    return MembershipEvent.newBuilder()
        .setClusterId("eu-west/cache")
        .setNodeId("node-0003")
        .setAction(MembershipAction.DRAIN)
        .setRequestId("0d8e4c52-7f4a-4c6b-b1d5-2f7a9e3c6d10")
        .setRequestedBy("bob")
        .setTimestampMillis(T0 + 1)
        .build();
  }

  static EpochRecord fullEpochRecord() {
    return EpochRecord.newBuilder()
        .setClusterId("eu-west/cache")
        .setEpoch(43)
        .setState(EpochState.PUBLISHED)
        .setCause(fullMembershipEvent())
        .setMembers(members())
        .setVnodes(256)
        .setReplicas(3)
        .setHashId("xxh3-64/seed=0/utf-8")
        .setPolicyId("vnode-ring/zone-aware-walk/v1")
        .setMembershipDigest(bytes(32, 1))
        .setTargetChecksum(bytes(32, 2))
        .setPreviousChecksum(bytes(32, 3))
        .setSignature(bytes(64, 4))
        .setSigningKeyId("publisher-2026-11")
        .setDiffSummary(DiffSummary.newBuilder()
            .setChangedRanges(768)
            .setChangedFraction(0.0247)
            .setMovedReplicaFraction(0.0083)
            .setPrimaryMovedFraction(0.0081)
            .setIdealMovedFraction(0.0082)
            .setTasks(768)
            .setEstimatedBytes(209_715_200_000L)
            .build())
        .setSupersedes(43L)
        .setPlanVersion(1)
        .setReason("re-planned after FAIL of node-0007, a source of 12 tasks")
        .setFilling(List.of(io.ringshift.schemas.avro.FillingRange.newBuilder()
            .setStart(-4_000_000_000_000_000_000L).setEnd(12_345L).setNode("node-0002").build()))
        .setTimestampMillis(T0 + 2)
        // The fields of a STAGED record (a record, not a valid one: stages carry no filling marks).
        .setStage(1)
        .setPreviousEpoch(42L)
        .setPreviousMembers(members())
        .build();
  }

  static EpochRecord minimalEpochRecord() {
    return EpochRecord.newBuilder()
        .setClusterId("eu-west/cache")
        .setEpoch(0)
        .setState(EpochState.PLANNED)
        .setCause(minimalMembershipEvent())
        .setMembers(members())
        .setVnodes(256)
        .setReplicas(3)
        .setHashId("xxh3-64/seed=0/utf-8")
        .setPolicyId("vnode-ring/zone-aware-walk/v1")
        .setMembershipDigest(bytes(32, 5))
        .setTargetChecksum(bytes(32, 6))
        .setTimestampMillis(T0 + 3)
        .build();
  }

  /**
   * Every field set, the optional cancelledEpoch included (a combination no writer makes: only a cancel's CLEANUP names
   * a cancelled epoch; this is a codec sample); it wraps past the top of the ring (start above 2^63), fence requested.
   */
  static RangeCopyTask fullRangeCopyTask() {
    long start = 0xF000_0000_0000_0000L;
    long end = 0x0000_0000_0000_00FFL;
    return RangeCopyTask.newBuilder()
        .setTaskId(RecordKeys.taskId("eu-west/cache", 43, TaskKind.COPY, start, end, "node-0007"))
        .setClusterId("eu-west/cache")
        .setEpoch(43)
        .setKind(TaskKind.COPY)
        .setRangeStart(start)
        .setRangeEnd(end)
        .setSources(new ArrayList<>(List.of("node-0002", "node-0001")))
        .setTarget("node-0007")
        .setTargetZone("az-2")
        .setEstimatedBytes(1L << 33)
        .setTimestampMillis(T0 + 4)
        .setFenceRequested(true)
        .setCancelledEpoch(44L)
        .build();
  }

  /** A CLEANUP task whose range has no new replica left to wait for. */
  static RangeCopyTask minimalRangeCopyTask() {
    return RangeCopyTask.newBuilder()
        .setTaskId(RecordKeys.taskId("eu-west/cache", 44, TaskKind.CLEANUP, 10, 20, "node-0002"))
        .setClusterId("eu-west/cache")
        .setEpoch(44)
        .setKind(TaskKind.CLEANUP)
        .setRangeStart(10)
        .setRangeEnd(20)
        .setSources(new ArrayList<>())
        .setTarget("node-0002")
        .setTargetZone("az-2")
        .setEstimatedBytes(0)
        .setTimestampMillis(T0 + 5)
        .build();
  }

  static TaskStatus fullTaskStatus() {
    return TaskStatus.newBuilder()
        .setTaskId(fullRangeCopyTask().getTaskId())
        .setClusterId("eu-west/cache")
        .setEpoch(43)
        .setState(TaskState.VERIFIED)
        .setCopiedBytes(8_590_000_000L)
        .setLastCopiedToken(0xF7FF_FFFF_FFFF_FFFFL)
        .setWatermark(1_000_000L)
        .setCaughtUpPosition(1_000_450L)
        .setFencePosition(1_000_500L)
        .setDigest(bytes(32, 7))
        .setBlockedReason("waited 40 s for the fence of node-0002")
        .setError("first attempt: digest mismatch at fence position 999 on node-0001")
        .setWorkerId("worker-3")
        .setTimestampMillis(T0 + 6)
        .setSource("node-0002")
        .setStartedMillis(T0 + 1)
        .setTargetDigest(bytes(32, 8))
        .setTargetIncarnation("0b9c4f1e-3f6a-4c55-9a57-2d3b1c8e7f10")
        .setRangeBytes(1L << 30)
        .build();
  }

  static TaskStatus minimalTaskStatus() {
    return TaskStatus.newBuilder()
        .setTaskId(fullRangeCopyTask().getTaskId())
        .setClusterId("eu-west/cache")
        .setEpoch(43)
        .setState(TaskState.PENDING)
        .setCopiedBytes(0)
        .setTimestampMillis(T0 + 7)
        .build();
  }

  static io.ringshift.schemas.avro.RingSnapshot fullRingSnapshot() {
    io.ringshift.schemas.avro.RingSnapshot record = minimalRingSnapshot();
    record.setPreviousChecksum(bytes(32, 8));
    record.setSignature(bytes(64, 9));
    record.setSigningKeyId("publisher-2026-11");
    record.setFilling(List.of(io.ringshift.schemas.avro.FillingRange.newBuilder()
        .setStart(-4_000_000_000_000_000_000L).setEnd(12_345L).setNode("node-0002").build()));
    // The fields of a transition stage (a record, not a valid snapshot: stages carry no filling marks).
    record.setFormatVersion(RingSnapshotCodec.STAGE_FORMAT_VERSION);
    record.setStage(io.ringshift.schemas.avro.RingStage.WRITE_BOTH_READ_NEW);
    record.setPreviousEpoch(record.getEpoch() - 1);
    record.setPreviousMembers(record.getMembers());
    return record;
  }

  static io.ringshift.schemas.avro.RingSnapshot minimalRingSnapshot() {
    return new RingSnapshotCodec().toRecord(Rings.varied());
  }

  /** {@code length} distinct bytes derived from {@code seed}. */
  static ByteBuffer bytes(int length, int seed) {
    byte[] out = new byte[length];
    for (int i = 0; i < length; i++) {
      out[i] = (byte) (seed * 31 + i * 7);
    }
    return ByteBuffer.wrap(out);
  }
}
