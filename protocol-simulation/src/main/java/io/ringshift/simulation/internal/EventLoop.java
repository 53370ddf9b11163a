package io.ringshift.simulation.internal;

import java.util.PriorityQueue;

/**
 * The virtual clock and the events due on it, run one at a time in (time, order of scheduling): the whole simulated
 * world runs on the thread that calls {@link #step}. Time is in milliseconds since the scenario began.
 */
public final class EventLoop {
  private record Event(long at, long order, String what, Runnable action) implements Comparable<Event> {
    @Override
    public int compareTo(Event o) {
      int c = Long.compare(at, o.at);
      return c != 0 ? c : Long.compare(order, o.order);
    }
  }

  private final PriorityQueue<Event> queue = new PriorityQueue<>();
  private final Trace trace;
  private long now;
  private long order;
  private long steps;

  public EventLoop(Trace trace) {
    this.trace = trace;
  }

  /** The virtual time, in milliseconds. */
  public long now() {
    return now;
  }

  /** Events run so far. */
  public long steps() {
    return steps;
  }

  /** Runs {@code action} at virtual time {@code at} (now, if that is in the past). */
  public void at(long at, String what, Runnable action) {
    queue.add(new Event(Math.max(at, now), order++, what, action));
  }

  /** Runs {@code action} {@code delay} milliseconds from now. */
  public void after(long delay, String what, Runnable action) {
    at(now + Math.max(0, delay), what, action);
  }

  /** Whether any event is left. */
  public boolean pending() {
    return !queue.isEmpty();
  }

  /** The time of the next event, or {@link Long#MAX_VALUE}. */
  public long nextAt() {
    return queue.isEmpty() ? Long.MAX_VALUE : queue.peek().at();
  }

  /** Runs the next event; false when none is left or it is due after {@code until}. */
  public boolean step(long until) {
    Event e = queue.peek();
    if (e == null || e.at() > until) {
      return false;
    }
    queue.poll();
    now = e.at();
    steps++;
    trace.event(now, e.what());
    e.action().run();
    return true;
  }
}
