package io.ringshift.cli.internal;

import java.util.concurrent.CountDownLatch;

/**
 * What every long-running command ({@code dev}, {@code node}, {@code worker}, {@code publisher}) shares: it runs
 * until SIGINT or SIGTERM, or, in tests, until its latch opens ({@link RunUntilStopped}).
 */
public abstract class LongRunningCommand {
  private final CountDownLatch stopRequested;
  private final boolean onSignals;

  /** Runs until SIGINT or SIGTERM. */
  protected LongRunningCommand() {
    this(new CountDownLatch(1), true);
  }

  /** Runs until {@code stopRequested} opens, or a signal when {@code onSignals} (tests stop it directly). */
  protected LongRunningCommand(CountDownLatch stopRequested, boolean onSignals) {
    this.stopRequested = stopRequested;
    this.onSignals = onSignals;
  }

  /** Begins waiting for the service {@code name} to be stopped; {@code stop} runs exactly once. */
  protected RunUntilStopped runUntilStopped(String name, Runnable stop) {
    return RunUntilStopped.begin(name, stopRequested, onSignals, stop);
  }
}
