package io.ringshift.worker.internal;

import io.ringshift.worker.Limits;
import java.util.HashMap;
import java.util.Map;

/**
 * The worker's concurrency caps: how many tasks copy or catch up at once in this worker, from one source node
 * and to one target node. A task holds its slot from the start of its copy until it is CAUGHT_UP; waiting for
 * the fence holds none (otherwise tasks waiting for the fence of their epoch, which needs every task caught
 * up, could take every slot and the epoch would never finish). Caps change while tasks run; lowering one lets
 * running tasks finish and admits no new one until the count is under it.
 */
public final class Slots {
  private final Map<String, Integer> bySource = new HashMap<>();
  private final Map<String, Integer> byTarget = new HashMap<>();
  private int running;
  private Limits limits;

  public Slots(Limits limits) {
    this.limits = limits;
  }

  public synchronized void setLimits(Limits next) {
    limits = next;
  }

  /**
   * Takes a slot for a copy from {@code source} to {@code target}.
   *
   * @return null when taken, otherwise why not (the blockedReason of a waiting task)
   */
  synchronized String tryAcquire(String source, String target) {
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
    running++;
    bySource.merge(source, 1, Integer::sum);
    byTarget.merge(target, 1, Integer::sum);
    return null;
  }

  synchronized void release(String source, String target) {
    running--;
    bySource.computeIfPresent(source, (k, v) -> v == 1 ? null : v - 1);
    byTarget.computeIfPresent(target, (k, v) -> v == 1 ? null : v - 1);
  }

  /** Tasks holding a slot now. */
  public synchronized int running() {
    return running;
  }
}
