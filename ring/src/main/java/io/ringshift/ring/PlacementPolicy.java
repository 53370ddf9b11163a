package io.ringshift.ring;

/**
 * How a ring chooses its tokens. Both policies place replicas with the same zone-aware walk (docs/placement.md,
 * section 7); they differ in where each member's tokens are.
 *
 * <ul>
 *   <li>{@link #HASHED}, the default: token {@code i} of member {@code n} is {@code hash(n.id + "#" + i)}, so a
 *       token depends only on the member id and {@code i} and any reader derives the token table from the member
 *       list alone.
 *   <li>{@link #BALANCED}: tokens are chosen by the balanced allocator (docs/placement.md, section 12) over the
 *       ring they join, so that every member of a zone holds its weight's share of that zone's replicas; a
 *       member's tokens depend on the history of the ring, so every snapshot and epoch record lists them.
 * </ul>
 */
public enum PlacementPolicy {
  HASHED("vnode-ring/zone-aware-walk/v1"),
  BALANCED("balanced-tokens/zone-aware-walk/v1");

  private final String id;

  PlacementPolicy(String id) {
    this.id = id;
  }

  /** The policy id carried by snapshots and epoch records, and part of the checksum. */
  public String id() {
    return id;
  }

  /**
   * The policy of an id.
   *
   * @throws RingException naming the id and the known ones when it is not one of them
   */
  public static PlacementPolicy ofId(String id) {
    for (PlacementPolicy p : values()) {
      if (p.id.equals(id)) {
        return p;
      }
    }
    throw RingException.of("policy id was \"%s\"; known policy ids are %s and %s", id, HASHED.id, BALANCED.id);
  }

  /**
   * The policy of a short name as the CLI spells it, {@code hashed} or {@code balanced} (case-insensitive), or of
   * a full policy id.
   *
   * @throws RingException naming the value and the accepted ones
   */
  public static PlacementPolicy parse(String name) {
    if (name != null) {
      for (PlacementPolicy p : values()) {
        if (p.name().equalsIgnoreCase(name) || p.id.equals(name)) {
          return p;
        }
      }
    }
    throw RingException.of("placement policy was \"%s\"; it must be hashed or balanced (or the policy ids %s, %s)",
        name, HASHED.id, BALANCED.id);
  }
}
