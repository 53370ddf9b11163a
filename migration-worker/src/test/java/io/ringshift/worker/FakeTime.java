package io.ringshift.worker;

import io.ringshift.worker.internal.Sleeper;
import io.ringshift.worker.internal.Ticker;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.Objects;
import java.util.PriorityQueue;

/**
 * The worker tests' one fake time: a wall {@link Clock} (UTC) and the worker's monotonic {@link Ticker}, moved
 * together by {@link #advance}, and a {@link Sleeper} that advances them instead of sleeping, so waits and
 * throttles are tested without waiting. Reads are thread safe; the test moves the time.
 *
 * <ul>
 *   <li>{@link #stoppedAt Stopped}: time moves only when the test moves it, so grace periods, rates and
 *       waits are exact (the ticker starts at 0).
 *   <li>{@link #offsetFromSystem() Offset from the system clock}: real time plus what the test added, for ITs
 *       whose worker needs time to run (checkpoint intervals, status times) but must not wait out a grace period.
 * </ul>
 */
public final class FakeTime extends Clock implements Ticker, Sleeper {
  private record Scheduled(long at, long order, Runnable action) {}

  /** Null when offset from the system clock. */
  private final Instant start;
  private final PriorityQueue<Scheduled> scheduled =
      new PriorityQueue<>((a, b) -> a.at != b.at ? Long.compare(a.at, b.at) : Long.compare(a.order, b.order));
  /** The time the test has moved, ns. */
  private volatile long moved;
  private long order;

  private FakeTime(Instant start) {
    this.start = start;
  }

  /** Stopped at {@link Instant#EPOCH}, for tests that read only the ticker. */
  public static FakeTime stopped() {
    return stoppedAt(Instant.EPOCH);
  }

  public static FakeTime stoppedAt(Instant start) {
    return new FakeTime(Objects.requireNonNull(start, "start"));
  }

  /** The system clock (and {@link System#nanoTime()}) plus what the test adds. */
  public static FakeTime offsetFromSystem() {
    return new FakeTime(null);
  }

  public void advance(Duration by) {
    advance(by.toNanos());
  }

  /**
   * Moves the time {@code nanos} forward, running the actions {@linkplain #at scheduled} on the way, each at its
   * time.
   */
  public synchronized void advance(long nanos) {
    long until = moved + nanos;
    while (!scheduled.isEmpty() && scheduled.peek().at <= until) {
      Scheduled next = scheduled.poll();
      moved = Math.max(moved, next.at);
      next.action.run();
    }
    moved = until;
  }

  /**
   * Runs {@code action} (from inside an {@link #advance} or a sleep) once the test has moved the time by
   * {@code nanos}, on a stopped clock when {@link #nanos()} reaches it: so a test changes a limit "while" a task
   * waits.
   */
  public synchronized void at(long nanos, Runnable action) {
    scheduled.add(new Scheduled(nanos, order++, action));
  }

  @Override
  public void sleepNanos(long nanos) {
    advance(nanos);
  }

  @Override
  public long nanos() {
    return start == null ? System.nanoTime() + moved : moved;
  }

  @Override
  public Instant instant() {
    return (start == null ? Instant.now() : start).plusNanos(moved);
  }

  @Override
  public ZoneId getZone() {
    return ZoneOffset.UTC;
  }

  @Override
  public Clock withZone(ZoneId zone) {
    return this;
  }
}
