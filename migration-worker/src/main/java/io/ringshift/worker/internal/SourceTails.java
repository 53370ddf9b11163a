package io.ringshift.worker.internal;

import io.ringshift.ring.RingRange;
import io.ringshift.storage.Change;
import io.ringshift.storage.ChangeFeed;
import io.ringshift.storage.Store;
import io.ringshift.storage.StoreException;
import io.ringshift.worker.NodeStores;
import io.ringshift.worker.TaskTuning;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Follows the change feeds of every CAUGHT_UP copy of one worker while they wait for their fence: one feed per
 * source node and {@code tailInterval}, over the ranges of every task caught up from that node
 * ({@link Store#changesIn}), instead of one feed per task.
 *
 * <h2>Why</h2>
 * A task that has caught up keeps applying the source's new writes until its fence is requested, so that the
 * drain after the fence is short and the source's log still reaches back to its position. Done task by task,
 * every waiting task opened its own feed every interval, and every feed reads the source's write-ahead log from
 * the start of the file that holds its position: a join at 120 nodes x 256 tokens has about 730 tasks that wait
 * together, and their feeds kept two cores busy reading the same log files over and over while the fence
 * request waited behind them. Here each source's log is read once per interval, whatever the number of tasks.
 *
 * <h2>How</h2>
 * A task {@link #follow}s its source once CAUGHT_UP and {@link #unfollow}s it when its fence is requested or it
 * stops; unfollow returns only after the pass in progress is done with the task, so from then on the task's own
 * thread alone touches its progress. A thread per followed source (a daemon, gone when no task follows the source)
 * runs a pass every interval: it opens one feed from the lowest position of its tasks, hands each change to the
 * tasks whose range holds it and that have not applied it, in batches as a copy sends them (throttled, applied to
 * each task's target, checkpointed by the task), then moves every task to the feed's end. A failure reaches the
 * tasks it concerns, which handle it on their own thread as they handle their own feed's: a source that stops
 * answering or a log that no longer reaches back ends every task of the pass's wait; a target that stops answering
 * ends its task's. When the log no longer reaches back to the lowest position and the pass had several tasks, each
 * is tried alone, so one task left behind does not send the others back to copying.
 */
public final class SourceTails {
  private static final Logger LOG = LoggerFactory.getLogger(SourceTails.class);

  private final NodeStores stores;
  private final TaskTuning tuning;
  /** The tasks following each source, in the order they came. */
  private final Map<String, Set<CopyRun>> following = new LinkedHashMap<>();
  /** Sources whose thread runs. */
  private final Set<String> threads = new HashSet<>();
  /** Tasks whose progress a pass reads or writes at this moment: {@link #unfollow} waits until they are out. */
  private final Set<CopyRun> touching = new HashSet<>();

  /** Whether no thread follows a source: {@link #passAll} does, when the driver calls it. */
  private final boolean inline;

  SourceTails(NodeStores stores, TaskTuning tuning, boolean inline) {
    this.stores = stores;
    this.tuning = tuning;
    this.inline = inline;
  }

  /**
   * One pass over every followed source, on the caller's thread: what each source's thread does every
   * {@code tailInterval}, for a context whose runs are driven inline ({@link SteppedScheduler}).
   */
  public void passAll() {
    List<String> sources;
    synchronized (this) {
      sources = List.copyOf(following.keySet());
    }
    for (String source : sources) {
      List<CopyRun> runs;
      synchronized (this) {
        Set<CopyRun> set = following.get(source);
        if (set == null) {
          continue;
        }
        runs = List.copyOf(set);
      }
      for (int from = 0; from < runs.size(); from += Store.MAX_FEED_RANGES) {
        pass(source, runs.subList(from, Math.min(runs.size(), from + Store.MAX_FEED_RANGES)));
      }
    }
  }

  /** Starts following {@code source}'s feed for {@code run}, whose position is its caught-up position. */
  synchronized void follow(String source, CopyRun run) {
    following.computeIfAbsent(source, s -> new LinkedHashSet<>()).add(run);
    if (!inline && threads.add(source)) {
      Thread thread = new Thread(() -> loop(source), "ringshift-worker-tail-" + source);
      thread.setDaemon(true);
      thread.start();
    }
    notifyAll();
  }

  /**
   * Stops following for {@code run}; returns once no pass works on it any longer (a pass in progress finishes the
   * batch it is applying to it, if any, and then leaves it out).
   */
  synchronized void unfollow(CopyRun run) {
    following.values().removeIf(runs -> runs.remove(run) && runs.isEmpty());
    notifyAll();
    boolean interrupted = false;
    while (touching.contains(run)) {
      try {
        wait();
      } catch (InterruptedException e) {
        // The task must not touch its progress while a pass still does: wait on, and keep the interrupt.
        interrupted = true;
      }
    }
    if (interrupted) {
      Thread.currentThread().interrupt();
    }
  }

  private void loop(String source) {
    while (true) {
      List<CopyRun> runs;
      synchronized (this) {
        long deadline = System.nanoTime() + tuning.tailInterval().toNanos();
        long left;
        while (following.containsKey(source) && (left = deadline - System.nanoTime()) > 0) {
          try {
            java.util.concurrent.TimeUnit.NANOSECONDS.timedWait(this, left);
          } catch (InterruptedException e) {
            endFollowers(source, new StoreException.Unavailable("the tail thread of " + source
                + " was interrupted", e));
            return;
          }
        }
        Set<CopyRun> set = following.get(source);
        if (set == null) {
          threads.remove(source);
          return;
        }
        runs = List.copyOf(set);
      }
      for (int from = 0; from < runs.size(); from += Store.MAX_FEED_RANGES) {
        pass(source, runs.subList(from, Math.min(runs.size(), from + Store.MAX_FEED_RANGES)));
      }
    }
  }

  /** Ends the wait of every task following {@code source} with {@code failure}; called with the lock held. */
  private void endFollowers(String source, StoreException failure) {
    threads.remove(source);
    Set<CopyRun> runs = following.remove(source);
    if (runs != null) {
      runs.forEach(run -> run.tailFailed(new NodeDown(source, NodeDown.Role.SOURCE, failure)));
    }
  }

  /** One pass of {@code runs}' ranges on {@code source}; failures go to the tasks they concern. */
  private void pass(String source, List<CopyRun> runs) {
    try {
      tail(source, runs);
    } catch (StoreException.FeedUnavailable e) {
      if (runs.size() == 1) {
        fail(runs.get(0), e);
        return;
      }
      LOG.info("the log of {} no longer reaches back to the lowest position of {} tasks; trying each alone: {}",
          source, runs.size(), e.getMessage());
      for (CopyRun run : runs) {
        pass(source, List.of(run));
      }
    } catch (StoreException.Unavailable e) {
      NodeDown down = new NodeDown(source, NodeDown.Role.SOURCE, e);
      runs.forEach(run -> fail(run, down));
    } catch (RuntimeException e) {
      LOG.warn("following {} for {} tasks failed; they handle it themselves", source, runs.size(), e);
      runs.forEach(run -> fail(run, e));
    }
  }

  /**
   * Ends {@code run}'s wait with {@code failure} and stops following for it (it unfollows too as it handles the
   * failure; this keeps the next pass from trying it again meanwhile).
   */
  private void fail(CopyRun run, RuntimeException failure) {
    synchronized (this) {
      following.values().removeIf(runs -> runs.remove(run) && runs.isEmpty());
    }
    run.tailFailed(failure);
  }

  private void tail(String source, List<CopyRun> runs) {
    List<CopyRun> live = new ArrayList<>(runs.size());
    List<RingRange> ranges = new ArrayList<>(runs.size());
    long after = Long.MAX_VALUE;
    for (CopyRun run : runs) {
      if (!touch(source, run)) {
        continue;
      }
      try {
        ranges.add(run.followedRange());
        after = Math.min(after, run.followedPosition());
        live.add(run);
      } finally {
        untouch(run);
      }
    }
    if (live.isEmpty()) {
      return;
    }
    Store store = stores.store(source);
    long upTo;
    try (ChangeFeed feed = store.changesIn(ranges, after)) {
      Map<CopyRun, List<Change>> batches = new LinkedHashMap<>();
      int entries = 0;
      long bytes = 0;
      while (feed.hasNext()) {
        Change change = feed.next();
        for (CopyRun run : live) {
          if (change.sequence() > run.followedPosition() && run.followedRange().contains(change.entry().position())) {
            batches.computeIfAbsent(run, r -> new ArrayList<>()).add(change);
          }
        }
        entries++;
        bytes += change.entry().size();
        if (entries >= tuning.batchEntries() || bytes >= tuning.batchBytes()) {
          apply(source, batches, live);
          entries = 0;
          bytes = 0;
        }
      }
      apply(source, batches, live);
      upTo = feed.upTo();
    }
    long lag = store.latestSequence() - upTo;
    for (CopyRun run : live) {
      if (touch(source, run)) {
        try {
          run.followedUpTo(upTo, lag);
        } finally {
          untouch(run);
        }
      }
    }
  }

  /**
   * Marks {@code run} as touched by the pass when it still follows {@code source}, and says whether it does: a run
   * that unfollowed is left out of the rest of the pass, so its unfollow waits at most for one batch.
   */
  private synchronized boolean touch(String source, CopyRun run) {
    Set<CopyRun> runs = following.get(source);
    if (runs == null || !runs.contains(run)) {
      return false;
    }
    touching.add(run);
    return true;
  }

  /** The pass is done with {@code run} for now: an {@link #unfollow} waiting for it returns. */
  private synchronized void untouch(CopyRun run) {
    touching.remove(run);
    notifyAll();
  }

  /** Applies each task's batch to its target; a task that fails or stops leaves {@code live}. */
  private void apply(String source, Map<CopyRun, List<Change>> batches, List<CopyRun> live) {
    for (Map.Entry<CopyRun, List<Change>> batch : batches.entrySet()) {
      CopyRun run = batch.getKey();
      if (!touch(source, run)) {
        // It unfollowed (its fence was requested, or it stopped): the pass leaves it out from here.
        live.remove(run);
        continue;
      }
      try {
        run.applyFollowed(source, batch.getValue());
      } catch (TaskControl.Stopped stopped) {
        live.remove(run);
      } catch (RuntimeException e) {
        live.remove(run);
        fail(run, e);
      } finally {
        untouch(run);
      }
    }
    batches.clear();
  }
}
