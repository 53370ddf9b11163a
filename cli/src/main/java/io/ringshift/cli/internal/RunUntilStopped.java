package io.ringshift.cli.internal;

import java.util.Optional;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.slf4j.LoggerFactory;

/**
 * The one lifecycle of the long-running commands ({@code dev}, {@code node}, {@code worker}, {@code publisher}):
 * they wait for their started service to be stopped by SIGINT or SIGTERM, by their own latch (tests), or by the
 * service terminating on its own (an error). However it ends, the command's stop action runs exactly once.
 *
 * <p>Signals are trapped ({@link SignalTrap}) so that the stop action runs on the command's own thread, in order,
 * before the JVM starts its shutdown hooks (the embedded broker has one of its own, and hooks run all at once in
 * no order). A JVM shutdown hook stays as the fallback for every other way the JVM exits (SIGHUP, a second Ctrl-C,
 * no signal trap); it runs the same stop action, so the service still closes cleanly (last checkpoints written, a
 * transaction finished) before the JVM exits.
 *
 * <p>Use: {@link #begin} right after the service started, print the banner, then {@link #await}.
 */
public final class RunUntilStopped {
  private final String name;
  private final CountDownLatch stopRequested;
  private final boolean onSignals;
  private final Runnable stop;
  private final Thread hook;

  private RunUntilStopped(String name, CountDownLatch stopRequested, boolean onSignals, Runnable stop) {
    this.name = name;
    this.stopRequested = stopRequested;
    this.onSignals = onSignals;
    AtomicBoolean stopped = new AtomicBoolean();
    this.stop = () -> {
      if (stopped.compareAndSet(false, true)) {
        stop.run();
      }
    };
    // SIGINT and SIGTERM run the JVM's shutdown hooks: stop the service there, before the JVM exits.
    this.hook = new Thread(() -> {
      this.stop.run();
      stopRequested.countDown();
    }, "ringshift-" + name + "-shutdown");
  }

  /**
   * Starts waiting for the service {@code name} (as in {@code ringshift-<name>-shutdown}, the hook's thread): with
   * {@code onSignals}, traps SIGINT and SIGTERM and installs the shutdown hook that runs {@code stop}.
   *
   * @param stop closes the service and reports that it stopped; runs once, whichever way the service ends
   */
  public static RunUntilStopped begin(String name, CountDownLatch stopRequested, boolean onSignals, Runnable stop) {
    RunUntilStopped run = new RunUntilStopped(name, stopRequested, onSignals, stop);
    if (onSignals) {
      Runtime.getRuntime().addShutdownHook(run.hook);
      SignalTrap.install(stopRequested::countDown);
    }
    return run;
  }

  /**
   * Waits until a stop is requested or {@code terminated} completes, then runs the stop action (if the hook has
   * not) and removes the hook.
   *
   * @return the error {@code terminated} completed with, or empty when the service was asked to stop
   * @throws InterruptedException when the waiting thread is interrupted; the stop action has not run then
   */
  public Optional<Throwable> await(CompletionStage<?> terminated) throws InterruptedException {
    return awaitStop(terminated);
  }

  /** Waits until a stop is requested (a service that ends only when asked), then runs the stop action. */
  public void await() throws InterruptedException {
    awaitStop(new java.util.concurrent.CompletableFuture<Void>());
  }

  private Optional<Throwable> awaitStop(CompletionStage<?> terminated) throws InterruptedException {
    AtomicReference<Throwable> failure = new AtomicReference<>();
    terminated.whenComplete((ok, error) -> {
      failure.set(error);
      stopRequested.countDown();
    });
    stopRequested.await();
    stop.run();
    if (onSignals) {
      try {
        Runtime.getRuntime().removeShutdownHook(hook);
      } catch (IllegalStateException e) {
        // The JVM is already exiting (the hook woke us); the hook found the service stopped.
        LoggerFactory.getLogger(RunUntilStopped.class).debug("JVM exiting; the shutdown hook stopped the {}", name,
            e);
      }
    }
    return Optional.ofNullable(failure.get());
  }
}
