package io.ringshift.client;

import io.ringshift.client.internal.AcceptedSnapshot;
import io.ringshift.client.internal.FillingIndex;
import io.ringshift.ring.Member;
import io.ringshift.ring.ReplicaSet;
import io.ringshift.ring.RingSnapshot;
import java.util.Arrays;
import java.util.BitSet;
import java.util.List;
import java.util.Map;

/**
 * What a {@link RingClient} routes by: an accepted snapshot and the {@link Placement} of each of its ring
 * ranges, computed once here so that a lookup is a search and an array read. Immutable; replaced as a whole.
 */
final class RoutingTable {
  final AcceptedSnapshot accepted;
  final RingSnapshot ring;
  /** How many members reads may use (not FILLING): what bounded-load reads average over. */
  final int readEligibleMembers;
  private final Placement[] placements;

  private RoutingTable(AcceptedSnapshot accepted, Placement[] placements) {
    this.accepted = accepted;
    this.ring = accepted.snapshot().ring();
    this.placements = placements;
    this.readEligibleMembers = (int) ring.members().stream().filter(Member::readEligible).count();
  }

  static RoutingTable of(AcceptedSnapshot accepted) {
    RingSnapshot ring = accepted.snapshot().ring();
    Map<String, BitSet> filling = FillingIndex.rangesByNode(ring, accepted.snapshot().filling());
    int ranges = ring.tokenCount();
    Placement[] placements = new Placement[ranges];
    for (int r = 0; r < ranges; r++) {
      ReplicaSet set = ring.replicasOfRange(r);
      Member[] owners = new Member[set.size()];
      Member[] readable = new Member[set.size()];
      int readableCount = 0;
      for (int i = 0; i < owners.length; i++) {
        Member m = set.get(i);
        owners[i] = m;
        BitSet marked = filling.get(m.id());
        if (m.readEligible() && (marked == null || !marked.get(r))) {
          readable[readableCount++] = m;
        }
      }
      List<Member> ownerList = List.of(owners);
      List<Member> readableList = readableCount == owners.length
          ? ownerList
          : List.of(Arrays.copyOf(readable, readableCount));
      placements[r] = new Placement(ring.epoch(), ring.rangeStart(r), ring.rangeEnd(r), ownerList, readableList);
    }
    return new RoutingTable(accepted, placements);
  }

  long epoch() {
    return ring.epoch();
  }

  Placement at(long position) {
    return placements[ring.rangeOf(position)];
  }

  /** Placement of range {@code r}, for tests. */
  Placement ofRange(int r) {
    return placements[r];
  }
}
