package io.ringshift.worker.internal;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.PriorityQueue;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Drives task runs one step at a time on the caller's thread, on a virtual clock: the {@link TaskExecution} of the
 * deterministic simulation, which runs the worker's production task state machines ({@link CopyRun},
 * {@link CleanupRun}) without a thread of their own. The same rules as {@link TaskScheduler}: a step returns how long
 * its run waits (parked until then, or until something wakes it), {@link Duration#ZERO} means "after the others' turn",
 * null ends the run; a wake while a step runs runs the next step once it returns.
 *
 * <p>Nothing happens until {@link #runDue} is called: it runs every step and job due at the clock's time, in a fixed
 * order (the time a run became due, then the order it was scheduled in), so the same calls give the same steps. Not
 * thread safe: one thread drives it.
 */
public final class SteppedScheduler implements TaskExecution {
  private static final Logger LOG = LoggerFactory.getLogger(SteppedScheduler.class);
  /** Most steps one {@link #runDue} runs: a run that keeps asking for no wait cannot hold the caller forever. */
  static final int MAX_STEPS_PER_CALL = 10_000;

  private final LongSupplier nanos;
  private final ArrayDeque<Driven> ready = new ArrayDeque<>();
  private final ArrayDeque<Job> jobs = new ArrayDeque<>();
  private final PriorityQueue<Parked> parked = new PriorityQueue<>();
  private final Set<Driven> live = new LinkedHashSet<>();
  private long order;
  private boolean closed;

  /** @param nanos the virtual clock, in nanoseconds, never going back */
  public SteppedScheduler(LongSupplier nanos) {
    this.nanos = nanos;
  }

  private record Job(Runnable job, CompletableFuture<Void> done) {}

  private record Parked(long dueNanos, long order, Driven driven, long generation) implements Comparable<Parked> {
    @Override
    public int compareTo(Parked o) {
      int c = Long.compare(dueNanos, o.dueNanos);
      return c != 0 ? c : Long.compare(order, o.order);
    }
  }

  private final class Driven {
    final TaskRun run;
    final CompletableFuture<Void> done = new CompletableFuture<>();
    boolean queued;
    boolean running;
    boolean wokenWhileRunning;
    /** Bumped at every park and wake: a parked entry of an older generation is stale. */
    long generation;

    Driven(TaskRun run) {
      this.run = run;
    }

    void wake() {
      if (done.isDone()) {
        return;
      }
      if (running) {
        wokenWhileRunning = true;
        return;
      }
      if (!queued) {
        generation++;
        queued = true;
        ready.add(this);
      }
    }
  }

  @Override
  public CompletableFuture<Void> start(TaskRun run) {
    Driven d = new Driven(run);
    if (closed) {
      run.abandon();
      d.done.completeExceptionally(new RejectedExecutionException("the worker closed"));
      return d.done;
    }
    live.add(d);
    d.done.whenComplete((v, e) -> live.remove(d));
    run.control.onWake(d::wake);
    d.wake();
    return d.done;
  }

  @Override
  public CompletableFuture<Void> runAsync(Runnable job) {
    CompletableFuture<Void> done = new CompletableFuture<>();
    if (closed) {
      done.completeExceptionally(new RejectedExecutionException("the worker closed"));
      return done;
    }
    jobs.add(new Job(job, done));
    return done;
  }

  /**
   * Runs every job and every step due now, until none is; returns the virtual time (nanoseconds) the next parked run
   * is due at, or {@link Long#MAX_VALUE} when none is parked.
   */
  public long runDue() {
    int steps = 0;
    while (steps < MAX_STEPS_PER_CALL && !closed) {
      if (!jobs.isEmpty()) {
        Job j = jobs.poll();
        try {
          j.job().run();
          j.done().complete(null);
        } catch (RuntimeException e) {
          LOG.warn("a worker job failed", e);
          j.done().completeExceptionally(e);
        }
        steps++;
        continue;
      }
      long now = nanos.getAsLong();
      while (!parked.isEmpty() && parked.peek().dueNanos() <= now) {
        Parked p = parked.poll();
        if (p.generation() == p.driven().generation && !p.driven().queued && !p.driven().running
            && !p.driven().done.isDone()) {
          p.driven().queued = true;
          ready.add(p.driven());
        }
      }
      Driven d = ready.poll();
      if (d == null) {
        break;
      }
      step(d);
      steps++;
    }
    if (!ready.isEmpty() || !jobs.isEmpty()) {
      return nanos.getAsLong();
    }
    while (!parked.isEmpty() && parked.peek().generation() != parked.peek().driven().generation) {
      parked.poll(); // stale: woken since
    }
    return parked.isEmpty() ? Long.MAX_VALUE : parked.peek().dueNanos();
  }

  private void step(Driven d) {
    d.queued = false;
    d.running = true;
    Duration next;
    try {
      next = d.run.step();
    } catch (RuntimeException | Error e) {
      d.running = false;
      LOG.error("task {} ended with an error", d.run.task().getTaskId(), e);
      d.done.completeExceptionally(e);
      return;
    }
    d.running = false;
    if (next == null) {
      d.done.complete(null);
      return;
    }
    boolean stopping = d.run.control.stopRequested() != null;
    if (d.wokenWhileRunning || stopping || next.isZero() || next.isNegative()) {
      d.wokenWhileRunning = false;
      d.generation++;
      d.queued = true;
      ready.add(d);
      return;
    }
    d.generation++;
    parked.add(new Parked(nanos.getAsLong() + next.toNanos(), order++, d, d.generation));
  }

  /** Runs steps until every one of {@code futures} is done or no step is left to run now; returns those not done. */
  @Override
  public List<CompletableFuture<Void>> await(List<CompletableFuture<Void>> futures, Duration timeout) {
    for (int round = 0; round < 100 && futures.stream().anyMatch(f -> !f.isDone()); round++) {
      if (ready.isEmpty() && jobs.isEmpty()) {
        break;
      }
      runDue();
    }
    List<CompletableFuture<Void>> late = new ArrayList<>();
    futures.forEach(f -> {
      if (!f.isDone()) {
        late.add(f);
      }
    });
    return late;
  }

  /** Runs not ended yet. */
  public int live() {
    return live.size();
  }

  /** Stops driving: every run not ended ends where it is (a dropped one still lifts its fences). */
  @Override
  public void close() {
    closed = true;
    for (Driven d : List.copyOf(live)) {
      if (!d.done.isDone()) {
        d.run.abandon();
        d.done.completeExceptionally(new RejectedExecutionException("the worker closed"));
      }
    }
    ready.clear();
    parked.clear();
    jobs.forEach(j -> j.done().completeExceptionally(new RejectedExecutionException("the worker closed")));
    jobs.clear();
  }
}
