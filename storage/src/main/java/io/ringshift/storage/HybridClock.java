package io.ringshift.storage;

import io.ringshift.ring.RingHash;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.util.function.LongSupplier;

/**
 * A hybrid logical clock (Kulkarni et al., "Logical Physical Clocks", 2014): the versions one writer stamps its writes
 * with. Each {@link #next} is above every version this clock handed out or {@link #observe observed}, and follows
 * the physical clock when that is ahead: {@code millis} is the larger of the physical clock and the last reading,
 * and {@code logical} counts up within one millisecond. So a writer whose clock runs behind still writes above what it
 * has read, and two writers never hand out the same version (their ids differ). Thread safe.
 */
public final class HybridClock {
  private final LongSupplier physicalMillis;
  private final long writer;
  private long millis;
  private int logical;

  private HybridClock(LongSupplier physicalMillis, long writer) {
    if (physicalMillis == null) {
      throw new IllegalArgumentException("a hybrid clock needs a physical clock");
    }
    this.physicalMillis = physicalMillis;
    this.writer = writer;
  }

  /** A clock for writer {@code writerName} ({@link #writerId}) on the physical clock {@code physicalMillis}. */
  public static HybridClock of(String writerName, LongSupplier physicalMillis) {
    return new HybridClock(physicalMillis, writerId(writerName));
  }

  /** A clock for writer {@code writerName} on the system clock. */
  public static HybridClock system(String writerName) {
    Clock clock = Clock.systemUTC();
    return of(writerName, clock::millis);
  }

  /**
   * The id of writer {@code writerName}: XXH3-64 (seed 0) of its UTF-8 bytes. Give every writer (client instance,
   * node) its own name: two writers with one name could stamp one version on two different values.
   */
  public static long writerId(String writerName) {
    if (writerName == null || writerName.isEmpty()) {
      throw new IllegalArgumentException("a writer needs a name; was " + (writerName == null ? "null" : "empty"));
    }
    byte[] bytes = writerName.getBytes(StandardCharsets.UTF_8);
    return RingHash.xxh3().hash(bytes, 0, bytes.length);
  }

  /** This clock's writer id. */
  public long writer() {
    return writer;
  }

  /** A version above every version this clock handed out or observed. */
  public synchronized Version next() {
    long now = physicalMillis.getAsLong();
    if (now > millis) {
      millis = now;
      logical = 0;
    } else if (logical == Integer.MAX_VALUE) {
      millis++;
      logical = 0;
    } else {
      logical++;
    }
    return new Version(millis, logical, writer);
  }

  /** Moves this clock past {@code seen} (a version read or received), so that every later {@link #next} is above it. */
  public synchronized void observe(Version seen) {
    if (seen.millis() > millis || (seen.millis() == millis && seen.logical() > logical)) {
      millis = seen.millis();
      logical = seen.logical();
    }
  }
}
