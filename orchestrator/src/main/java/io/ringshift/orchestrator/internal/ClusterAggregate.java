package io.ringshift.orchestrator.internal;

import io.ringshift.orchestrator.MembershipChange;
import io.ringshift.orchestrator.EpochPlanner;
import io.ringshift.orchestrator.EpochPlanner.Plan;
import io.ringshift.orchestrator.PlannedTask;
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
 * <p>Rules: at most one epoch is in flight. A change that arrives meanwhile is validated against the
 * membership it will apply to (the in-flight target plus the changes queued before it, ring rules included)
 * and queued; when every task of the in-flight epoch is VERIFIED the epoch is READY, becomes active, and the
 * queued changes are planned from it in order. A FAIL cannot wait behind anything: while an epoch is in
 * flight it re-plans that epoch at once (same epoch number, next plan version) with the dead node removed
 * from the target and never a source, and the old plan is recorded SUPERSEDED. A task the re-plan keeps
 * (same epoch, kind, range and target) keeps its id and its VERIFIED state; a task it drops is cancelled.
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
   * @param cause the change that the current plan carries out (the FAIL, after a re-plan)
   * @param deadNodes nodes confirmed dead since the active epoch: never sources
   * @param verified ids of the plan's tasks reported VERIFIED
   */
  public record InFlight(Plan plan, MembershipChange cause, Set<String> deadNodes, Set<String> verified) {
    public InFlight {
      deadNodes = Set.copyOf(deadNodes);
      verified = Set.copyOf(verified);
    }

    boolean complete() {
      return plan.tasks().stream().allMatch(t -> verified.contains(t.taskId()));
    }
  }

  /** What a transition asks the processor to emit, in order. */
  public sealed interface Effect permits EpochEvent, TaskEvent, TaskCancelled, Rejection {}

  /**
   * An epoch record: PLANNED, READY or SUPERSEDED.
   *
   * @param previousChecksum checksum of the active ring the epoch follows (the hash chain); null for INIT
   * @param supersedes on the PLANNED record of a re-plan, the epoch whose earlier plan it replaces
   */
  public record EpochEvent(State state, Plan plan, MembershipChange cause, byte[] previousChecksum,
      Long supersedes, String reason) implements Effect {
    /** The states the orchestrator writes. */
    public enum State {
      PLANNED,
      READY,
      SUPERSEDED
    }
  }

  /** A task to put on ring.tasks, of plan {@code planVersion} of {@code epoch}. */
  public record TaskEvent(long epoch, int planVersion, PlannedTask task) implements Effect {}

  /** A task of a superseded plan that the new plan no longer has: a tombstone on ring.tasks. */
  public record TaskCancelled(String taskId) implements Effect {}

  /**
   * A refused change; nothing else changed.
   *
   * @param origin the refused change when it is not the input being processed (a queued change refused when
   *     its turn came); null when it is
   */
  public record Rejection(String reason, MembershipChange origin) implements Effect {}

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
          + "); init declares a new cluster only", null);
    }
    Plan plan = new Plan(initial, initial.diffTo(initial), 0, List.of());
    return new Transition(new ClusterAggregate(initial, null, List.of()), List.of(
        new EpochEvent(EpochEvent.State.PLANNED, plan, cause, null, null, null),
        new EpochEvent(EpochEvent.State.READY, plan, cause, null, null, null)));
  }

  /** A membership change: planned at once when nothing is in flight, re-planned for a FAIL, otherwise queued. */
  public Transition onChange(MembershipChange change, long clusterBytes) {
    return onChange(change, clusterBytes, null);
  }

  private Transition onChange(MembershipChange change, long clusterBytes, MembershipChange origin) {
    if (!initialised()) {
      return reject("cluster is unknown; declare it first with ringshift init", origin);
    }
    if (change.isFailure() && inFlight != null) {
      return replan(change, clusterBytes, origin);
    }
    MembershipChange.Outcome outcome = change.applyTo(active.clusterId(), projectedMembers());
    if (outcome instanceof MembershipChange.Refused refused) {
      return reject(refused.reason(), origin);
    }
    List<Member> members = ((MembershipChange.Applied) outcome).members();
    if (inFlight == null) {
      Set<String> dead = change.isFailure() ? Set.of(change.nodeId()) : Set.of();
      return plan(members, change, dead, 0, Set.of(), List.of(), null, clusterBytes, origin);
    }
    try {
      // Queued changes are checked against the ring rules now, so a refusal reaches the requester at once.
      active.toBuilder().members(members).build();
    } catch (RingException e) {
      return reject(e.getMessage(), origin);
    }
    List<MembershipChange> queued = new ArrayList<>(queue);
    queued.add(change);
    return new Transition(new ClusterAggregate(active, inFlight, queued), List.of());
  }

  /** A task reported VERIFIED: when it was the last one, the epoch is READY and the next change is planned. */
  public Transition onVerified(String taskId, long epoch, long clusterBytes) {
    if (inFlight == null || inFlight.plan().target().epoch() != epoch
        || inFlight.plan().tasks().stream().noneMatch(t -> t.taskId().equals(taskId))) {
      return new Transition(this, List.of()); // a task of another epoch or a dropped one: nothing to do
    }
    Set<String> verified = new HashSet<>(inFlight.verified());
    verified.add(taskId);
    InFlight progressed = new InFlight(inFlight.plan(), inFlight.cause(), inFlight.deadNodes(), verified);
    if (!progressed.complete()) {
      return new Transition(new ClusterAggregate(active, progressed, queue), List.of());
    }
    return new ClusterAggregate(active, progressed, queue).completeAndContinue(clusterBytes);
  }

  /** The in-flight epoch is complete: READY, active, and the queued changes planned from it in order. */
  private Transition completeAndContinue(long clusterBytes) {
    List<Effect> effects = new ArrayList<>();
    effects.add(new EpochEvent(EpochEvent.State.READY, inFlight.plan(), inFlight.cause(), active.checksum(),
        null, null));
    ClusterAggregate state = new ClusterAggregate(inFlight.plan().target(), null, List.of());
    for (int i = 0; i < queue.size(); i++) {
      MembershipChange next = queue.get(i);
      Transition t = state.onChange(next, clusterBytes, next);
      effects.addAll(t.effects());
      state = t.next();
      if (state.inFlight() != null) {
        // Everything after the change now in flight stays queued behind it.
        state = new ClusterAggregate(state.active(), state.inFlight(), queue.subList(i + 1, queue.size()));
        break;
      }
    }
    return new Transition(state, effects);
  }

  private Transition plan(List<Member> members, MembershipChange cause, Set<String> dead, int planVersion,
      Set<String> carriedVerified, List<Effect> before, Long supersedes, long clusterBytes, MembershipChange origin) {
    long epoch = active.epoch() + 1;
    Plan plan;
    try {
      plan = EpochPlanner.plan(active, members, epoch, planVersion, dead, clusterBytes);
    } catch (RingException e) {
      return reject(e.getMessage(), origin);
    }
    Set<String> verified = new HashSet<>();
    List<Effect> effects = new ArrayList<>(before);
    long sourceless = plan.tasks().stream().filter(task -> task.sources().isEmpty()).count();
    String warning = sourceless == 0 ? null : sourceless + " task(s) have no surviving source: their ranges lost "
        + "every replica, and the epoch cannot become READY until an operator restores or writes them off";
    effects.add(new EpochEvent(EpochEvent.State.PLANNED, plan, cause, active.checksum(), supersedes, warning));
    for (PlannedTask task : plan.tasks()) {
      if (carriedVerified.contains(task.taskId())) {
        verified.add(task.taskId()); // kept by the re-plan and already done
      } else {
        effects.add(new TaskEvent(epoch, planVersion, task));
      }
    }
    ClusterAggregate next = new ClusterAggregate(active, new InFlight(plan, cause, dead, verified), queue);
    if (next.inFlight().complete()) {
      // Nothing (left) to copy, for example a weight change that moves no range: ready at once.
      Transition t = next.completeAndContinue(clusterBytes);
      effects.addAll(t.effects());
      return new Transition(t.next(), effects);
    }
    return new Transition(next, effects);
  }

  private Transition replan(MembershipChange failure, long clusterBytes, MembershipChange origin) {
    String node = failure.nodeId();
    RingSnapshot target = inFlight.plan().target();
    if (inFlight.deadNodes().contains(node)) {
      return reject("FAIL of node " + node + ": it already failed", origin);
    }
    if (target.member(node) == null && active.member(node) == null) {
      return reject("FAIL of node " + node + ": it is not a member of cluster " + active.clusterId(), origin);
    }
    List<Member> members = new ArrayList<>(target.members());
    members.removeIf(m -> m.id().equals(node));
    Set<String> dead = new HashSet<>(inFlight.deadNodes());
    dead.add(node);
    Plan old = inFlight.plan();
    Set<String> kept = new HashSet<>();
    try {
      EpochPlanner.plan(active, members, target.epoch(), old.planVersion() + 1, dead, clusterBytes).tasks()
          .forEach(task -> kept.add(task.taskId()));
    } catch (RingException e) {
      return reject(e.getMessage(), origin);
    }
    List<Effect> before = new ArrayList<>();
    before.add(new EpochEvent(EpochEvent.State.SUPERSEDED, old, inFlight.cause(), active.checksum(), null,
        "node " + node + " failed while plan " + old.planVersion() + " of epoch " + target.epoch()
            + " was in flight"));
    for (PlannedTask task : old.tasks()) {
      if (!kept.contains(task.taskId())) {
        before.add(new TaskCancelled(task.taskId()));
      }
    }
    return plan(members, failure, dead, old.planVersion() + 1, inFlight.verified(), before, target.epoch(),
        clusterBytes, origin);
  }

  /**
   * The membership the next change applies to: the in-flight target plus the queued changes (a queued change
   * that no longer applies, after a re-plan, is skipped here and refused when its turn comes).
   */
  List<Member> projectedMembers() {
    List<Member> members = inFlight != null ? inFlight.plan().target().members() : active.members();
    for (MembershipChange queued : queue) {
      if (queued.applyTo(active.clusterId(), members) instanceof MembershipChange.Applied applied) {
        members = applied.members();
      }
    }
    return members;
  }

  private Transition reject(String reason, MembershipChange origin) {
    return new Transition(this, List.of(new Rejection(reason, origin)));
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
