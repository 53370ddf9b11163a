package io.ringshift.simulator.placement;

import io.ringshift.ring.RingSnapshot;
import java.util.function.ToLongFunction;

/**
 * One placement scheme applied to one membership: which nodes hold a key, in preference order.
 *
 * <p>Every scheme starts from the same 64-bit key hash (XXH3-64 of the key bytes, the ring position) so that
 * the comparison measures placement, not hashing. A placement is immutable; {@link #changeTo(Fleet)} is how the
 * scheme reacts to a membership change, which for some schemes depends on history (jump renumbers buckets,
 * fixed partitions reassign only what they must). Safe to share between threads: only a {@link Lookup} keeps
 * state.
 */
public interface PlacementScheme {
  /** Short scheme name used in reports: {@code ring}, {@code modulo}, ... */
  String scheme();

  /** The membership this placement places over. */
  Fleet fleet();

  /** Replicas per key: the requested R, or fewer when the fleet has fewer nodes. */
  int replicas();

  /** True when replicas land in distinct zones whenever enough zones exist. */
  boolean zoneAware();

  /** What a client must hold to route, in words. */
  String clientState();

  /** Bytes of that client state on the wire, each ring snapshot in it measured with {@code snapshotWireBytes}. */
  long clientStateBytes(ToLongFunction<RingSnapshot> snapshotWireBytes);

  /**
   * The placement of the same scheme for another membership.
   *
   * @throws IllegalArgumentException when the scheme cannot place its replicas on {@code next}
   */
  PlacementScheme changeTo(Fleet next);

  /** A lookup handle for one thread (some schemes keep per-thread scratch state). */
  Lookup lookup();

  /** Finds the replicas of a key. Not thread-safe: one per thread. Allocates nothing per call. */
  interface Lookup {
    /**
     * Writes the node numbers of the key's replicas, primary first, into {@code out} and returns how many.
     *
     * @param keyHash XXH3-64 of the key bytes
     * @param out at least {@link PlacementScheme#replicas()} long
     */
    int replicasOf(long keyHash, int[] out);
  }
}
