package io.ringshift.client;

import io.ringshift.client.internal.AcceptedSnapshot;
import io.ringshift.client.internal.FillingIndex;
import io.ringshift.ring.Member;
import io.ringshift.ring.ReplicaSet;
import io.ringshift.protocol.PublishedSnapshot;
import io.ringshift.protocol.TransitionStage;
import io.ringshift.ring.RingSnapshot;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.BitSet;
import java.util.List;
import java.util.Map;

/**
 * What a {@link RingClient} routes by: an accepted snapshot and the {@link Placement} of each of its ring
 * ranges, computed once here so that a lookup is a search and an array read. Immutable; replaced as a whole.
 *
 * <p>A snapshot in a transition stage is routed by the pieces between the tokens of both rings, where both replica
 * sets are constant ({@link Placement}); {@code ends} then holds the pieces' inclusive ends, unsigned ascending.
 */
final class RoutingTable {
  final AcceptedSnapshot accepted;
  final RingSnapshot ring;
  /** How many members reads may use (not FILLING): what bounded-load reads average over. */
  final int readEligibleMembers;
  private final Placement[] placements;
  /** In a transition stage, the pieces' inclusive ends; null for a FINAL snapshot (its ranges are the ring's). */
  private final long[] ends;

  private RoutingTable(AcceptedSnapshot accepted, Placement[] placements, long[] ends) {
    this.accepted = accepted;
    this.ring = accepted.snapshot().ring();
    this.placements = placements;
    this.ends = ends;
    RingSnapshot readRing = accepted.snapshot().stage().readsNew() ? ring : accepted.snapshot().previous();
    this.readEligibleMembers = (int) readRing.members().stream().filter(Member::readEligible).count();
  }

  static RoutingTable of(AcceptedSnapshot accepted) {
    if (accepted.snapshot().stage() != TransitionStage.FINAL) {
      return staged(accepted);
    }
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
    return new RoutingTable(accepted, placements, null);
  }

  /**
   * The placements of a transition stage: one per piece between the tokens of the previous and the new ring (a
   * snapshot in a stage has no filling marks; the previous ring's members' states say who is read-eligible in it).
   */
  private static RoutingTable staged(AcceptedSnapshot accepted) {
    PublishedSnapshot snapshot = accepted.snapshot();
    RingSnapshot next = snapshot.ring();
    RingSnapshot previous = snapshot.previous();
    boolean readsNew = snapshot.stage().readsNew();
    long[] ends = mergedEnds(previous, next);
    Placement[] placements = new Placement[ends.length];
    for (int i = 0; i < ends.length; i++) {
      long end = ends[i];
      long start = ends[i == 0 ? ends.length - 1 : i - 1];
      ReplicaSet now = next.replicasAt(end);
      ReplicaSet before = previous.replicasAt(end);
      List<Member> owners = new ArrayList<>(now.size() + before.size());
      for (int j = 0; j < now.size(); j++) {
        owners.add(now.get(j));
      }
      for (int j = 0; j < before.size(); j++) {
        if (!now.contains(before.get(j).id())) {
          owners.add(before.get(j));
        }
      }
      ReplicaSet reads = readsNew ? now : before;
      List<Member> readable = new ArrayList<>(reads.size());
      for (int j = 0; j < reads.size(); j++) {
        if (reads.get(j).readEligible()) {
          readable.add(reads.get(j));
        }
      }
      boolean moving = owners.size() > now.size() || now.size() != before.size()
          || owners.stream().anyMatch(m -> !before.contains(m.id()));
      placements[i] = new Placement(next.epoch(), start, end, List.copyOf(owners), List.copyOf(readable), moving);
    }
    return new RoutingTable(accepted, placements, ends);
  }

  /** The range ends of both rings, distinct, unsigned ascending. */
  private static long[] mergedEnds(RingSnapshot a, RingSnapshot b) {
    long[] all = new long[a.tokenCount() + b.tokenCount()];
    for (int r = 0; r < a.tokenCount(); r++) {
      all[r] = a.rangeEnd(r) ^ Long.MIN_VALUE; // signed order of the flipped values is the unsigned order
    }
    for (int r = 0; r < b.tokenCount(); r++) {
      all[a.tokenCount() + r] = b.rangeEnd(r) ^ Long.MIN_VALUE;
    }
    Arrays.sort(all);
    int n = 0;
    for (int i = 0; i < all.length; i++) {
      if (n == 0 || all[i] != all[n - 1]) {
        all[n++] = all[i];
      }
    }
    long[] out = new long[n];
    for (int i = 0; i < n; i++) {
      out[i] = all[i] ^ Long.MIN_VALUE;
    }
    return out;
  }

  long epoch() {
    return ring.epoch();
  }

  /** The stage of the snapshot routed by. */
  TransitionStage stage() {
    return accepted.snapshot().stage();
  }

  Placement at(long position) {
    if (ends == null) {
      return placements[ring.rangeOf(position)];
    }
    // The first piece whose end is at or after the position; past the last end, the first piece (it wraps).
    int lo = 0;
    int hi = ends.length;
    while (lo < hi) {
      int mid = (lo + hi) >>> 1;
      if (Long.compareUnsigned(ends[mid], position) < 0) {
        lo = mid + 1;
      } else {
        hi = mid;
      }
    }
    return placements[lo == ends.length ? 0 : lo];
  }

  /** Placement of range {@code r}, for tests. */
  Placement ofRange(int r) {
    return placements[r];
  }
}
