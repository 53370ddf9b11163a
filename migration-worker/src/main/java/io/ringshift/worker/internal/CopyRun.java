package io.ringshift.worker.internal;

import io.ringshift.ring.RingRange;
import io.ringshift.schemas.avro.RangeCopyTask;
import io.ringshift.schemas.avro.TaskKind;
import io.ringshift.schemas.avro.TaskState;
import io.ringshift.schemas.avro.TaskStatus;
import io.ringshift.worker.TaskTuning;
import io.ringshift.storage.Change;
import io.ringshift.storage.ChangeFeed;
import io.ringshift.storage.Entry;
import io.ringshift.storage.Fence;
import io.ringshift.storage.LoadResult;
import io.ringshift.storage.RangeDigest;
import io.ringshift.storage.RangeScan;
import io.ringshift.storage.StoreException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A COPY or REPAIR task: give the target a verified copy of the range from one of the sources (docs/architecture.md,
 * "Epochs and the migration protocol"; docs/worker.md).
 *
 * <h2>Design</h2>
 * <ol>
 *   <li><b>Copy.</b> Take the first source that answers, open a scan of the range on it; the scan's sequence
 *       number is the watermark W. Stream the entries to the target in throttled batches, checkpointing
 *       (source, W, last copied position, bytes) to {@code ring.task-status}. A copy from scratch first clears
 *       the range on the target: leftovers of an earlier attempt from another source, or of an old ownership,
 *       would otherwise survive the copy and fail the digest.
 *   <li><b>Catch up.</b> Apply the source's change feed of the range after W, in log order, until a pass leaves
 *       little lag; report CAUGHT_UP and keep tailing the feed until the orchestrator requests the fence. In a staged
 *       epoch (the publisher published a transition stage of it) keep tailing after the request too, until every live
 *       participant routes by the first stage (a CONVERGED record of stage 1 or later): only then does the fence
 *       refuse nothing but stragglers' writes.
 *   <li><b>Fence and verify.</b> Fence the range at the task's epoch (a repair in place: at the failure epoch it
 *       repairs, {@link #fenceEpoch}) on the target, then on every reachable
 *       source (the target and the copied-from source must succeed), drain the feed up to the source's fence
 *       position, compare range digests. Where they differ, re-copy the differing pieces from the source and
 *       compare again: VERIFIED, or BLOCKED with both digests and a new attempt after a doubling backoff. In a
 *       staged epoch dual writes keep reaching both sides (in a repair in place, the failure epoch's writes), so
 *       where the digests differ the run verifies by
 *       dominance instead ({@link RangeDominance}; {@link #verifyByDominance}): it re-applies what the check names,
 *       never clearing anything, and checks again, in a bounded number of rounds.
 * </ol>
 *
 * <p><b>Why a resumed copy is correct.</b> A worker that resumes a checkpoint (same source) scans the rest of the
 * range from a new snapshot W2 &gt; W but keeps W as the start of catch-up. Take any key k of the range and the
 * fence position F. Every value the target got for k, from the first scan, the resumed scan or the feed, was
 * k's value on the source at some sequence in [W, F]. If no write to k falls in (W, F], that value is the same
 * at every such sequence, so the target has k's value at F. If some do, catch-up starts only after the copy has
 * finished and replays every change to the range in (W, F] in log order, so the last write to k the target
 * applies is the last one up to F. Either way the target ends with the source's contents at F, whatever mix of
 * W and W2 snapshots the copy read; keys re-applied around the resume cursor are harmless because apply is
 * idempotent. A checkpoint stores only the last copied position, not the key, so a resumed scan restarts at the
 * position itself and re-applies the rare keys that share it (hash collisions). A checkpoint from another source
 * means nothing here (its sequence numbers are another log's), so the copy starts over.
 *
 * <p>A source that stops answering: the next source from scratch; none left: BLOCKED ("no source reachable:
 * ...") and a retry every {@code retryInterval}, resuming the checkpoint if its source came back. A target that
 * stops answering: BLOCKED, then resume. A feed that no longer reaches back to the applied position: copy again
 * from scratch; from the second time in a row, BLOCKED with the reason and a {@code retryInterval} pause first.
 * Throttle waits over a second and slot waits keep the real state and set blockedReason.
 */
final class CopyRun extends TaskRun {
  private static final Logger LOG = LoggerFactory.getLogger(CopyRun.class);
  private static final int MAX_LISTED = 5;
  /** Longest wait between two verifications of a task whose digests still differ after reconciling. */
  private static final Duration MAX_VERIFY_BACKOFF = Duration.ofMinutes(5);
  /** Pieces a differing range is cut into per level of {@link #reconcile}. */
  private static final int RECONCILE_SPLIT = 16;
  private static final int MAX_RECONCILE_DEPTH = 8;
  /** A differing piece with at most this many keys on either side is copied again whole. */
  private static final long RECOPY_KEYS = 1024;
  /**
   * Rounds of a verification by dominance that do not work off a backlog (see {@link #dominanceRounds}) before the
   * attempt ends BLOCKED.
   */
  static final int DOMINANCE_ROUNDS = 5;
  /** Keys of each kind a BLOCKED reason of a verification by dominance names. */
  private static final int SAMPLE_KEYS_LISTED = 3;

  /** Sources this run asked to fence (before the call, as a call that failed may still have fenced). */
  private final Set<String> fenced = new LinkedHashSet<>();
  /**
   * The epoch the last fence of this run was set at: the task's, or the failure epoch it repairs in place
   * ({@link ControlState#inPlaceFenceEpoch}); 0 before it fenced.
   */
  private long fencedAt;
  /** Whether the status this run resumed from says an earlier run fenced the target and the sources. */
  private final boolean resumedFenced;
  /** Copies started over in a row because the source's change log no longer reached back to the position. */
  private int feedLosses;
  /** What blockedReason says while such a copy runs again, from the second loss in a row; null otherwise. */
  private String feedLostReason;
  /** Where the run is: copying (or waiting to), following its source until the fence, fencing and verifying. */
  private enum Phase { COPY, AWAIT_FENCE, VERIFY }

  /** How often a task waiting for a copy slot looks again, should no released slot wake it. */
  private static final Duration SLOT_POLL = Duration.ofSeconds(1);

  private Phase phase = Phase.COPY;
  /** Sources that stopped answering in this round of choosing one. */
  private final Map<String, String> failedSources = new LinkedHashMap<>();
  /** The source of this attempt: chosen before waiting for a slot, kept until the run verifies or starts over. */
  private String source;
  /** The wait for a slot last published; null when none was. */
  private String slotReported;
  /** Verification attempt of this fence (1 first; the wait after a failed one doubles). */
  private int verifyAttempt;
  /** The range followed while waiting for the fence (read by the tail thread; the task's range does not change). */
  private volatile RingRange followed;
  /** What ended the wait for the fence, set by the tail thread; thrown by the run's own thread. */
  private volatile RuntimeException tailFailure;
  /** What a cutover record (or the end of the epoch) runs to wake this run while it waits to fence. */
  private final Runnable convergedWake = control::wake;
  /** When this run first waited for the publisher's decision on its epoch (clock millis); -1 while it has not. */
  private long decisionWaitSince = -1;

  CopyRun(RangeCopyTask task, TaskStatus previous, TaskContext ctx) {
    super(task, previous, ctx);
    this.resumedFenced = previous != null && previous.getFencePosition() != null;
  }

  @Override
  protected Duration execute() {
    try {
      control.check();
      checkTargetWritable();
      return switch (phase) {
        case COPY -> copyStep();
        case AWAIT_FENCE -> awaitFenceStep();
        case VERIFY -> verifyStep();
      };
    } catch (TaskControl.Stopped stopped) {
      throw stopped;
    } catch (EpochOver over) {
      // No status: whatever this run would write is older than what ended the epoch (another worker's VERIFIED).
      startOver();
      LOG.info("task {}: ends without a status: {}", id(), over.getMessage());
      return null;
    } catch (TargetWritesHeld held) {
      startOver();
      blocked(held.getMessage());
      return ctx.tuning().retryInterval();
    } catch (NodeDown down) {
      startOver();
      if (down.role == NodeDown.Role.TARGET) {
        LOG.info("task {}: target unreachable, retrying in {}: {}", id(), ctx.tuning().retryInterval(),
            down.getMessage());
        blocked("target " + down.node + " unreachable: " + down.reason());
        return ctx.tuning().retryInterval();
      }
      LOG.info("task {}: source {} stopped answering: {}", id(), down.node, down.reason());
      failedSources.put(down.node, down.reason());
      return Duration.ZERO;
    } catch (StoreException.FeedUnavailable e) {
      startOver();
      return feedLost(e);
    } catch (TaskControl.Restart restart) {
      startOver();
      LOG.info("task {}: starting over: {}", id(), restart.getMessage());
      progress.forgetSource();
      failedSources.clear();
      return Duration.ZERO;
    } catch (StoreException e) {
      startOver();
      if (e.retriable()) {
        blocked("store error, retrying: " + e.getMessage());
        return ctx.tuning().retryInterval();
      }
      failed(e.getMessage());
      return null;
    } catch (RuntimeException e) {
      startOver();
      LOG.warn("task {}: unexpected error, retrying in {}", id(), ctx.tuning().retryInterval(), e);
      blocked("unexpected error, retrying: " + e);
      return ctx.tuning().retryInterval();
    }
  }

  /**
   * Chooses a source (once per attempt), takes a copy slot (or waits for one without a thread), copies the snapshot
   * and catches up, then follows the source while it waits for the fence.
   */
  private Duration copyStep() {
    if (task().getSources().isEmpty()) {
      blocked("the task names no source: no replica of the range survives");
      return ctx.tuning().retryInterval();
    }
    if (source == null) {
      String chosen = chooseSource(failedSources);
      if (chosen == null) {
        blocked("no source reachable: " + describe(failedSources));
        failedSources.clear();
        return ctx.tuning().retryInterval();
      }
      source = chosen;
      slotReported = null;
      if (progress.state == TaskState.BLOCKED || progress.state == TaskState.FAILED) {
        progress.state = progress.watermark == null ? TaskState.PENDING : TaskState.COPYING;
      }
    }
    String target = task().getTarget();
    String waiting = ctx.slots().tryAcquire(source, target, this, control::wake);
    if (waiting != null) {
      // Saying why in the status when the reason changes; a freed slot wakes the task, the poll is a safety net.
      if (!waiting.equals(slotReported)) {
        progress.blockedReason = waiting;
        publish();
        slotReported = waiting;
      }
      return SLOT_POLL;
    }
    // A copy started again because the source's log keeps falling short says so while it copies.
    progress.blockedReason = feedLostReason;
    boolean holding = true;
    try {
      if (!progress.snapshotCopied()) {
        copySnapshot(source);
      }
      catchUp(source);
      feedLosses = 0;
      feedLostReason = null;
      ctx.slots().release(source, target);
      holding = false;
      progress.state = TaskState.CAUGHT_UP;
      progress.blockedReason = null;
      publish();
    } finally {
      if (holding) {
        ctx.slots().release(source, target);
      }
    }
    // The worker's SourceTails applies the source's new writes to the range (one feed per source for all the tasks
    // waiting on it) until the fence is requested; a failure of that feed or of the target wakes the task and is
    // thrown in its next step, as its own feed's would be.
    followed = range();
    ctx.tails().follow(source, this);
    phase = Phase.AWAIT_FENCE;
    return awaitFenceStep();
  }

  /**
   * Waits (without a thread: the fence request, a CONVERGED record and a tail failure wake it) until the fence is
   * requested and, in a staged epoch, until every live participant routes by its first stage; follows the source
   * meanwhile.
   */
  private Duration awaitFenceStep() {
    throwTailFailure();
    if (!task().getFenceRequested()) {
      return ctx.tuning().retryInterval();
    }
    String gate = fenceGate();
    if (gate != null) {
      // A wait, not a block: the run stays CAUGHT_UP (its tail goes on applying the source's writes) and says why.
      if (!gate.equals(progress.blockedReason)) {
        LOG.info("task {}: the fence is requested; {}", id(), gate);
        progress.blockedReason = gate;
        publish();
      }
      return ctx.tuning().retryInterval();
    }
    if (progress.blockedReason != null && (progress.blockedReason.startsWith(CONVERGENCE_WAIT)
        || progress.blockedReason.startsWith(DECISION_WAIT_REASON))) {
      LOG.info("task {}: {}; fencing", id(), ctx.control().staged(task().getClusterId(), task().getEpoch())
          ? "every live participant routes by stage 1 of epoch " + task().getEpoch() + " or later"
          : "epoch " + task().getEpoch() + " is cut over at the fence");
    }
    ctx.tails().unfollow(this);
    phase = Phase.VERIFY;
    verifyAttempt = 1;
    throwTailFailure();
    return verifyStep();
  }

  /** How a wait for the participants to converge on a stage begins (WorkerMetrics.BlockReason reads it). */
  static final String CONVERGENCE_WAIT = "waiting for every live participant";
  /** How a wait for the publisher's decision on the epoch begins (WorkerMetrics.BlockReason reads it). */
  static final String DECISION_WAIT_REASON = "waiting for the publisher's cutover decision";
  /**
   * The longest a copy waits for the publisher's decision on its epoch before it fences anyway, as before stages. The
   * publisher decides a plan as soon as it reads it, normally long before every copy of the plan is caught up; the
   * bound keeps a change moving should the decision never come (a publisher that ignored the plan).
   */
  static final Duration DECISION_WAIT = Duration.ofSeconds(30);

  /**
   * Null when the run may fence now; otherwise what it waits for: the task's epoch is staged (a STAGED record was
   * read) and no CONVERGED record of stage 1 or later has been. Until then clients still on the previous ring write
   * with an older epoch, and the fence would refuse them; from then on every live client writes both rings with the
   * task's epoch, which the fence lets through. An epoch that is not staged (a FENCE_CUTOVER record) fences at once,
   * as before stages. Before either, the run waits for the publisher's decision (no record of how the epoch is cut
   * over was read yet, while the cluster's publisher writes them): fencing then would refuse the previous ring's
   * writers if the decision turns out to be STAGED. It waits at most {@link #DECISION_WAIT}, then fences as before
   * stages; a cluster whose publisher writes no decisions (one of before stages) fences at once.
   */
  private String fenceGate() {
    ControlState view = ctx.control();
    String cluster = task().getClusterId();
    long epoch = task().getEpoch();
    if (!view.awaitDecision(cluster, epoch, convergedWake)) {
      long now = ctx.clock().millis();
      if (decisionWaitSince < 0) {
        decisionWaitSince = now;
      }
      if (now - decisionWaitSince < DECISION_WAIT.toMillis()) {
        return DECISION_WAIT_REASON + " on epoch " + epoch + " before fencing (no STAGED or FENCE_CUTOVER record "
            + "yet): if the epoch moves by transition stages, the fence must wait for its first stage; following "
            + source + " meanwhile";
      }
      view.cancelConvergenceWait(cluster, epoch, convergedWake);
      LOG.warn("task {}: no cutover decision on epoch {} read in {} s; fencing as before transition stages", id(),
          epoch, DECISION_WAIT.toSeconds());
      return null;
    }
    if (!view.staged(cluster, epoch) || view.awaitConverged(cluster, epoch, 1, convergedWake)) {
      return null;
    }
    return CONVERGENCE_WAIT + " to route by stage 1 of epoch " + epoch + " before fencing (no CONVERGED record "
        + "yet): the epoch moves by transition stages, and the fence would refuse the writes of clients still on the "
        + "previous ring; following " + source + " meanwhile";
  }

  /**
   * Back to choosing a source, after a failure: stops following the source's tail and waiting for a slot (a slot
   * held is released where it was taken).
   */
  private void startOver() {
    leaveWaits();
    phase = Phase.COPY;
    source = null;
  }

  @Override
  protected void stepEnded() {
    leaveWaits();
  }

  /**
   * Stops following the source's tail, waiting for a slot and waiting for the participants to converge; each does
   * nothing when it does not.
   */
  private void leaveWaits() {
    ctx.tails().unfollow(this);
    ctx.slots().cancelWait(this);
    ctx.control().cancelConvergenceWait(task().getClusterId(), task().getEpoch(), convergedWake);
  }

  /**
   * The source's change log no longer reaches back to the applied position: copy the range again from scratch.
   * Once is bad luck (a long pause); twice in a row means the log's retention is shorter than the copy takes, and
   * copying again at once would loop forever without a word. So from the second loss in a row the task says so
   * in blockedReason (BLOCKED while it waits, kept while it copies again) and waits {@code retryInterval} first.
   */
  private Duration feedLost(StoreException.FeedUnavailable e) {
    String source = progress.source;
    Long watermark = progress.watermark;
    feedLosses++;
    LOG.warn("task {}: the change feed of {} no longer reaches back to {} (watermark {}); copying the range again"
        + " ({} in a row): {}", id(), source, progress.caughtUpPosition, watermark, feedLosses, e.getMessage());
    progress.forgetSource();
    if (feedLosses >= 2) {
      feedLostReason = "source " + source + "'s change log (WAL retention) does not reach back to the watermark "
          + watermark + " for as long as the copy takes: copied the range " + feedLosses
          + " times in a row; copying it again in " + Rates.duration(ctx.tuning().retryInterval());
      blocked(feedLostReason);
      return ctx.tuning().retryInterval();
    }
    return Duration.ZERO;
  }

  /**
   * The first source that answers, the checkpoint's own source first (so the copy resumes), skipping sources
   * that failed in this round; null when none answers. Forgets the checkpoint when another source is chosen.
   */
  private String chooseSource(Map<String, String> failed) {
    List<String> candidates = new ArrayList<>(task().getSources());
    String checkpointSource = progress.source;
    if (checkpointSource != null && candidates.remove(checkpointSource)) {
      candidates.add(0, checkpointSource);
    }
    for (String node : candidates) {
      if (failed.containsKey(node)) {
        continue;
      }
      try {
        call(node, NodeDown.Role.SOURCE, s -> s.info());
      } catch (NodeDown down) {
        failed.put(node, down.reason());
        continue;
      }
      if (!progress.canResumeFrom(node)) {
        progress.forgetSource();
        progress.source = node;
      }
      return node;
    }
    return null;
  }

  private void throwTailFailure() {
    RuntimeException failure = tailFailure;
    if (failure != null) {
      tailFailure = null;
      throw failure;
    }
  }

  // ---- called by SourceTails, on its thread, while this run follows a source and its own thread waits

  /** The range this run follows. */
  RingRange followedRange() {
    return followed;
  }

  /** The position up to which this run applied the source's log. */
  long followedPosition() {
    return progress.caughtUpPosition;
  }

  /** Applies changes of the followed range above {@link #followedPosition}, in log order, to the target. */
  void applyFollowed(String source, List<Change> changes) {
    control.check();
    List<Entry> entries = new ArrayList<>(changes.size());
    changes.forEach(c -> entries.add(c.entry()));
    long bytes = send(source, entries);
    progress.copiedBytes += bytes;
    progress.caughtUpPosition = changes.get(changes.size() - 1).sequence();
    applied(bytes);
  }

  /** The feed of a pass ended at {@code upTo}, {@code lag} sequence numbers behind the source's latest. */
  void followedUpTo(long upTo, long lag) {
    progress.caughtUpPosition = Math.max(progress.caughtUpPosition, upTo);
    catchUpLag(lag);
  }

  /** Ends the wait for the fence with {@code failure}, thrown on the run's own thread. */
  void tailFailed(RuntimeException failure) {
    tailFailure = failure;
    control.wake();
  }

  private void copySnapshot(String source) {
    RingRange range = range();
    String target = task().getTarget();
    RangeScan scan;
    if (progress.watermark == null) {
      control.check();
      checkTargetWritable();
      call(target, NodeDown.Role.TARGET, t -> t.deleteRange(range, task().getEpoch()));
      // The range's size on the source, for progress displays: the digest is computed on the node and returns only
      // its summary, so it costs the source one more read of the range, nothing on the network.
      progress.rangeBytes = call(source, NodeDown.Role.SOURCE, s -> s.digest(range)).bytes();
      scan = call(source, NodeDown.Role.SOURCE, s -> s.scan(range, null));
      progress.watermark = scan.sequence();
      progress.lastCopiedToken = null;
      progress.lastCopiedKey = null;
      progress.copiedBytes = 0;
      LOG.debug("task {}: copying {} from {} at watermark {}", id(), range, source, progress.watermark);
    } else {
      scan = call(source, NodeDown.Role.SOURCE, s -> s.scan(range, progress.cursor()));
      LOG.info("task {}: resuming the copy from {} after position {} (snapshot {}, catch-up from watermark {})",
          id(), source, progress.lastCopiedToken, scan.sequence(), progress.watermark);
    }
    if (progress.startedMillis == null) {
      progress.startedMillis = ctx.clock().millis();
    }
    progress.state = TaskState.COPYING;
    publish();
    long chunkBytes = loadChunkBytes(source);
    // Several applies (or load chunks) in flight (the batches of a snapshot hold disjoint keys); the progress advances
    // only over batches applied with every batch before them, so a checkpoint means what it meant with one at a time.
    try (RangeScan open = scan;
        Prefetch<Entry> prefetch = new Prefetch<>(Thread.currentThread().getName() + "-scan",
            () -> nextBatch(source, open, e -> e), ctx.inline());
        ApplyWindow<SentBatch> window = new ApplyWindow<>(ctx.tuning().applyStreams(), sent -> {
          progress.copiedBytes += sent.bytes();
          progress.lastCopiedToken = sent.last().position();
          progress.lastCopiedKey = sent.last().key();
          // Counted here, checkpointed once per batch below: a load hands back the ends of all its batches at
          // once, which would otherwise publish a burst of checkpoints.
          counted(sent.bytes());
        }, ctx.inline());
        Loads loads = new Loads(window, chunkBytes)) {
      List<Entry> batch;
      while (!(batch = prefetch.next(control)).isEmpty()) {
        long bytes = chunkBytes > 0 ? loads.send(source, batch)
            : send(source, batch, piece -> window.send(() -> applyToTarget(piece)));
        window.endBatch(new SentBatch(bytes, batch.get(batch.size() - 1)));
        checkpointIfDue();
        control.check();
      }
      loads.endChunk();
      window.finish();
    }
    progress.caughtUpPosition = progress.watermark;
    publish();
  }

  /** Applies the change feed in passes until one leaves little lag or applies few changes. */
  private void catchUp(String source) {
    while (true) {
      control.check();
      long changes = pass(source);
      long latest = call(source, NodeDown.Role.SOURCE, s -> s.latestSequence());
      long lag = latest - progress.caughtUpPosition;
      catchUpLag(lag);
      if (lag <= ctx.tuning().catchUpLag() || changes < ctx.tuning().catchUpMinChanges()) {
        return;
      }
    }
  }

  /** One pass over the change feed after the applied position; returns how many changes it applied. */
  private long pass(String source) {
    long from = progress.caughtUpPosition;
    long count = 0;
    try (ChangeFeed feed = call(source, NodeDown.Role.SOURCE, s -> s.changes(range(), from))) {
      List<Change> batch;
      while (!(batch = nextBatch(source, feed, Change::entry)).isEmpty()) {
        List<Entry> entries = new ArrayList<>(batch.size());
        batch.forEach(c -> entries.add(c.entry()));
        long bytes = send(source, entries);
        progress.copiedBytes += bytes;
        progress.caughtUpPosition = batch.get(batch.size() - 1).sequence();
        count += batch.size();
        applied(bytes);
        control.check();
      }
      progress.caughtUpPosition = Math.max(progress.caughtUpPosition, feed.upTo());
    }
    return count;
  }

  /**
   * Fences the range, drains the source's feed to the fence and compares digests; where they differ, re-copies the
   * differing parts from the source ({@link #reconcile}) and compares again. VERIFIED when they agree; otherwise
   * BLOCKED with both digests and the time of the next attempt, which fences again (a fence lifted meanwhile is put
   * back; a fence in force is returned as it is), drains, reconciles and verifies, waiting twice as long after each
   * failed attempt, up to {@link #MAX_VERIFY_BACKOFF}. So a task whose range differs for a passing reason (a write
   * of the old epoch the target took and the source refused) verifies at once, and a lasting one (a target that
   * loses writes) keeps saying so, and verifies as soon as it is fixed, instead of holding its fence for good. One
   * attempt per step; returns null when VERIFIED, otherwise the wait before the next attempt.
   */
  private Duration verifyStep() {
    RingRange range = range();
    String target = task().getTarget();
    int attempt = verifyAttempt;
    Fence fence = fence(source, range);
    progress.fencePosition = fence.position();
    progress.state = TaskState.FENCED;
    progress.blockedReason = null;
    publish();
    while (progress.caughtUpPosition < fence.position()) {
      control.check();
      long before = progress.caughtUpPosition;
      pass(source);
      if (progress.caughtUpPosition == before) {
        control.sleep(ctx.tuning().tailInterval());
      }
    }
    RangeDigest sourceDigest = call(source, NodeDown.Role.SOURCE, s -> s.digest(range));
    RangeDigest targetDigest = call(target, NodeDown.Role.TARGET, t -> t.digest(range));
    // Read now, not when the run fenced: an epoch whose STAGED record came after the fence has dual writes too. A
    // repair in place lets the failure epoch's clients write both sides through its fence.
    if (!sourceDigest.sameContentAs(targetDigest)
        && (fencedAt < task().getEpoch() || ctx.control().everStaged(task().getClusterId(), task().getEpoch()))) {
      return verifyByDominance(fence, sourceDigest, targetDigest, attempt);
    }
    String recopied = "";
    if (!sourceDigest.sameContentAs(targetDigest)) {
      Recopied fixed = new Recopied();
      reconcile(source, range, sourceDigest, targetDigest, 0, fixed);
      LOG.info("task {}: digests differed at fence position {} (source {}, target {}): re-copied {}", id(),
          fence.position(), sourceDigest, targetDigest, fixed);
      recopied = " and re-copying " + fixed;
      sourceDigest = call(source, NodeDown.Role.SOURCE, s -> s.digest(range));
      targetDigest = call(target, NodeDown.Role.TARGET, t -> t.digest(range));
    }
    progress.digest = sourceDigest.digest().clone();
    if (sourceDigest.sameContentAs(targetDigest)) {
      // The store the digest came from: a cleanup deletes the old copies only while the target still is it.
      progress.targetIncarnation = call(target, NodeDown.Role.TARGET, t -> t.info()).incarnation();
      progress.state = TaskState.VERIFIED;
      progress.targetDigest = null;
      progress.blockedReason = null;
      publish();
      LOG.info("task {}: VERIFIED at fence position {}{}: {}", id(), fence.position(), recopied, sourceDigest);
      return null;
    }
    progress.targetDigest = targetDigest.digest().clone();
    Duration wait = verifyBackoff(attempt);
    String reason = "range digests differ after draining to fence position " + fence.position() + recopied
        + ": source " + source + " has " + sourceDigest + ", target " + target + " has " + targetDigest
        + "; verifying again in " + Rates.duration(wait) + " (attempt " + attempt + ")";
    LOG.error("task {}: {}", id(), reason);
    blocked(reason);
    verifyAttempt = attempt + 1;
    return wait;
  }

  /**
   * Verification of a staged epoch's copy whose digests differed after the drain: every live client writes both rings
   * with the task's epoch, which the fences let through, so the two sides move while they are compared, and clearing
   * a piece of the target to copy it again ({@link #reconcile}) could remove a dual write the source has not taken
   * yet. Instead: {@link #dominanceRounds} until the target dominates the source (VERIFIED, the source's digest of
   * the drain kept as {@code digest}) or the rounds run out (BLOCKED with both digests, the last check's outcome and
   * sample keys, and a new attempt after the same doubling backoff as a digest mismatch).
   */
  private Duration verifyByDominance(Fence fence, RangeDigest sourceDigest, RangeDigest targetDigest, int attempt) {
    RingRange range = range();
    String target = task().getTarget();
    long epoch = task().getEpoch();
    LOG.info("task {}: digests differ at fence position {} of {} epoch {} (source {}, target {}): verifying by "
        + "dominance while writes go on", id(), fence.position(), fencedAt < epoch ? "in-place" : "staged", epoch,
        sourceDigest, targetDigest);
    Rounds rounds = new Rounds();
    RangeDominance.Outcome outcome = dominanceRounds(range, rounds);
    progress.digest = sourceDigest.digest().clone();
    if (outcome.holds()) {
      progress.targetIncarnation = call(target, NodeDown.Role.TARGET, t -> t.info()).incarnation();
      progress.state = TaskState.VERIFIED;
      progress.targetDigest = null;
      progress.blockedReason = null;
      publish();
      LOG.info("task {}: VERIFIED by dominance at fence position {} of epoch {} after {}: {}", id(),
          fence.position(), epoch, rounds, outcome);
      return null;
    }
    progress.targetDigest = targetDigest.digest().clone();
    Duration wait = verifyBackoff(attempt);
    String reason = "range digests differ after draining to fence position " + fence.position() + " of "
        + (fencedAt < epoch ? "epoch " + epoch + ", which repairs in place," : "staged epoch " + epoch + ",")
        + " and the target does not dominate the source after " + rounds + ": " + outcome
        + sampleKeys("missing or older on the target", outcome.missing())
        + sampleKeys("on the target, unexplained by the source", outcome.unexplained())
        + "; source " + source + " had " + sourceDigest + ", target " + target + " had " + targetDigest
        + " at the drain; verifying again in " + Rates.duration(wait) + " (attempt " + attempt + ")";
    LOG.error("task {}: {}", id(), reason);
    blocked(reason);
    verifyAttempt = attempt + 1;
    return wait;
  }

  /** What the rounds of one verification by dominance did. */
  private static final class Rounds {
    int rounds;
    long toTarget;
    long toSource;

    @Override
    public String toString() {
      return rounds + " round" + (rounds == 1 ? "" : "s") + " (re-applied " + toTarget + " entries to the target and "
          + toSource + " to the source)";
    }
  }

  /**
   * Checks that the target dominates the source ({@link RangeDominance}); while it does not, applies each entry the
   * check names, with its version (stores keep the highest, so this is safe while dual writes go on): a missing one
   * (the source's, at the cut) to the target, an unexplained one (the target's) to the source, where it completes a
   * write that reached the target alone (not acknowledged, since a write is acknowledged only when every replica it
   * waits for took it) or lands a write still in flight to the source; then checks again. A check names at most
   * {@link RangeDominance#SAMPLE} entries of each kind but counts them all, so a round that named a full sample and
   * found fewer differences than the round before is working off a backlog (a target that missed dual writes while it
   * was down, say): it does not count, and the next check follows at once. Every other round counts, and waits the
   * tail interval before the next check, for writes in flight to land; the {@link #DOMINANCE_ROUNDS}th ends the
   * rounds. The differences fall strictly with every round that does not count, so the rounds end. Returns the last
   * check's outcome.
   */
  private RangeDominance.Outcome dominanceRounds(RingRange range, Rounds done) {
    long before = Long.MAX_VALUE;
    int counted = 0;
    while (true) {
      control.check();
      RangeDominance.Outcome outcome = dominance(range);
      done.rounds++;
      ctx.metrics().dominanceRound(outcome.holds());
      if (outcome.holds()) {
        return outcome;
      }
      long differences = outcome.missingCount() + outcome.unexplainedCount();
      boolean sampled = outcome.missingCount() > outcome.missing().size()
          || outcome.unexplainedCount() > outcome.unexplained().size();
      boolean workingOff = sampled && differences < before;
      before = differences;
      done.toTarget += reapply(outcome.missing(), task().getTarget(), NodeDown.Role.TARGET);
      done.toSource += reapply(outcome.unexplained(), source, NodeDown.Role.SOURCE);
      LOG.debug("task {}: dominance round {}: {}; re-applied {} entries to the target, {} to the source", id(),
          done.rounds, outcome, outcome.missing().size(), outcome.unexplained().size());
      if (!workingOff) {
        if (++counted >= DOMINANCE_ROUNDS) {
          return outcome;
        }
        // An inline run never waits inside a step: its writes in flight land between steps, not during one.
        if (!ctx.inline()) {
          control.sleep(ctx.tuning().tailInterval());
        }
      }
    }
  }

  /** One check of {@link RangeDominance} over the range: scans of the source, the target, the source again. */
  private RangeDominance.Outcome dominance(RingRange range) {
    String target = task().getTarget();
    try (RangeScan s1 = call(source, NodeDown.Role.SOURCE, s -> s.scan(range, null));
        RangeScan t = call(target, NodeDown.Role.TARGET, s -> s.scan(range, null));
        RangeScan s2 = call(source, NodeDown.Role.SOURCE, s -> s.scan(range, null))) {
      return RangeDominance.check(range, new NodeScan(s1, source, NodeDown.Role.SOURCE),
          new NodeScan(t, target, NodeDown.Role.TARGET), new NodeScan(s2, source, NodeDown.Role.SOURCE));
    }
  }

  /**
   * Applies {@code entries} to {@code node} (the target, or the copied-from source), in batches within the tuning's
   * sizes, throttled as copies are; returns how many. What goes to the target counts as copied.
   */
  private long reapply(List<Entry> entries, String node, NodeDown.Role role) {
    List<Entry> batch = new ArrayList<>();
    long bytes = 0;
    for (int i = 0; i <= entries.size(); i++) {
      Entry e = i < entries.size() ? entries.get(i) : null;
      if (!batch.isEmpty() && (e == null || batch.size() >= ctx.tuning().batchEntries()
          || bytes + e.size() > ctx.tuning().batchBytes())) {
        List<Entry> full = batch;
        if (role == NodeDown.Role.TARGET) {
          long sent = send(source, full);
          progress.copiedBytes += sent;
          applied(sent);
        } else {
          send(source, full, piece -> {
            control.checkStopped();
            checkTargetWritable(); // the same rules: nothing once the epoch is over or on a stale view
            call(node, role, s -> s.apply(piece));
          });
        }
        batch = new ArrayList<>();
        bytes = 0;
      }
      if (e != null) {
        batch.add(e);
        bytes += e.size();
      }
    }
    return entries.size();
  }

  /** {@code "; <what>: k1, k2, k3 and N more"} for a non-empty sample of entries, else the empty string. */
  private static String sampleKeys(String what, List<Entry> sample) {
    if (sample.isEmpty()) {
      return "";
    }
    List<String> keys = new ArrayList<>();
    for (Entry e : sample.subList(0, Math.min(SAMPLE_KEYS_LISTED, sample.size()))) {
      keys.add(describeKey(e.key()));
    }
    int more = sample.size() - keys.size();
    return "; " + what + ": " + String.join(", ", keys) + (more > 0 ? " and " + more + " more named" : "");
  }

  /** A key for a status or a log line: quoted when it is short printable ASCII, else its first bytes in hex. */
  static String describeKey(byte[] key) {
    boolean printable = key.length <= 64;
    for (int i = 0; printable && i < key.length; i++) {
      printable = key[i] >= 0x20 && key[i] < 0x7f;
    }
    if (printable) {
      return "\"" + new String(key, java.nio.charset.StandardCharsets.US_ASCII) + "\"";
    }
    int shown = Math.min(key.length, 16);
    return "0x" + java.util.HexFormat.of().formatHex(key, 0, shown) + (shown < key.length ? "..." : "");
  }

  /** A scan of a node whose "unreachable" failures while it is read name the node and its role ({@link NodeDown}). */
  private static final class NodeScan implements RangeScan {
    private final RangeScan scan;
    private final String node;
    private final NodeDown.Role role;

    NodeScan(RangeScan scan, String node, NodeDown.Role role) {
      this.scan = scan;
      this.node = node;
      this.role = role;
    }

    @Override
    public long sequence() {
      return scan.sequence();
    }

    @Override
    public boolean hasNext() {
      try {
        return scan.hasNext();
      } catch (StoreException.Unavailable e) {
        throw new NodeDown(node, role, e);
      }
    }

    @Override
    public Entry next() {
      try {
        return scan.next();
      } catch (StoreException.Unavailable e) {
        throw new NodeDown(node, role, e);
      }
    }

    @Override
    public void close() {
      // The caller closes the scan it opened.
    }
  }

  /**
   * Fences the range at {@link #fenceEpoch}: the target first, then the copied-from source (which must succeed), then
   * the other sources, best effort (an unreachable replica accepts no writes either). Returns the source's fence.
   *
   * <p>Why the target too, and first: a REPAIR's target is a filling replica of the failure epoch, so the clients of
   * that epoch write to it directly. Fenced after the source, or not at all, it would keep applying old-epoch
   * writes the fenced source refuses, and the digests could never agree. Fenced first, it refuses them from then
   * on, and any old-epoch write it took before is one the source either took too (and the drain brings over again)
   * or refused (so it was not acknowledged: a client's write is acknowledged only when every replica applied it),
   * which {@link #reconcile} replaces with the source's value. A COPY's target is not a replica of the active
   * epoch, so its fence refuses nothing a client sends; it is fenced the same way so that one rule holds.
   */
  private Fence fence(String source, RingRange range) {
    long epoch = fenceEpoch();
    fencedAt = epoch;
    String target = task().getTarget();
    fenced.add(target);
    call(target, NodeDown.Role.TARGET, t -> t.fence(range, epoch));
    fenced.add(source);
    Fence fence = call(source, NodeDown.Role.SOURCE, s -> s.fence(range, epoch));
    for (String other : task().getSources()) {
      if (!other.equals(source)) {
        fenced.add(other);
        try {
          call(other, NodeDown.Role.REPLICA, s -> s.fence(range, epoch));
        } catch (NodeDown | StoreException e) {
          LOG.warn("task {}: could not fence {} on {}: {}", id(), range, other, e.getMessage());
        }
      }
    }
    return fence;
  }

  /**
   * The epoch this run fences at: the task's, or for a REPAIR of an epoch that repairs in place (docs/worker.md,
   * "Repairs in place"), the failure epoch it repairs. Its clients write the target already (a filling replica of
   * theirs), so a fence at the task's epoch would refuse every client's writes to the range until the repair is
   * published, while one at the failure epoch refuses only writers of older rings, which do not write the target;
   * the copy then verifies by dominance while the failure epoch's clients write both sides. Decided at each fence
   * from what the control view has read (the plan and the failure epoch's PUBLISHED record), so a plan of the epoch
   * that changes the ring fences at the task's epoch again.
   */
  private long fenceEpoch() {
    if (task().getKind() != TaskKind.REPAIR) {
      return task().getEpoch();
    }
    return ctx.control().inPlaceFenceEpoch(task().getClusterId(), task().getEpoch()).orElse(task().getEpoch());
  }

  /**
   * Makes the target's copy of {@code range} the source's where their digests differ: cuts the range into
   * {@link #RECONCILE_SPLIT} pieces, compares the pieces' digests and descends into those that differ, down to
   * pieces of at most {@link #RECOPY_KEYS} keys on either side, which it clears on the target and copies again from
   * the source (throttled like the copy). Both are fenced, so neither side changes meanwhile (a write of the new
   * epoch cannot come before the epoch is published, which needs this task verified). The work is proportional to
   * what differs: a few stray keys cost a few digests of shrinking pieces and one small copy each.
   */
  private void reconcile(String source, RingRange range, RangeDigest sourceDigest, RangeDigest targetDigest,
      int depth, Recopied fixed) {
    if (sourceDigest.sameContentAs(targetDigest)) {
      return;
    }
    control.check();
    List<RingRange> pieces = range.split(RECONCILE_SPLIT);
    if (depth >= MAX_RECONCILE_DEPTH || Math.max(sourceDigest.keys(), targetDigest.keys()) <= RECOPY_KEYS
        || pieces.size() == 1) {
      recopy(source, range, fixed);
      return;
    }
    for (RingRange piece : pieces) {
      RangeDigest s = call(source, NodeDown.Role.SOURCE, store -> store.digest(piece));
      RangeDigest t = call(task().getTarget(), NodeDown.Role.TARGET, store -> store.digest(piece));
      reconcile(source, piece, s, t, depth + 1, fixed);
    }
  }

  /** Clears {@code piece} on the target and copies it again from the source. */
  private void recopy(String source, RingRange piece, Recopied fixed) {
    checkTargetWritable();
    call(task().getTarget(), NodeDown.Role.TARGET, t -> t.deleteRange(piece, task().getEpoch()));
    try (RangeScan scan = call(source, NodeDown.Role.SOURCE, s -> s.scan(piece, null))) {
      List<Entry> batch;
      while (!(batch = nextBatch(source, scan, e -> e)).isEmpty()) {
        long bytes = send(source, batch);
        progress.copiedBytes += bytes;
        applied(bytes);
        fixed.keys += batch.size();
        fixed.bytes += bytes;
        control.check();
      }
    }
    fixed.pieces++;
  }

  /** What one reconciliation copied again. */
  private static final class Recopied {
    long pieces;
    long keys;
    long bytes;

    @Override
    public String toString() {
      return keys + " keys (" + io.ringshift.ring.ByteUnits.format(bytes) + ") in " + pieces + " piece"
          + (pieces == 1 ? "" : "s") + " from the source";
    }
  }

  /** The wait after failed verification {@code attempt}: the retry interval, doubled each time, at most 5 min. */
  private Duration verifyBackoff(int attempt) {
    Duration base = ctx.tuning().retryInterval();
    Duration cap = base.compareTo(MAX_VERIFY_BACKOFF) > 0 ? base : MAX_VERIFY_BACKOFF;
    Duration wait = base.multipliedBy(1L << Math.min(attempt - 1, 20));
    return wait.compareTo(cap) > 0 ? cap : wait;
  }

  /**
   * A tombstone dropped the task after it fenced: the range no longer moves, so a fence left at this epoch would
   * refuse every older-epoch write to it until the epoch is published. Lifts the fence on every node this run
   * fenced (the target and every listed source when it resumed a fenced status), best effort: an unreachable node
   * is logged.
   */
  @Override
  protected void dropped() {
    Set<String> nodes = new LinkedHashSet<>(fenced);
    if (resumedFenced) {
      nodes.add(task().getTarget());
      nodes.addAll(task().getSources());
    }
    // A fence at the failure epoch a repair in place repairs needs no lift: that epoch is published, and the fence
    // refuses only writes of older rings (FenceLifts counts it lifted).
    // Fences are keyed by range and epoch, not by task: a live task of the epoch that fences the range on a node keeps
    // that fence (lifting it would let older-epoch writes land after that task's fence position); what is held back
    // is tried again at the worker's sweeps until it is lifted.
    ctx.lifts().lift(task().getClusterId(), task().getEpoch(), range(), nodes, id());
  }

  /**
   * Reads the next batch from a scan or feed: up to {@code batchEntries} items and about {@code batchBytes} (and
   * a tenth of a second of the lowest limit), at least one item when any is left.
   */
  private <T> List<T> nextBatch(String source, Iterator<T> items, Function<T, Entry> entryOf) {
    long maxBytes = Math.min(ctx.tuning().batchBytes(), ctx.throttles().maxBatchBytes(source, link(source)));
    return call(source, NodeDown.Role.SOURCE, s -> {
      List<T> batch = new ArrayList<>();
      long bytes = 0;
      while (batch.size() < ctx.tuning().batchEntries() && bytes < maxBytes && items.hasNext()) {
        T item = items.next();
        batch.add(item);
        bytes += entryOf.apply(item).size();
      }
      return batch;
    });
  }

  /**
   * Throttles a batch and applies it to the target, in pieces sized for the limits as they are when each piece
   * starts (so a limit lowered while the batch waits governs the rest of it); returns its bytes.
   */
  private long send(String source, List<Entry> batch) {
    return send(source, batch, this::applyToTarget);
  }

  /** As {@link #send(String, List)}, handing each piece that passed the throttles to {@code sink}. */
  private long send(String source, List<Entry> batch, Throttles.PieceSink<Entry> sink) {
    long bytes = 0;
    for (Entry e : batch) {
      bytes += e.size();
    }
    try {
      // A wait of over a second is published while it lasts; the rest counts towards the next status.
      long[] published = {0};
      Throttles.Waited waited = ctx.throttles().send(batch, Entry::size, source, link(source), control,
          (soFar, holder) -> {
        throttled(soFar, holder);
        published[0] = soFar;
        publish();
      }, sink);
      throttled(waited.nanos() - published[0], waited.holder());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new TaskControl.Stopped(TaskControl.Stop.CANCEL);
    }
    return bytes;
  }

  /** The zone link a copy from {@code source} uses ("FROM>TO"); null while the source's zone is unknown. */
  private String link(String source) {
    String targetZone = task().getTargetZone();
    if (targetZone == null) {
      return null;
    }
    return ctx.control().zoneOf(task().getClusterId(), source).map(z -> GroupShares.link(z, targetZone))
        .orElse(null);
  }

  /** Applies {@code piece} to the target, unless the run was stopped meanwhile. */
  private void applyToTarget(List<Entry> piece) {
    // The piece may have waited (or the source call been slow) past a stop: a stopped run writes nothing. Runs on
    // an apply thread too, so it leaves a restart to the task's own checks.
    control.checkStopped();
    checkTargetWritable();
    call(task().getTarget(), NodeDown.Role.TARGET, t -> t.apply(piece));
  }

  /**
   * The bulk-load chunk size for a snapshot copy from {@code source}, or 0 for batches applied one by one: the
   * tuning's {@code loadBytes}, capped at {@link #CHUNK_SECONDS} of the lowest rate limit (a load's body streams at
   * the throttle's pace, and the node's answer must come within the call timeout plus a minute), and 0 when that
   * cap or the rest of the range is below {@link TaskTuning#MIN_LOAD_BYTES} (the target would write it through its
   * write path anyway).
   */
  private long loadChunkBytes(String source) {
    long chunk = ctx.tuning().loadBytes();
    // An inline run (no thread of its own) copies with applies: a load streams its body from another thread.
    if (chunk == 0 || ctx.inline()) {
      return 0;
    }
    long tenth = ctx.throttles().maxBatchBytes(source, link(source));
    if (tenth != Long.MAX_VALUE) {
      chunk = Math.min(chunk, tenth * 10 * CHUNK_SECONDS);
    }
    Long rangeBytes = progress.rangeBytes;
    long left = rangeBytes == null ? Long.MAX_VALUE : rangeBytes - progress.copiedBytes;
    return chunk >= TaskTuning.MIN_LOAD_BYTES && left >= TaskTuning.MIN_LOAD_BYTES ? chunk : 0;
  }

  /** Longest a load chunk takes at the lowest rate limit when the copy starts. */
  private static final long CHUNK_SECONDS = 4;
  /**
   * A chunk open this long ends at the next batch, whatever its size: a rate shared with other tasks, a limit
   * lowered meanwhile or a slow source would otherwise stretch its body towards the load's request timeout (the
   * node timeout plus a minute).
   */
  private static final long MAX_CHUNK_NANOS = java.util.concurrent.TimeUnit.SECONDS.toNanos(15);

  /**
   * The bulk load of one snapshot copy: batches pass the throttles piece by piece as before, and the pieces go into
   * the open chunk ({@link LoadChunk}), whose load starts on the apply window with its first piece. A chunk ends
   * between batches once it holds {@code chunkBytes} or has been open {@link #MAX_CHUNK_NANOS}, so a batch lies in
   * one chunk and its end is handed back when
   * that chunk (and everything before it) was loaded. Closing it with a chunk still open aborts that chunk: the
   * target loads nothing of it.
   */
  private final class Loads implements AutoCloseable {
    private final ApplyWindow<SentBatch> window;
    private final long chunkBytes;
    private LoadChunk open;
    private long openBytes;
    private long openedNanos;

    Loads(ApplyWindow<SentBatch> window, long chunkBytes) {
      this.window = window;
      this.chunkBytes = chunkBytes;
    }

    long send(String source, List<Entry> batch) {
      long bytes = CopyRun.this.send(source, batch, piece -> {
        if (open == null) {
          LoadChunk chunk = new LoadChunk();
          window.send(() -> loadToTarget(chunk));
          open = chunk;
          openBytes = 0;
          openedNanos = System.nanoTime();
        }
        if (!open.put(piece, control)) {
          loadEndedEarly();
        }
      });
      openBytes += bytes;
      if (open != null && (openBytes >= chunkBytes || System.nanoTime() - openedNanos >= MAX_CHUNK_NANOS)) {
        endChunk();
      }
      return bytes;
    }

    /** Ends the open chunk; it stays open (and {@link #close} aborts it) when the run stops meanwhile. */
    void endChunk() {
      if (open != null) {
        if (!open.end(control)) {
          loadEndedEarly();
        }
        open = null;
      }
    }

    /** The load of the open chunk returned before the chunk ended: it failed; throws its failure. */
    private void loadEndedEarly() {
      open.abort("the load of this chunk failed");
      open = null;
      window.finish();
      throw new IllegalStateException("the load of a chunk ended before the chunk did, without an error");
    }

    @Override
    public void close() {
      if (open != null) {
        open.abort("the copy of task " + id() + " stopped before the chunk ended");
        open = null;
      }
    }
  }

  /** Loads {@code chunk} into the target as its pieces come, unless the run was stopped before the first one. */
  private void loadToTarget(LoadChunk chunk) {
    try {
      if (!chunk.awaitFirst()) {
        return;
      }
      control.checkStopped();
      checkTargetWritable();
      LoadResult loaded = call(task().getTarget(), NodeDown.Role.TARGET, t -> t.load(chunk));
      LOG.debug("task {}: loaded {} entries, {} bytes, {}", id(), loaded.entries(), loaded.bytes(),
          loaded.ingested() ? "ingested" : "written");
    } finally {
      chunk.released();
    }
  }

  /**
   * Before every write to the target (a clear, an apply, a load) and every step: throws {@link EpochOver} when this
   * worker's view shows the task's epoch published or dead, and {@link TargetWritesHeld} when the view is older than
   * {@link CleanupRun#MAX_VIEW_AGE}.
   *
   * <p>Why: a worker cut off from Kafka keeps its tasks running (its consumer hears of the rebalance that gave them
   * to another worker only when it reconnects), and the statuses its producer held go out when it does, after the
   * other worker's VERIFIED. Found by the protocol simulation (seed 20261381): such a status made the task look
   * unfinished, its new owner ran it again after its epoch was published, and the verification's re-copy cleared the
   * range on the target, by then a published replica serving reads. A copy of a published epoch writes nothing; and a
   * cut-off worker writes to its targets for at most {@code MAX_VIEW_AGE} after its last contact with Kafka, far less
   * than the grace period before an old copy that its feed follows can be deleted.
   */
  private void checkTargetWritable() {
    ControlState view = ctx.control();
    String cluster = task().getClusterId();
    long epoch = task().getEpoch();
    long published = view.highestPublished(cluster);
    if (published >= epoch) {
      throw new EpochOver("epoch " + epoch + " is published (the latest published epoch is " + published
          + "): another worker verified this copy, and its target is a replica that clients read");
    }
    if (view.dead(cluster, epoch)) {
      throw new EpochOver("epoch " + epoch + " was cancelled or rejected: it will never be published");
    }
    long age = view.viewAgeMillis();
    if (age > CleanupRun.MAX_VIEW_AGE.toMillis()) {
      throw new TargetWritesHeld("this worker's view of the control plane is " + Rates.duration(Duration.ofMillis(age))
          + " old (is it cut off from Kafka?); a copy writes to its target only on a view at most "
          + Rates.duration(CleanupRun.MAX_VIEW_AGE) + " old");
    }
  }

  /** The task's epoch is over (published, cancelled or rejected): the run ends and writes nothing more. */
  static final class EpochOver extends RuntimeException {
    EpochOver(String why) {
      super(why, null, false, false);
    }
  }

  /** The worker's view is too old to write to a target: the run waits, BLOCKED, and tries again. */
  static final class TargetWritesHeld extends RuntimeException {
    TargetWritesHeld(String why) {
      super(why, null, false, false);
    }
  }

  /** A batch of a snapshot copy sent to the target: its bytes and its last entry. */
  private record SentBatch(long bytes, Entry last) {}

  private void failed(String error) {
    progress.state = TaskState.FAILED;
    progress.error = error;
    progress.blockedReason = null;
    publish();
  }

  private String id() {
    return task().getTaskId();
  }

  private static String describe(Map<String, String> failures) {
    List<String> parts = new ArrayList<>();
    failures.forEach((node, why) -> parts.add(node + " (" + why + ")"));
    if (parts.size() > MAX_LISTED) {
      int more = parts.size() - MAX_LISTED;
      parts.subList(MAX_LISTED, parts.size()).clear();
      parts.add("and " + more + " more");
    }
    return String.join(", ", parts);
  }
}
