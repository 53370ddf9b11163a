package io.ringshift.worker.internal;

/** A monotonic nanosecond clock ({@link System#nanoTime()} in production, a fake one in tests). */
@FunctionalInterface
public interface Ticker {
  long nanos();

  static Ticker system() {
    return System::nanoTime;
  }
}
