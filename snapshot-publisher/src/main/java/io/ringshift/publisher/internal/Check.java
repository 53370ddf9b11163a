package io.ringshift.publisher.internal;

/**
 * The checks a READY epoch must pass before it is published, in the order they run. A REJECTED record's reason
 * starts with the name of the check that failed, then a colon (docs/publisher.md lists them). A failure of
 * {@link #TASKS}, {@link #SOURCES}, {@link #ADDITIONS} or the task rule of {@link #FILLING} is not final at first sight
 * ({@link Verdict.NotYet}); the others are.
 */
public enum Check {
  /** The epoch is the last published epoch of its cluster + 1 (any epoch for a cluster's first publication). */
  SEQUENCE,
  /** {@code previousChecksum} is the checksum of the last published epoch (null for a cluster's first). */
  CHAIN,
  /** The membership and parameters rebuild to a ring at all (known hash, policy and member states). */
  REBUILD,
  /** The rebuilt ring's checksum is the record's {@code targetChecksum}. */
  CHECKSUM,
  /** Every range's replicas are distinct nodes, and distinct zones when the ring has at least R zones. */
  PLACEMENT,
  /** Every live COPY/REPAIR task of the epoch is VERIFIED, and there are {@code diffSummary.tasks} of them. */
  TASKS,
  /** Every source a task of the epoch names was a complete replica of the task's range in the previous epoch. */
  SOURCES,
  /**
   * Every replica of the ring is complete (a complete replica in the previous published epoch, or filled by a
   * VERIFIED task of this one) or marked filling.
   */
  ADDITIONS,
  /**
   * Filling marks only on a ring with at least R zones, and then exactly the replicas that are not complete: none on
   * a complete one (from before, or filled by a VERIFIED task) or on a pair that is no replica.
   */
  FILLING
}
