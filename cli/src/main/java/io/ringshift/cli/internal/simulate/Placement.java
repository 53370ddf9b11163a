package io.ringshift.cli.internal.simulate;

import io.ringshift.protocol.RingSnapshotCodec;

/**
 * One placement scheme applied to one membership: which nodes hold a key, in preference order.
 *
 * <p>Every scheme starts from the same 64-bit key hash (XXH3-64 of the key bytes, the ring position) so that
 * the comparison measures placement, not hashing. A placement is immutable; {@link #changeTo(Fleet)} is how the
 * scheme reacts to a membership change, which for some schemes depends on history (jump renumbers buckets,
 * fixed partitions reassign only what they must).
 */
interface Placement {
  /** Short scheme name used in reports: {@code ring}, {@code modulo}, ... */
  String scheme();

  Fleet fleet();

  /** Replicas per key: the requested R, or fewer when the fleet has fewer nodes. */
  int replicas();

  /** True when replicas land in distinct zones whenever enough zones exist. */
  boolean zoneAware();

  /** What a client must hold to route, in words. */
  String clientState();

  /** Bytes of that client state on the wire, measured with the real snapshot codec where one exists. */
  long clientStateBytes();

  /** The placement of the same scheme for another membership. */
  Placement changeTo(Fleet next);

  /** A lookup handle for one thread (some schemes keep per-thread scratch state). */
  Lookup lookup();

  /**
   * Wire size of the fleet's membership (ids, zones, weights, states and the parameters) as the real
   * {@link RingSnapshotCodec} encodes it: what every scheme that routes from a member list must ship.
   */
  static long membershipWireBytes(Fleet fleet) {
    return new RingSnapshotCodec().encode(RingPlacement.build(fleet, 1, 1, 0)).length;
  }

  /** Finds the replicas of a key. Not thread-safe: one per thread. */
  interface Lookup {
    /**
     * Writes the node numbers of the key's replicas, primary first, into {@code out} and returns how many.
     *
     * @param keyHash XXH3-64 of the key bytes
     * @param out at least {@link Placement#replicas()} long
     */
    int replicasOf(long keyHash, int[] out);
  }
}
