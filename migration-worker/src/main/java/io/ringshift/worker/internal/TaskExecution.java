package io.ringshift.worker.internal;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * How a worker's task runs are driven: {@link TaskScheduler} steps them on thread pools in production,
 * {@link SteppedScheduler} one at a time on the caller's thread on a virtual clock, which is how the deterministic
 * simulation runs the same task state machines.
 */
public interface TaskExecution extends AutoCloseable {
  /** Runs {@code run} step by step from now; the future completes when it ends (exceptionally if a step threw). */
  CompletableFuture<Void> start(TaskRun run);

  /** Runs a one-off job (lifting the fences of a dropped task). */
  CompletableFuture<Void> runAsync(Runnable job);

  /**
   * Waits up to {@code timeout} for {@code futures} (runs asked to stop); returns those not done by then. A stepped
   * execution runs the due steps itself meanwhile.
   */
  List<CompletableFuture<Void>> await(List<CompletableFuture<Void>> futures, Duration timeout);

  /** Stops driving runs: a run not ended ends where it is (a dropped one still lifts its fences). */
  @Override
  void close();
}
