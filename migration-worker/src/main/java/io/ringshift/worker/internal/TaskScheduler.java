package io.ringshift.worker.internal;

import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs the tasks of one worker as state machines on a bounded pool: a task runs in {@linkplain TaskRun#step steps},
 * and a task that waits (for a copy slot, its fence, the cleanup gate, a retry) returns from its step with how
 * long, and holds no thread until that time has passed or something {@linkplain TaskControl#onWake wakes} it (a
 * stop, a restart, a fence request, a freed copy slot), which runs its next step at once.
 *
 * <p>A join at 120 nodes x 256 tokens has about 730 tasks that mostly wait: for one of the few copy slots, for the
 * fence of their epoch, and their cleanups for the grace period. With a thread per task the worker held thousands
 * of threads and their stacks across each epoch. Here the pool has {@code maxTasks} threads for the copies that run
 * and {@link #SHORT_STEP_THREADS} more for short steps (a fence, a digest, a gate check), and its threads expire
 * when idle.
 *
 * <p>A step that asks for no wait ({@link Duration#ZERO}) goes to the back of the pool's queue, so tasks take turns.
 */
public final class TaskScheduler implements TaskExecution {
  private static final Logger LOG = LoggerFactory.getLogger(TaskScheduler.class);
  /** Threads beside the copy slots, for the short steps of tasks that do not copy (fence, verify, cleanup). */
  public static final int SHORT_STEP_THREADS = 16;
  private static final long IDLE_SECONDS = 30;
  private static final int STOP_THREADS = 4;

  private final ThreadPoolExecutor pool;
  /** Runs the last step of stopped runs, so a stop (a rebalance, a close) does not wait behind queued steps. */
  private final ThreadPoolExecutor stopPool;
  private final ScheduledThreadPoolExecutor timer;
  /** Runs not ended yet, so a close ends those still queued or parked. */
  private final Set<Driven> live = ConcurrentHashMap.newKeySet();

  /** A pool for {@code copySlots} copies at once plus the short steps; threads are named after {@code name}. */
  public TaskScheduler(String name, int copySlots) {
    pool = pool(name + "-task-", threadsFor(copySlots));
    stopPool = pool(name + "-task-stop-", STOP_THREADS);
    timer = new ScheduledThreadPoolExecutor(1, r -> {
      Thread t = new Thread(r, name + "-task-timer");
      t.setDaemon(true);
      return t;
    });
    // A run woken early cancels its timer: removed at once, not kept queued until its time.
    timer.setRemoveOnCancelPolicy(true);
  }

  private static ThreadPoolExecutor pool(String prefix, int threads) {
    AtomicInteger n = new AtomicInteger();
    ThreadPoolExecutor p = new ThreadPoolExecutor(threads, threads, IDLE_SECONDS, TimeUnit.SECONDS,
        new LinkedBlockingQueue<>(), r -> {
          Thread t = new Thread(r, prefix + n.incrementAndGet());
          t.setDaemon(true);
          return t;
        });
    p.allowCoreThreadTimeOut(true);
    return p;
  }

  private static int threadsFor(int copySlots) {
    return Math.max(1, copySlots) + SHORT_STEP_THREADS;
  }

  /**
   * Grows the pool for more copy slots (the worker's limits changed). A lower cap leaves the pool as it is: copies
   * running under the old cap keep their threads until they finish, and a smaller pool would make every other
   * step wait for them.
   */
  public synchronized void copySlots(int copySlots) {
    int threads = threadsFor(copySlots);
    if (threads > pool.getMaximumPoolSize()) {
      pool.setMaximumPoolSize(threads);
      pool.setCorePoolSize(threads);
    }
  }

  @Override
  public List<CompletableFuture<Void>> await(List<CompletableFuture<Void>> futures, Duration timeout) {
    long deadline = System.nanoTime() + timeout.toNanos();
    List<CompletableFuture<Void>> late = new java.util.ArrayList<>();
    for (CompletableFuture<Void> f : futures) {
      try {
        f.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
      } catch (java.util.concurrent.TimeoutException e) {
        late.add(f);
      } catch (java.util.concurrent.ExecutionException e) {
        // ended with an error: done
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        late.add(f);
      }
    }
    return late;
  }

  /** Runs {@code run} step by step from now; the future completes when it ends (exceptionally if a step threw). */
  @Override
  public CompletableFuture<Void> start(TaskRun run) {
    Driven driven = new Driven(run);
    live.add(driven);
    driven.done.whenComplete((v, e) -> live.remove(driven));
    run.control.onWake(driven::wake);
    driven.wake();
    return driven.done;
  }

  /** Runs a one-off job on the pool (lifting the fences of a dropped task). */
  @Override
  public CompletableFuture<Void> runAsync(Runnable job) {
    return CompletableFuture.runAsync(job, pool);
  }

  /**
   * Stops the pools and the timer, interrupting steps still running (a stopped step writes nothing); a run that has
   * not ended, queued or parked, ends where it is (a dropped one still lifts its fences).
   */
  @Override
  public void close() {
    timer.shutdownNow();
    pool.shutdownNow();
    stopPool.shutdownNow();
    for (Driven d : List.copyOf(live)) {
      d.abandon(new RejectedExecutionException("the worker closed"));
    }
  }

  /**
   * One run and where it is: queued for a pool, running a step, or parked until a time or a wake. Its state
   * changes under its own lock, which with the pools' hand-off orders one step's writes before the next step.
   */
  private final class Driven implements Runnable {
    private final TaskRun run;
    private final CompletableFuture<Void> done = new CompletableFuture<>();
    private boolean queued;
    /** Queued on the stop pool too (a stop came while it was queued on the main pool only). */
    private boolean expedited;
    private boolean running;
    private boolean wokenWhileRunning;
    /** The timer of the current park; null when not parked. */
    private ScheduledFuture<?> parkedUntil;

    Driven(TaskRun run) {
      this.run = run;
    }

    /** Runs the next step at once: from a park now, from a running step as soon as it returns. */
    void wake() {
      boolean stopping = run.control.stopRequested() != null;
      boolean toPool;
      synchronized (this) {
        if (done.isDone()) {
          return;
        }
        if (running) {
          wokenWhileRunning = true;
          return;
        }
        if (queued) {
          if (!stopping || expedited) {
            return;
          }
          // Queued behind other steps: its last step goes to the stop pool too.
          expedited = true;
          toPool = false;
        } else {
          unpark();
          queued = true;
          expedited = stopping;
          toPool = true;
        }
      }
      submit(toPool, stopping);
    }

    private void unpark() {
      if (parkedUntil != null) {
        parkedUntil.cancel(false);
        parkedUntil = null;
      }
    }

    private void timerFired(ScheduledFuture<?>[] self) {
      synchronized (this) {
        if (parkedUntil == null || parkedUntil != self[0] || queued || running || done.isDone()) {
          return;
        }
        parkedUntil = null;
        queued = true;
      }
      submit(true, false);
    }

    /**
     * Queues the next step on the main pool and, for a stopped run, on the stop pool too: whichever thread comes
     * first runs it (the other finds it taken), so a mass stop runs on every thread there is and never waits behind
     * queued steps.
     */
    private void submit(boolean toPool, boolean toStopPool) {
      try {
        if (toStopPool) {
          stopPool.execute(this);
        }
        if (toPool) {
          pool.execute(this);
        }
      } catch (RejectedExecutionException e) {
        abandon(e);
      }
    }

    /** The worker is closing and the run's next step cannot run any more: it ends where it is. */
    void abandon(RejectedExecutionException e) {
      synchronized (this) {
        if (running || done.isDone()) {
          return;
        }
        unpark();
        queued = false;
        running = true;
      }
      LOG.debug("task {} not stepped: the worker is closing", run.task().getTaskId());
      run.abandon();
      done.completeExceptionally(e);
    }

    @Override
    public void run() {
      synchronized (this) {
        if (!queued || running) {
          return; // queued on both pools, and the other one ran it
        }
        queued = false;
        expedited = false;
        running = true;
      }
      Duration next;
      try {
        next = run.step();
      } catch (RuntimeException | Error e) {
        LOG.error("task {} ended with an error", run.task().getTaskId(), e);
        done.completeExceptionally(e);
        return;
      }
      if (next == null) {
        done.complete(null);
        return;
      }
      boolean stopping = run.control.stopRequested() != null;
      boolean rejected = false;
      synchronized (this) {
        running = false;
        if (!wokenWhileRunning && !stopping && next.compareTo(Duration.ZERO) > 0) {
          ScheduledFuture<?>[] self = new ScheduledFuture<?>[1];
          try {
            self[0] = timer.schedule(() -> timerFired(self), next.toNanos(), TimeUnit.NANOSECONDS);
            parkedUntil = self[0];
            return;
          } catch (RejectedExecutionException e) {
            rejected = true;
          }
        } else {
          wokenWhileRunning = false;
          queued = true;
          expedited = stopping;
        }
      }
      if (rejected) {
        abandon(new RejectedExecutionException("the worker closed"));
        return;
      }
      submit(true, stopping);
    }
  }
}
