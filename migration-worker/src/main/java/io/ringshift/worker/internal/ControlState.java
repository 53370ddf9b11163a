package io.ringshift.worker.internal;

import io.ringshift.protocol.CodecException;
import io.ringshift.protocol.Cutover;
import io.ringshift.protocol.TrustedKeys;
import io.ringshift.ring.RingRange;
import io.ringshift.schemas.avro.EpochRecord;
import io.ringshift.schemas.avro.MembershipAction;
import io.ringshift.schemas.avro.RangeCopyTask;
import io.ringshift.schemas.avro.TaskKind;
import io.ringshift.schemas.avro.TaskState;
import io.ringshift.schemas.avro.TaskStatus;
import io.ringshift.schemas.avro.WorkerBudgets;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What a worker knows of the whole control plane, beyond its own partitions of {@code ring.tasks}: the latest
 * status of every task (checkpoints to resume from, VERIFIED checks for cleanups), the COPY and REPAIR tasks of
 * every epoch (whose targets a cleanup waits for), the last record of every task (kept after its tombstone: a
 * dropped task's sources, whose fences the dispatcher lifts), when each epoch was PUBLISHED, and how each epoch is cut
 * over: by transition stages (STAGED), up to which stage every live participant has converged (CONVERGED), or at the
 * fence (FENCE_CUTOVER). Fed by a reader of all partitions of {@code ring.task-status}, {@code ring.tasks} and
 * {@code ring.epochs}; tests feed it directly. Only PUBLISHED records signed by a trusted publisher key count, timed
 * from when they are first seen. Thread safe.
 */
public final class ControlState {
  private static final Logger LOG = LoggerFactory.getLogger(ControlState.class);

  private final TrustedKeys trusted;
  private final Clock clock;
  private final Map<String, TaskStatus> statuses = new ConcurrentHashMap<>();
  /**
   * The last VERIFIED status read of each task whose latest status is not VERIFIED any more: a worker cut off from
   * Kafka sends the statuses its producer held when it reconnects, after another worker's VERIFIED.
   */
  private final Map<String, TaskStatus> verifiedBefore = new ConcurrentHashMap<>();
  private final Map<String, Map<String, RangeCopyTask>> copyTasksByEpoch = new ConcurrentHashMap<>();
  private final Map<String, String> epochOfTask = new ConcurrentHashMap<>();
  private final Map<String, RangeCopyTask> lastRecords = new ConcurrentHashMap<>();
  private final Map<String, Long> publishedAt = new ConcurrentHashMap<>();
  /** Every task of each epoch seen on ring.tasks (any kind), by epoch key: what {@link #sweep} forgets. */
  private final Map<String, Map<String, TaskKind>> tasksByEpoch = new ConcurrentHashMap<>();
  /**
   * The record of each cluster's highest verified PUBLISHED epoch (one entry per cluster, never swept): its epoch,
   * its members, and the failure epoch a repair in place repairs ({@link #inPlaceFenceEpoch}).
   */
  private final Map<String, EpochRecord> lastPublished = new ConcurrentHashMap<>();

  /** The members of a published epoch. */
  public record PublishedMembers(long epoch, Set<String> ids) {}

  /** The members of the cluster's highest published epoch (signed by a trusted key), if one was read. */
  public Optional<PublishedMembers> latestPublishedMembers(String clusterId) {
    EpochRecord published = lastPublished.get(clusterId);
    if (published == null) {
      return Optional.empty();
    }
    Set<String> ids = new java.util.HashSet<>();
    published.getMembers().forEach(m -> ids.add(m.getId()));
    return Optional.of(new PublishedMembers(published.getEpoch(), Set.copyOf(ids)));
  }

  /**
   * Tasks a tombstone dropped that this worker's dispatcher saw before this state's reader did: not live, whatever
   * record of them the reader still holds ({@link #liveTaskFencing}).
   */
  private final Set<String> dropped = ConcurrentHashMap.newKeySet();
  /**
   * Per cluster, the epochs a CANCELLED or REJECTED record names (numbers never used again: no such epoch
   * will be published), with when this worker first read it; watched by {@link FenceLifts} until their fences are gone.
   */
  private final Map<String, Map<Long, Long>> deadEpochs = new ConcurrentHashMap<>();

  /**
   * How an epoch is cut over, as the publisher recorded it on {@code ring.epochs} (EpochRecord v5; docs/protocol.md,
   * "Transition stages"; docs/worker.md, "Verification in a transition").
   *
   * @param staged the publisher's last word on the epoch is a STAGED record: it publishes the current plan in
   *     transition stages, so every live client writes both rings, tagged with the epoch
   * @param converged the highest stage a CONVERGED record of the epoch named (1: every live participant routes by
   *     the first stage or later; 3: by the FINAL ring), 0 when none was read
   * @param fenceCutover the publisher's last word on the epoch is FENCE_CUTOVER (a plan cut over at the fence) or
   *     REVERTED (a staged plan abandoned: what the orchestrator plans again under the number takes the fence, and
   *     the publisher rejects it, as readers saw the number with another ring)
   * @param everStaged a STAGED record of the epoch was read at any time: clients in its first stage may still write
   *     both rings with its tag, so a copy of it verifies without deleting anything (dominance), whatever came after
   */
  public record Transition(boolean staged, int converged, boolean fenceCutover, boolean everStaged) {
    /** An epoch no STAGED, CONVERGED or FENCE_CUTOVER record was read of: cut over at the fence, as before v5. */
    public static final Transition NONE = new Transition(false, 0, false, false);

    /**
     * Whether the publisher's decision on how the epoch is cut over was read: a STAGED, FENCE_CUTOVER or REVERTED
     * record, or a CONVERGED one (written only for a staged epoch).
     */
    public boolean decided() {
      return staged || fenceCutover || everStaged || converged > 0;
    }

    /** The state after {@code later}, read after this: the last STAGED, FENCE_CUTOVER or REVERTED record decides. */
    Transition merge(Transition later) {
      boolean decides = later.staged || later.fenceCutover;
      return new Transition(decides ? later.staged : staged, Math.max(converged, later.converged),
          decides ? later.fenceCutover : fenceCutover, everStaged || later.everStaged);
    }
  }

  /**
   * The latest PLANNED record of each epoch (the highest plan version read), by epoch key: what tells whether the
   * epoch repairs in place ({@link #inPlaceFenceEpoch}); forgotten with the transition records ({@link #sweep}).
   */
  private final Map<String, EpochRecord> plans = new ConcurrentHashMap<>();

  /**
   * The epoch a copy of {@code epoch} fences at when the epoch repairs in place ({@link Cutover#repairsInPlace}: its
   * latest plan builds the ring of the last published epoch, a failure epoch with filling marks, chained to it): that
   * failure epoch, whose clients already write every target the copies fill, so that only writers of older rings are
   * refused and the copies verify by dominance while writes go on (docs/worker.md, "Repairs in place"). Empty when
   * the copies fence at their own epoch: the plan or the failure epoch's PUBLISHED record is not read yet, or the
   * plan changes the ring.
   */
  public OptionalLong inPlaceFenceEpoch(String clusterId, long epoch) {
    EpochRecord plan = plans.get(epochKey(clusterId, epoch));
    EpochRecord published = lastPublished.get(clusterId);
    return Cutover.repairsInPlace(plan, published) ? OptionalLong.of(published.getEpoch()) : OptionalLong.empty();
  }

  /**
   * The clusters of which a cutover record (STAGED, FENCE_CUTOVER, REVERTED, CONVERGED) was read: their publisher
   * decides every plan that moves ranges, so a copy waits for the decision on its epoch before it fences
   * ({@link #awaitDecision}). A publisher of before transition stages writes none: its copies wait for a decision
   * only shortly after their plan ({@link #UNKNOWN_PUBLISHER_WAIT}).
   */
  private final Set<String> decidingClusters = ConcurrentHashMap.newKeySet();
  /**
   * How long after this view read an epoch's plan a copy of a cluster not known to decide (no cutover record read yet:
   * its first change, or a publisher of before stages) still waits for a decision ({@link #awaitDecision}): a
   * stage-aware publisher answers a plan within a second or two, and a change whose copies take longer than this
   * never waits.
   */
  static final Duration UNKNOWN_PUBLISHER_WAIT = Duration.ofSeconds(5);
  /** When this view first read a PLANNED record of each epoch (clock millis), by epoch key; swept with the plans. */
  private final Map<String, Long> plannedAt = new ConcurrentHashMap<>();

  /** The transition records read, by epoch key; forgotten once no task of the epoch is held ({@link #sweep}). */
  private final Map<String, Transition> transitions = new ConcurrentHashMap<>();
  /**
   * What runs waiting for the publisher's decision on an epoch or for its participants to converge on a stage wake,
   * by epoch key; each runs once, at the next cutover record of the epoch or at a record that makes its number dead,
   * and is then forgotten.
   */
  private final Map<String, Set<Runnable>> convergenceWaits = new ConcurrentHashMap<>();

  /** How {@code epoch} of {@code clusterId} is cut over, as far as this view has read; {@link Transition#NONE} if not. */
  public Transition transition(String clusterId, long epoch) {
    return transitions.getOrDefault(epochKey(clusterId, epoch), Transition.NONE);
  }

  /** Whether {@code epoch} of {@code clusterId} is staged: the publisher's last word on it is a STAGED record. */
  public boolean staged(String clusterId, long epoch) {
    return transition(clusterId, epoch).staged();
  }

  /** Whether a STAGED record of {@code epoch} of {@code clusterId} was ever read (see {@link Transition#everStaged}). */
  public boolean everStaged(String clusterId, long epoch) {
    return transition(clusterId, epoch).everStaged();
  }

  /** The highest stage a CONVERGED record of {@code epoch} named (1, or 3 for FINAL); 0 when none was read. */
  public int convergedStage(String clusterId, long epoch) {
    return transition(clusterId, epoch).converged();
  }

  /**
   * Whether every live participant has converged on stage {@code stage} of the epoch or later (a CONVERGED record
   * naming it or a higher stage was read). When not, {@code wake} runs once, at the next CONVERGED record of the epoch
   * or at a record that makes its number dead (CANCELLED, REJECTED) or reverts it (REVERTED), so that a run waiting for it moves at
   * once instead of at its next poll; {@link #cancelConvergenceWait} forgets it earlier.
   */
  public boolean awaitConverged(String clusterId, long epoch, int stage, Runnable wake) {
    if (convergedStage(clusterId, epoch) >= stage) {
      return true;
    }
    return registered(clusterId, epoch, wake, () -> convergedStage(clusterId, epoch) >= stage);
  }

  /**
   * Registers {@code wake} for the epoch's next cutover record, then reads {@code holds} again: a record read in
   * between wakes what it found registered, or is seen here (the wait is then forgotten). Returns {@code holds}.
   */
  private boolean registered(String clusterId, long epoch, Runnable wake, java.util.function.BooleanSupplier holds) {
    // An insertion-ordered set: the waits wake in the order they registered, the same order on every run (the
    // deterministic simulation runs this code), not in the order of the lambdas' identity hashes.
    convergenceWaits.computeIfAbsent(epochKey(clusterId, epoch),
        k -> java.util.Collections.synchronizedSet(new java.util.LinkedHashSet<>())).add(wake);
    if (holds.getAsBoolean()) {
      cancelConvergenceWait(clusterId, epoch, wake);
      return true;
    }
    return false;
  }

  /**
   * Whether a copy of {@code epoch} may fence as far as the publisher's decision goes: the decision on how the epoch
   * is cut over was read ({@link Transition#decided}), or the cluster is not known to have a publisher that decides
   * (no cutover record of it was ever read) and {@link #UNKNOWN_PUBLISHER_WAIT} has passed since its plan was read (or
   * no plan was). When not, {@code wake} runs once, at the next cutover record of the epoch (STAGED,
   * FENCE_CUTOVER, REVERTED, CONVERGED) or at a record that makes its number dead, as for {@link #awaitConverged};
   * {@link #cancelConvergenceWait} forgets it earlier.
   */
  public boolean awaitDecision(String clusterId, long epoch, Runnable wake) {
    String key = epochKey(clusterId, epoch);
    if (transition(clusterId, epoch).decided()) {
      return true;
    }
    if (!decidingClusters.contains(clusterId)) {
      Long planned = plannedAt.get(key);
      if (planned == null || clock.millis() - planned >= UNKNOWN_PUBLISHER_WAIT.toMillis()) {
        return true;
      }
    }
    return registered(clusterId, epoch, wake, () -> transition(clusterId, epoch).decided());
  }

  /** Forgets a wait of {@link #awaitConverged} or {@link #awaitDecision}; does nothing when there is none. */
  public void cancelConvergenceWait(String clusterId, long epoch, Runnable wake) {
    String key = epochKey(clusterId, epoch);
    Set<Runnable> waits = convergenceWaits.get(key);
    if (waits != null) {
      waits.remove(wake);
      if (waits.isEmpty()) {
        convergenceWaits.remove(key, waits);
      }
    }
  }

  /** Runs (and forgets) every wait registered for the epoch. */
  private void wakeConvergenceWaits(String key) {
    Set<Runnable> waits = convergenceWaits.remove(key);
    if (waits != null) {
      List<Runnable> ordered;
      synchronized (waits) {
        ordered = List.copyOf(waits);
      }
      ordered.forEach(Runnable::run);
    }
  }

  /**
   * When this state last held everything committed on its topics, by the worker's clock: the time a read-your-writes
   * barrier was asked for that then completed. Null when the worker does not track it (tests that feed the state
   * directly): the view counts as fresh.
   */
  private volatile Long viewCaughtUpAt;

  /** Everything committed on the control-plane topics before {@code millis} (the worker's clock) has been read. */
  public void viewCaughtUpAt(long millis) {
    Long known = viewCaughtUpAt;
    if (known == null || millis > known) {
      viewCaughtUpAt = millis;
    }
  }

  /**
   * How old this view of the control plane may be, by the worker's clock: how long ago the last barrier that completed
   * was asked for; 0 when not tracked. A worker cut off from Kafka reads nothing, and its view ages.
   */
  public long viewAgeMillis() {
    Long at = viewCaughtUpAt;
    return at == null ? 0 : Math.max(0, clock.millis() - at);
  }

  /** The dispatcher saw the tombstone of {@code taskId}: it is no longer live, even before this state reads it. */
  public synchronized void onDropped(String taskId) {
    if (lastRecords.containsKey(taskId) && !epochOfTask.containsKey(taskId)) {
      return; // this state read the tombstone already (or the task is no COPY or REPAIR, which fences nothing)
    }
    dropped.add(taskId);
  }

  /** The dispatcher saw a record of {@code taskId} again after its tombstone (a re-plan emitted it anew). */
  public void onUndropped(String taskId) {
    dropped.remove(taskId);
  }

  /** Per cluster, the epochs that can no longer be published, with when this worker first read so (a copy). */
  public Map<String, Map<Long, Long>> deadEpochs() {
    Map<String, Map<Long, Long>> copy = new java.util.TreeMap<>();
    deadEpochs.forEach((c, epochs) -> {
      if (!epochs.isEmpty()) {
        copy.put(c, new java.util.TreeMap<>(epochs));
      }
    });
    return copy;
  }

  /**
   * Whether {@code epoch} of {@code clusterId} can no longer be published (a CANCELLED or REJECTED record named it;
   * a REVERTED one does not end its tasks: see {@link #onEpoch}).
   */
  public boolean dead(String clusterId, long epoch) {
    Map<Long, Long> epochs = deadEpochs.get(clusterId);
    return epochs != null && epochs.containsKey(epoch);
  }

  /**
   * Whether {@code epoch} of {@code clusterId} is (or, forgotten since, was) published: a PUBLISHED record of it was read,
   * or it is at most the highest published epoch and no CANCELLED or REJECTED record named it.
   */
  public boolean published(String clusterId, long epoch) {
    return publishedAt(clusterId, epoch).isPresent()
        || (epoch <= highestPublished(clusterId) && !dead(clusterId, epoch));
  }

  /** Stops watching a dead epoch (its fences are gone). */
  public void forgetDeadEpoch(String clusterId, long epoch) {
    Map<Long, Long> epochs = deadEpochs.get(clusterId);
    if (epochs != null) {
      epochs.remove(epoch);
    }
  }

  /** The live CLEANUP tasks of {@code clusterId} whose target is {@code target}, as last emitted. */
  public synchronized List<RangeCopyTask> cleanupsOf(String clusterId, String target) {
    List<RangeCopyTask> out = new java.util.ArrayList<>();
    for (Map<String, TaskKind> ofEpoch : tasksByEpoch.values()) {
      for (Map.Entry<String, TaskKind> t : ofEpoch.entrySet()) {
        if (t.getValue() == TaskKind.CLEANUP) {
          RangeCopyTask record = lastRecords.get(t.getKey());
          if (record != null && record.getClusterId().equals(clusterId) && record.getTarget().equals(target)) {
            out.add(record);
          }
        }
      }
    }
    out.sort(java.util.Comparator.comparing(RangeCopyTask::getTaskId));
    return out;
  }

  /** The nodes any epoch record of {@code clusterId} named as members, in id order. */
  public List<String> knownMembers(String clusterId) {
    Map<String, String> ofCluster = zones.get(clusterId);
    return ofCluster == null ? List.of() : List.copyOf(new java.util.TreeSet<>(ofCluster.keySet()));
  }

  /** Per cluster, the nodes a verified PUBLISHED epoch removed for a FAIL, with the first such epoch. */
  private final Map<String, Map<String, Long>> failed = new java.util.concurrent.ConcurrentHashMap<>();

  /**
   * The first published epoch that removed {@code node} for its FAIL (its cause is the node's FAIL and its ring no
   * longer has the node), from verified PUBLISHED records only; empty when none did.
   */
  public OptionalLong failedIn(String clusterId, String node) {
    Long epoch = failed.getOrDefault(clusterId, Map.of()).get(node);
    return epoch == null ? OptionalLong.empty() : OptionalLong.of(epoch);
  }

  /**
   * @param trusted the publisher keys whose PUBLISHED records count (a cleanup deletes only after one); null when
   *     none is configured, and then no PUBLISHED record counts
   * @param clock when a PUBLISHED record is first seen: the grace period runs from then, not from the record's
   *     timestamp, which anyone who can write to ring.epochs can set
   */
  public ControlState(TrustedKeys trusted, Clock clock) {
    this.trusted = trusted;
    this.clock = clock;
  }

  /** Whether PUBLISHED records can count at all: false when no publisher key is trusted. */
  public boolean verifiesPublished() {
    return trusted != null;
  }

  /** Each cluster's node zones, from the members of its latest epoch records (any state). */
  private final Map<String, Map<String, String>> zones = new ConcurrentHashMap<>();
  /** When each task's latest status was read here, by this worker's clock. */
  private final Map<String, Long> statusReadAt = new ConcurrentHashMap<>();
  /** Each worker group's shared budgets from {@code ring.worker-budgets}. */
  private final Map<String, WorkerBudgets> budgets = new ConcurrentHashMap<>();

  /** The zone of {@code node} in {@code clusterId}, as its latest epoch record lists it; empty when unknown. */
  public Optional<String> zoneOf(String clusterId, String node) {
    Map<String, String> ofCluster = zones.get(clusterId);
    return Optional.ofNullable(ofCluster == null ? null : ofCluster.get(node));
  }

  /** The budgets of worker group {@code groupId} ({@code null} removes them: a tombstone). */
  public void onBudgets(String groupId, WorkerBudgets record) {
    if (groupId == null) {
      return;
    }
    if (record == null) {
      budgets.remove(groupId);
    } else {
      budgets.put(groupId, record);
    }
  }

  /** The budgets set for worker group {@code groupId}; empty when none is (no group limit). */
  public Optional<WorkerBudgets> budgets(String groupId) {
    return Optional.ofNullable(budgets.get(groupId));
  }

  /** The latest status of every task that has one (a view: it changes as statuses arrive). */
  public java.util.Collection<TaskStatus> statuses() {
    return java.util.Collections.unmodifiableCollection(statuses.values());
  }

  /** The latest status of a task ({@code null} removes it: a tombstone). */
  public void onStatus(String taskId, TaskStatus status) {
    if (status == null) {
      statuses.remove(taskId);
      statusReadAt.remove(taskId);
      verifiedBefore.remove(taskId);
    } else {
      TaskStatus previous = statuses.put(taskId, status);
      statusReadAt.put(taskId, clock.millis());
      if (status.getState() == TaskState.VERIFIED) {
        verifiedBefore.remove(taskId);
      } else if (previous != null && previous.getState() == TaskState.VERIFIED) {
        verifiedBefore.put(taskId, previous);
      }
    }
  }

  /**
   * The task's VERIFIED status: its latest status when that is VERIFIED, else the last VERIFIED one this view read
   * (a later status of a task of a published epoch is a cut-off worker's, sent late; see docs/worker.md).
   */
  public Optional<TaskStatus> verifiedStatus(String taskId) {
    TaskStatus latest = statuses.get(taskId);
    if (latest != null && latest.getState() == TaskState.VERIFIED) {
      return Optional.of(latest);
    }
    return Optional.ofNullable(verifiedBefore.get(taskId));
  }

  /** When this worker read the task's latest status, by its own clock ({@link Long#MIN_VALUE} when it has none). */
  public long statusReadAt(String taskId) {
    return statusReadAt.getOrDefault(taskId, Long.MIN_VALUE);
  }

  /** The latest record of a task on {@code ring.tasks} ({@code null}: the task was dropped). */
  public synchronized void onTask(String taskId, RangeCopyTask task) {
    if (task == null) {
      dropped.remove(taskId); // this state knows it now
      // A dropped task no longer belongs to its epoch: the epoch can be swept without it.
      RangeCopyTask last = lastRecords.get(taskId);
      if (last != null) {
        Map<String, TaskKind> ofEpoch = tasksByEpoch.get(epochKey(last.getClusterId(), last.getEpoch()));
        if (ofEpoch != null) {
          ofEpoch.remove(taskId);
        }
      }
    }
    if (task != null) {
      lastRecords.put(taskId, task);
      tasksByEpoch.computeIfAbsent(epochKey(task.getClusterId(), task.getEpoch()), e -> new ConcurrentHashMap<>())
          .put(taskId, task.getKind());
    }
    String previous = epochOfTask.remove(taskId);
    if (previous != null) {
      Map<String, RangeCopyTask> tasks = copyTasksByEpoch.get(previous);
      if (tasks != null) {
        tasks.remove(taskId);
      }
    }
    if (task != null && (task.getKind() == TaskKind.COPY || task.getKind() == TaskKind.REPAIR)) {
      String epoch = epochKey(task.getClusterId(), task.getEpoch());
      epochOfTask.put(taskId, epoch);
      copyTasksByEpoch.computeIfAbsent(epoch, e -> new ConcurrentHashMap<>()).put(taskId, task);
    }
  }

  /**
   * An epoch record: a PUBLISHED one signed by a trusted publisher key opens its cleanups' grace period, timed from
   * now. A PUBLISHED record that is unsigned, signed by an unknown key or altered is logged and ignored: it could
   * otherwise make cleanups delete the old owners' copies of an epoch that was never published. A CANCELLED, REJECTED
   * or REVERTED record makes the epoch's number dead; the latest PLANNED record of an epoch is kept, to tell whether it
   * repairs in place ({@link #inPlaceFenceEpoch}); STAGED, CONVERGED and FENCE_CUTOVER records say how the epoch is
   * cut over ({@link #transition}). Records of a state this version does not know (UNKNOWN) are ignored.
   */
  public void onEpoch(EpochRecord record) {
    if (record == null) {
      return;
    }
    // Zones only shape the group's zone-link budgets, so any epoch record may name them (a node keeps its zone).
    Map<String, String> ofCluster = zones.computeIfAbsent(record.getClusterId(), c -> new ConcurrentHashMap<>());
    record.getMembers().forEach(m -> ofCluster.put(m.getId(), m.getZone()));
    String key = epochKey(record.getClusterId(), record.getEpoch());
    switch (record.getState()) {
      case REVERTED -> {
        // Not a dead number for the worker: the orchestrator may plan again under it (a FAIL re-plans the epoch in
        // flight), and those tasks must run to a READY record, which the publisher then rejects, which rolls the
        // cluster back to a fresh number. Their copies take the fence.
        decidingClusters.add(record.getClusterId());
        transitions.merge(key, new Transition(false, 0, true, false), Transition::merge);
        wakeConvergenceWaits(key); // the runs waiting for its participants go on, at the fence
        return;
      }
      case CANCELLED, REJECTED -> {
        deadEpochs.computeIfAbsent(record.getClusterId(), c -> new ConcurrentHashMap<>())
            .putIfAbsent(record.getEpoch(), clock.millis());
        wakeConvergenceWaits(key); // the runs waiting for its participants end now, as their epoch did
        return;
      }
      // The transition records' signatures are not checked (only STAGED carries one), and need not be: STAGED makes
      // the worker wait before it fences and verify by dominance, which deletes nothing; CONVERGED only opens gates
      // that a STAGED record closed, and a cleanup still waits for a signed PUBLISHED record.
      case STAGED -> {
        decidingClusters.add(record.getClusterId());
        transitions.merge(key, new Transition(true, 0, false, true), Transition::merge);
        wakeConvergenceWaits(key); // the runs waiting for the decision wait for the participants now
        return;
      }
      case CONVERGED -> {
        Integer stage = record.getStage();
        if (stage == null || stage < 1) {
          LOG.warn("ignoring a CONVERGED record of epoch {} of cluster {} that names no stage ({})",
              record.getEpoch(), record.getClusterId(), stage);
          return;
        }
        decidingClusters.add(record.getClusterId());
        transitions.merge(key, new Transition(false, stage, false, false), Transition::merge);
        wakeConvergenceWaits(key);
        return;
      }
      case FENCE_CUTOVER -> {
        decidingClusters.add(record.getClusterId());
        transitions.merge(key, new Transition(false, 0, true, false), Transition::merge);
        wakeConvergenceWaits(key); // the runs waiting for the decision fence now
        return;
      }
      case PLANNED -> {
        plans.merge(key, record, (known, next) -> planVersion(next) >= planVersion(known) ? next : known);
        plannedAt.putIfAbsent(key, clock.millis());
        return;
      }
      case PUBLISHED -> {
        // below
      }
      default -> {
        return;
      }
    }
    if (trusted == null) {
      return;
    }
    try {
      trusted.verify(record);
    } catch (CodecException e) {
      LOG.error("ignoring a PUBLISHED record on ring.epochs that does not verify ({}): {}", e.reason(),
          e.getMessage());
      return;
    }
    publishedAt.putIfAbsent(epochKey(record.getClusterId(), record.getEpoch()), clock.millis());
    Set<String> ids = new java.util.HashSet<>();
    record.getMembers().forEach(m -> ids.add(m.getId()));
    lastPublished.merge(record.getClusterId(), record,
        (known, next) -> next.getEpoch() >= known.getEpoch() ? next : known);
    Map<String, Long> gone = failed.get(record.getClusterId());
    if (gone != null) {
      gone.entrySet().removeIf(e -> ids.contains(e.getKey()) && e.getValue() < record.getEpoch()); // joined again
    }
    if (record.getCause() != null && record.getCause().getAction() == MembershipAction.FAIL
        && !ids.contains(record.getCause().getNodeId())) {
      failed.computeIfAbsent(record.getClusterId(), c -> new java.util.concurrent.ConcurrentHashMap<>())
          .merge(record.getCause().getNodeId(), record.getEpoch(), Math::min);
    }
  }

  private static int planVersion(EpochRecord plan) {
    return plan.getPlanVersion() == null ? 0 : plan.getPlanVersion();
  }

  public Optional<TaskStatus> status(String taskId) {
    return Optional.ofNullable(statuses.get(taskId));
  }

  /**
   * The last record of a task on {@code ring.tasks} that was not a tombstone, kept after a tombstone: the worker's
   * poll loop may see only the tombstone (a record and its tombstone read in one poll, or a partition replayed
   * after a rebalance), and a dropped task that fenced needs the nodes it fenced.
   */
  public Optional<RangeCopyTask> lastRecord(String taskId) {
    return Optional.ofNullable(lastRecords.get(taskId));
  }

  /** The highest epoch of {@code clusterId} this worker saw a verified PUBLISHED record of, or -1. */
  public long highestPublished(String clusterId) {
    EpochRecord published = lastPublished.get(clusterId);
    return published == null ? -1L : published.getEpoch();
  }

  /** When this worker first saw a verified PUBLISHED record of {@code epoch} of {@code clusterId}, if it has. */
  public OptionalLong publishedAt(String clusterId, long epoch) {
    Long at = publishedAt.get(epochKey(clusterId, epoch));
    return at == null ? OptionalLong.empty() : OptionalLong.of(at);
  }

  /** The COPY and REPAIR tasks of an epoch, as last emitted. */
  public List<RangeCopyTask> copyTasks(String clusterId, long epoch) {
    Map<String, RangeCopyTask> tasks = copyTasksByEpoch.get(epochKey(clusterId, epoch));
    return tasks == null ? List.of() : List.copyOf(tasks.values());
  }

  /**
   * The COPY and REPAIR tasks of epochs after {@code epoch} of {@code clusterId} that give {@code target} a range:
   * a later epoch may hand back to a node a range an earlier epoch's cleanup is about to delete from it.
   */
  public List<RangeCopyTask> laterCopiesTo(String clusterId, long epoch, String target) {
    List<RangeCopyTask> later = new java.util.ArrayList<>();
    for (Map<String, RangeCopyTask> tasks : copyTasksByEpoch.values()) {
      for (RangeCopyTask t : tasks.values()) {
        if (t.getEpoch() > epoch && t.getClusterId().equals(clusterId) && t.getTarget().equals(target)) {
          later.add(t);
        }
      }
    }
    return later;
  }

  /**
   * A live COPY or REPAIR task of {@code epoch}, other than {@code except}, whose range overlaps {@code range} and
   * which fences {@code node} (one of its sources, or its target): it may rely on the node's fence of the range at
   * that epoch, since fences are keyed by range and epoch, not by task. Null when there is none.
   */
  public String liveTaskFencing(String clusterId, long epoch, RingRange range, String node,
      String except) {
    for (RangeCopyTask other : copyTasks(clusterId, epoch)) {
      if (!other.getTaskId().equals(except) && !dropped.contains(other.getTaskId())
          && (other.getSources().contains(node) || other.getTarget().equals(node))
          && range.intersects(RingRange.of(other.getRangeStart(), other.getRangeEnd()))) {
        return other.getTaskId();
      }
    }
    return null;
  }

  /** An epoch whose tasks are all finished, with the ids to tombstone. */
  public record Finished(String clusterId, long epoch, List<String> taskIds) {}

  /**
   * Forgets every epoch that is done with, and returns them so that the worker tombstones their tasks and statuses
   * on ring.tasks and ring.task-status. An epoch is done with when it is PUBLISHED (a verified record), every one of
   * its tasks has a final status (COPY and REPAIR VERIFIED; CLEANUP VERIFIED or FAILED, as a cleanup that found the
   * range handed back ends), and a later epoch of the same cluster is PUBLISHED too (so the latest epoch's tasks
   * stay readable for {@code ringshift status}). A task without a status, BLOCKED, of an unknown kind, or an epoch
   * not yet published keeps its epoch. What is forgotten: the statuses, the task records kept after tombstones, the
   * epoch's COPY/REPAIR index, its PUBLISHED time and its transition records (which also go for an epoch that holds no
   * task, once a later epoch is published). So the worker's state holds the epochs in flight and the last
   * published one, whatever the history.
   */
  public synchronized List<Finished> sweep() {
    // An epoch is swept only when every earlier epoch of its cluster that is still held is swept too: a cleanup of
    // an earlier epoch still waiting looks at the later epochs' copies (laterCopiesTo).
    java.util.TreeMap<String, java.util.TreeMap<Long, Map<String, TaskKind>>> byCluster = new java.util.TreeMap<>();
    for (Map.Entry<String, Map<String, TaskKind>> e : tasksByEpoch.entrySet()) {
      int slash = e.getKey().indexOf('/');
      byCluster.computeIfAbsent(e.getKey().substring(slash + 1), c -> new java.util.TreeMap<>())
          .put(Long.parseLong(e.getKey().substring(0, slash)), e.getValue());
    }
    List<Finished> finished = new java.util.ArrayList<>();
    for (Map.Entry<String, java.util.TreeMap<Long, Map<String, TaskKind>>> c : byCluster.entrySet()) {
      for (Map.Entry<Long, Map<String, TaskKind>> e : c.getValue().entrySet()) {
        if (e.getValue().isEmpty()) {
          tasksByEpoch.remove(epochKey(c.getKey(), e.getKey())); // every task of it was dropped: nothing held
          continue;
        }
        Finished f = finishedOrNull(c.getKey(), e.getKey(), e.getValue(), highestPublished(c.getKey()));
        if (f == null) {
          break; // this epoch stays, and so does every later one
        }
        finished.add(f);
      }
    }
    for (Finished f : finished) {
      String key = epochKey(f.clusterId(), f.epoch());
      tasksByEpoch.remove(key);
      copyTasksByEpoch.remove(key);
      publishedAt.remove(key);
      for (String id : f.taskIds()) {
        statuses.remove(id);
        verifiedBefore.remove(id);
        lastRecords.remove(id);
        epochOfTask.remove(id);
      }
    }
    // The transition records of an epoch are read by its tasks only: they are forgotten once no task of the epoch is
    // held (it was just swept, or it is history a starting worker reads, or it moved nothing) and a later epoch of the
    // cluster is published.
    java.util.function.Predicate<String> done = key -> {
      int slash = key.indexOf('/');
      long epoch = Long.parseLong(key.substring(0, slash));
      return epoch < highestPublished(key.substring(slash + 1)) && !tasksByEpoch.containsKey(key);
    };
    transitions.keySet().removeIf(done);
    plans.keySet().removeIf(done);
    plannedAt.keySet().removeIf(done);
    return finished;
  }

  /** The epoch as {@link Finished} when it is done with, else null. */
  private Finished finishedOrNull(String cluster, long epoch, Map<String, TaskKind> tasks, long latest) {
    String key = epochKey(cluster, epoch);
    if (!publishedAt.containsKey(key) || latest <= epoch) {
      return null;
    }
    boolean done = tasks.entrySet().stream().allMatch(t -> {
      TaskStatus s = statuses.get(t.getKey());
      if (s == null) {
        return false;
      }
      return switch (t.getValue()) {
        // The epoch is published: a copy verified once is done, whatever a cut-off worker sent after.
        case COPY, REPAIR -> verifiedStatus(t.getKey()).isPresent();
        case CLEANUP -> s.getState() == TaskState.VERIFIED
            || s.getState() == TaskState.FAILED;
        default -> false;
      };
    });
    return done ? new Finished(cluster, epoch, List.copyOf(tasks.keySet())) : null;
  }

  /** How many entries the state holds in all (statuses, task records, epoch indexes): for measuring it. */
  public int size() {
    int copies = copyTasksByEpoch.values().stream().mapToInt(Map::size).sum();
    int tasks = tasksByEpoch.values().stream().mapToInt(Map::size).sum();
    return statuses.size() + lastRecords.size() + epochOfTask.size() + publishedAt.size() + copies + tasks
        + transitions.size();
  }

  private static String epochKey(String clusterId, long epoch) {
    return epoch + "/" + clusterId;
  }
}
