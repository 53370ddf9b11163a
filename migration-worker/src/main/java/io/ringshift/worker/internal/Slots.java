package io.ringshift.worker.internal;

import io.ringshift.worker.Limits;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The worker's concurrency caps: how many tasks copy or catch up at once in this worker, from one source node
 * and to one target node. A task holds its slot from the start of its copy until it is CAUGHT_UP; waiting for
 * the fence holds none (otherwise tasks waiting for the fence of their epoch, which needs every task caught
 * up, could take every slot and the epoch would never finish). Caps change while tasks run; lowering one lets
 * running tasks finish and admits no new one until the count is under it.
 *
 * <p>A task that finds no slot waits in line without a thread: it leaves a waker, and a release wakes the waiters
 * the freed slot may fit, first come first, as many as can be admitted. A waiter keeps its place until it takes a
 * slot, and a task takes a free slot only if it still fits once the waiters ahead of it that fit have taken
 * theirs; a waiter that leaves the line passes its wake on, and new caps wake every waiter.
 */
public final class Slots {
  private record Waiter(String source, String target, Runnable wake) {}

  private final Map<String, Integer> bySource = new HashMap<>();
  private final Map<String, Integer> byTarget = new HashMap<>();
  /** Tasks waiting for a slot, in the order they came. */
  private final Map<Object, Waiter> waiters = new LinkedHashMap<>();
  private int running;
  private Limits limits;

  public Slots(Limits limits) {
    this.limits = limits;
  }

  public void setLimits(Limits next) {
    List<Runnable> wake;
    synchronized (this) {
      limits = next;
      wake = new ArrayList<>();
      waiters.values().forEach(w -> wake.add(w.wake()));
    }
    wake.forEach(Runnable::run);
  }

  /**
   * Takes a slot for a copy from {@code source} to {@code target}.
   *
   * @return null when taken, otherwise why not (the blockedReason of a waiting task)
   */
  synchronized String tryAcquire(String source, String target) {
    String full = full(source, target);
    if (full != null) {
      return full;
    }
    running++;
    bySource.merge(source, 1, Integer::sum);
    byTarget.merge(target, 1, Integer::sum);
    return null;
  }

  /**
   * As {@link #tryAcquire(String, String)}; when no slot is free, {@code waiter} waits for one: {@code wake} runs
   * (once, on the releasing thread) when one it may fit is freed. Taking a slot ends the wait.
   */
  synchronized String tryAcquire(String source, String target, Object waiter, Runnable wake) {
    String full = full(source, target);
    if (full == null && !fitsAfterThoseAhead(waiter, source, target)) {
      full = "waiting for a copy slot: tasks that came first take the free ones";
    }
    if (full != null) {
      // A waiter keeps its place in the line (put on a present key keeps the order).
      waiters.put(waiter, new Waiter(source, target, wake));
      return full;
    }
    waiters.remove(waiter);
    return tryAcquire(source, target);
  }

  /**
   * Whether a copy from {@code source} to {@code target} still fits once the waiters ahead of {@code waiter} in the
   * line that fit have taken their slots, first come first.
   */
  private boolean fitsAfterThoseAhead(Object waiter, String source, String target) {
    Line line = new Line();
    for (Map.Entry<Object, Waiter> e : waiters.entrySet()) {
      if (e.getKey().equals(waiter)) {
        break;
      }
      line.admit(e.getValue());
    }
    return line.admit(source, target);
  }

  /**
   * {@code waiter} no longer waits for a slot (it stopped, or starts over); a slot it was woken for goes to the next
   * waiter it fits.
   */
  void cancelWait(Object waiter) {
    List<Runnable> wake;
    synchronized (this) {
      if (waiters.remove(waiter) == null) {
        return;
      }
      wake = wakeable();
    }
    wake.forEach(Runnable::run);
  }

  /** Tasks waiting for a slot now. */
  public synchronized int waiting() {
    return waiters.size();
  }

  private String full(String source, String target) {
    if (running >= limits.maxTasks()) {
      return "waiting for a copy slot: " + running + " tasks running in this worker (max " + limits.maxTasks()
          + ")";
    }
    int fromSource = bySource.getOrDefault(source, 0);
    if (fromSource >= limits.maxTasksPerSource()) {
      return "waiting for a copy slot: " + fromSource + " tasks copying from source " + source + " (max "
          + limits.maxTasksPerSource() + " per source)";
    }
    int toTarget = byTarget.getOrDefault(target, 0);
    if (toTarget >= limits.maxTasksPerTarget()) {
      return "waiting for a copy slot: " + toTarget + " tasks copying to target " + target + " (max "
          + limits.maxTasksPerTarget() + " per target)";
    }
    return null;
  }

  /**
   * The slots as they would be once the waiters admitted so far took theirs, first come first: what both a release
   * (whom to wake) and a task that finds a free slot (whether those ahead of it take it) work out. Lock held.
   */
  private final class Line {
    int admitted = running;
    final Map<String, Integer> fromSource = new HashMap<>(bySource);
    final Map<String, Integer> toTarget = new HashMap<>(byTarget);

    boolean admit(Waiter w) {
      return admit(w.source(), w.target());
    }

    /** Counts a copy from {@code source} to {@code target} as admitted when it fits; says whether it did. */
    boolean admit(String source, String target) {
      if (admitted >= limits.maxTasks() || fromSource.getOrDefault(source, 0) >= limits.maxTasksPerSource()
          || toTarget.getOrDefault(target, 0) >= limits.maxTasksPerTarget()) {
        return false;
      }
      admitted++;
      fromSource.merge(source, 1, Integer::sum);
      toTarget.merge(target, 1, Integer::sum);
      return true;
    }
  }

  /**
   * The wakers of the waiters the free slots fit, first come first, as many as can be admitted (counting the woken as
   * if they had taken their slots); called with the lock held.
   */
  private List<Runnable> wakeable() {
    List<Runnable> wake = new ArrayList<>();
    Line line = new Line();
    for (Waiter w : waiters.values()) {
      if (line.admitted >= limits.maxTasks()) {
        break;
      }
      if (line.admit(w)) {
        // Woken, it stays in line until it takes its slot, so a newcomer cannot take it first.
        wake.add(w.wake());
      }
    }
    return wake;
  }

  /** Frees a slot and wakes the waiters the free slots may now fit, first come first. */
  void release(String source, String target) {
    List<Runnable> wake = new ArrayList<>();
    synchronized (this) {
      running--;
      bySource.computeIfPresent(source, (k, v) -> v == 1 ? null : v - 1);
      byTarget.computeIfPresent(target, (k, v) -> v == 1 ? null : v - 1);
      wake.addAll(wakeable());
    }
    wake.forEach(Runnable::run);
  }

  /** Tasks holding a slot now. */
  public synchronized int running() {
    return running;
  }
}
