package io.ringshift.client.internal;

import java.time.Duration;
import java.util.Objects;
import java.util.function.LongSupplier;

/**
 * Turns a stream of failed and successful Kafka calls into outages, so the client logs once when an outage
 * starts and once when it ends, not on every retry. Used by one thread.
 */
public final class OutageTracker {
  private final LongSupplier nanoTime;
  private boolean down;
  private long since;

  /** @param nanoTime a monotonic time source, {@code System::nanoTime} outside tests */
  public OutageTracker(LongSupplier nanoTime) {
    this.nanoTime = Objects.requireNonNull(nanoTime, "nanoTime");
  }

  /** Records a failed call; true when it starts an outage (log it), false during one (stay quiet). */
  public boolean failed() {
    if (down) {
      return false;
    }
    down = true;
    since = nanoTime.getAsLong();
    return true;
  }

  /** Records a successful call; the length of the outage it ends, or {@code null} when there was none. */
  public Duration succeeded() {
    if (!down) {
      return null;
    }
    down = false;
    return Duration.ofNanos(nanoTime.getAsLong() - since);
  }

  public boolean inOutage() {
    return down;
  }
}
