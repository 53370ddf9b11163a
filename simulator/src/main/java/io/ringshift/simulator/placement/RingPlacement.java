package io.ringshift.simulator.placement;

import io.ringshift.ring.Member;
import io.ringshift.ring.PlacementPolicy;
import io.ringshift.ring.ReplicaSet;
import io.ringshift.ring.RingBuilder;
import io.ringshift.ring.RingSnapshot;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.ToLongFunction;

/**
 * ringshift's own placement: a {@link RingSnapshot} (V tokens per unit of weight, zone-aware clockwise walk,
 * replica sets precomputed per range). A lookup is the snapshot's own one search.
 */
public final class RingPlacement extends MemberListPlacement {
  /** Cluster id of every snapshot the simulator builds. */
  public static final String CLUSTER = "simulate";

  private final RingSnapshot snapshot;
  /** Node number of each snapshot member (members are sorted by id in the snapshot). */
  private final int[] memberNumber;

  private RingPlacement(Fleet fleet, RingSnapshot snapshot) {
    super(fleet, Math.min(snapshot.replicas(), fleet.size()), schemeName(snapshot), true,
        snapshot.policy() == PlacementPolicy.HASHED ? "members + V" : "members + their tokens");
    this.snapshot = snapshot;
    Map<String, Integer> numbers = new HashMap<>();
    for (Fleet.Node n : fleet.nodes()) {
      numbers.put(n.id(), n.number());
    }
    List<String> ids = snapshot.memberIds();
    this.memberNumber = new int[ids.size()];
    for (int i = 0; i < memberNumber.length; i++) {
      memberNumber[i] = numbers.get(ids.get(i));
    }
  }

  /**
   * The ring of {@code fleet} at {@code vnodes} tokens per unit of weight.
   *
   * @throws io.ringshift.ring.RingException when the ring library rejects the parameters
   */
  public static RingPlacement of(Fleet fleet, int vnodes, int replicas, long epoch) {
    return new RingPlacement(fleet, build(fleet, vnodes, replicas, epoch));
  }

  /**
   * The ring of {@code fleet} under the balanced policy (docs/placement.md, section 12) at {@code vnodes} tokens per
   * unit of weight; its {@link #changeTo} keeps every remaining member's tokens, as the orchestrator does.
   */
  public static RingPlacement balanced(Fleet fleet, int vnodes, int replicas, long epoch) {
    RingBuilder builder = RingSnapshot.builder().clusterId(CLUSTER).epoch(epoch).policy(PlacementPolicy.BALANCED)
        .vnodes(vnodes).replicas(replicas);
    return new RingPlacement(fleet, withMembers(builder, fleet).build());
  }

  private static String schemeName(RingSnapshot snapshot) {
    return snapshot.policy() == PlacementPolicy.HASHED ? "ring" : "balanced/" + snapshot.vnodes();
  }

  private static RingBuilder withMembers(RingBuilder builder, Fleet fleet) {
    List<Member> members = new ArrayList<>();
    for (Fleet.Node n : fleet.nodes()) {
      members.add(Member.of(n.id(), n.zoneName(), n.weight()));
    }
    return builder.members(members);
  }

  /** Builds the snapshot of a fleet; also what the V sweep times. */
  public static RingSnapshot build(Fleet fleet, int vnodes, int replicas, long epoch) {
    return withMembers(RingSnapshot.builder().clusterId(CLUSTER).epoch(epoch).vnodes(vnodes).replicas(replicas),
        fleet).build();
  }

  /** The ring itself. */
  public RingSnapshot snapshot() {
    return snapshot;
  }

  @Override
  public long clientStateBytes(ToLongFunction<RingSnapshot> snapshotWireBytes) {
    return snapshotWireBytes.applyAsLong(snapshot);
  }

  @Override
  public RingPlacement changeTo(Fleet next) {
    if (snapshot.policy() == PlacementPolicy.BALANCED) {
      return new RingPlacement(next, withMembers(snapshot.toBuilder().epoch(snapshot.epoch() + 1), next).build());
    }
    return new RingPlacement(next, build(next, snapshot.vnodes(), snapshot.replicas(), snapshot.epoch() + 1));
  }

  @Override
  public Lookup lookup() {
    RingSnapshot s = snapshot;
    int[] numbers = memberNumber;
    return (keyHash, out) -> {
      ReplicaSet set = s.replicasAt(keyHash);
      int size = set.size();
      for (int j = 0; j < size; j++) {
        out[j] = numbers[set.memberIndex(j)];
      }
      return size;
    };
  }
}
