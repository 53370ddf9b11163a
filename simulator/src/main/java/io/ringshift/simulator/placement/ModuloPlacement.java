package io.ringshift.simulator.placement;

/**
 * The textbook baseline: primary = {@code hash mod N} over the fleet's positional order, replicas the next
 * {@code R - 1} positions. Any change of N remaps almost every key, which is the point of showing it.
 */
public final class ModuloPlacement extends MemberListPlacement {
  private final int[] numbers;

  /**
   * Modulo over {@code fleet}'s positional order.
   *
   * @param replicas the requested R; fewer when the fleet has fewer nodes
   * @throws IllegalArgumentException when the fleet is empty or {@code replicas} is below 1
   */
  public ModuloPlacement(Fleet fleet, int replicas) {
    super(fleet, Math.min(replicas, fleet.size()), "modulo", false, "ordered member list");
    this.numbers = fleet.nodes().stream().mapToInt(Fleet.Node::number).toArray();
  }

  @Override
  public ModuloPlacement changeTo(Fleet next) {
    return new ModuloPlacement(next, replicas());
  }

  @Override
  public Lookup lookup() {
    int n = numbers.length;
    int r = replicas();
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
