package io.ringshift.orchestrator.internal;

import io.ringshift.orchestrator.MembershipChange;
import io.ringshift.orchestrator.EpochPlanner;
import io.ringshift.orchestrator.EpochPlanner.Plan;
import io.ringshift.orchestrator.EpochPlanner.StrayCopy;
import io.ringshift.orchestrator.PlannedTask;
import io.ringshift.ring.Member;
import io.ringshift.ring.RingException;
import io.ringshift.ring.RingSnapshot;
import io.ringshift.protocol.CodecException;
import io.ringshift.protocol.FillingRange;
import io.ringshift.protocol.RecordKeys;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.function.Supplier;

/**
 * The orchestrator's state for one cluster, and its transitions. Pure: each transition returns the next state
 * and the records to emit, so the Kafka Streams processor only stores the one and sends the others, and an
 * exactly-once commit makes both happen together or not at all.
 *
 * <p>Rules: at most one epoch is in flight. A change that arrives meanwhile is validated against the
 * membership it will apply to (the in-flight target plus the changes queued before it, ring rules included)
 * and queued; when every task of the in-flight epoch is VERIFIED the epoch is READY, becomes active, its
 * CLEANUP tasks are emitted, and the queued changes are planned from it in order. A FAIL cannot wait behind
 * anything: while an epoch is in flight it re-plans that epoch at once (same epoch number, next plan version)
 * with the dead node removed from the target and never a source, and the old plan is recorded SUPERSEDED. A
 * task the re-plan keeps (same epoch, kind, range and target) keeps its id and its VERIFIED state; a task it
 * drops is cancelled.
 *
 * <p>The fence (docs/architecture.md, migration step 4): a source stops taking writes to a moving range only when every
 * task of the plan has caught up, so that the write pause is short and happens once for the whole epoch. The
 * aggregate therefore tracks, per plan, the tasks whose latest status is CAUGHT_UP or FENCED; when every task
 * is caught up or VERIFIED it re-emits each unverified task with {@code fenceRequested} set, once per plan
 * version (the flag is part of the state, so a restart neither repeats nor loses the request). Before the
 * request a status going back (PENDING, COPYING: the worker restarted the copy) takes the task out of the
 * caught-up set; after it, nothing is taken back: the worker sees the request on the compacted task record
 * and fences once it has caught up again. Task statuses carry no plan version, so a CAUGHT_UP written just
 * before a re-plan may be counted for the new plan; that is safe for the same reason. BLOCKED, FAILED and
 * unknown states change nothing: the epoch just does not complete until an operator or the worker resolves
 * the task.
 *
 * <p>Failures are published at once (docs/architecture.md: "a confirmed failure cannot copy from the dead node: its epoch
 * is published at once"). A FAIL of a member of the active ring makes a <em>failure epoch</em>: the active
 * membership minus every node that died since, PLANNED and READY together with no tasks, its replicas that the
 * active ring did not have marked as filling ({@link FillingRange#between}), so the publisher publishes it
 * without waiting and clients stop routing to the dead node while reading only from complete replicas. It takes
 * the number of the epoch in flight, if any (whose plan it supersedes; its tasks are cancelled), else active + 1.
 * The change that was in flight, or the bare removal, is then planned as the next epoch from the active ring
 * (the last one whose replicas are all complete), with REPAIR tasks for what the dead nodes held: its READY is
 * the <em>repair epoch</em>, which clears the marks. The active ring stays the base of every plan until a plan
 * is READY; the last published ring is then either the active ring or the latest failure epoch
 * ({@link #lastReadyRing()}). Progress of the superseded plan's tasks is not carried over, since the epoch
 * number is part of a task id; the data they copied stays on the targets and is copied again, and where no later
 * ring places a target it is deleted by a CLEANUP task of the next READY epoch, as is what clients wrote to a failure
 * epoch's filling replicas that the repair epoch leaves out ({@link #strays}, {@link EpochPlanner#strayCleanups}). A
 * FAIL of a node
 * that only the plan in flight adds (a joining node) changes no published ring: the plan is re-planned under
 * the same epoch number, as before.
 *
 * <p>Rejections (docs/orchestrator.md, "When the publisher rejects an epoch"). The aggregate also reads the
 * publisher's answers from ring.epochs ({@link #onPublished}, {@link #onRejected}). A REJECTED record of an epoch it
 * made READY rolls the cluster back to the last published epoch: every task of the epochs after it is cancelled
 * (which lifts their fences and drops their cleanups), their epoch numbers are never used again, and the changes are
 * planned again from the last complete published ring (the first rejection), or only the failures are (the second;
 * the other changes are refused to their requesters with the publisher's reason), or only the repair of the nodes
 * the published epoch removed, and the cluster holds at the published epoch until the next change (the third; later
 * ones plan nothing). A PUBLISHED epoch without filling marks resets the count.
 *
 * @param active the active ring (epoch, membership, checksum); {@code null} before the cluster is initialised
 * @param inFlight the epoch being migrated to, or {@code null}
 * @param queue changes waiting for the in-flight epoch, in arrival order
 * @param skipped epoch numbers after the active epoch that rolled-back epochs used: the next epoch is
 *     {@code active + 1 + skipped}
 * @param publication what the publisher answered and what waits for an answer
 * @param strays what tasks cancelled since the active epoch (by a re-plan or a rollback) may have copied: cleaned
 *     up where the ring leaves it out when the next epoch becomes READY ({@link EpochPlanner#strayCleanups})
 */
public record ClusterAggregate(RingSnapshot active, InFlight inFlight, List<MembershipChange> queue, int skipped,
    Publication publication, List<StrayCopy> strays) {
  /** Rejections in a row after which the cluster holds at its published epoch. */
  static final int HOLD_AFTER_REJECTIONS = 3;

  public ClusterAggregate {
    queue = List.copyOf(queue);
    Objects.requireNonNull(publication, "publication");
    strays = List.copyOf(strays);
  }

  /** A state with nothing skipped, no answer of the publisher read yet and no strays. */
  public ClusterAggregate(RingSnapshot active, InFlight inFlight, List<MembershipChange> queue) {
    this(active, inFlight, queue, 0, Publication.NONE, List.of());
  }

  /**
   * What the publisher answered.
   *
   * @param published the last published epoch this aggregate made READY; null before the first is read
   * @param complete the last published epoch without filling marks (every replica holds its data): the base of a
   *     rollback; null before the first is read
   * @param unpublished the epochs made READY since {@code published}, in order
   * @param rejections rejections in a row since the last PUBLISHED epoch without filling marks
   * @param held why the cluster holds at {@code published}, or null
   * @param replanned the changes a rollback planned again (merged into one plan, whose cause names only the first):
   *     refused to their requesters if a second rejection withdraws them
   */
  public record Publication(RingSnapshot published, RingSnapshot complete, List<Unpublished> unpublished,
      int rejections, String held, List<MembershipChange> replanned) {
    public static final Publication NONE = new Publication(null, null, List.of(), 0, null, List.of());

    public Publication {
      unpublished = List.copyOf(unpublished);
      replanned = List.copyOf(replanned);
    }

    Publication withUnpublished(List<Unpublished> waiting) {
      return new Publication(published, complete, waiting, rejections, held, replanned);
    }
  }

  /**
   * A READY epoch the publisher has not answered.
   *
   * @param taskIds its COPY, REPAIR and CLEANUP tasks, cancelled if it is rolled back
   */
  public record Unpublished(long epoch, byte[] checksum, MembershipChange cause, List<String> taskIds,
      List<MembershipChange> carried) {
    public Unpublished {
      taskIds = List.copyOf(taskIds);
      checksum = checksum.clone();
      carried = List.copyOf(carried);
    }

    /** A READY epoch that carried out its cause alone. */
    public Unpublished(long epoch, byte[] checksum, MembershipChange cause, List<String> taskIds) {
      this(epoch, checksum, cause, taskIds, List.of());
    }

    @Override
    public byte[] checksum() {
      return checksum.clone();
    }

    @Override
    public boolean equals(Object o) {
      return o instanceof Unpublished u && epoch == u.epoch && Arrays.equals(checksum, u.checksum)
          && Objects.equals(cause, u.cause) && taskIds.equals(u.taskIds) && carried.equals(u.carried);
    }

    @Override
    public int hashCode() {
      return Objects.hash(epoch, Arrays.hashCode(checksum), cause, taskIds, carried);
    }
  }

  /** The same active ring, numbering, publication and strays, with another epoch in flight and queue. */
  private ClusterAggregate with(InFlight inFlight, List<MembershipChange> queue) {
    return new ClusterAggregate(active, inFlight, queue, skipped, publication, strays);
  }

  /** The same state, also remembering what the cancelled COPY and REPAIR tasks among {@code cancelled} copied. */
  private ClusterAggregate withStrays(List<PlannedTask> cancelled) {
    List<StrayCopy> more = new ArrayList<>();
    for (PlannedTask task : cancelled) {
      if (task.kind() != PlannedTask.Kind.CLEANUP) {
        more.add(new StrayCopy(task.target(), task.targetZone(), task.rangeStart(), task.rangeEnd()));
      }
    }
    return new ClusterAggregate(active, inFlight, queue, skipped, publication, addStrays(strays, more));
  }

  private static List<StrayCopy> addStrays(List<StrayCopy> strays, List<StrayCopy> more) {
    java.util.LinkedHashSet<StrayCopy> all = new java.util.LinkedHashSet<>(strays);
    all.addAll(more);
    return List.copyOf(all);
  }

  /** The number the next epoch after the active one takes (failure epochs included). */
  long nextEpoch() {
    return active.epoch() + 1 + skipped;
  }

  /**
   * The epoch in flight.
   *
   * @param plan the current plan of the epoch
   * @param cause the change that the current plan carries out (the FAIL, after a re-plan)
   * @param deadNodes nodes confirmed dead since the active epoch, in the order they failed: never sources. The
   *     first {@code plan epoch - active epoch - 1} of them that are members of the active ring each made a
   *     failure epoch, in this order
   * @param verified ids of the plan's tasks reported VERIFIED
   * @param caughtUp ids of the plan's tasks whose latest status is CAUGHT_UP or FENCED, not VERIFIED
   * @param fenceRequested whether the fence of this plan was requested (its unverified tasks re-emitted with
   *     {@code fenceRequested})
   * @param carried the changes the plan carries out besides its cause: a FAIL that re-plans the epoch in flight keeps
   *     the change that was in flight in its plan, and becomes its cause; a rollback must plan them again or refuse
   *     them to their requesters, so they are kept here
   */
  public record InFlight(Plan plan, MembershipChange cause, List<String> deadNodes, Set<String> verified,
      Set<String> caughtUp, boolean fenceRequested, List<MembershipChange> carried) {
    public InFlight {
      deadNodes = List.copyOf(deadNodes);
      verified = Set.copyOf(verified);
      caughtUp = Set.copyOf(caughtUp);
      carried = List.copyOf(carried);
    }

    /** Progress of a plan that carries out its cause alone. */
    public InFlight(Plan plan, MembershipChange cause, List<String> deadNodes, Set<String> verified,
        Set<String> caughtUp, boolean fenceRequested) {
      this(plan, cause, deadNodes, verified, caughtUp, fenceRequested, List.of());
    }

    /** A new plan's progress: nothing caught up, no fence requested, the tasks it kept VERIFIED. */
    static InFlight started(Plan plan, MembershipChange cause, List<String> deadNodes, Set<String> verified) {
      return new InFlight(plan, cause, deadNodes, verified, Set.of(), false);
    }

    /** The same progress, carrying out {@code changes} besides its cause. */
    InFlight carrying(List<MembershipChange> changes) {
      return new InFlight(plan, cause, deadNodes, verified, caughtUp, fenceRequested, changes);
    }

    boolean complete() {
      return plan.tasks().stream().allMatch(t -> verified.contains(t.taskId()));
    }

    /** Every task has caught up or is VERIFIED: the sources may fence. */
    boolean readyToFence() {
      return plan.tasks().stream().allMatch(t -> verified.contains(t.taskId()) || caughtUp.contains(t.taskId()));
    }

    boolean has(String taskId) {
      return plan.tasks().stream().anyMatch(t -> t.taskId().equals(taskId));
    }
  }

  /** What a task status says about a task's progress, as far as the aggregate cares. */
  public enum Progress {
    /** PENDING or COPYING: not caught up (again). */
    BEHIND,
    /** CAUGHT_UP or FENCED: within the lag threshold of the source, ready for the fence. */
    CAUGHT_UP,
    /** VERIFIED: done. */
    VERIFIED,
    /** BLOCKED, FAILED or a state this version does not know: changes nothing; the epoch waits. */
    STUCK
  }

  /** What a transition asks the processor to emit, in order. */
  public sealed interface Effect permits EpochEvent, TaskEvent, TaskCancelled, Rejection {}

  /**
   * An epoch record: PLANNED, READY, SUPERSEDED or CANCELLED.
   *
   * @param previousChecksum checksum of the active ring the epoch follows (the hash chain); null for INIT
   * @param supersedes on the PLANNED record of a re-plan, the epoch whose earlier plan it replaces
   */
  public record EpochEvent(State state, Plan plan, MembershipChange cause, byte[] previousChecksum,
      Long supersedes, String reason, List<FillingRange> filling) implements Effect {
    public EpochEvent {
      filling = List.copyOf(filling);
    }

    /** An epoch record without filling marks (every epoch but a failure epoch). */
    public EpochEvent(State state, Plan plan, MembershipChange cause, byte[] previousChecksum, Long supersedes,
        String reason) {
      this(state, plan, cause, previousChecksum, supersedes, reason, List.of());
    }

    /** The states the orchestrator writes. */
    public enum State {
      PLANNED,
      READY,
      SUPERSEDED,
      /** The plan was cancelled by a CANCEL request (its cause). */
      CANCELLED
    }
  }

  /**
   * A task to put on ring.tasks, of plan {@code planVersion} of {@code epoch}.
   *
   * @param fenceRequested true on the re-emission that asks the worker to fence the range and verify
   */
  public record TaskEvent(long epoch, int planVersion, PlannedTask task, boolean fenceRequested) implements Effect {
    /** A task as planned: no fence requested. */
    public TaskEvent(long epoch, int planVersion, PlannedTask task) {
      this(epoch, planVersion, task, false);
    }
  }

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
    Plan plan = new Plan(initial, initial.diffTo(initial), 0, List.of(), List.of());
    return track(new Transition(new ClusterAggregate(initial, null, List.of()), List.of(
        new EpochEvent(EpochEvent.State.PLANNED, plan, cause, null, null, null),
        new EpochEvent(EpochEvent.State.READY, plan, cause, null, null, null))));
  }

  /** A membership change: planned at once when nothing is in flight, re-planned for a FAIL, otherwise queued. */
  public Transition onChange(MembershipChange change, long clusterBytes) {
    ClusterAggregate from = publication.held() == null ? this
        : new ClusterAggregate(active, inFlight, queue, skipped, new Publication(publication.published(),
            publication.complete(), publication.unpublished(), publication.rejections(), null,
            publication.replanned()), strays);
    return from.track(from.onChange(change, clusterBytes, null));
  }

  private Transition onChange(MembershipChange change, long clusterBytes, MembershipChange origin) {
    if (!initialised()) {
      return reject("cluster is unknown; declare it first with ringshift init", origin);
    }
    if (change.isFailure() && inFlight != null) {
      return replan(change, clusterBytes, origin);
    }
    List<String> gone = inFlight == null ? removedByPublished() : List.of();
    if (change.action() == MembershipChange.Action.JOIN && gone.contains(change.nodeId())) {
      // It is still a member of the active ring, whose data it missed since: a plan that kept it there would count it
      // a complete replica of its old ranges. Once a later epoch is published it is gone for good and may join anew.
      return reject("JOIN of node " + change.nodeId() + ": published epoch " + publication.published().epoch()
          + " removed it after it failed, and its repair is not published yet; join it again once a later epoch is "
          + "published", origin);
    }
    MembershipChange.Outcome outcome = change.applyTo(active.clusterId(), projectedMembers());
    if (outcome instanceof MembershipChange.Refused refused) {
      return reject(refused.reason(), origin);
    }
    List<Member> members = ((MembershipChange.Applied) outcome).members();
    if (inFlight == null) {
      // Nodes the published epoch removed (failure epochs whose repair was rolled back) stay dead in every plan.
      List<String> dead = new ArrayList<>(gone);
      if (change.isFailure()) {
        dead.add(change.nodeId());
      }
      if (change.isFailure() && gone.isEmpty() && EpochPlanner.keepsReplicaZones(active, dead)) {
        return publishFailureThenPlan(change, members, dead, lastReadyRing(), nextEpoch(), 0, List.of(),
            null, clusterBytes, origin);
      }
      // With nodes the published epoch removed, a failure is planned with its repair and published once it is
      // VERIFIED: a failure epoch now would have to remove them all in one, which the failure epochs' numbering (one
      // node each, from the active ring) cannot say.
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
    return new Transition(with(inFlight, queued), List.of());
  }

  /** A task reported VERIFIED: {@link #onStatus} with {@link Progress#VERIFIED}. */
  public Transition onVerified(String taskId, long epoch, long clusterBytes) {
    return onStatus(taskId, epoch, Progress.VERIFIED, clusterBytes);
  }

  /**
   * A task reported its progress. VERIFIED of the last task makes the epoch READY (and plans the next change);
   * CAUGHT_UP or VERIFIED of the last task not yet caught up requests the fence; BEHIND takes a task out of the
   * caught-up set until the fence is requested. A status of another epoch, of a task the plan does not have
   * (dropped, a CLEANUP task) or of a task already VERIFIED changes nothing, and neither does a repeat.
   */
  public Transition onStatus(String taskId, long epoch, Progress progress, long clusterBytes) {
    return track(status(taskId, epoch, progress, clusterBytes));
  }

  private Transition status(String taskId, long epoch, Progress progress, long clusterBytes) {
    if (inFlight == null || inFlight.plan().target().epoch() != epoch || !inFlight.has(taskId)
        || inFlight.verified().contains(taskId)) {
      return unchanged();
    }
    Set<String> verified = new HashSet<>(inFlight.verified());
    Set<String> caughtUp = new HashSet<>(inFlight.caughtUp());
    switch (progress) {
      case VERIFIED -> {
        verified.add(taskId);
        caughtUp.remove(taskId);
      }
      case CAUGHT_UP -> {
        if (!caughtUp.add(taskId)) {
          return unchanged();
        }
      }
      case BEHIND -> {
        // Once the fence is requested the worker finishes the catch-up and fences on its own.
        if (inFlight.fenceRequested() || !caughtUp.remove(taskId)) {
          return unchanged();
        }
      }
      default -> {
        return unchanged();
      }
    }
    InFlight progressed = new InFlight(inFlight.plan(), inFlight.cause(), inFlight.deadNodes(), verified, caughtUp,
        inFlight.fenceRequested(), inFlight.carried());
    ClusterAggregate next = with(progressed, queue);
    if (progressed.complete()) {
      return next.completeAndContinue(clusterBytes);
    }
    return next.requestFenceIfCaughtUp();
  }

  /**
   * When every task of the plan has caught up (or is VERIFIED) and the fence was not requested yet: re-emits
   * each unverified task with {@code fenceRequested} and records that it did.
   */
  private Transition requestFenceIfCaughtUp() {
    if (inFlight.fenceRequested() || !inFlight.readyToFence()) {
      return unchanged();
    }
    long epoch = inFlight.plan().target().epoch();
    int planVersion = inFlight.plan().planVersion();
    List<Effect> effects = new ArrayList<>();
    for (PlannedTask task : inFlight.plan().tasks()) {
      if (!inFlight.verified().contains(task.taskId())) {
        effects.add(new TaskEvent(epoch, planVersion, task, true));
      }
    }
    InFlight fenced = new InFlight(inFlight.plan(), inFlight.cause(), inFlight.deadNodes(), inFlight.verified(),
        inFlight.caughtUp(), true, inFlight.carried());
    return new Transition(with(fenced, queue), effects);
  }

  private Transition unchanged() {
    return new Transition(this, List.of());
  }

  /**
   * The in-flight epoch is complete: READY, active, its CLEANUP tasks emitted (the worker runs them only once
   * the epoch is published and its grace period is over), and the queued changes planned from it in order.
   */
  private Transition completeAndContinue(long clusterBytes) {
    List<Effect> effects = new ArrayList<>();
    Plan planned = inFlight.plan();
    List<PlannedTask> strayCleanups = EpochPlanner.strayCleanups(active, lastReadyRing(), planned.target(), strays,
        Set.copyOf(inFlight.deadNodes()), clusterBytes);
    Plan done = strayCleanups.isEmpty() ? planned : new Plan(planned.target(), planned.diff(), planned.planVersion(),
        planned.tasks(), concat(planned.cleanupTasks(), strayCleanups));
    effects.add(new EpochEvent(EpochEvent.State.READY, done, inFlight.cause(), lastReadyRing().checksum(), null,
        null));
    for (PlannedTask cleanup : done.cleanupTasks()) {
      effects.add(new TaskEvent(done.target().epoch(), done.planVersion(), cleanup));
    }
    ClusterAggregate state = new ClusterAggregate(inFlight.plan().target(), null, List.of(), 0, publication,
        List.of());
    Transition t = state.planQueue(queue, clusterBytes);
    effects.addAll(t.effects());
    return new Transition(t.next(), effects);
  }

  /** With nothing in flight: plans {@code changes} in order until one is in flight; the rest stay queued behind. */
  private Transition planQueue(List<MembershipChange> changes, long clusterBytes) {
    List<Effect> effects = new ArrayList<>();
    ClusterAggregate state = this;
    for (int i = 0; i < changes.size(); i++) {
      MembershipChange next = changes.get(i);
      Transition t = state.inFlight() == null ? state.onChange(next, clusterBytes, next)
          : new Transition(state.with(state.inFlight(), append(state.queue(), next)), List.of());
      effects.addAll(t.effects());
      state = t.next();
    }
    return new Transition(state, effects);
  }

  private static List<MembershipChange> append(List<MembershipChange> list, MembershipChange change) {
    List<MembershipChange> out = new ArrayList<>(list);
    out.add(change);
    return out;
  }

  private Transition plan(List<Member> members, MembershipChange cause, List<String> dead, int planVersion,
      Set<String> carriedVerified, List<Effect> before, Long supersedes, long clusterBytes, MembershipChange origin) {
    return plan(members, cause, dead, nextEpoch(), lastReadyRing().checksum(), planVersion, carriedVerified, before,
        supersedes, clusterBytes, origin);
  }

  /**
   * Plans {@code members} as {@code epoch} from the active ring, never copying from {@code dead}.
   *
   * @param previousChecksum checksum of the ring published before this epoch (the active ring, or the latest
   *     failure epoch)
   */
  private Transition plan(List<Member> members, MembershipChange cause, List<String> dead, long epoch,
      byte[] previousChecksum, int planVersion, Set<String> carriedVerified, List<Effect> before, Long supersedes,
      long clusterBytes, MembershipChange origin) {
    Plan plan;
    try {
      plan = EpochPlanner.plan(active, members, epoch, planVersion, Set.copyOf(dead), clusterBytes);
    } catch (RingException e) {
      return reject(e.getMessage(), origin);
    }
    Set<String> verified = new HashSet<>();
    List<Effect> effects = new ArrayList<>(before);
    long sourceless = plan.tasks().stream().filter(task -> task.sources().isEmpty()).count();
    String warning = sourceless == 0 ? null : sourceless + " task(s) have no surviving source: their ranges lost "
        + "every replica, and the epoch cannot become READY until an operator restores or writes them off";
    effects.add(new EpochEvent(EpochEvent.State.PLANNED, plan, cause, previousChecksum, supersedes, warning));
    for (PlannedTask task : plan.tasks()) {
      if (carriedVerified.contains(task.taskId())) {
        verified.add(task.taskId()); // kept by the re-plan and already done
      } else {
        effects.add(new TaskEvent(epoch, planVersion, task));
      }
    }
    ClusterAggregate next = with(InFlight.started(plan, cause, dead, verified), queue);
    if (next.inFlight().complete()) {
      // Nothing (left) to copy, for example a weight change that moves no range: ready at once.
      Transition t = next.completeAndContinue(clusterBytes);
      effects.addAll(t.effects());
      return new Transition(t.next(), effects);
    }
    return new Transition(next, effects);
  }

  /**
   * A FAIL of a node whose JOIN is still queued: nothing was planned or copied for it, so the JOIN is withdrawn
   * (refused with its own request, naming the FAIL) instead of being planned later onto a dead target, where its
   * tasks would stay BLOCKED for good. The epoch in flight and the rest of the queue are unchanged; changes queued
   * after the JOIN that name the node are refused when their turn comes, as for any change that no longer applies.
   */
  private Transition withdrawQueuedJoin(MembershipChange failure, MembershipChange join) {
    List<MembershipChange> rest = new ArrayList<>(queue);
    rest.remove(join);
    return new Transition(with(inFlight, rest), List.of(new Rejection("JOIN of node "
        + join.nodeId() + " withdrawn: the node failed (FAIL request " + failure.requestId() + ") while its join was "
        + "still queued behind epoch " + inFlight.plan().target().epoch() + "; nothing was copied to it", join)));
  }

  private Transition replan(MembershipChange failure, long clusterBytes, MembershipChange origin) {
    Transition t = replanned(failure, clusterBytes, origin);
    if (t.next().inFlight() == null || t.next().inFlight().plan() == inFlight.plan()) {
      return t; // refused, or a queued JOIN withdrawn: nothing re-planned
    }
    // The re-plan carries out what the plan in flight did, and its cause is the FAIL now: remember the change it carried
    // out besides, so that a rollback plans it again or refuses it to its requester rather than drop it without a word.
    // An earlier FAIL the re-plan carries out besides is remembered too (its node is one of the plan's dead nodes): a
    // rollback that holds refuses it to its own requester, who then sends it again (found by the protocol simulation:
    // it went out under the orchestrator's re-applied FAIL, with no request id).
    List<MembershipChange> carried = new ArrayList<>(inFlight.carried());
    if (!carried.contains(inFlight.cause())) {
      carried.add(inFlight.cause());
    }
    ClusterAggregate next = t.next();
    return new Transition(next.with(next.inFlight().carrying(carried), next.queue()), t.effects());
  }

  private Transition replanned(MembershipChange failure, long clusterBytes, MembershipChange origin) {
    String node = failure.nodeId();
    RingSnapshot target = inFlight.plan().target();
    if (inFlight.deadNodes().contains(node)) {
      return reject("FAIL of node " + node + ": it already failed", origin);
    }
    if (target.member(node) == null && active.member(node) == null) {
      MembershipChange queuedJoin = queue.stream()
          .filter(c -> c.action() == MembershipChange.Action.JOIN && c.nodeId().equals(node)).findFirst()
          .orElse(null);
      if (queuedJoin != null) {
        return withdrawQueuedJoin(failure, queuedJoin);
      }
      return reject("FAIL of node " + node + ": it is not a member of cluster " + active.clusterId(), origin);
    }
    List<Member> members = new ArrayList<>(target.members());
    members.removeIf(m -> m.id().equals(node));
    List<String> dead = new ArrayList<>(inFlight.deadNodes());
    dead.add(node);
    Plan old = inFlight.plan();
    RingSnapshot previous = lastReadyRing(); // the ring clients route by: the chain's last link
    byte[] previousChecksum = previous.checksum();
    String supersededBecause = "node " + node + " failed while plan " + old.planVersion() + " of epoch "
        + target.epoch() + " was in flight";
    if (active.member(node) != null && everyFailureWasPublished()
        && EpochPlanner.keepsReplicaZones(active, dead)) {
      // A node clients route to: the failure epoch takes this epoch's number, and the plan moves to the next.
      List<Effect> before = new ArrayList<>();
      before.add(new EpochEvent(EpochEvent.State.SUPERSEDED, old, inFlight.cause(), previousChecksum, null,
          supersededBecause));
      old.tasks().forEach(task -> before.add(new TaskCancelled(task.taskId())));
      return withStrays(old.tasks()).publishFailureThenPlan(failure, members, dead, previous, target.epoch(),
          old.planVersion() + 1, before, target.epoch(), clusterBytes, origin);
    }
    Set<String> kept = new HashSet<>();
    try {
      EpochPlanner.plan(active, members, target.epoch(), old.planVersion() + 1, Set.copyOf(dead), clusterBytes)
          .tasks()
          .forEach(task -> kept.add(task.taskId()));
    } catch (RingException e) {
      return reject(e.getMessage(), origin);
    }
    List<Effect> before = new ArrayList<>();
    before.add(new EpochEvent(EpochEvent.State.SUPERSEDED, old, inFlight.cause(), previousChecksum, null,
        supersededBecause));
    List<PlannedTask> cancelled = new ArrayList<>();
    for (PlannedTask task : old.tasks()) {
      if (!kept.contains(task.taskId())) {
        before.add(new TaskCancelled(task.taskId()));
        cancelled.add(task);
      }
    }
    return withStrays(cancelled).plan(members, failure, dead, target.epoch(), previousChecksum,
        old.planVersion() + 1, inFlight.verified(), before, target.epoch(), clusterBytes, origin);
  }

  /**
   * A node of the active ring failed: emits the failure epoch {@code failureEpoch} (PLANNED and READY, no tasks,
   * filling marks), then plans {@code members} as the next epoch with REPAIR tasks from the survivors.
   *
   * @param dead every node that died since the active epoch, this one included
   * @param previous the ring published before the failure epoch (the chain's last link)
   * @param supersedes the epoch whose in-flight plan the failure epoch replaces, or null
   */
  private Transition publishFailureThenPlan(MembershipChange failure, List<Member> members, List<String> dead,
      RingSnapshot previous, long failureEpoch, int failurePlanVersion, List<Effect> before, Long supersedes,
      long clusterBytes, MembershipChange origin) {
    RingSnapshot failed;
    try {
      failed = failureRing(dead, failureEpoch);
    } catch (RingException e) {
      return reject(e.getMessage(), origin);
    }
    Plan failurePlan = new Plan(failed, previous.diffTo(failed), failurePlanVersion, List.of(), List.of());
    List<FillingRange> filling = FillingRange.between(active, failed);
    List<Effect> effects = new ArrayList<>(before);
    String note = "failure epoch: published without waiting for repair; " + filling.size()
        + " filling range(s) are not read from until epoch " + (failureEpoch + 1) + " completes the repair";
    effects.add(new EpochEvent(EpochEvent.State.PLANNED, failurePlan, failure, previous.checksum(), supersedes,
        note, filling));
    effects.add(new EpochEvent(EpochEvent.State.READY, failurePlan, failure, previous.checksum(), null, note,
        filling));
    return plan(members, failure, dead, failureEpoch + 1, failed.checksum(), 0, Set.of(), effects, null,
        clusterBytes, origin);
  }

  /**
   * The ring of the last epoch made READY, which clients route by once it is published: the active ring, or the
   * failure epoch published after it when nodes died while a plan was pending (the plan in flight then has a
   * later number than active + 1).
   */
  RingSnapshot lastReadyRing() {
    int published = publishedFailureEpochs();
    RingSnapshot ready = published == 0 ? active
        : failureRing(failedMembers(inFlight.deadNodes()).subList(0, published), active.epoch() + skipped + published);
    // After a rollback to a published failure epoch the active ring is the complete one before it, and the published
    // failure epoch is the chain's last link until a later epoch is emitted.
    RingSnapshot lastPublished = publication.published();
    return lastPublished != null && lastPublished.epoch() > ready.epoch() ? lastPublished : ready;
  }

  /** How many failure epochs were published since the active epoch: the plan in flight comes after them. */
  private int publishedFailureEpochs() {
    return inFlight == null ? 0 : (int) (inFlight.plan().target().epoch() - active.epoch() - 1 - skipped);
  }

  /** Whether every node of the active ring that died since it made a failure epoch. */
  private boolean everyFailureWasPublished() {
    return publishedFailureEpochs() == failedMembers(inFlight.deadNodes()).size();
  }

  /**
   * Members of the active ring that the published epoch, a later one, no longer has: the nodes its failure epochs
   * removed, when the repair after them was rolled back (the active ring is then the last complete one). Clients route
   * without them and they missed writes since, so every later plan keeps them out (never placed, never a source) until
   * an epoch after the published one is READY. Empty in every other state.
   */
  List<String> removedByPublished() {
    RingSnapshot published = publication.published();
    if (published == null || published.epoch() <= active.epoch()) {
      return List.of();
    }
    return active.members().stream().map(Member::id).filter(id -> published.member(id) == null).toList();
  }

  /** The dead nodes that are members of the active ring, in the order they failed. */
  private List<String> failedMembers(List<String> dead) {
    return dead.stream().filter(id -> active.member(id) != null).toList();
  }

  /** The active membership without the dead nodes, as {@code epoch}. */
  private RingSnapshot failureRing(List<String> dead, long epoch) {
    List<Member> alive = active.members().stream().filter(m -> !dead.contains(m.id())).toList();
    return active.toBuilder().epoch(epoch).members(alive).build();
  }

  /**
   * The membership the next change applies to: the in-flight target plus the queued changes (a queued change
   * that no longer applies, after a re-plan, is skipped here and refused when its turn comes).
   */
  List<Member> projectedMembers() {
    List<String> gone = inFlight != null ? List.of() : removedByPublished();
    List<Member> members = inFlight != null ? inFlight.plan().target().members()
        : active.members().stream().filter(m -> !gone.contains(m.id())).toList();
    for (MembershipChange queued : queue) {
      if (queued.applyTo(active.clusterId(), members) instanceof MembershipChange.Applied applied) {
        members = applied.members();
      }
    }
    return members;
  }

  // ---- the publisher's answers ----

  /**
   * A PUBLISHED record of ring.epochs: when it answers an epoch this aggregate made READY (same number and
   * checksum), that epoch becomes the published one (and, without filling marks, the complete one) and the
   * rejection count is reset. A state from before this was tracked takes its active or last READY ring when the
   * record names it. Anything else (an earlier epoch, a replay, another writer's epoch) changes nothing.
   *
   * @param marked whether the record carries filling marks (a failure epoch)
   * @param ring rebuilds the published ring from the record; called only when the record answers one of ours
   */
  public Transition onPublished(long epoch, byte[] checksum, boolean marked, Supplier<RingSnapshot> ring) {
    if (!initialised() || (publication.published() != null && epoch <= publication.published().epoch())) {
      return unchanged();
    }
    RingSnapshot published;
    boolean numberOfOurs = publication.unpublished().stream().anyMatch(u -> u.epoch() == epoch);
    if (answered(epoch, checksum) != null) {
      published = ring.get();
    } else if (epoch == active.epoch() && Arrays.equals(checksum, active.checksum())) {
      published = active;
    } else if (epoch == lastReadyRing().epoch() && Arrays.equals(checksum, lastReadyRing().checksum())) {
      published = lastReadyRing();
    } else if (!numberOfOurs && epoch <= Math.max(active.epoch(), lastReadyRing().epoch())) {
      // An epoch made READY before this state tracked them (a state from before version 3, reading ring.epochs from
      // its start): the publisher's history, taken as it comes, so the last one read is the last published.
      published = ring.get();
    } else {
      return unchanged();
    }
    if (published == null || !Arrays.equals(published.checksum(), checksum)) {
      return unchanged();
    }
    List<Unpublished> rest = publication.unpublished().stream().filter(u -> u.epoch() > epoch).toList();
    // A failure epoch is the active ring minus the dead: the active ring before it is the complete one when none is
    // known yet (a state from before version 3); when that is not known either, only the answered epochs are dropped.
    RingSnapshot complete = !marked ? published : publication.complete() != null ? publication.complete()
        : active.epoch() < epoch ? active : null;
    // Only an epoch whose replicas are all complete ends a run of rejections: a failure epoch published again after a
    // rollback does not, or a repair rejected for good would be planned again without end.
    Publication next = complete == null
        ? new Publication(publication.published(), publication.complete(), rest, publication.rejections(),
            publication.held(), publication.replanned())
        : marked
            ? new Publication(published, complete, rest, publication.rejections(), publication.held(),
                publication.replanned())
            : new Publication(published, complete, rest, 0, null, List.of());
    return new Transition(new ClusterAggregate(active, inFlight, queue, skipped, next, strays), List.of());
  }

  /**
   * A REJECTED record of ring.epochs. When it answers an epoch this aggregate made READY, the cluster is rolled
   * back to its last published epoch (see the class comment): the plan in flight is SUPERSEDED, every task of it and
   * of the unanswered READY epochs is cancelled, and the changes are planned again from the last complete published
   * ring under new epoch numbers, chained to the published epoch. Anything else changes nothing.
   */
  public Transition onRejected(long epoch, byte[] checksum, String reason, long clusterBytes) {
    Unpublished hit = initialised() ? answered(epoch, checksum) : null;
    if (hit == null && initialised() && publication.unpublished().isEmpty() && publication.published() != null
        && epoch > publication.published().epoch()
        && ((epoch == active.epoch() && Arrays.equals(checksum, active.checksum()))
            || (epoch == lastReadyRing().epoch() && Arrays.equals(checksum, lastReadyRing().checksum())))) {
      // A state from before version 3 tracked no READY epoch: the rejection of its active or last READY one counts.
      hit = new Unpublished(epoch, checksum, inFlight == null ? null : inFlight.cause(), List.of());
    }
    if (hit == null) {
      return unchanged();
    }
    int attempt = publication.rejections() + 1;
    return rollBack(hit, "epoch " + epoch + " was rejected by the publisher (" + reason + ")", attempt, attempt,
        clusterBytes);
  }

  /**
   * A REVERTED record of ring.epochs: the publisher published the previous snapshot again over the first transition
   * stage of {@code epoch} (docs/protocol.md, "The reverse path"), and never publishes that number again. When this
   * aggregate has since planned another ring under the same number (a FAIL re-plans or supersedes the plan in flight
   * under its number), that epoch can never be published: the cluster rolls back at once, as for a rejection, but the
   * revert is no failure of the changes, so it does not count as one: the same membership is planned again, every
   * change kept, and the run of rejections stays as it was (found by RejectedEpochIT: a FAIL that superseded a staged
   * plan after one rejection was rejected under the reverted number, counted as the second rejection in a row, and the
   * JOIN it carried was withdrawn). Anything else (the revert of a cancelled, rolled-back or rejected plan, whose
   * number is never used again anyway) changes nothing.
   */
  public Transition onReverted(long epoch, byte[] revertedChecksum, String reason, long clusterBytes) {
    if (!initialised()) {
      return unchanged();
    }
    Unpublished hit = publication.unpublished().stream()
        .filter(u -> u.epoch() == epoch && !Arrays.equals(u.checksum(), revertedChecksum)).findFirst().orElse(null);
    if (hit == null && inFlight != null && inFlight.plan().target().epoch() == epoch
        && !Arrays.equals(inFlight.plan().target().checksum(), revertedChecksum)) {
      hit = new Unpublished(epoch, inFlight.plan().target().checksum(), inFlight.cause(), List.of());
    }
    if (hit == null) {
      return unchanged();
    }
    return rollBack(hit, "the publisher reverted the first stage of epoch " + epoch + " (" + reason + "), and epoch "
        + epoch + " was planned again with another ring; the number is never published again", 1,
        publication.rejections(), clusterBytes);
  }

  /**
   * Rolls the cluster back to its last published epoch and plans the changes again (see {@link #onRejected}).
   *
   * @param attempt what is planned again: 1 the same membership, 2 the failures only, 3 the repair of the published
   *     failures only
   * @param counted the rejections in a row to remember (a revert is not counted)
   */
  private Transition rollBack(Unpublished hit, String why, int attempt, int counted, long clusterBytes) {
    long epoch = hit.epoch();
    List<Effect> effects = new ArrayList<>();
    // Every number used so far: the skipped ones too (a cancelled epoch's number is never used again: workers take it
    // for dead for good).
    long lastUsed = Math.max(nextEpoch() - 1, lastReadyRing().epoch());
    List<MembershipChange> causes = new ArrayList<>();
    List<StrayCopy> copied = new ArrayList<>();
    for (Unpublished u : publication.unpublished()) {
      lastUsed = Math.max(lastUsed, u.epoch());
      u.taskIds().forEach(id -> effects.add(new TaskCancelled(id)));
      u.taskIds().forEach(id -> strayOf(id).ifPresent(copied::add));
      if (u.cause() != null && !causes.contains(u.cause())) {
        causes.add(u.cause());
      }
      u.carried().stream().filter(c -> !causes.contains(c)).forEach(causes::add);
    }
    Map<String, MembershipChange> fails = new LinkedHashMap<>();
    causes.stream().filter(MembershipChange::isFailure).forEach(c -> fails.putIfAbsent(c.nodeId(), c));
    List<Member> target = active.members();
    if (inFlight != null) {
      lastUsed = Math.max(lastUsed, inFlight.plan().target().epoch());
      effects.add(0, new EpochEvent(EpochEvent.State.SUPERSEDED, inFlight.plan(), inFlight.cause(),
          lastReadyRing().checksum(), null, why + "; the plan in flight is rolled back with it"));
      inFlight.plan().tasks().forEach(t -> effects.add(1, new TaskCancelled(t.taskId())));
      inFlight.plan().tasks().forEach(t -> copied.add(new StrayCopy(t.target(), t.targetZone(), t.rangeStart(),
          t.rangeEnd())));
      if (!causes.contains(inFlight.cause())) {
        causes.add(inFlight.cause());
      }
      inFlight.carried().stream().filter(c -> !causes.contains(c)).forEach(causes::add);
      if (inFlight.cause().isFailure()) {
        fails.putIfAbsent(inFlight.cause().nodeId(), inFlight.cause());
      }
      inFlight.carried().stream().filter(MembershipChange::isFailure).forEach(c -> fails.putIfAbsent(c.nodeId(), c));
      for (String node : inFlight.deadNodes()) {
        fails.putIfAbsent(node, refail(node));
      }
      target = inFlight.plan().target().members();
    }
    List<MembershipChange> intents = causes.stream().filter(c -> !c.isFailure()).toList();
    RingSnapshot published = publication.published();
    RingSnapshot complete = publication.complete();
    if (published == null || complete == null) {
      // Nothing published, or no complete ring known to plan from: nothing safe to re-plan.
      boolean init = hit.cause() == null || hit.cause().action() == MembershipChange.Action.INIT;
      String outcome = published == null && init
          ? "; nothing of cluster " + active.clusterId() + " was ever published, so it is uninitialised again: "
              + "declare it again with ringshift init"
          : "; no complete published ring is known to re-plan from: send the changes again";
      List<MembershipChange> refused = new ArrayList<>(causes);
      refused.addAll(queue);
      refused.forEach(c -> effects.add(new Rejection(why + outcome, c)));
      if (published == null && init) {
        return new Transition(uninitialised(), effects);
      }
      RingSnapshot base = published != null ? published : active;
      ClusterAggregate stay = new ClusterAggregate(base, null, List.of(), (int) (lastUsed - base.epoch()),
          new Publication(published, complete, List.of(), counted, why + outcome, List.of()),
          addStrays(strays, copied));
      return new Transition(stay, effects);
    }
    // The dead nodes the published epoch already removed (its failure epochs: clients route without them), and those
    // that failed since, which are published again as failure epochs.
    List<String> publishedDead = complete.members().stream().map(Member::id)
        .filter(id -> published.member(id) == null).toList();
    List<String> newDead = fails.keySet().stream()
        .filter(id -> complete.member(id) != null && published.member(id) != null).toList();
    List<MembershipChange> replannedBefore = publication.replanned();
    List<MembershipChange> allIntents = new ArrayList<>(intents);
    replannedBefore.stream().filter(c -> !allIntents.contains(c)).forEach(allIntents::add);
    // A change of a node the published epoch removed after it failed (a JOIN of it again, accepted while its repair was
    // in flight) cannot be planned from the complete ring, which still counts the node's old copies: refused to its
    // requester, as such a JOIN is while the cluster holds (found by the protocol simulation, seed 40004422: the re-plan
    // dropped the node from its ring and published the JOIN's epoch without it, with no word to the requester).
    for (java.util.Iterator<MembershipChange> it = allIntents.iterator(); it.hasNext(); ) {
      MembershipChange c = it.next();
      if (publishedDead.contains(c.nodeId())) {
        it.remove();
        effects.add(new Rejection(why + "; " + c.action() + " of node " + c.nodeId() + ": published epoch "
            + published.epoch() + " removed it after it failed, and its repair is not published yet; "
            + (c.action() == MembershipChange.Action.JOIN ? "join it again" : "send the change again")
            + " once a later epoch is published", c));
      }
    }
    boolean hold = attempt >= HOLD_AFTER_REJECTIONS;
    String held = hold ? why + "; " + attempt + " rejections in a row, so cluster " + active.clusterId()
        + " holds at published epoch " + published.epoch() + " and plans nothing"
        + (attempt == HOLD_AFTER_REJECTIONS && !publishedDead.isEmpty() ? " but the repair of "
            + String.join(", ", publishedDead) : "")
        + " until the next membership change"
        + (newDead.isEmpty() ? "" : " (send the FAIL of " + String.join(", ", newDead) + " again)") : null;
    ClusterAggregate rolled = new ClusterAggregate(complete, null, List.of(), (int) (lastUsed - complete.epoch()),
        new Publication(published, complete, List.of(), counted, held, attempt == 1 ? allIntents : List.of()),
        addStrays(strays, copied));
    List<MembershipChange> withdrawn = new ArrayList<>(attempt >= 2 ? allIntents : List.of());
    if (hold) {
      newDead.forEach(id -> withdrawn.add(fails.get(id)));
      withdrawn.addAll(queue);
    }
    for (MembershipChange c : withdrawn) {
      effects.add(new Rejection(hold ? held : why + "; this is the second rejection in a row, so the cluster went "
          + "back to published epoch " + published.epoch() + " and only its failures are planned again: send this "
          + "change again", c));
    }
    String note = "re-planned from published epoch " + published.epoch() + " because " + why
        + (counted == attempt ? " (attempt " + attempt + ")" : " (not counted as a rejection)");
    Transition t = new Transition(rolled, List.of());
    if (attempt <= HOLD_AFTER_REJECTIONS) {
      // The first attempt plans the same membership; the second only the failures; the third only the repair of
      // the failures clients already route without. The dead nodes the published epoch removed are planned dead at
      // once (no failure epoch again: it would have to remove them all in one); those that failed since are planned
      // alive here and failed below, which publishes each at once.
      List<Member> members = new ArrayList<>(attempt == 1 ? target : complete.members());
      members.removeIf(m -> publishedDead.contains(m.id()));
      if (!hold) {
        for (String id : newDead) {
          if (members.stream().noneMatch(m -> m.id().equals(id))) {
            members.add(complete.member(id));
          }
        }
      }
      members.sort(java.util.Comparator.comparing(Member::id));
      List<Member> base = new ArrayList<>(complete.members());
      base.sort(java.util.Comparator.comparing(Member::id));
      if (!members.equals(base)) {
        MembershipChange cause = attempt == 1 && !allIntents.isEmpty() ? allIntents.get(0)
            : !publishedDead.isEmpty() ? fails.getOrDefault(publishedDead.get(0), refail(publishedDead.get(0)))
            : hit.cause();
        t = then(t, rolled.plan(members, cause, publishedDead, 0, Set.of(), List.of(), null, clusterBytes, cause));
      }
    }
    if (!hold) {
      for (String id : newDead) {
        MembershipChange fail = fails.getOrDefault(id, refail(id));
        t = then(t, t.next().onChange(fail, clusterBytes, fail));
      }
      t = then(t, t.next().inFlight() == null ? t.next().planQueue(queue, clusterBytes)
          : new Transition(t.next().with(t.next().inFlight(), concat(t.next().queue(), queue)), List.of()));
    }
    effects.addAll(annotateFirstPlan(t.effects(), note, epoch));
    return track(new Transition(t.next(), effects));
  }

  // ---- cancel ----

  /**
   * A CANCEL of the plan in flight (docs/orchestrator.md, "Cancelling an epoch"). Only the epoch in flight can be
   * cancelled, and only when it carries out an operator's change: a plan that repairs a failure (its cause a FAIL,
   * or a node died while it was in flight) rebuilds replicas clients already route without, and cancelling it would
   * leave its ranges under-replicated for good. The cancel must name the node of the change it cancels (the record's
   * key on the compacted ring.membership topic). Then the plan is recorded CANCELLED (its cause the CANCEL request),
   * every task of it is cancelled with a tombstone (the workers stop them and lift their fences), what its COPY and
   * REPAIR tasks may have copied is deleted at once by CLEANUP tasks of the active epoch (with every stray of
   * earlier re-plans), the epoch number is never used again, and the queued changes are planned from the active
   * epoch in order. Anything else is refused with the reason and changes nothing.
   */
  public Transition onCancel(MembershipChange cancel, long clusterBytes) {
    return track(cancel(cancel, clusterBytes));
  }

  private Transition cancel(MembershipChange cancel, long clusterBytes) {
    if (!initialised()) {
      return reject("CANCEL of epoch " + cancel.epoch() + ": the cluster is unknown", null);
    }
    long epoch = cancel.epoch();
    String cluster = active.clusterId();
    long inFlightEpoch = inFlight == null ? -1 : inFlight.plan().target().epoch();
    if (epoch != inFlightEpoch) {
      String now = inFlight == null ? "nothing is in flight; cluster " + cluster + " is on epoch "
          + lastReadyRing().epoch() : "the epoch in flight is " + inFlightEpoch;
      if (epoch <= lastReadyRing().epoch()) {
        return reject("CANCEL of epoch " + epoch + ": it is READY or published, and only a plan in flight can be "
            + "cancelled (" + now + "); undo its change with the opposite change, for example a drain of a node "
            + "that joined", null);
      }
      return reject("CANCEL of epoch " + epoch + ": cluster " + cluster + " has no plan of that epoch in flight ("
          + now + ")", null);
    }
    MembershipChange cause = inFlight.cause();
    if (cause.isFailure() || !inFlight.deadNodes().isEmpty()) {
      return reject("CANCEL of epoch " + epoch + ": it repairs the failure of "
          + String.join(", ", inFlight.deadNodes().isEmpty() ? List.of(cause.nodeId()) : inFlight.deadNodes())
          + "; a failure cannot be cancelled, because its replicas are rebuilt from the survivors and clients already "
          + "route without the dead node: cancelling would leave its ranges under-replicated", null);
    }
    // A re-plan after a rejection may carry out several changes in one plan, whose cause names the first only: the
    // cancel abandons the one it names, and the others are planned again on their own, so that each requester sees an
    // outcome of its own (abandoning them silently was a defect: their requesters were never told).
    List<MembershipChange> carried = publication.replanned().contains(cause) ? publication.replanned() : List.of(cause);
    MembershipChange named = carried.stream().filter(c -> Objects.equals(c.nodeId(), cancel.nodeId())).findFirst()
        .orElse(null);
    if (named == null) {
      String carriesOut = carried.stream().map(c -> c.action() + " of node " + c.nodeId())
          .collect(java.util.stream.Collectors.joining(" and "));
      return reject("CANCEL of epoch " + epoch + ": it names node " + cancel.nodeId() + ", but the plan carries out "
          + carriesOut + (carried.size() > 1 ? " (a re-plan after a rejection merged them)" : "")
          + "; a cancel is keyed by the node of the change it cancels", null);
    }
    List<MembershipChange> others = carried.stream().filter(c -> c != named).toList();
    Plan plan = inFlight.plan();
    List<Effect> effects = new ArrayList<>();
    String why = "cancelled by " + (cancel.requestedBy() == null || cancel.requestedBy().isBlank() ? "an operator"
        : cancel.requestedBy()) + " (request " + cancel.requestId() + "): " + named.action() + " of node "
        + named.nodeId() + " abandoned, " + plan.tasks().size() + " task(s) cancelled; cluster " + cluster
        + " stays on epoch " + active.epoch()
        + others.stream().map(c -> "; " + c.action() + " of node " + c.nodeId() + " (request " + c.requestId()
            + ") is planned again on its own").collect(java.util.stream.Collectors.joining());
    effects.add(new EpochEvent(EpochEvent.State.CANCELLED, plan, cancel, lastReadyRing().checksum(), null, why));
    plan.tasks().forEach(t -> effects.add(new TaskCancelled(t.taskId())));
    ClusterAggregate withCopies = withStrays(plan.tasks());
    // Cleanups of the active epoch, but of another class than its own (they wait for the cancelled runs to settle, not
    // for a grace period) and under ids of their own: the active epoch may have a cleanup of the same range and target.
    List<PlannedTask> cleanups = EpochPlanner.strayCleanups(active, active, active, withCopies.strays(), Set.of(),
        clusterBytes).stream().map(c -> c.afterCancelOf(cluster, active.epoch(), epoch)).toList();
    cleanups.forEach(c -> effects.add(new TaskEvent(active.epoch(), 0, c)));
    List<Unpublished> waiting = new ArrayList<>();
    for (Unpublished u : publication.unpublished()) {
      // The cleanups belong to the active epoch: a rollback of it cancels them with its other tasks.
      waiting.add(u.epoch() != active.epoch() ? u : new Unpublished(u.epoch(), u.checksum(), u.cause(),
          concat(u.taskIds(), cleanups.stream().map(PlannedTask::taskId).toList()), u.carried()));
    }
    Publication answered = publication.withUnpublished(waiting);
    ClusterAggregate back = new ClusterAggregate(active, null, List.of(), (int) (epoch - active.epoch()),
        new Publication(answered.published(), answered.complete(), answered.unpublished(), answered.rejections(),
            answered.held(), List.of()), List.of());
    Transition t = back.planQueue(concat(others, queue), clusterBytes);
    effects.addAll(t.effects());
    return new Transition(t.next(), effects);
  }

  /** A FAIL the orchestrator applies again after a rollback, of a node whose own request it no longer has. */
  private static MembershipChange refail(String node) {
    return new MembershipChange(MembershipChange.Action.FAIL, node, null, null, "",
        "orchestrator (re-applied after a rollback)", 0L);
  }

  /**
   * What a task of a rolled-back epoch, known by its id only, leaves on its target: what a COPY or REPAIR task may
   * have copied, or what a CLEANUP task will now not delete (among them the stray cleanups that epoch's READY
   * emitted, whose strays would otherwise be forgotten); empty for an id of another form. Taken as strays, they are
   * deleted only where neither the next READY ring nor the active one places the node, so a cancelled cleanup of a
   * node the complete ring places there deletes nothing (the next plan's own cleanup does). The target's zone is
   * looked up in the rings this state knows, the target's own id standing in when none has it (a node that only an
   * unpublished epoch had: the zone is only displayed).
   */
  private java.util.Optional<StrayCopy> strayOf(String taskId) {
    RecordKeys.TaskIdParts parts;
    try {
      parts = RecordKeys.parseTaskId(taskId);
    } catch (CodecException e) {
      return java.util.Optional.empty();
    }
    String zone = parts.target();
    for (RingSnapshot ring : java.util.Arrays.asList(active, inFlight == null ? null : inFlight.plan().target(),
        publication.published(), publication.complete())) {
      if (ring != null && ring.member(parts.target()) != null) {
        zone = ring.member(parts.target()).zone();
        break;
      }
    }
    return java.util.Optional.of(new StrayCopy(parts.target(), zone, parts.rangeStart(), parts.rangeEnd()));
  }

  /** The unanswered READY epoch with this number and checksum, or null. */
  private Unpublished answered(long epoch, byte[] checksum) {
    return publication.unpublished().stream()
        .filter(u -> u.epoch() == epoch && Arrays.equals(u.checksum(), checksum)).findFirst().orElse(null);
  }

  /** {@code second} applied after {@code first}: its state, both effects in order. */
  private static Transition then(Transition first, Transition second) {
    List<Effect> effects = new ArrayList<>(first.effects());
    effects.addAll(second.effects());
    return new Transition(second.next(), effects);
  }

  private static <T> List<T> concat(List<T> a, List<T> b) {
    List<T> out = new ArrayList<>(a);
    out.addAll(b);
    return out;
  }

  /** The first PLANNED record says why it was planned and which rejected epoch it replaces. */
  private static List<Effect> annotateFirstPlan(List<Effect> effects, String note, long rejected) {
    List<Effect> out = new ArrayList<>(effects);
    for (int i = 0; i < out.size(); i++) {
      if (out.get(i) instanceof EpochEvent e && e.state() == EpochEvent.State.PLANNED) {
        String reason = e.reason() == null ? note : note + "; " + e.reason();
        out.set(i, new EpochEvent(e.state(), e.plan(), e.cause(), e.previousChecksum(),
            e.supersedes() == null ? rejected : e.supersedes(), reason, e.filling()));
        break;
      }
    }
    return out;
  }

  /** Records the READY epochs a transition emits as waiting for the publisher. */
  private Transition track(Transition t) {
    ClusterAggregate next = t.next();
    if (!next.initialised()) {
      return t;
    }
    List<Unpublished> waiting = new ArrayList<>(next.publication().unpublished());
    for (Effect e : t.effects()) {
      if (e instanceof EpochEvent ev && ev.state() == EpochEvent.State.READY) {
        List<String> ids = new ArrayList<>();
        ev.plan().tasks().forEach(task -> ids.add(task.taskId()));
        ev.plan().cleanupTasks().forEach(task -> ids.add(task.taskId()));
        // The READY of the plan that was in flight keeps what it carried out besides its cause.
        List<MembershipChange> carried = inFlight != null && inFlight.plan().target().epoch() == ev.plan().target()
            .epoch() && inFlight.plan().planVersion() == ev.plan().planVersion() ? inFlight.carried() : List.of();
        waiting.add(new Unpublished(ev.plan().target().epoch(), ev.plan().target().checksum(), ev.cause(), ids,
            carried));
      }
    }
    if (waiting.size() == next.publication().unpublished().size()) {
      return t;
    }
    Publication p = next.publication();
    return new Transition(new ClusterAggregate(next.active(), next.inFlight(), next.queue(), next.skipped(),
        p.withUnpublished(waiting), next.strays()), t.effects());
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
