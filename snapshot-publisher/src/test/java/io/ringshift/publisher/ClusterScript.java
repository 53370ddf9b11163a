package io.ringshift.publisher;

import io.ringshift.protocol.RecordKeys;
import io.ringshift.ring.Member;
import io.ringshift.ring.RangeChange;
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
 * repair epoch after it). Each step assumes the one before was published. Tasks are planned here, one per (changed
 * range, new replica), without the orchestrator's coalescing of adjacent ranges: the publisher must accept any
 * task layout that covers the diff, and its tests do not lean on the orchestrator's planner.
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

  /**
   * An epoch of the membership {@code next}, READY at once without tasks, marked filling relative to the last complete
   * ring: what the old publisher accepted, and what no correct orchestrator writes when {@code next} brings back a
   * node an earlier failure epoch removed (a forged or buggy record, for the publisher to catch).
   */
  public Step markedAgainstLastComplete(List<Member> next, MembershipAction action, String node) {
    members = next;
    epoch++;
    RingSnapshot ring = active.toBuilder().epoch(epoch).members(next).build();
    return advance(ring, cause(action, node), RingDiff.between(active, ring), List.of(),
        FillingRange.between(lastComplete, ring), false);
  }

  /**
   * What the orchestrator does after a rejection: back to {@code published} (a complete epoch), its numbers up to
   * {@code lastUsed} never used again; the next step is {@code lastUsed + 1}, chained to {@code published}.
   */
  public void rollBackTo(Step published, long lastUsed) {
    active = published.ring();
    lastComplete = published.ring();
    members = new ArrayList<>(published.ring().members());
    epoch = lastUsed;
  }

  /** The members of the active ring, in order. */
  public List<Member> members() {
    return List.copyOf(members);
  }

  /** The repair epoch after a failure: same membership, REPAIR tasks from the last complete ring, no marks. */
  public Step repair() {
    epoch++;
    RingSnapshot target = lastComplete.toBuilder().epoch(epoch).members(members).build();
    return advance(target, cause(MembershipAction.FAIL, dead.iterator().next()), RingDiff.between(active, target),
        tasks(lastComplete, target, dead), List.of(), true);
  }

  private Step planned(List<Member> next, MembershipEvent cause) {
    return planned(next, cause, Set.of());
  }

  private Step planned(List<Member> next, MembershipEvent cause, Set<String> deadNodes) {
    members = next;
    epoch++;
    RingSnapshot target = active.toBuilder().epoch(epoch).members(next).build();
    return advance(target, cause, RingDiff.between(active, target), tasks(active, target, deadNodes), List.of(),
        true);
  }

  /**
   * One task per (changed range, new replica) from {@code from} to {@code to}: a REPAIR when the range lost a
   * replica to a dead node, otherwise a COPY, from the range's live old replicas.
   */
  private List<RangeCopyTask> tasks(RingSnapshot from, RingSnapshot to, Set<String> deadNodes) {
    List<RangeCopyTask> tasks = new ArrayList<>();
    for (RangeChange change : RingDiff.between(from, to).changes()) {
      TaskKind kind = change.removed().stream().anyMatch(deadNodes::contains) ? TaskKind.REPAIR : TaskKind.COPY;
      List<String> sources = change.before().stream().filter(n -> !deadNodes.contains(n)).toList();
      for (String target : change.added()) {
        String zone = to.members().stream().filter(m -> m.id().equals(target)).findFirst().orElseThrow().zone();
        tasks.add(RangeCopyTask.newBuilder()
            .setTaskId(RecordKeys.taskId(cluster, to.epoch(), kind, change.start(), change.end(), target))
            .setClusterId(cluster)
            .setEpoch(to.epoch())
            .setKind(kind)
            .setRangeStart(change.start())
            .setRangeEnd(change.end())
            .setSources(sources)
            .setTarget(target)
            .setTargetZone(zone)
            .setEstimatedBytes(0)
            .setTimestampMillis(0)
            .build());
      }
    }
    return tasks;
  }

  private Step advance(RingSnapshot ring, MembershipEvent cause, RingDiff diff, List<RangeCopyTask> tasks,
      List<FillingRange> filling, boolean complete) {
    EpochRecord plannedRecord = record(EpochState.PLANNED, ring, active, cause, diff, tasks.size(), filling);
    EpochRecord ready = record(EpochState.READY, ring, active, cause, diff, tasks.size(), filling);
    List<TaskStatus> verified = tasks.stream().map(t -> Step.status(t, TaskState.VERIFIED)).toList();
    active = ring;
    if (complete) {
      lastComplete = ring;
    }
    return new Step(plannedRecord, ready, ring, tasks, verified);
  }

  private EpochRecord record(EpochState state, RingSnapshot ring, RingSnapshot previous, MembershipEvent cause,
      RingDiff diff, int tasks, List<FillingRange> filling) {
    List<MemberSpec> specs = ring.members().stream()
        .map(m -> new MemberSpec(m.id(), m.zone(), m.weight(), MemberSpecState.valueOf(m.state().name()), java.util.List.of()))
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
