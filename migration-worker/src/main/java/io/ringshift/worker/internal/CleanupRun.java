package io.ringshift.worker.internal;

import io.ringshift.ring.RingRange;
import io.ringshift.schemas.avro.RangeCopyTask;
import io.ringshift.schemas.avro.TaskState;
import io.ringshift.schemas.avro.TaskStatus;
import io.ringshift.storage.StoreException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A CLEANUP task: delete a moved range from a node that no longer owns it (its {@code target}), only when
 * <ol type="a">
 *   <li>the task's epoch is PUBLISHED on {@code ring.epochs},
 *   <li>the grace period has passed since that record's time, by the worker's clock, and
 *   <li>every new replica of the range (the task's {@code sources}) answers, and every COPY or REPAIR task of
 *       the epoch whose target is one of them and whose range overlaps this one is VERIFIED, with the store
 *       incarnation the replica still reports (a replica restarted on an empty data dir has another one). A new
 *       replica that a later published epoch no longer has (failed or drained since) is left out; when none is
 *       left, the old copy stays, and
 *   <li>when the epoch is staged (it moved by transition stages: a STAGED record of it was read), every live
 *       participant routes by its FINAL ring (a CONVERGED record of stage 3): until then a client still in the
 *       second stage writes the old copies too.
 * </ol>
 * The delete names the task's epoch, and the node refuses it when its own ring, of a later epoch, makes it a
 * replica of the range again (a FAIL published while this cleanup waited or ran): VERIFIED, nothing more deleted.
 * Until then it is BLOCKED with a reason naming what it waits for, re-checked every {@code retryInterval}
 * (holding no thread in between).
 * Deleting is idempotent, so a worker that dies between the delete and its VERIFIED status deletes again, which
 * deletes nothing. It never deletes from a node that is itself one of the new replicas, and never when the task
 * names no new replica.
 */
final class CleanupRun extends TaskRun {
  private static final Logger LOG = LoggerFactory.getLogger(CleanupRun.class);
  private static final int MAX_LISTED = 3;
  /** A reason that only counts down (the grace period) is re-published at most this often. */
  private static final Duration COUNTDOWN_REPUBLISH = Duration.ofMinutes(1);

  /**
   * How long a cancel's cleanup (what the cancelled tasks copied: {@code cancelledEpoch} set on the task) waits from
   * when this worker first saw it: the cancelled runs stop at their next batch, and their last writes must land before
   * the delete, not after it. No client ever routed to such a copy, so the epoch's grace period does not apply.
   */
  static final Duration CANCELLED_COPY_SETTLE = Duration.ofSeconds(30);

  /**
   * The grace period as a worker waits it, on its own clock: a thousandth longer, so that a clock running fast (NTP
   * bounds a disciplined clock's rate error at 500 ppm) never ends it before it has passed by the publisher's. Found
   * by the protocol simulation, whose clocks drift: a cleanup deleted 3 ms inside a 2 min grace period.
   */
  static Duration graceWaited(Duration grace) {
    return grace.plus(grace.dividedBy(1000));
  }

  /**
   * The oldest view of the control plane a cleanup deletes on. Whether a later epoch gives the range back to the target
   * (and holds it there for that epoch's own grace period) is read off the worker's view of ring.tasks and ring.epochs;
   * a worker cut off from Kafka keeps a view that ages, and deleted a copy a later epoch had given back and taken away
   * again seconds before, inside that epoch's grace period (found by the protocol simulation, seed 20261769). Every
   * epoch published longer ago than this is in the view, so any later epoch that gave the range back is known.
   */
  static final Duration MAX_VIEW_AGE = Duration.ofSeconds(15);

  private final long seenAtMillis;
  /**
   * The cancelled epoch when this is a cancel's cleanup, else null: taken from the first record this run saw and kept,
   * so that a re-emitted record cannot change the class (and the timing) of a cleanup under way. The class is what the
   * task says, never a comparison of timestamps that different hosts' clocks wrote (a worker's clock a second ahead
   * of the publisher's made an ordinary cleanup look like a cancel's, and it deleted 30 s after publication instead of
   * after the grace period).
   */
  private final Long cancelledEpoch;
  private String publishedCondition;
  private long publishedAtMillis;

  CleanupRun(RangeCopyTask task, TaskStatus previous, TaskContext ctx) {
    super(task, previous, ctx);
    this.seenAtMillis = ctx.clock().millis();
    this.cancelledEpoch = task.getCancelledEpoch();
  }

  @Override
  public void update(RangeCopyTask newer) {
    if (!java.util.Objects.equals(newer.getCancelledEpoch(), cancelledEpoch)) {
      LOG.warn("task {}: a re-emitted record says cancelled epoch {} where the run started with {}; the run keeps its "
          + "class and timing", task().getTaskId(), newer.getCancelledEpoch(), cancelledEpoch);
    }
    super.update(newer);
  }

  @Override
  protected Duration execute() {
    OptionalLong failedIn = ctx.control().failedIn(task().getClusterId(), task().getTarget());
    // A failure writes off what the node held from then on. The copy this cleanup deletes is of the node's life at
    // the epoch before the cleanup's (or, for a cancel's cleanup, at the cancelled epoch): a failure older than that is
    // of an earlier life, the node having joined again since, even if this worker has not read that epoch yet (found
    // by the protocol simulation, seed 50006913: the copy was kept, then deleted by a cancel's cleanup inside the grace
    // period).
    long life = cancelledEpoch != null ? cancelledEpoch + 1 : task().getEpoch();
    if (failedIn.isPresent() && failedIn.getAsLong() >= life) {
      // A node declared failed is out of the ring for good and its data is written off: nothing to delete, and
      // nothing that will ever answer. (A node that comes back joins anew, and its first copy clears its ranges.)
      LOG.info("task {}: not deleting {} from {}: it was declared failed (epoch {})", task().getTaskId(), range(),
          task().getTarget(), failedIn.getAsLong());
      nothingToDelete(task().getTarget() + " was declared failed and removed by published epoch "
          + failedIn.getAsLong() + "; its data is written off");
      return null;
    }
    String unknown = unknownTarget();
    if (unknown != null) {
      LOG.info("task {}: not deleting {} from {}: {}", task().getTaskId(), range(), task().getTarget(), unknown);
      nothingToDelete(unknown);
      return null;
    }
    String waiting = gate();
    if (waiting == null) {
      // What a later epoch gives back to the target stays (deleting it would delete that epoch's copy); the rest
      // of the range is deleted.
      List<RingRange> kept = new ArrayList<>(handedBackBy().stream()
          .map(t -> RingRange.of(t.getRangeStart(), t.getRangeEnd())).toList());
      List<RangeCopyTask> waitingCleanups = cancelledEpoch == null ? List.of() : waitingCleanups();
      // A cancel's cleanup leaves to an ordinary cleanup of the same node what that one still waits to delete: there the
      // node holds an old copy of a published epoch, which clients of that epoch may read until its grace period ends.
      waitingCleanups.forEach(t -> kept.add(RingRange.of(t.getRangeStart(), t.getRangeEnd())));
      List<RingRange> rest = minus(range(), kept);
      if (rest.isEmpty()) {
        String handedBack = handedBackBy().isEmpty() ? "ordinary cleanup " + waitingCleanups.get(0).getTaskId()
            + " of " + task().getTarget() + " deletes the range after its own grace period" : handedBack();
        LOG.info("task {}: not deleting {} from {}: {}", task().getTaskId(), range(), task().getTarget(), handedBack);
        nothingToDelete(handedBack);
        return null;
      }
      try {
        long deleted = 0;
        for (RingRange piece : rest) {
          deleted += call(task().getTarget(), NodeDown.Role.TARGET, t -> t.deleteRange(piece, task().getEpoch()));
        }
        LOG.info("task {}: deleted {} keys of {} from {}{}", task().getTaskId(), deleted, range(),
            task().getTarget(), rest.size() == 1 && rest.get(0).equals(range()) ? ""
                : " (only " + rest + ": later epochs give the rest back: " + handedBack() + ")");
        progress.state = TaskState.VERIFIED;
        progress.blockedReason = null;
        publish();
        return null;
      } catch (NodeDown down) {
        waiting = down.node + " (cleanup target) unreachable: " + down.reason();
      } catch (StoreException.Refused refused) {
        // The node's own ring makes it a replica of the range again: that epoch's copy stays, for good.
        LOG.info("task {}: {} refused the delete: {}", task().getTaskId(), task().getTarget(), refused.getMessage());
        nothingToDelete(task().getTarget() + " refused the delete: " + refused.getMessage());
        return null;
      } catch (StoreException e) {
        waiting = "deleting the range on " + task().getTarget() + " failed, retrying: " + e.getMessage();
      }
    }
    report(waiting);
    return ctx.tuning().retryInterval();
  }

  /**
   * Ends the cleanup VERIFIED with nothing deleted: its range is where it must be (the target is written off, a later
   * epoch gives the range back, the target's own ring makes it a replica again, or no copy could reach it). The
   * status's error field says why, and readers show the task as a cleanup that had nothing to do, not a failure.
   */
  private void nothingToDelete(String why) {
    progress.state = TaskState.VERIFIED;
    progress.error = NOTHING_DELETED + why;
    progress.blockedReason = null;
    publish();
  }

  /** How the note of a cleanup that deleted nothing begins (TaskStatus.error of a VERIFIED CLEANUP). */
  static final String NOTHING_DELETED = "nothing deleted: ";

  /**
   * Null when the target may hold a copy; otherwise why it cannot: it is not in this worker's node directory and the
   * latest published ring does not place it (a join of a node nobody started, cancelled), so no task ever copied to
   * it and nothing will ever answer a delete.
   */
  private String unknownTarget() {
    String target = task().getTarget();
    if (ctx.stores().knows(target)) {
      return null;
    }
    ControlState.PublishedMembers latest = ctx.control().latestPublishedMembers(task().getClusterId()).orElse(null);
    if (latest == null || latest.ids().contains(target)) {
      return null;
    }
    return target + " is not in this worker's node directory and published epoch " + latest.epoch()
        + " does not place it, so no copy can have reached it";
  }

  /** Publishes a wait reason when it changes, but a countdown of the same condition at most once a minute. */
  private void report(String reason) {
    String condition = reason.replaceAll("[0-9]+ (h|min|s)\\b", "#");
    long now = ctx.clock().millis();
    boolean sameCondition = condition.equals(publishedCondition) && progress.state == TaskState.BLOCKED;
    if (sameCondition && (reason.equals(progress.blockedReason)
        || now - publishedAtMillis < COUNTDOWN_REPUBLISH.toMillis())) {
      return;
    }
    publishedCondition = condition;
    publishedAtMillis = now;
    blocked(reason);
  }

  /**
   * Null when no later epoch gives the cleanup's range (or part of it) back to its target; otherwise which task
   * does. Checked right before the delete, after the gate: a join followed within the grace period by the drain
   * of the same node hands the joiner's ranges back to exactly the nodes that lost them.
   */
  String handedBack() {
    List<RangeCopyTask> back = handedBackBy();
    if (back.isEmpty()) {
      return null;
    }
    RangeCopyTask later = back.get(0);
    return "epoch " + later.getEpoch() + " gives the range back to " + task().getTarget() + " (task "
        + later.getTaskId() + ")" + (back.size() > 1 ? " and " + (back.size() - 1) + " more tasks" : "");
  }

  /**
   * The ordinary cleanups (no cancelled epoch) of this cleanup's target, not ended yet, whose range overlaps this one's:
   * what the node still holds as an old copy of a published epoch, waiting for that epoch's grace period.
   */
  List<RangeCopyTask> waitingCleanups() {
    List<RangeCopyTask> waiting = new ArrayList<>();
    for (RangeCopyTask other : ctx.control().cleanupsOf(task().getClusterId(), task().getTarget())) {
      if (!other.getTaskId().equals(task().getTaskId()) && other.getCancelledEpoch() == null
          && range().intersects(RingRange.of(other.getRangeStart(), other.getRangeEnd()))) {
        TaskStatus status = ctx.control().status(other.getTaskId()).orElse(null);
        if (status == null || (status.getState() != TaskState.VERIFIED && status.getState() != TaskState.FAILED)) {
          waiting.add(other);
        }
      }
    }
    return waiting;
  }

  /** The COPY and REPAIR tasks of later epochs to the target whose range overlaps this cleanup's. */
  List<RangeCopyTask> handedBackBy() {
    RangeCopyTask task = task();
    List<RangeCopyTask> back = new ArrayList<>();
    for (RangeCopyTask later : ctx.control().laterCopiesTo(task.getClusterId(), task.getEpoch(), task.getTarget())) {
      if (range().intersects(RingRange.of(later.getRangeStart(), later.getRangeEnd()))) {
        back.add(later);
      }
    }
    return back;
  }

  /**
   * The positions of {@code range} that no range of {@code taken} contains, as the fewest ranges in walk order from
   * the range's start; empty when {@code taken} covers it all.
   */
  static List<RingRange> minus(RingRange range, List<RingRange> taken) {
    List<RingRange> overlapping = taken.stream().filter(range::intersects).toList();
    if (overlapping.isEmpty()) {
      return List.of(range);
    }
    long start = range.start();
    long length = range.end() - start; // 0: the whole ring
    java.util.TreeSet<Long> offsets = new java.util.TreeSet<>(Long::compareUnsigned);
    for (RingRange t : overlapping) {
      for (long boundary : new long[] {t.start(), t.end()}) {
        long offset = boundary - start;
        if (offset != 0 && (length == 0 || Long.compareUnsigned(offset, length) < 0)) {
          offsets.add(offset);
        }
      }
    }
    // Every piece between two boundaries is in a range of `taken` throughout or not at all: its end tells.
    List<Long> ends = new ArrayList<>();
    offsets.forEach(o -> ends.add(start + o));
    ends.add(range.end());
    List<RingRange> rest = new ArrayList<>();
    long pieceStart = start;
    Long openStart = null;
    long openEnd = 0;
    for (long end : ends) {
      boolean covered = false;
      for (RingRange t : overlapping) {
        if (t.contains(end)) {
          covered = true;
          break;
        }
      }
      if (!covered) {
        if (openStart == null) {
          openStart = pieceStart;
        }
        openEnd = end;
      } else if (openStart != null) {
        rest.add(RingRange.of(openStart, openEnd));
        openStart = null;
      }
      pieceStart = end;
    }
    if (openStart != null) {
      rest.add(RingRange.of(openStart, openEnd));
    }
    return rest;
  }

  /** Null when the range may be deleted now, otherwise what the cleanup waits for. */
  String gate() {
    RangeCopyTask task = task();
    RingRange range = range();
    OptionalLong published = ctx.control().publishedAt(task.getClusterId(), task.getEpoch());
    if (published.isEmpty()) {
      return "waiting for epoch " + task.getEpoch() + " to be published" + (ctx.control().verifiesPublished() ? ""
          : " (no publisher key is trusted, so no PUBLISHED record counts: give the worker --trusted-key)");
    }
    List<String> sources = task.getSources();
    if (sources.isEmpty()) {
      return "the cleanup names no new replica of the range; nothing is deleted without one";
    }
    if (sources.contains(task.getTarget())) {
      return task.getTarget() + " is one of the range's new replicas " + sources + "; its copy is not deleted";
    }
    // A new replica that a later published epoch no longer has (it failed, or drained) holds nothing that counts: the
    // cleanup waits for the others only, and keeps the old copy when none is left.
    List<String> live = new ArrayList<>(sources);
    ControlState.PublishedMembers latest = ctx.control().latestPublishedMembers(task.getClusterId()).orElse(null);
    if (latest != null && latest.epoch() > task.getEpoch()) {
      live.removeIf(id -> !latest.ids().contains(id));
      if (live.isEmpty()) {
        return "every new replica of the range " + sources + " has left the ring since (published epoch "
            + latest.epoch() + "): the old copy on " + task.getTarget() + " stays";
      }
    }
    List<String> waits = new ArrayList<>();
    long endsAt = published.getAsLong() + graceWaited(ctx.grace()).toMillis(); // from when this worker saw it published
    long now = ctx.clock().millis();
    boolean cancelledCopy = cancelledEpoch != null;
    if (cancelledCopy) {
      endsAt = seenAtMillis + Math.min(ctx.grace().toMillis(), CANCELLED_COPY_SETTLE.toMillis());
    }
    if (now < endsAt) {
      waits.add((cancelledCopy ? "the cancelled copies settle in " : "grace period ends in ")
          + Rates.duration(Duration.ofMillis(endsAt - now)));
    }
    long viewAge = ctx.control().viewAgeMillis();
    if (now >= endsAt && viewAge > MAX_VIEW_AGE.toMillis()) {
      waits.add("this worker's view of the control plane is " + Rates.duration(Duration.ofMillis(viewAge))
          + " old (is it cut off from Kafka?); a cleanup deletes only on a view at most "
          + Rates.duration(MAX_VIEW_AGE) + " old");
    }
    // A staged epoch's participants write both rings until they route by its FINAL ring: the publisher publishes FINAL
    // once every live participant is in the second stage, and records when they all have moved on to FINAL. Before
    // that, a dual write may land on the old copy after the delete passed it (range deletes are not atomic), and a node
    // whose view is still in the second stage refuses the delete (docs/protocol.md, "Transition stages"), which would
    // end this cleanup with nothing deleted and the old copy kept for good.
    if (ctx.control().staged(task.getClusterId(), task.getEpoch())
        && ctx.control().convergedStage(task.getClusterId(), task.getEpoch()) < 3) {
      waits.add(CopyRun.CONVERGENCE_WAIT + " to route by the FINAL ring of epoch " + task.getEpoch()
          + " (no CONVERGED record of stage 3 yet): the epoch moved by transition stages, and clients of its second "
          + "stage still write the old copies");
    }
    // The new replicas' health matters when the delete happens: asked only once the grace period is over, so a
    // fleet of cleanups waiting out a ten-minute grace does not poll every node every retry interval.
    java.util.Map<String, String> incarnations = new java.util.HashMap<>();
    if (now >= endsAt) {
      for (String replica : live) {
        try {
          incarnations.put(replica, call(replica, NodeDown.Role.REPLICA, s -> s.info()).incarnation());
        } catch (NodeDown down) {
          waits.add(replica + " (new replica) unreachable: " + down.reason());
        }
      }
    }
    List<String> unverified = new ArrayList<>();
    for (RangeCopyTask copy : ctx.control().copyTasks(task.getClusterId(), task.getEpoch())) {
      if (live.contains(copy.getTarget())
          && range.intersects(RingRange.of(copy.getRangeStart(), copy.getRangeEnd()))) {
        // The epoch is published, so each copy was verified: a later status (a cut-off worker's, sent when it
        // reconnected) does not undo that, and the VERIFIED one says which store was verified.
        TaskStatus status = ctx.control().verifiedStatus(copy.getTaskId()).orElse(null);
        if (status == null) {
          TaskStatus lastRead = ctx.control().status(copy.getTaskId()).orElse(null);
          unverified.add("task " + copy.getTaskId() + " not VERIFIED ("
              + (lastRead == null ? "no status" : lastRead.getState().name()) + ")");
          continue;
        }
        String verifiedAs = status.getTargetIncarnation();
        String reported = incarnations.get(copy.getTarget());
        if (verifiedAs != null && reported != null && !verifiedAs.equals(reported)) {
          waits.add(copy.getTarget() + " (new replica) is not the store its task " + copy.getTaskId()
              + " verified: its incarnation is " + reported + ", the task verified " + verifiedAs
              + " (restarted on an empty data dir?); the old copies stay: declare the node failed to repair it");
        }
      }
    }
    unverified.sort(null);
    if (unverified.size() > MAX_LISTED) {
      int more = unverified.size() - MAX_LISTED;
      unverified.subList(MAX_LISTED, unverified.size()).clear();
      unverified.add("and " + more + " more tasks not VERIFIED");
    }
    waits.addAll(unverified);
    return waits.isEmpty() ? null : String.join("; ", waits);
  }
}
