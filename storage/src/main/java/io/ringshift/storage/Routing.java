package io.ringshift.storage;

import io.ringshift.ring.RingSnapshot;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * Where a {@link RoutedWriter} sends a key: the client's current ring, as its ring client holds it. In a client
 * process it is a thin adapter over {@code RingClient}: {@link #route} looks the key up in the current snapshot
 * ({@link Route#of(RingSnapshot, byte[])}), {@link #awaitEpoch} waits until the client has swapped in a snapshot of
 * at least that epoch.
 *
 * <p>Implementations must be thread safe, and must never route by an older epoch once they routed by a newer one.
 */
public interface Routing {

  /**
   * The key's route in the current ring.
   *
   * @throws StoreException when there is no ring yet (retriable: {@link StoreException.Unavailable})
   */
  Route route(byte[] key);

  /**
   * Waits until {@link #route} answers from a ring of epoch {@code epoch} or later, at most {@code timeout}.
   *
   * @return whether it does now; {@code false} after the timeout, or when the waiting thread was interrupted (its
   *     interrupt flag then stays set)
   */
  boolean awaitEpoch(long epoch, Duration timeout);

  /**
   * A key's replicas in one ring.
   *
   * @param epoch the ring's epoch: the epoch every write of the route is tagged with
   * @param replicas the node ids of the key's replicas in preference order (the primary first), every one of them,
   *     filling ones included (they take writes, not reads); distinct, at least one. In a transition stage that
   *     writes both rings, the replicas of both (docs/protocol.md, "Transition stages"); a write waits for every one
   */
  record Route(long epoch, List<String> replicas) {
    public Route {
      if (epoch < 0) {
        throw new IllegalArgumentException("route epoch " + epoch + " is negative; an epoch must be >= 0");
      }
      if (replicas == null || replicas.isEmpty()) {
        throw new IllegalArgumentException("a route at epoch " + epoch + " names no replica; it needs at least one");
      }
      Set<String> seen = new HashSet<>();
      for (String id : replicas) {
        if (id == null || id.isBlank()) {
          throw new IllegalArgumentException("route at epoch " + epoch + " names a blank node id " + replicas
              + "; every replica must be a node id");
        }
        if (!seen.add(id)) {
          throw new IllegalArgumentException("route at epoch " + epoch + " names node '" + id + "' twice "
              + replicas + "; replicas must be distinct nodes");
        }
      }
      replicas = List.copyOf(replicas);
    }

    /** The route of {@code key} in {@code ring}: its epoch and the key's replica set, in preference order. */
    public static Route of(RingSnapshot ring, byte[] key) {
      return new Route(ring.epoch(), ring.replicasOf(key).ids());
    }
  }
}
