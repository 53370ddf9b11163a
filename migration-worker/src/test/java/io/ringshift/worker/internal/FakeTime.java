package io.ringshift.worker.internal;

import java.util.PriorityQueue;

/**
 * A fake monotonic clock for one test thread: sleeping advances it, and actions scheduled with {@link #at} run
 * when the clock passes their time (from inside the sleep), so a test can change a limit "while" a task waits.
 */
final class FakeTime implements Ticker, Sleeper {
  private record Scheduled(long at, long order, Runnable action) {}

  private final PriorityQueue<Scheduled> scheduled =
      new PriorityQueue<>((a, b) -> a.at != b.at ? Long.compare(a.at, b.at) : Long.compare(a.order, b.order));
  private long now;
  private long order;

  @Override
  public long nanos() {
    return now;
  }

  @Override
  public void sleepNanos(long nanos) {
    advance(nanos);
  }

  void advance(long nanos) {
    long until = now + nanos;
    while (!scheduled.isEmpty() && scheduled.peek().at <= until) {
      Scheduled next = scheduled.poll();
      now = Math.max(now, next.at);
      next.action.run();
    }
    now = until;
  }

  void at(long nanos, Runnable action) {
    scheduled.add(new Scheduled(nanos, order++, action));
  }
}
