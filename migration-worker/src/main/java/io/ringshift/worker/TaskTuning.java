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
 *     applied one batch at a time, in log order), and most bulk-load chunks in flight
 * @param loadBytes the size of a bulk-load chunk: a snapshot copy of a range at least {@link #MIN_LOAD_BYTES} large
 *     streams its batches to the target in loads of this many bytes (also capped at 4 s of the lowest rate limit),
 *     which the target may ingest as table files instead of writing them (docs/worker.md, "Bulk load"); 0: never,
 *     every batch is an apply
 */
public record TaskTuning(int batchBytes, int batchEntries, long checkpointBytes, Duration checkpointInterval,
    long catchUpLag, int catchUpMinChanges, Duration tailInterval, Duration retryInterval, int applyStreams,
    long loadBytes) {

  /**
   * The smallest chunk a copy loads in bulk (4 MiB): a smaller load goes through the target's write path anyway
   * (docs/storage.md), and costs a stream more than the batches it replaces.
   */
  public static final long MIN_LOAD_BYTES = 4L << 20;
  /**
   * The largest chunk (256 MiB): a chunk ends after the batch that fills it, so it may pass its size by a batch,
   * and a node takes at most {@code Store.MAX_LOAD_BYTES} (1 GiB) in one load.
   */
  public static final long MAX_LOAD_BYTES = 256L << 20;

  /**
   * 1 MiB / 1,000-entry batches, 4 applies in flight, 32 MiB load chunks, checkpoints every 4 MiB or 2 s, lag 1,000,
   * K = 100, tail 1 s, retry 5 s.
   */
  public static final TaskTuning DEFAULTS = new TaskTuning(1 << 20, 1000, 4L << 20, Duration.ofSeconds(2), 1000,
      100, Duration.ofSeconds(1), Duration.ofSeconds(5), 4, 32L << 20);

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
    if (loadBytes != 0 && (loadBytes < MIN_LOAD_BYTES || loadBytes > MAX_LOAD_BYTES)) {
      throw new IllegalArgumentException("loadBytes was " + loadBytes + "; it must be 0 (no bulk load) or "
          + MIN_LOAD_BYTES + " to " + MAX_LOAD_BYTES);
    }
  }

  public TaskTuning withBatch(int bytes, int entries) {
    return new TaskTuning(bytes, entries, checkpointBytes, checkpointInterval, catchUpLag, catchUpMinChanges,
        tailInterval, retryInterval, applyStreams, loadBytes);
  }

  public TaskTuning withCheckpoints(long bytes, Duration interval) {
    return new TaskTuning(batchBytes, batchEntries, bytes, interval, catchUpLag, catchUpMinChanges, tailInterval,
        retryInterval, applyStreams, loadBytes);
  }

  public TaskTuning withCatchUp(long lag, int minChanges) {
    return new TaskTuning(batchBytes, batchEntries, checkpointBytes, checkpointInterval, lag, minChanges,
        tailInterval, retryInterval, applyStreams, loadBytes);
  }

  public TaskTuning withIntervals(Duration tail, Duration retry) {
    return new TaskTuning(batchBytes, batchEntries, checkpointBytes, checkpointInterval, catchUpLag,
        catchUpMinChanges, tail, retry, applyStreams, loadBytes);
  }

  /** With at most {@code streams} batches of a snapshot copy applied at once (1: one at a time). */
  public TaskTuning withApplyStreams(int streams) {
    return new TaskTuning(batchBytes, batchEntries, checkpointBytes, checkpointInterval, catchUpLag,
        catchUpMinChanges, tailInterval, retryInterval, streams, loadBytes);
  }

  /** With bulk-load chunks of {@code bytes} (0: no bulk load, every batch of a snapshot copy is an apply). */
  public TaskTuning withLoadBytes(long bytes) {
    return new TaskTuning(batchBytes, batchEntries, checkpointBytes, checkpointInterval, catchUpLag,
        catchUpMinChanges, tailInterval, retryInterval, applyStreams, bytes);
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
