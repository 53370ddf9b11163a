package io.ringshift.cli.internal.simulate;

/**
 * What every scheme shares: the membership it places over, its replication factor and how it describes itself.
 * A client of any of these schemes must at least hold the member list, so that is the default wire size.
 */
abstract class MemberListPlacement implements Placement {
  private final Fleet fleet;
  private final int replicas;
  private final String scheme;
  private final boolean zoneAware;
  private final String clientState;

  MemberListPlacement(Fleet fleet, int replicas, String scheme, boolean zoneAware, String clientState) {
    this.fleet = fleet;
    this.replicas = replicas;
    this.scheme = scheme;
    this.zoneAware = zoneAware;
    this.clientState = clientState;
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

  @Override
  public long clientStateBytes() {
    return Placement.membershipWireBytes(fleet);
  }
}
