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

  /**
   * The ring and, in a transition stage (docs/protocol.md, "Transition stages"), the ring the transition starts from,
   * of one snapshot; {@code null} when the view knows no stages (then {@link #current()} is all there is). A view that
   * follows staged snapshots returns one instance per snapshot, so that a caller allocates nothing.
   */
  default RoutedRings rings() {
    return null;
  }

  /**
   * What a node routes by in a transition stage: the new ring, the ring the transition starts from, and whether reads
   * still go to that previous ring (stage {@code WRITE_BOTH_READ_OLD}).
   *
   * @param ring the snapshot's ring (the new one in a transition)
   * @param previous the ring the transition starts from; null for a FINAL snapshot
   * @param readsPrevious whether reads still go to {@code previous}
   */
  record RoutedRings(RingSnapshot ring, RingSnapshot previous, boolean readsPrevious) {
    public RoutedRings {
      if (ring == null || (readsPrevious && previous == null)) {
        throw new IllegalArgumentException("routed rings need a ring, and a previous one when reads go there; was "
            + ring + ", previous " + previous);
      }
    }
  }

  /** A view that never has a ring: a store checked against it refuses nothing by ownership. */
  static RingView none() {
    return () -> null;
  }
}
