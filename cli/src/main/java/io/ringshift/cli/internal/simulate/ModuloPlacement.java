package io.ringshift.cli.internal.simulate;

/**
 * The textbook baseline: primary = {@code hash mod N} over the fleet's positional order, replicas the next
 * {@code R - 1} positions. Any change of N remaps almost every key, which is the point of showing it.
 */
final class ModuloPlacement implements Placement {
  private final Fleet fleet;
  private final int replicas;
  private final int[] numbers;

  ModuloPlacement(Fleet fleet, int replicas) {
    this.fleet = fleet;
    this.replicas = Math.min(replicas, fleet.size());
    this.numbers = fleet.nodes().stream().mapToInt(Fleet.Node::number).toArray();
  }

  @Override
  public String scheme() {
    return "modulo";
  }

  @Override
  public Fleet fleet() {
    return fleet;
  }

  @Override
  public int replicas() {
    return replicas;
  }

  @Override
  public boolean zoneAware() {
    return false;
  }

  @Override
  public String clientState() {
    return "ordered member list";
  }

  @Override
  public long clientStateBytes() {
    return Placement.membershipWireBytes(fleet);
  }

  @Override
  public Placement changeTo(Fleet next) {
    return new ModuloPlacement(next, replicas);
  }

  @Override
  public Lookup lookup() {
    int n = numbers.length;
    int r = replicas;
    int[] nodes = numbers;
    return (keyHash, out) -> {
      int b = (int) Long.remainderUnsigned(keyHash, n);
      for (int j = 0; j < r; j++) {
        out[j] = nodes[b];
        b = b + 1 == n ? 0 : b + 1;
      }
      return r;
    };
  }
}
