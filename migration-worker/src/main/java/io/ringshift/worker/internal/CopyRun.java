package io.ringshift.worker.internal;

import io.ringshift.ring.RingRange;
import io.ringshift.schemas.avro.RangeCopyTask;
import io.ringshift.schemas.avro.TaskState;
import io.ringshift.schemas.avro.TaskStatus;
import io.ringshift.storage.Change;
import io.ringshift.storage.ChangeFeed;
import io.ringshift.storage.Entry;
import io.ringshift.storage.Fence;
import io.ringshift.storage.RangeDigest;
import io.ringshift.storage.RangeScan;
import io.ringshift.storage.StoreException;
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
 *       little lag; report CAUGHT_UP and keep tailing the feed until the orchestrator requests the fence.
 *   <li><b>Fence and verify.</b> Fence the range at the task's epoch on every reachable source (the copied-from
 *       one must succeed), drain the feed up to its fence position, compare range digests: VERIFIED, or BLOCKED
 *       with both digests.
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

  /** Sources this run asked to fence (before the call, as a call that failed may still have fenced). */
  private final Set<String> fenced = new LinkedHashSet<>();
  /** Whether the status this run resumed from says an earlier run fenced the sources. */
  private final boolean resumedFenced;
  /** Copies started over in a row because the source's change log no longer reached back to the position. */
  private int feedLosses;
  /** What blockedReason says while such a copy runs again, from the second loss in a row; null otherwise. */
  private String feedLostReason;

  CopyRun(RangeCopyTask task, TaskStatus previous, TaskContext ctx) {
    super(task, previous, ctx);
    this.resumedFenced = previous != null && previous.getFencePosition() != null;
  }

  @Override
  protected void execute() {
    Map<String, String> failedSources = new LinkedHashMap<>();
    while (true) {
      control.check();
      try {
        if (task().getSources().isEmpty()) {
          blocked("the task names no source: no replica of the range survives");
          control.sleep(ctx.tuning().retryInterval());
          continue;
        }
        String source = chooseSource(failedSources);
        if (source == null) {
          blocked("no source reachable: " + describe(failedSources));
          failedSources.clear();
          control.sleep(ctx.tuning().retryInterval());
          continue;
        }
        copyFrom(source);
        return;
      } catch (NodeDown down) {
        if (down.role == NodeDown.Role.TARGET) {
          LOG.info("task {}: target unreachable, retrying in {}: {}", id(), ctx.tuning().retryInterval(),
              down.getMessage());
          blocked("target " + down.node + " unreachable: " + down.reason());
          control.sleep(ctx.tuning().retryInterval());
        } else {
          LOG.info("task {}: source {} stopped answering: {}", id(), down.node, down.reason());
          failedSources.put(down.node, down.reason());
        }
      } catch (StoreException.FeedUnavailable e) {
        feedLost(e);
      } catch (TaskControl.Restart restart) {
        LOG.info("task {}: starting over: {}", id(), restart.getMessage());
        progress.forgetSource();
        failedSources.clear();
      } catch (TaskControl.Stopped stopped) {
        throw stopped;
      } catch (StoreException e) {
        if (e.retriable()) {
          blocked("store error, retrying: " + e.getMessage());
          control.sleep(ctx.tuning().retryInterval());
        } else {
          failed(e.getMessage());
          return;
        }
      } catch (RuntimeException e) {
        LOG.warn("task {}: unexpected error, retrying in {}", id(), ctx.tuning().retryInterval(), e);
        blocked("unexpected error, retrying: " + e);
        control.sleep(ctx.tuning().retryInterval());
      }
    }
  }

  /**
   * The source's change log no longer reaches back to the applied position: copy the range again from scratch.
   * Once is bad luck (a long pause); twice in a row means the log's retention is shorter than the copy takes, and
   * copying again at once would loop forever without a word. So from the second loss in a row the task says so
   * in blockedReason (BLOCKED while it waits, kept while it copies again) and waits {@code retryInterval} first.
   */
  private void feedLost(StoreException.FeedUnavailable e) {
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
      control.sleep(ctx.tuning().retryInterval());
    }
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

  private void copyFrom(String source) {
    String target = task().getTarget();
    holdSlot(source, target);
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
    while (!task().getFenceRequested()) {
      control.sleep(ctx.tuning().tailInterval());
      if (!task().getFenceRequested()) {
        pass(source);
      }
    }
    fenceAndVerify(source);
  }

  /** Waits for a copy slot (the caps), saying why in the status while it waits. */
  private void holdSlot(String source, String target) {
    if (progress.state == TaskState.BLOCKED || progress.state == TaskState.FAILED) {
      progress.state = progress.watermark == null ? TaskState.PENDING : TaskState.COPYING;
    }
    String waiting;
    String reported = null;
    while ((waiting = ctx.slots().tryAcquire(source, target)) != null) {
      if (!waiting.equals(reported)) {
        progress.blockedReason = waiting;
        publish();
        reported = waiting;
      }
      control.sleep(java.time.Duration.ofMillis(100));
    }
    // A copy started again because the source's log keeps falling short says so while it copies.
    progress.blockedReason = feedLostReason;
  }

  private void copySnapshot(String source) {
    RingRange range = range();
    String target = task().getTarget();
    RangeScan scan;
    if (progress.watermark == null) {
      control.check();
      call(target, NodeDown.Role.TARGET, t -> t.deleteRange(range));
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
    try (RangeScan open = scan;
        Prefetch<Entry> prefetch = new Prefetch<>(Thread.currentThread().getName() + "-scan",
            () -> nextBatch(source, open, e -> e))) {
      List<Entry> batch;
      while (!(batch = prefetch.next(control)).isEmpty()) {
        long bytes = send(source, batch);
        Entry last = batch.get(batch.size() - 1);
        progress.copiedBytes += bytes;
        progress.lastCopiedToken = last.position();
        progress.lastCopiedKey = last.key();
        applied(bytes);
        control.check();
      }
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

  private void fenceAndVerify(String source) {
    RingRange range = range();
    long epoch = task().getEpoch();
    fenced.add(source);
    Fence fence = call(source, NodeDown.Role.SOURCE, s -> s.fence(range, epoch));
    for (String other : task().getSources()) {
      if (!other.equals(source)) {
        fenced.add(other);
        try {
          call(other, NodeDown.Role.REPLICA, s -> s.fence(range, epoch));
        } catch (NodeDown | StoreException e) {
          // Best effort: an unreachable replica accepts no writes either; the copied source's fence is what counts.
          LOG.warn("task {}: could not fence {} on {}: {}", id(), range, other, e.getMessage());
        }
      }
    }
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
    RangeDigest targetDigest = call(task().getTarget(), NodeDown.Role.TARGET, t -> t.digest(range));
    progress.digest = sourceDigest.digest().clone();
    if (sourceDigest.sameContentAs(targetDigest)) {
      progress.state = TaskState.VERIFIED;
      progress.targetDigest = null;
      progress.blockedReason = null;
      publish();
      LOG.info("task {}: VERIFIED at fence position {}: {}", id(), fence.position(), sourceDigest);
    } else {
      progress.targetDigest = targetDigest.digest().clone();
      String reason = "range digests differ after draining to fence position " + fence.position() + ": source "
          + source + " has " + sourceDigest + ", target " + task().getTarget() + " has " + targetDigest;
      LOG.error("task {}: {}", id(), reason);
      blocked(reason);
    }
  }

  /**
   * A tombstone dropped the task after it fenced: the range no longer moves, so a fence left at this epoch would
   * refuse every older-epoch write to it until the epoch is published. Lifts the fence on every source this run
   * fenced (every listed source when it resumed a fenced status), best effort: an unreachable node is logged.
   */
  @Override
  protected void dropped() {
    Set<String> nodes = new LinkedHashSet<>(fenced);
    if (resumedFenced) {
      nodes.addAll(task().getSources());
    }
    RingRange range = range();
    long epoch = task().getEpoch();
    for (String node : nodes) {
      String keeper = ctx.control().liveTaskReading(task().getClusterId(), epoch, range, node, id());
      if (keeper != null) {
        // Fences are keyed by range and epoch, not by task: lifting this one would lift the live task's too, and
        // let older-epoch writes land on the source after that task's fence position.
        LOG.info("task {} dropped: keeping the fence of {} at epoch {} on {}: live task {} moves that range too",
            id(), range, epoch, node, keeper);
        continue;
      }
      try {
        call(node, NodeDown.Role.REPLICA, s -> {
          s.unfence(range, epoch);
          return null;
        });
        LOG.info("task {} dropped: lifted the fence of {} at epoch {} on {}", id(), range, epoch, node);
      } catch (NodeDown | StoreException e) {
        LOG.warn("task {} dropped: could not lift the fence of {} at epoch {} on {}: {}", id(), range, epoch, node,
            e.getMessage());
      }
    }
  }

  /**
   * Reads the next batch from a scan or feed: up to {@code batchEntries} items and about {@code batchBytes} (and
   * a tenth of a second of the lowest limit), at least one item when any is left.
   */
  private <T> List<T> nextBatch(String source, Iterator<T> items, Function<T, Entry> entryOf) {
    long maxBytes = Math.min(ctx.tuning().batchBytes(), ctx.throttles().maxBatchBytes(source));
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
    long bytes = 0;
    for (Entry e : batch) {
      bytes += e.size();
    }
    try {
      // A wait of over a second is published while it lasts; the rest counts towards the next status.
      long[] published = {0};
      Throttles.Waited waited = ctx.throttles().send(batch, Entry::size, source, control, (soFar, holder) -> {
        throttled(soFar, holder);
        published[0] = soFar;
        publish();
      }, piece -> {
        // The piece may have waited (or the source call been slow) past a stop: a stopped run writes nothing.
        control.check();
        call(task().getTarget(), NodeDown.Role.TARGET, t -> t.apply(piece));
      });
      throttled(waited.nanos() - published[0], waited.holder());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new TaskControl.Stopped(TaskControl.Stop.CANCEL);
    }
    return bytes;
  }

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
