package io.ringshift.publisher;

import io.ringshift.orchestrator.EpochPlanner;
import io.ringshift.orchestrator.PlannedTask;
import io.ringshift.ring.Member;
import io.ringshift.ring.RingDiff;
import io.ringshift.ring.RingSnapshot;
import io.ringshift.protocol.FillingRange;
import io.ringshift.protocol.RingSnapshotCodec;
import io.ringshift.schemas.avro.DiffSummary;
import io.ringshift.schemas.avro.EpochRecord;
import io.ringshift.schemas.avro.EpochState;
import io.ringshift.schemas.avro.MemberSpec;
import io.ringshift.schemas.avro.MemberSpecState;
import io.ringshift.schemas.avro.MembershipAction;
import io.ringshift.schemas.avro.MembershipEvent;
import io.ringshift.schemas.avro.RangeCopyTask;
import io.ringshift.schemas.avro.TaskKind;
import io.ringshift.schemas.avro.TaskState;
import io.ringshift.schemas.avro.TaskStatus;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * Writes the epoch records, tasks and statuses an orchestrator and its workers would write for one cluster, step
 * by step, following the protocol: INIT is epoch 1; a JOIN or DRAIN is an epoch with COPY tasks planned from the
 * active ring; a FAIL is a failure epoch, READY at once, without tasks, with filling marks relative to the last
 * complete ring, when the ring keeps at least R zones; the repair epoch after it has the same membership, no marks
 * and REPAIR tasks planned from the last complete ring. A FAIL that leaves fewer than R zones is planned like a
 * drain instead, with REPAIR tasks for the dead node's ranges, and is READY once they are VERIFIED (no marks, no
 * repair epoch after it). Each step assumes the one before was published. Tasks are planned by the orchestrator's public
 * planner, as the orchestrator plans them; the publisher itself never uses it.
 */
public final class ClusterScript {
  public static final int VNODES = 16;
  public static final int REPLICAS = 3;

  /** One epoch: its records and the tasks and VERIFIED statuses that make it ready. */
  public record Step(EpochRecord planned, EpochRecord ready, RingSnapshot ring, List<RangeCopyTask> tasks,
      List<TaskStatus> verified) {
    public long epoch() {
      return ready.getEpoch();
    }

    /** The status of {@code task} in {@code state}. */
    public static TaskStatus status(RangeCopyTask task, TaskState state) {
      return TaskStatus.newBuilder()
          .setTaskId(task.getTaskId())
          .setClusterId(task.getClusterId())
          .setEpoch(task.getEpoch())
          .setState(state)
          .setCopiedBytes(0)
          .setTimestampMillis(0)
          .build();
    }
  }

  private final String cluster;
  private final int vnodes;
  private List<Member> members = new ArrayList<>();
  private RingSnapshot active;
  private RingSnapshot lastComplete;
  private final Set<String> dead = new java.util.HashSet<>();
  private long epoch;

  /** A cluster of {@value #VNODES} tokens per node and {@value #REPLICAS} replicas. */
  public ClusterScript(String cluster) {
    this(cluster, VNODES);
  }

  public ClusterScript(String cluster, int vnodes) {
    this.cluster = cluster;
    this.vnodes = vnodes;
  }

  public String cluster() {
    return cluster;
  }

  /** Epoch 1 of {@code nodes} nodes node-01.. in zones az-1..az-3 in turn. */
  public Step init(int nodes) {
    return init(nodes, 3);
  }

  /** Epoch 1 of {@code nodes} nodes node-01.. in zones az-1..az-{@code zones} in turn. */
  public Step init(int nodes, int zones) {
    for (int i = 1; i <= nodes; i++) {
      members.add(Member.of(String.format("node-%02d", i), "az-" + ((i - 1) % zones + 1)));
    }
    epoch = 1;
    RingSnapshot ring = RingSnapshot.builder().clusterId(cluster).epoch(epoch).vnodes(vnodes).replicas(REPLICAS)
        .members(members).build();
    return advance(ring, cause(MembershipAction.INIT, ""), null, List.of(), List.of(), true);
  }

  /** A node joins: COPY tasks from the active ring. */
  public Step join(String node, String zone) {
    List<Member> next = new ArrayList<>(members);
    next.add(Member.of(node, zone));
    return planned(next, cause(MembershipAction.JOIN, node));
  }

  /** A node drains: COPY tasks from the active ring. */
  public Step drain(String node) {
    List<Member> next = new ArrayList<>(members);
    next.removeIf(m -> m.id().equals(node));
    return planned(next, cause(MembershipAction.DRAIN, node));
  }

  /**
   * A node fails: published at once without tasks, its lost replicas marked filling; or, when the ring is left
   * with fewer than R zones, planned with REPAIR tasks and published once they are verified.
   */
  public Step fail(String node) {
    List<Member> next = new ArrayList<>(members);
    next.removeIf(m -> m.id().equals(node));
    dead.add(node);
    RingSnapshot ring = active.toBuilder().epoch(epoch + 1).members(next).build();
    if (ring.zones().size() < ring.replicas()) {
      return planned(next, cause(MembershipAction.FAIL, node), Set.copyOf(dead));
    }
    members = next;
    epoch++;
    List<FillingRange> filling = FillingRange.between(lastComplete, ring);
    return advance(ring, cause(MembershipAction.FAIL, node), RingDiff.between(active, ring), List.of(), filling,
        false);
  }

  /** The repair epoch after a failure: same membership, REPAIR tasks from the last complete ring, no marks. */
  public Step repair() {
    epoch++;
    EpochPlanner.Plan plan = EpochPlanner.plan(lastComplete, members, epoch, 0, dead, 0);
    return advance(plan.target(), cause(MembershipAction.FAIL, dead.iterator().next()),
        RingDiff.between(active, plan.target()), plan.tasks(), List.of(), true);
  }

  private Step planned(List<Member> next, MembershipEvent cause) {
    return planned(next, cause, Set.of());
  }

  private Step planned(List<Member> next, MembershipEvent cause, Set<String> deadNodes) {
    members = next;
    epoch++;
    EpochPlanner.Plan plan = EpochPlanner.plan(active, next, epoch, 0, deadNodes, 0);
    return advance(plan.target(), cause, plan.diff(), plan.tasks(), List.of(), true);
  }

  private Step advance(RingSnapshot ring, MembershipEvent cause, RingDiff diff, List<PlannedTask> planned,
      List<FillingRange> filling, boolean complete) {
    List<RangeCopyTask> tasks = planned.stream().map(t -> task(t, ring.epoch())).toList();
    EpochRecord plannedRecord = record(EpochState.PLANNED, ring, active, cause, diff, tasks.size(), filling);
    EpochRecord ready = record(EpochState.READY, ring, active, cause, diff, tasks.size(), filling);
    List<TaskStatus> verified = tasks.stream().map(t -> Step.status(t, TaskState.VERIFIED)).toList();
    active = ring;
    if (complete) {
      lastComplete = ring;
    }
    return new Step(plannedRecord, ready, ring, tasks, verified);
  }

  private RangeCopyTask task(PlannedTask t, long epochNumber) {
    return RangeCopyTask.newBuilder()
        .setTaskId(t.taskId())
        .setClusterId(cluster)
        .setEpoch(epochNumber)
        .setKind(TaskKind.valueOf(t.kind().name()))
        .setRangeStart(t.rangeStart())
        .setRangeEnd(t.rangeEnd())
        .setSources(t.sources())
        .setTarget(t.target())
        .setTargetZone(t.targetZone())
        .setEstimatedBytes(t.estimatedBytes())
        .setTimestampMillis(0)
        .build();
  }

  private EpochRecord record(EpochState state, RingSnapshot ring, RingSnapshot previous, MembershipEvent cause,
      RingDiff diff, int tasks, List<FillingRange> filling) {
    List<MemberSpec> specs = ring.members().stream()
        .map(m -> new MemberSpec(m.id(), m.zone(), m.weight(), MemberSpecState.valueOf(m.state().name())))
        .toList();
    return EpochRecord.newBuilder()
        .setClusterId(cluster)
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
        .setPreviousChecksum(previous == null ? null : ByteBuffer.wrap(previous.checksum()))
        .setDiffSummary(diff == null ? null : DiffSummary.newBuilder()
            .setChangedRanges(diff.changes().size())
            .setChangedFraction(diff.changedFraction())
            .setMovedReplicaFraction(diff.movedReplicaFraction())
            .setPrimaryMovedFraction(diff.primaryMovedFraction())
            .setIdealMovedFraction(diff.idealMovedFraction())
            .setTasks(tasks)
            .setEstimatedBytes(0)
            .build())
        .setFilling(RingSnapshotCodec.toAvro(filling))
        .setTimestampMillis(0)
        .build();
  }

  private MembershipEvent cause(MembershipAction action, String node) {
    return MembershipEvent.newBuilder()
        .setClusterId(cluster)
        .setNodeId(node)
        .setAction(action)
        .setRequestId("req-" + cluster + "-" + (epoch + 1))
        .setRequestedBy("test")
        .setTimestampMillis(0)
        .build();
  }
}
