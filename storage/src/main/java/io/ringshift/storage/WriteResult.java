package io.ringshift.storage;

/** The outcome of a client write: applied at a sequence number, or refused by a fence. */
public sealed interface WriteResult permits WriteResult.Applied, WriteResult.RetryWithEpoch {

  /** The write is durable in the store's log at {@code sequence}. */
  record Applied(long sequence) implements WriteResult {}

  /**
   * The key's range is fenced for epochs below {@code epoch}: nothing was written. The caller should refresh
   * its ring to {@code epoch} (or later) and write to the owners that ring names.
   */
  record RetryWithEpoch(long epoch, RingRange fencedRange) implements WriteResult {}
}
