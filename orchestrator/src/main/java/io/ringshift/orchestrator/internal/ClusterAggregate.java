package io.ringshift.orchestrator.internal;

import io.ringshift.orchestrator.EpochPlanner;
import io.ringshift.orchestrator.PlannedTask;
import io.ringshift.orchestrator.EpochPlanner.Plan;
import io.ringshift.ring.Member;
import io.ringshift.ring.RingException;
import io.ringshift.ring.RingSnapshot;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The orchestrator's state for one cluster, and its transitions. Pure: each transition returns the next state
 * and the records to emit, so the Kafka Streams processor only stores the one and sends the others, and an
 * exactly-once commit makes both happen together or not at all.
 *
 * <p>Rules: at most one epoch is in flight; a change that arrives meanwhile is validated against the
 * membership it will apply to (the in-flight target plus the changes queued before it) and queued; when every
 * task of the in-flight epoch is VERIFIED the epoch is READY, becomes active, and the next queued change is
 * planned from it. A FAIL of a node that the in-flight plan copies from or to cannot wait: the epoch is
 * re-planned (same epoch number, next plan version) from the active ring to the in-flight target without the
 * dead node, and the old plan is recorded as SUPERSEDED.
 *
 * @param active the active ring (epoch, membership, checksum); {@code null} before the cluster is initialised
 * @param inFlight the epoch being migrated to, or {@code null}
 * @param queue changes waiting for the in-flight epoch, in arrival order
 */
public record ClusterAggregate(RingSnapshot active, InFlight inFlight, List<MembershipChange> queue) {

  public ClusterAggregate {
    queue = List.copyOf(queue);
  }

  /**
   * The epoch in flight.
   *
   * @param plan the current plan of the epoch
   * @param cause the change that the epoch carries out
   * @param deadNodes nodes confirmed dead since the active epoch: never sources
   * @param verified ids of the plan's tasks reported VERIFIED
   */
  public record InFlight(Plan plan, MembershipChange cause, Set<String> deadNodes, Set<String> verified) {
    public InFlight {
      deadNodes = Set.copyOf(deadNodes);
      verified = Set.copyOf(verified);
    }

    boolean involves(String nodeId) {
      return plan.tasks().stream().anyMatch(t -> t.target().equals(nodeId) || t.sources().contains(nodeId));
    }

    boolean complete() {
      return plan.tasks().stream().allMatch(t -> verified.contains(t.taskId()));
    }
  }

  /** What a transition asks the processor to emit, in order. */
  public sealed interface Effect permits EpochEvent, TaskEvent, Rejection {}

  /** An epoch record: PLANNED, READY or SUPERSEDED. */
  public record EpochEvent(State state, Plan plan, MembershipChange cause, Long supersedes, String reason)
      implements Effect {
    /** The states the orchestrator writes. */
    public enum State {
      PLANNED,
      READY,
      SUPERSEDED
    }
  }

  /** A task to put on ring.tasks, of plan {@code planVersion} of {@code epoch}. */
  public record TaskEvent(long epoch, int planVersion, PlannedTask task) implements Effect {}

  /** A refused event; nothing else changed. */
  public record Rejection(String reason) implements Effect {}

  /** The next state and what to emit. */
  public record Transition(ClusterAggregate next, List<Effect> effects) {}

  /** The state of a cluster nobody has initialised. */
  public static ClusterAggregate uninitialised() {
    return new ClusterAggregate(null, null, List.of());
  }

  public boolean initialised() {
    return active != null;
  }

  /**
   * Declares a new cluster with its initial membership as epoch 1. A new cluster holds no data, so the epoch
   * has no tasks and is READY at once.
   */
  public Transition init(RingSnapshot initial, MembershipChange cause) {
    if (initialised()) {
      return reject("cluster " + active.clusterId() + " already exists (active epoch " + active.epoch()
          + "); init declares a new cluster only");
    }
    Plan plan = new Plan(initial, initial.diffTo(initial), 1, List.of());
    return new Transition(new ClusterAggregate(initial, null, List.of()), List.of(
        new EpochEvent(EpochEvent.State.PLANNED, plan, cause, null, null),
        new EpochEvent(EpochEvent.State.READY, plan, cause, null, null)));
  }

  /** A membership change: planned at once when nothing is in flight, otherwise queued or re-planned. */
  public Transition onChange(MembershipChange change, long clusterBytes) {
    if (!initialised()) {
      return reject("cluster is unknown; declare it first with ringshift init");
    }
    List<Member> projected = projectedMembers();
    MembershipChange.Outcome outcome = change.applyTo(active.clusterId(), projected);
    if (outcome instanceof MembershipChange.Refused refused) {
      return reject(refused.reason());
    }
    if (inFlight == null) {
      return plan(((MembershipChange.Applied) outcome).members(), change, change.isFailure()
          ? Set.of(change.nodeId()) : Set.of(), 1, List.of(), clusterBytes);
    }
    if (change.isFailure() && inFlight.involves(change.nodeId())) {
      return replan(change, clusterBytes);
    }
    List<MembershipChange> queued = new ArrayList<>(queue);
    queued.add(change);
    return new Transition(new ClusterAggregate(active, inFlight, queued), List.of());
  }

  /** A task reported VERIFIED: when it was the last one, the epoch is READY and the next change is planned. */
  public Transition onVerified(String taskId, long epoch, long clusterBytes) {
    if (inFlight == null || inFlight.plan().target().epoch() != epoch
        || inFlight.plan().tasks().stream().noneMatch(t -> t.taskId().equals(taskId))) {
      return new Transition(this, List.of()); // a status of a superseded plan or an old epoch: nothing to do
    }
    Set<String> verified = new HashSet<>(inFlight.verified());
    verified.add(taskId);
    InFlight progressed = new InFlight(inFlight.plan(), inFlight.cause(), inFlight.deadNodes(), verified);
    if (!progressed.complete()) {
      return new Transition(new ClusterAggregate(active, progressed, queue), List.of());
    }
    return completeAndContinue(progressed, clusterBytes);
  }

  private Transition completeAndContinue(InFlight done, long clusterBytes) {
    List<Effect> effects = new ArrayList<>();
    effects.add(new EpochEvent(EpochEvent.State.READY, done.plan(), done.cause(), null, null));
    ClusterAggregate state = new ClusterAggregate(done.plan().target(), null, List.of());
    for (MembershipChange next : queue) {
      Transition t = state.onChange(next, clusterBytes);
      effects.addAll(t.effects());
      state = t.next();
      // Everything after the first planned change stays queued behind it.
      if (state.inFlight() != null) {
        List<MembershipChange> rest = queue.subList(queue.indexOf(next) + 1, queue.size());
        state = new ClusterAggregate(state.active(), state.inFlight(), rest);
        break;
      }
    }
    return new Transition(state, effects);
  }

  private Transition plan(List<Member> members, MembershipChange cause, Set<String> dead, int planVersion,
      List<Effect> before, long clusterBytes) {
    long epoch = active.epoch() + 1;
    Plan plan;
    try {
      plan = EpochPlanner.plan(active, members, epoch, planVersion, dead, clusterBytes);
    } catch (RingException e) {
      return reject(e.getMessage());
    }
    List<Effect> effects = new ArrayList<>(before);
    effects.add(new EpochEvent(EpochEvent.State.PLANNED, plan, cause, null, null));
    for (PlannedTask task : plan.tasks()) {
      effects.add(new TaskEvent(epoch, planVersion, task));
    }
    InFlight next = new InFlight(plan, cause, dead, Set.of());
    if (next.complete()) {
      // Nothing to copy (for example a weight change that moves no range): ready at once.
      Transition t = new ClusterAggregate(active, next, queue).completeAndContinue(next, clusterBytes);
      effects.addAll(t.effects());
      return new Transition(t.next(), effects);
    }
    return new Transition(new ClusterAggregate(active, next, queue), effects);
  }

  private Transition replan(MembershipChange failure, long clusterBytes) {
    List<Member> target = new ArrayList<>(inFlight.plan().target().members());
    target.removeIf(m -> m.id().equals(failure.nodeId()));
    Set<String> dead = new HashSet<>(inFlight.deadNodes());
    dead.add(failure.nodeId());
    Plan old = inFlight.plan();
    EpochEvent superseded = new EpochEvent(EpochEvent.State.SUPERSEDED, old, inFlight.cause(), null,
        "node " + failure.nodeId() + " failed while plan " + old.planVersion() + " copied from or to it");
    // The re-planned epoch carries out both the original change and the failure; its cause stays the original.
    return plan(target, inFlight.cause(), dead, old.planVersion() + 1, List.of(superseded), clusterBytes);
  }

  /** The membership the next queued change applies to: the in-flight target plus the queued changes. */
  List<Member> projectedMembers() {
    List<Member> members = inFlight != null ? inFlight.plan().target().members() : active.members();
    for (MembershipChange queued : queue) {
      if (queued.applyTo(active.clusterId(), members) instanceof MembershipChange.Applied applied) {
        members = applied.members();
      }
    }
    return members;
  }

  private Transition reject(String reason) {
    return new Transition(this, List.of(new Rejection(reason)));
  }

  /** Task ids of the in-flight plan with their VERIFIED flag, for status displays. */
  public Map<String, Boolean> taskProgress() {
    Map<String, Boolean> progress = new LinkedHashMap<>();
    if (inFlight != null) {
      inFlight.plan().tasks().forEach(t -> progress.put(t.taskId(), inFlight.verified().contains(t.taskId())));
    }
    return progress;
  }
}
