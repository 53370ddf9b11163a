package io.ringshift.storage;

import io.ringshift.ring.RingSnapshot;

/**
 * A storage node's view of the published ring: the last snapshot the node accepted (in the node process, the one
 * its {@code RingClient} verified and swapped in). {@link OwnershipCheckedStore} asks it before every client write.
 *
 * <p>Why one method returning the snapshot, rather than {@code epoch()} plus {@code replicates(key)}: two calls
 * could straddle a swap and combine the epoch of one ring with the placement of another. One immutable snapshot
 * answers both from the same ring, and a caller reads it with one volatile read and allocates nothing.
 *
 * <p>Implementations must be thread safe and cheap (they are called on every write), and must never go back to an
 * older epoch once they returned a newer one.
 */
@FunctionalInterface
public interface RingView {

  /**
   * The ring this node routes by now, or {@code null} before it has accepted any (then nothing is refused by
   * ownership). The returned snapshot is immutable; its {@link RingSnapshot#epoch()} is the published epoch.
   */
  RingSnapshot current();

  /** A view that never has a ring: a store checked against it refuses nothing by ownership. */
  static RingView none() {
    return () -> null;
  }
}
