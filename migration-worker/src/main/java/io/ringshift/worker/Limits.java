package io.ringshift.worker;

/**
 * How much a worker may copy at once: byte rates (token buckets) and concurrency caps. Changeable while the
 * worker runs ({@link MigrationWorker#setLimits}); a change reaches tasks that are already waiting within one
 * second.
 *
 * @param bytesPerSecond the worker's total copy rate over all its tasks, 0 for unlimited
 * @param perSourceBytesPerSecond the rate at which this worker reads from any one source node (shared by every
 *     task copying from that node), 0 for unlimited
 * @param maxTasks tasks of this worker copying or catching up at once, >= 1
 * @param maxTasksPerSource of those, tasks reading from one source node, >= 1
 * @param maxTasksPerTarget of those, tasks writing to one target node, >= 1
 */
public record Limits(long bytesPerSecond, long perSourceBytesPerSecond, int maxTasks, int maxTasksPerSource,
    int maxTasksPerTarget) {

  /** 100 MiB/s per worker, 40 MiB/s per source node, 8 tasks, 2 per source, 2 per target. */
  public static final Limits DEFAULTS = new Limits(100L << 20, 40L << 20, 8, 2, 2);

  /** @throws IllegalArgumentException naming the first value that breaks its rule */
  public Limits {
    if (bytesPerSecond < 0) {
      throw new IllegalArgumentException("bytesPerSecond was " + bytesPerSecond + "; it must be > 0, or 0 for "
          + "unlimited");
    }
    if (perSourceBytesPerSecond < 0) {
      throw new IllegalArgumentException("perSourceBytesPerSecond was " + perSourceBytesPerSecond
          + "; it must be > 0, or 0 for unlimited");
    }
    if (maxTasks < 1) {
      throw new IllegalArgumentException("maxTasks was " + maxTasks + "; a worker must run at least 1 task");
    }
    if (maxTasksPerSource < 1) {
      throw new IllegalArgumentException("maxTasksPerSource was " + maxTasksPerSource + "; it must be >= 1");
    }
    if (maxTasksPerTarget < 1) {
      throw new IllegalArgumentException("maxTasksPerTarget was " + maxTasksPerTarget + "; it must be >= 1");
    }
  }

  /** No rate limit, the default caps. */
  public static Limits unlimited() {
    return DEFAULTS.withRates(0, 0);
  }

  public Limits withRates(long worker, long perSource) {
    return new Limits(worker, perSource, maxTasks, maxTasksPerSource, maxTasksPerTarget);
  }

  public Limits withCaps(int tasks, int perSource, int perTarget) {
    return new Limits(bytesPerSecond, perSourceBytesPerSecond, tasks, perSource, perTarget);
  }
}
