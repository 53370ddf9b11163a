package io.ringshift.orchestrator.admin;

import io.ringshift.protocol.EpochRecords;
import io.ringshift.protocol.RecordSerdes;

import io.ringshift.ring.RingSnapshot;
import io.ringshift.protocol.RecordKeys;
import io.ringshift.schemas.avro.DiffSummary;
import io.ringshift.schemas.avro.EpochRecord;
import io.ringshift.schemas.avro.EpochState;
import io.ringshift.schemas.avro.MembershipAction;
import io.ringshift.schemas.avro.MembershipEvent;
import io.ringshift.schemas.avro.RangeCopyTask;
import io.ringshift.schemas.avro.RejectedEvent;
import io.ringshift.schemas.avro.TaskKind;
import io.ringshift.schemas.avro.TaskState;
import io.ringshift.schemas.avro.TaskStatus;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.Locale;

/** Records as the orchestrator and workers write them, for the pure tests of views and reports. */
public final class ControlRecords {
  static {
    RecordSerdes.trustGeneratedClasses(); // the builders below fill EpochRecord.filling's default
  }

  /** 2026-01-02T03:04:05Z. */
  public static final long T0 = 1_767_323_045_000L;

  private ControlRecords() {}

  public static RingSnapshot ring(String cluster, long epoch, int nodes) {
    var b = RingSnapshot.builder().clusterId(cluster).epoch(epoch).vnodes(16).replicas(3);
    for (int i = 1; i <= nodes; i++) {
      b.addMember(String.format(Locale.ROOT, "node-%03d", i), "az-" + (1 + (i - 1) % 3));
    }
    return b.build();
  }

  public static MembershipEvent cause(String cluster, MembershipAction action, String node, String requestId) {
    return MembershipEvent.newBuilder()
        .setClusterId(cluster)
        .setNodeId(node)
        .setAction(action)
        .setZone(action == MembershipAction.JOIN ? "az-2" : null)
        .setRequestId(requestId)
        .setRequestedBy("alice")
        .setTimestampMillis(T0)
        .build();
  }

  public static EpochRecord epoch(RingSnapshot ring, EpochState state, int planVersion, MembershipEvent cause, int tasks,
      long at) {
    return EpochRecord.newBuilder()
        .setClusterId(ring.clusterId())
        .setEpoch(ring.epoch())
        .setPlanVersion(planVersion)
        .setState(state)
        .setCause(cause)
        .setMembers(EpochRecords.specs(ring.members()))
        .setVnodes(ring.vnodes())
        .setReplicas(ring.replicas())
        .setHashId(ring.hashId())
        .setPolicyId(ring.policyId())
        .setMembershipDigest(ByteBuffer.wrap(new byte[32]))
        .setTargetChecksum(ByteBuffer.wrap(ring.checksum()))
        .setDiffSummary(new DiffSummary(tasks, 0.25, 0.0625, 0.125, 0.0625, tasks, 1000L * tasks))
        .setReason(state == EpochState.SUPERSEDED ? "node node-002 failed while plan " + planVersion
            + " copied from or to it" : null)
        .setTimestampMillis(at)
        .build();
  }

  public static RangeCopyTask task(String cluster, long epoch, long start, long end, String target, List<String> sources) {
    return RangeCopyTask.newBuilder()
        .setTaskId(RecordKeys.taskId(cluster, epoch, TaskKind.COPY, start, end, target))
        .setClusterId(cluster)
        .setEpoch(epoch)
        .setKind(TaskKind.COPY)
        .setRangeStart(start)
        .setRangeEnd(end)
        .setSources(sources)
        .setTarget(target)
        .setTargetZone("az-2")
        .setEstimatedBytes(4096)
        .setTimestampMillis(T0)
        .build();
  }

  public static TaskStatus status(RangeCopyTask task, TaskState state) {
    return TaskStatus.newBuilder()
        .setTaskId(task.getTaskId())
        .setClusterId(task.getClusterId())
        .setEpoch(task.getEpoch())
        .setState(state)
        .setCopiedBytes(state == TaskState.VERIFIED ? 4096 : 0)
        .setTimestampMillis(T0)
        .build();
  }

  public static RejectedEvent rejected(String cluster, String requestId, String reason, long at) {
    return RejectedEvent.newBuilder()
        .setSourceTopic("ring.membership")
        .setSourcePartition(0)
        .setSourceOffset(7)
        .setKey(RecordKeys.membershipKey(cluster, "node-004"))
        .setReason(reason)
        .setClusterId(cluster)
        .setRequestId(requestId)
        .setTimestampMillis(at)
        .build();
  }
}
