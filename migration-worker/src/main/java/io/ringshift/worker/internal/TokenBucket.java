package io.ringshift.worker.internal;

import java.util.concurrent.TimeUnit;

/**
 * A token bucket in bytes per second: copies take bytes from it before they send them and wait when it is in
 * debt, so the bytes that pass it over any long window stay at the rate.
 *
 * <h2>Design</h2>
 * <ul>
 *   <li><b>Pay after, in debt.</b> A request is granted whenever the bucket is not in debt, and its bytes are
 *       taken even if that drives the bucket below zero; the next request waits until the debt is paid back at
 *       the rate. So a request larger than the burst (one big entry) still passes, the long-run rate is exact,
 *       and the error over a window is at most one request. Callers keep requests small relative to the rate
 *       ({@link #maxRequestBytes}) so that error stays near 1% over 10 s.
 *   <li><b>Starts empty.</b> A new bucket holds no tokens, so starting a worker never bursts; an idle bucket
 *       refills up to the burst (one second of the rate by default).
 *   <li><b>Rate changes apply at once.</b> Waiters re-check at least every {@link #MAX_WAIT_NANOS}, so a new
 *       rate reaches a task that is already waiting within 100 ms. A debt left by the old rate is repaid at
 *       whichever of the old and new rates is faster: bytes sent under the old limit were allowed then, so
 *       lowering the limit does not stall a task for the time the old bytes would take at the new rate, and
 *       raising it lets a waiting task go at the new rate.
 *   <li><b>Unlimited.</b> A rate of 0 means no limit: every request is granted at once.
 * </ul>
 *
 * <p>Thread safe; shared by every task that copies through it (the worker's bucket, one bucket per source).
 * The time comes from an injected {@link Ticker} and waits go through the caller's {@link Sleeper}, so tests
 * drive it on a fake clock.
 */
public final class TokenBucket {
  /** The longest a waiter sleeps before it looks at the bucket again (and at a changed rate). */
  public static final long MAX_WAIT_NANOS = TimeUnit.MILLISECONDS.toNanos(100);
  private static final double NANOS_PER_SECOND = 1e9;

  private final Ticker ticker;
  private long rate;
  private double tokens;
  private long refilledAt;

  /**
   * @param bytesPerSecond the rate, 0 for unlimited
   * @throws IllegalArgumentException when the rate is negative
   */
  public TokenBucket(long bytesPerSecond, Ticker ticker) {
    this.ticker = ticker;
    this.rate = checkRate(bytesPerSecond);
    this.refilledAt = ticker.nanos();
  }

  /** The rate in bytes per second; 0 is unlimited. */
  public synchronized long rate() {
    return rate;
  }

  /** Changes the rate; a task waiting on the bucket sees the change within {@link #MAX_WAIT_NANOS}. */
  public synchronized void setRate(long bytesPerSecond) {
    long next = checkRate(bytesPerSecond);
    refill();
    if (next == 0) {
      tokens = 0;
    } else if (rate == 0) {
      tokens = 0;
    } else if (tokens < 0) {
      // Repay the debt at the faster of the two rates (see the design note).
      tokens = tokens * Math.min(1.0, (double) next / rate);
    } else {
      tokens = Math.min(tokens, next);
    }
    rate = next;
  }

  /**
   * Takes {@code bytes} when the bucket is not in debt and returns 0; otherwise takes nothing and returns how
   * many nanoseconds to wait before asking again (at most {@link #MAX_WAIT_NANOS}).
   */
  public synchronized long tryAcquire(long bytes) {
    if (bytes < 0) {
      throw new IllegalArgumentException("bytes was " + bytes + "; a request takes >= 0 bytes");
    }
    if (rate == 0) {
      return 0;
    }
    refill();
    if (tokens >= 0) {
      tokens -= bytes;
      return 0;
    }
    long debtNanos = (long) Math.ceil(-tokens * NANOS_PER_SECOND / rate);
    return Math.max(1, Math.min(debtNanos, MAX_WAIT_NANOS));
  }

  /**
   * Takes {@code bytes}, waiting through {@code sleeper} while the bucket is in debt.
   *
   * @return the nanoseconds spent waiting
   */
  public long acquire(long bytes, Sleeper sleeper) throws InterruptedException {
    long waited = 0;
    long wait;
    while ((wait = tryAcquire(bytes)) > 0) {
      long before = ticker.nanos();
      sleeper.sleepNanos(wait);
      waited += ticker.nanos() - before;
    }
    return waited;
  }

  /**
   * The largest request a caller should make at {@code bytesPerSecond}: a tenth of a second of the rate, at
   * least 4 KiB, so the throttle's error over a 10 s window stays near 1%. {@code Long.MAX_VALUE} when
   * unlimited.
   */
  public static long maxRequestBytes(long bytesPerSecond) {
    return bytesPerSecond == 0 ? Long.MAX_VALUE : Math.max(4096, bytesPerSecond / 10);
  }

  private void refill() {
    long now = ticker.nanos();
    long elapsed = now - refilledAt;
    refilledAt = now;
    if (rate > 0 && elapsed > 0) {
      // The burst is one second of the rate.
      tokens = Math.min(rate, tokens + elapsed * (rate / NANOS_PER_SECOND));
    }
  }

  private static long checkRate(long bytesPerSecond) {
    if (bytesPerSecond < 0) {
      throw new IllegalArgumentException("rate was " + bytesPerSecond
          + " bytes/s; a rate must be > 0 bytes/s, or 0 for unlimited");
    }
    return bytesPerSecond;
  }

  @Override
  public synchronized String toString() {
    return rate == 0 ? "unlimited" : Rates.format(rate);
  }
}
