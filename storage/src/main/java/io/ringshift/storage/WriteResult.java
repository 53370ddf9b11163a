package io.ringshift.storage;

import io.ringshift.ring.RingRange;

/** The outcome of a client write: applied at a sequence number, or refused for an older epoch. */
public sealed interface WriteResult permits WriteResult.Applied, WriteResult.RetryWithEpoch {

  /** The write is durable in the store's log at {@code sequence}. */
  record Applied(long sequence) implements WriteResult {}

  /**
   * The write was tagged with an epoch older than the node will accept for the key: nothing was written. The caller
   * should refresh its ring to {@code epoch} (or later) and write to the replicas that ring names.
   *
   * @param epoch the epoch to retry with: the fence's epoch ({@link Reason#FENCED}), or the epoch of the ring the
   *     node routes by ({@link Reason#NOT_A_REPLICA}); always above the epoch the write was tagged with
   * @param fencedRange the range the answer is about: the fence's range, or the ring range holding the key at
   *     {@code epoch} (its positions are that ring's, {@code (token[r-1], token[r]]})
   * @param reason why the node refused
   */
  record RetryWithEpoch(long epoch, RingRange fencedRange, Reason reason) implements WriteResult {
    public RetryWithEpoch {
      if (fencedRange == null || reason == null) {
        throw new IllegalArgumentException("a retry-with-epoch answer needs a range and a reason; was range "
            + fencedRange + ", reason " + reason);
      }
    }

    /** A refusal by a fence: {@code fencedRange} is fenced for epochs below {@code epoch}. */
    public RetryWithEpoch(long epoch, RingRange fencedRange) {
      this(epoch, fencedRange, Reason.FENCED);
    }
  }

  /** Why a write was refused. */
  enum Reason {
    /** The key's range is fenced for epochs below the answer's epoch: it is moving (a migration's fence). */
    FENCED,
    /**
     * The node is not one of the key's replicas in the ring it routes by, whose epoch is newer than the write's:
     * the range has moved away ({@link OwnershipCheckedStore}).
     */
    NOT_A_REPLICA
  }
}
