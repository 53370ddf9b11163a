package io.ringshift.worker.internal;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
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
public final class TaskScheduler implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(TaskScheduler.class);
  /** Threads beside the copy slots, for the short steps of tasks that do not copy (fence, verify, cleanup). */
  public static final int SHORT_STEP_THREADS = 16;
  private static final long IDLE_SECONDS = 30;

  private final ThreadPoolExecutor pool;
  private final ScheduledExecutorService timer;

  /** A pool for {@code copySlots} copies at once plus the short steps; threads are named after {@code name}. */
  public TaskScheduler(String name, int copySlots) {
    int threads = threadsFor(copySlots);
    AtomicInteger n = new AtomicInteger();
    pool = new ThreadPoolExecutor(threads, threads, IDLE_SECONDS, TimeUnit.SECONDS, new LinkedBlockingQueue<>(), r -> {
      Thread t = new Thread(r, name + "-task-" + n.incrementAndGet());
      t.setDaemon(true);
      return t;
    });
    pool.allowCoreThreadTimeOut(true);
    timer = new ScheduledThreadPoolExecutor(1, r -> {
      Thread t = new Thread(r, name + "-task-timer");
      t.setDaemon(true);
      return t;
    });
  }

  private static int threadsFor(int copySlots) {
    return Math.max(1, copySlots) + SHORT_STEP_THREADS;
  }

  /** Resizes the pool for a new number of copy slots (the worker's limits changed). */
  public synchronized void copySlots(int copySlots) {
    int threads = threadsFor(copySlots);
    if (threads > pool.getMaximumPoolSize()) {
      pool.setMaximumPoolSize(threads);
      pool.setCorePoolSize(threads);
    } else {
      pool.setCorePoolSize(threads);
      pool.setMaximumPoolSize(threads);
    }
  }

  /** Threads of the pool now (busy or idle, not yet expired). */
  public int threads() {
    return pool.getPoolSize();
  }

  /** Runs {@code run} step by step from now; the future completes when it ends (exceptionally if a step threw). */
  public CompletableFuture<Void> start(TaskRun run) {
    Driven driven = new Driven(run);
    run.control.onWake(driven::wake);
    driven.wake();
    return driven.done;
  }

  /** Runs a one-off job on the pool (lifting the fences of a dropped task). */
  public CompletableFuture<Void> runAsync(Runnable job) {
    return CompletableFuture.runAsync(job, pool);
  }

  /** Stops the pool and the timer, interrupting steps still running (a stopped step writes nothing). */
  @Override
  public void close() {
    timer.shutdownNow();
    pool.shutdownNow();
  }

  /** One run and where it is: queued for the pool, running a step, or parked until a time or a wake. */
  private final class Driven implements Runnable {
    private final TaskRun run;
    private final CompletableFuture<Void> done = new CompletableFuture<>();
    private boolean queued;
    private boolean running;
    private boolean wokenWhileRunning;
    /** Changes each time the run parks or is woken, so a timer that fires late for an older park does nothing. */
    private long parked;

    Driven(TaskRun run) {
      this.run = run;
    }

    /** Runs the next step at once: from a park now, from a running step as soon as it returns. */
    void wake() {
      synchronized (this) {
        if (done.isDone() || queued) {
          return;
        }
        if (running) {
          wokenWhileRunning = true;
          return;
        }
        parked++;
        queued = true;
      }
      submit();
    }

    private void timerFired(long park) {
      synchronized (this) {
        if (park != parked || queued || running || done.isDone()) {
          return;
        }
        queued = true;
      }
      submit();
    }

    private void submit() {
      try {
        pool.execute(this);
      } catch (RejectedExecutionException e) {
        // The worker is closing: the run's stop already asked for its last step, which cannot run any more.
        LOG.debug("task {} not stepped: the worker is closing", run.task().getTaskId());
        done.completeExceptionally(e);
      }
    }

    @Override
    public void run() {
      synchronized (this) {
        queued = false;
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
      long park;
      synchronized (this) {
        running = false;
        if (wokenWhileRunning || next.isZero() || next.isNegative()) {
          wokenWhileRunning = false;
          queued = true;
          park = -1;
        } else {
          park = ++parked;
        }
      }
      if (park < 0) {
        submit();
        return;
      }
      try {
        timer.schedule(() -> timerFired(park), next.toNanos(), TimeUnit.NANOSECONDS);
      } catch (RejectedExecutionException e) {
        done.completeExceptionally(e);
      }
    }
  }
}
