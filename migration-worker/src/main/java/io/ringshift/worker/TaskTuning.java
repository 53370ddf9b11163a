package io.ringshift.worker;

import java.time.Duration;
import java.util.Objects;

/**
 * How a worker paces one task: batch sizes, checkpoints, the catch-up threshold and poll intervals
 * (docs/worker.md, "Configuration").
 *
 * @param batchBytes largest batch of entries applied to a target at once (also capped at a tenth of a second of
 *     the lowest rate limit, so throttling stays smooth); an entry larger than this goes alone
 * @param batchEntries most entries in one batch
 * @param checkpointBytes a copying task writes a checkpoint to {@code ring.task-status} at least every this many
 *     bytes ...
 * @param checkpointInterval ... and at least this often
 * @param catchUpLag a catch-up pass that leaves the source's log at most this many sequence numbers ahead of
 *     the applied position reports CAUGHT_UP ...
 * @param catchUpMinChanges ... and so does a pass that applied fewer than this many changes
 * @param tailInterval how often a CAUGHT_UP task reads the change feed while it waits for the fence
 * @param retryInterval how often a BLOCKED task (no source, target down, cleanup gates closed) tries again
 * @param applyStreams most batches of a snapshot copy applied to the target at once (the change feed is always
 *     applied one batch at a time, in log order)
 */
public record TaskTuning(int batchBytes, int batchEntries, long checkpointBytes, Duration checkpointInterval,
    long catchUpLag, int catchUpMinChanges, Duration tailInterval, Duration retryInterval, int applyStreams) {

  /**
   * 1 MiB / 1,000-entry batches, 4 applies in flight, checkpoints every 4 MiB or 2 s, lag 1,000, K = 100, tail 1 s,
   * retry 5 s.
   */
  public static final TaskTuning DEFAULTS = new TaskTuning(1 << 20, 1000, 4L << 20, Duration.ofSeconds(2), 1000,
      100, Duration.ofSeconds(1), Duration.ofSeconds(5), 4);

  /** @throws IllegalArgumentException naming the first value that breaks its rule */
  public TaskTuning {
    positive("batchBytes", batchBytes);
    positive("batchEntries", batchEntries);
    positive("checkpointBytes", checkpointBytes);
    positive("checkpointInterval", checkpointInterval);
    if (catchUpLag < 0) {
      throw new IllegalArgumentException("catchUpLag was " + catchUpLag + "; it must be >= 0");
    }
    if (catchUpMinChanges < 0) {
      throw new IllegalArgumentException("catchUpMinChanges was " + catchUpMinChanges + "; it must be >= 0");
    }
    positive("tailInterval", tailInterval);
    positive("retryInterval", retryInterval);
    positive("applyStreams", applyStreams);
  }

  public TaskTuning withBatch(int bytes, int entries) {
    return new TaskTuning(bytes, entries, checkpointBytes, checkpointInterval, catchUpLag, catchUpMinChanges,
        tailInterval, retryInterval, applyStreams);
  }

  public TaskTuning withCheckpoints(long bytes, Duration interval) {
    return new TaskTuning(batchBytes, batchEntries, bytes, interval, catchUpLag, catchUpMinChanges, tailInterval,
        retryInterval, applyStreams);
  }

  public TaskTuning withCatchUp(long lag, int minChanges) {
    return new TaskTuning(batchBytes, batchEntries, checkpointBytes, checkpointInterval, lag, minChanges,
        tailInterval, retryInterval, applyStreams);
  }

  public TaskTuning withIntervals(Duration tail, Duration retry) {
    return new TaskTuning(batchBytes, batchEntries, checkpointBytes, checkpointInterval, catchUpLag,
        catchUpMinChanges, tail, retry, applyStreams);
  }

  /** With at most {@code streams} batches of a snapshot copy applied at once (1: one at a time). */
  public TaskTuning withApplyStreams(int streams) {
    return new TaskTuning(batchBytes, batchEntries, checkpointBytes, checkpointInterval, catchUpLag,
        catchUpMinChanges, tailInterval, retryInterval, streams);
  }

  private static void positive(String name, long value) {
    if (value < 1) {
      throw new IllegalArgumentException(name + " was " + value + "; it must be >= 1");
    }
  }

  private static void positive(String name, Duration value) {
    Objects.requireNonNull(value, name);
    if (value.isNegative() || value.isZero()) {
      throw new IllegalArgumentException(name + " was " + value + "; it must be > 0");
    }
  }
}
