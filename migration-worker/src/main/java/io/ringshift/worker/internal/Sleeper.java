package io.ringshift.worker.internal;

/**
 * How a waiting task passes time: a real sleeper parks the thread (and wakes early when the task is told to
 * stop), a test's sleeper advances a fake clock. Injected so throttles are tested without sleeping.
 */
@FunctionalInterface
public interface Sleeper {
  /** Waits about {@code nanos} nanoseconds, or less when woken. */
  void sleepNanos(long nanos) throws InterruptedException;
}
