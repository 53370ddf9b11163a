package io.ringshift.simulator.placement;

import io.ringshift.ring.RingSnapshot;
import java.util.function.ToLongFunction;

/**
 * What every scheme shares: the membership it places over, its replication factor and how it describes itself.
 * A client of any of these schemes must at least hold the member list, so that is the default wire size.
 */
abstract class MemberListPlacement implements PlacementScheme {
  private final Fleet fleet;
  private final int replicas;
  private final String scheme;
  private final boolean zoneAware;
  private final String clientState;

  /** @throws IllegalArgumentException when the fleet is empty or {@code replicas} is below 1 */
  MemberListPlacement(Fleet fleet, int replicas, String scheme, boolean zoneAware, String clientState) {
    requirePlaceable(fleet, replicas);
    this.fleet = fleet;
    this.replicas = replicas;
    this.scheme = scheme;
    this.zoneAware = zoneAware;
    this.clientState = clientState;
  }

  static void requirePlaceable(Fleet fleet, int replicas) {
    if (fleet.size() == 0) {
      throw new IllegalArgumentException("the fleet is empty; a placement needs at least one node");
    }
    if (replicas < 1) {
      throw new IllegalArgumentException("replicas was " + replicas + "; a placement needs at least 1");
    }
  }

  @Override
  public final String scheme() {
    return scheme;
  }

  @Override
  public final Fleet fleet() {
    return fleet;
  }

  @Override
  public final int replicas() {
    return replicas;
  }

  @Override
  public final boolean zoneAware() {
    return zoneAware;
  }

  @Override
  public final String clientState() {
    return clientState;
  }

  /**
   * The fleet's membership (ids, zones, weights, states and the parameters) as a snapshot: what every scheme
   * that routes from a member list must ship.
   */
  @Override
  public long clientStateBytes(ToLongFunction<RingSnapshot> snapshotWireBytes) {
    return snapshotWireBytes.applyAsLong(RingPlacement.build(fleet, 1, 1, 0));
  }
}
