package io.ringshift.ring;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.function.Supplier;

/**
 * Every invariant of a snapshot, of a diff and of a membership change, checked in one place so that unit
 * tests, properties and random scenarios hold the ring to the same standard. Plain loops and {@link #check}
 * instead of AssertJ chains, because the probes run hundreds of thousands of times per test run.
 */
final class RingInvariants {
  private static final double EXACT = 1e-9;

  private RingInvariants() {}

  static void check(boolean condition, Supplier<String> message) {
    if (!condition) {
      throw new AssertionError(message.get());
    }
  }

  // ---- one snapshot ----

  /** Checks the snapshot against the reference model and against each documented invariant. */
  static ReferencePlacement checkSnapshot(RingSnapshot s, Random rnd) {
    ReferencePlacement ref = ReferencePlacement.of(s);
    List<Member> members = s.members();
    int nodes = members.size();
    int zones = s.zones().size();
    int r = s.replicas();

    check(members.equals(ref.members), () -> "members not in UTF-8 id order: " + s.memberIds());
    check(s.zones().equals(ref.zones), () -> "zones " + s.zones() + " expected " + ref.zones);
    for (int i = 0; i < nodes; i++) {
      Member m = members.get(i);
      long expected = ReferencePlacement.tokenCount(m.weight(), s.vnodes());
      int actual = s.tokenCount(i);
      check(actual == expected, () -> m.id() + " has " + actual + " tokens, expected round(w * V) = " + expected);
    }

    int n = s.tokenCount();
    check(n == ref.tokens.size(), () -> "token count " + n + " expected " + ref.tokens.size());
    for (int t = 0; t < n; t++) {
      ReferencePlacement.Token expected = ref.tokens.get(t);
      int index = t;
      check(s.token(t) == expected.value()
              && members.get(s.tokenOwner(t)).id().equals(expected.nodeId())
              && s.tokenIndexWithinMember(t) == expected.index(),
          () -> "token " + index + " is " + Long.toHexString(s.token(index)) + "/"
              + members.get(s.tokenOwner(index)).id() + "#" + s.tokenIndexWithinMember(index) + ", expected "
              + Long.toHexString(expected.value()) + "/" + expected.nodeId() + "#" + expected.index());
    }

    int target = Math.min(r, nodes);
    UnderReplication.Reason expectedShortfall = nodes < r
        ? UnderReplication.Reason.FEWER_NODES_THAN_REPLICAS
        : zones < r ? UnderReplication.Reason.FEWER_ZONES_THAN_REPLICAS : null;
    for (int range = 0; range < n; range++) {
      ReplicaSet set = s.replicasOfRange(range);
      List<String> ids = set.ids();
      int rg = range;
      check(ids.equals(ref.replicasOfRange(range)),
          () -> "range " + rg + " replicas " + ids + ", reference walk gives " + ref.replicasOfRange(rg));
      check(set.size() == target, () -> "range " + rg + " has " + ids.size() + " replicas, expected min(R, nodes) = "
          + target + ": " + ids);
      check(new HashSet<>(ids).size() == ids.size(), () -> "range " + rg + " names a node twice: " + ids);
      check(set.primary().id().equals(members.get(s.tokenOwner(range)).id()),
          () -> "range " + rg + " primary " + set.primary().id() + " is not the owner of its token");
      Set<String> setZones = new TreeSet<>();
      for (int k = 0; k < set.size(); k++) {
        setZones.add(set.get(k).zone());
        int kk = k;
        check(members.get(set.memberIndex(k)).equals(set.get(k)),
            () -> "range " + rg + " replica " + kk + " has a wrong member index");
      }
      if (zones >= r) {
        check(setZones.size() == ids.size(), () -> "range " + rg + " repeats a zone although " + zones
            + " zones >= R = " + r + ": " + set.members());
      } else {
        check(setZones.size() == Math.min(zones, ids.size()),
            () -> "range " + rg + " leaves a zone unused: " + set.members());
      }
      check(set.shortfall() == expectedShortfall,
          () -> "range " + rg + " shortfall " + set.shortfall() + " expected " + expectedShortfall);
      int readable = 0;
      for (int k = 0; k < set.size(); k++) {
        if (set.get(k).readEligible()) {
          check(set.readable(readable).equals(set.get(k)), () -> "range " + rg + " readable replicas out of order");
          readable++;
        }
      }
      int readableCount = readable;
      check(set.readableSize() == readableCount, () -> "range " + rg + " readable size " + set.readableSize()
          + " expected " + readableCount);
    }

    List<UnderReplication> under = s.underReplication();
    if (expectedShortfall == null) {
      check(under.isEmpty(), () -> "fully replicated ring reports " + under);
    } else {
      check(under.size() == 1 && under.get(0).reason() == expectedShortfall && under.get(0).ranges() == n
              && under.get(0).keyspaceFraction() == 1.0,
          () -> "under-replication " + under + " expected " + expectedShortfall + " over all " + n + " ranges");
      String detail = under.get(0).detail();
      String expectedDetail = expectedShortfall == UnderReplication.Reason.FEWER_NODES_THAN_REPLICAS
          ? r + " replicas requested but only " + nodes + (nodes == 1 ? " node" : " nodes")
          : r + " replicas requested but only " + zones + " zones " + s.zones();
      check(detail.equals(expectedDetail), () -> "detail \"" + detail + "\" expected \"" + expectedDetail + "\"");
    }

    for (long p : TestRings.probePositions(s, s, rnd, 200)) {
      int range = s.rangeOf(p);
      check(range == ref.rangeOf(p), () -> "rangeOf(" + Long.toUnsignedString(p) + ") = " + range
          + ", expected " + ref.rangeOf(p));
      check(RingRange.of(s.rangeStart(range), s.rangeEnd(range)).contains(p),
          () -> "position " + Long.toUnsignedString(p) + " is not inside its range " + range);
      check(s.replicasAt(p) == s.replicasOfRange(range), () -> "replicasAt disagrees with rangeOf");
    }

    String expectedChecksum = ref.checksumHex(s.clusterId(), s.epoch(), s.policyId());
    check(s.checksumHex().equals(expectedChecksum),
        () -> "checksum " + s.checksumHex() + " differs from the documented encoding " + expectedChecksum);
    RingSnapshot rebuilt = s.toBuilder().members(TestRings.shuffled(members, rnd)).build();
    check(rebuilt.checksumHex().equals(s.checksumHex()), () -> "rebuilding in another member order changed the "
        + "checksum");
    return ref;
  }

  // ---- a diff ----

  /**
   * Checks the diff exactly, over every elementary interval of the two token tables, and then against
   * sampled positions with a statistical tolerance (the way an operator would audit it).
   */
  static void checkDiff(RingSnapshot from, RingSnapshot to, RingDiff diff, Random rnd) {
    check(diff.fromEpoch() == from.epoch() && diff.toEpoch() == to.epoch(), () -> "diff epochs wrong: " + diff);
    List<RangeChange> changes = diff.changes();
    checkShape(changes);

    // Exact: every interval between consecutive union tokens is represented by its end.
    TreeSet<Long> boundaries = new TreeSet<>(Long::compareUnsigned);
    for (RingSnapshot s : List.of(from, to)) {
      for (int i = 0; i < s.tokenCount(); i++) {
        boundaries.add(s.token(i));
      }
    }
    Map<String, double[]> exact = new TreeMap<>();
    double[] totals = new double[2];
    Long previous = boundaries.last();
    for (long b : boundaries) {
      double width = boundaries.size() == 1 ? 1.0 : RingRange.of(previous, b).fraction();
      previous = b;
      List<String> before = from.replicasAt(b).ids();
      List<String> after = to.replicasAt(b).ids();
      RangeChange containing = find(changes, b);
      if (before.equals(after)) {
        check(containing == null, () -> "unchanged position " + Long.toUnsignedString(b) + " lies in reported "
            + containing);
        continue;
      }
      check(containing != null, () -> "position " + Long.toUnsignedString(b) + " changed " + before + " -> "
          + after + " but no reported range contains it");
      check(containing.before().equals(before) && containing.after().equals(after),
          () -> "range " + containing + " disagrees with the lookups " + before + " -> " + after);
      totals[0] += width;
      totals[1] += width * added(before, after).size();
      accumulate(exact, before, after, width);
    }
    checkFraction("changedFraction", diff.changedFraction(), Math.min(1.0, totals[0]), EXACT);
    checkFraction("sum of range fractions", changes.stream().mapToDouble(RangeChange::fraction).sum(), totals[0],
        EXACT);
    checkFraction("movedReplicaFraction", diff.movedReplicaFraction(),
        totals[1] / Math.min(to.replicas(), to.memberCount()), EXACT);
    double primaryMoved = exact.values().stream().mapToDouble(v -> v[2]).sum();
    checkFraction("primaryMovedFraction", diff.primaryMovedFraction(), Math.min(1.0, primaryMoved), EXACT);
    checkFraction("idealMovedFraction", diff.idealMovedFraction(), idealMoved(from, to), EXACT);
    Set<String> nodes = new TreeSet<>(exact.keySet());
    nodes.addAll(diff.perNode().keySet());
    for (String node : nodes) {
      double[] expected = exact.getOrDefault(node, new double[4]);
      NodeMovement actual = diff.perNode().get(node);
      check(actual != null, () -> "node " + node + " moves " + Arrays.toString(expected) + " but is not in perNode");
      checkFraction(node + ".gained", actual.gained(), expected[0], EXACT);
      checkFraction(node + ".lost", actual.lost(), expected[1], EXACT);
      checkFraction(node + ".primaryGained", actual.primaryGained(), expected[2], EXACT);
      checkFraction(node + ".primaryLost", actual.primaryLost(), expected[3], EXACT);
    }

    // Sampled: random positions, as a client or an auditor would see the change.
    int samples = 3000;
    Map<String, double[]> sampled = new HashMap<>();
    int changed = 0;
    for (int i = 0; i < samples; i++) {
      long p = rnd.nextLong();
      List<String> before = from.replicasAt(p).ids();
      List<String> after = to.replicasAt(p).ids();
      RangeChange containing = find(changes, p);
      check(before.equals(after) == (containing == null),
          () -> "sampled position " + Long.toUnsignedString(p) + ": " + before + " -> " + after + ", reported "
              + containing);
      if (containing != null) {
        changed++;
        check(containing.before().equals(before) && containing.after().equals(after),
            () -> "sampled position " + Long.toUnsignedString(p) + " in " + containing + " but lookups give "
                + before + " -> " + after);
        accumulate(sampled, before, after, 1.0 / samples);
      }
    }
    checkSampled("changedFraction", diff.changedFraction(), changed / (double) samples, samples);
    for (NodeMovement m : diff.perNode().values()) {
      double[] s = sampled.getOrDefault(m.nodeId(), new double[4]);
      checkSampled(m.nodeId() + ".gained", m.gained(), s[0], samples);
      checkSampled(m.nodeId() + ".lost", m.lost(), s[1], samples);
      checkSampled(m.nodeId() + ".primaryGained", m.primaryGained(), s[2], samples);
      checkSampled(m.nodeId() + ".primaryLost", m.primaryLost(), s[3], samples);
    }
  }

  /**
   * Ranges are non-empty and disjoint, in ring order with only the first allowed to wrap past the top, and no
   * two neighbours (the last and the first included) could have been coalesced.
   */
  private static void checkShape(List<RangeChange> changes) {
    for (int k = 0; k < changes.size(); k++) {
      RangeChange c = changes.get(k);
      check(c.fraction() > 0, () -> "empty range " + c);
      if (k == 0) {
        continue;
      }
      RangeChange prev = changes.get(k - 1);
      check(Long.compareUnsigned(c.start(), c.end()) < 0,
          () -> "only the first range may wrap past the top of the ring: " + changes);
      check(Long.compareUnsigned(prev.end(), c.start()) <= 0, () -> "ranges overlap or are out of ring order: "
          + prev + ", " + c);
      check(!(prev.end() == c.start() && prev.before().equals(c.before()) && prev.after().equals(c.after())),
          () -> "adjacent ranges with the same change were not coalesced: " + prev + ", " + c);
    }
    if (changes.size() > 1) {
      RangeChange first = changes.get(0);
      RangeChange last = changes.get(changes.size() - 1);
      if (Long.compareUnsigned(first.start(), first.end()) >= 0) {
        check(Long.compareUnsigned(last.end(), first.start()) <= 0,
            () -> "the wrapping range overlaps the last one: " + first + ", " + last);
      }
      check(!(last.end() == first.start() && last.before().equals(first.before())
              && last.after().equals(first.after())),
          () -> "ranges meeting at the top of the ring were not coalesced: " + last + ", " + first);
    }
    double total = changes.stream().mapToDouble(RangeChange::fraction).sum();
    check(total <= 1.0 + EXACT, () -> "ranges cover more than the ring: " + total);
  }

  /**
   * The reported change containing a position, or null. The changes were checked disjoint and in ring order
   * of their ends (only the first may wrap), so the candidate is the first change ending at or after the
   * position, or else the wrapping one.
   */
  private static RangeChange find(List<RangeChange> changes, long position) {
    int lo = 0;
    int hi = changes.size();
    while (lo < hi) {
      int mid = (lo + hi) >>> 1;
      if (Long.compareUnsigned(changes.get(mid).end(), position) < 0) {
        lo = mid + 1;
      } else {
        hi = mid;
      }
    }
    if (lo < changes.size() && changes.get(lo).contains(position)) {
      return changes.get(lo);
    }
    return !changes.isEmpty() && changes.get(0).contains(position) ? changes.get(0) : null;
  }

  private static List<String> added(List<String> before, List<String> after) {
    List<String> added = new ArrayList<>(after);
    added.removeAll(before);
    return added;
  }

  private static void accumulate(Map<String, double[]> into, List<String> before, List<String> after, double w) {
    for (String id : added(before, after)) {
      into.computeIfAbsent(id, x -> new double[4])[0] += w;
    }
    for (String id : added(after, before)) {
      into.computeIfAbsent(id, x -> new double[4])[1] += w;
    }
    if (!before.get(0).equals(after.get(0))) {
      into.computeIfAbsent(after.get(0), x -> new double[4])[2] += w;
      into.computeIfAbsent(before.get(0), x -> new double[4])[3] += w;
    }
  }

  static double idealMoved(RingSnapshot from, RingSnapshot to) {
    Map<String, double[]> share = new HashMap<>();
    double fromTotal = from.members().stream().mapToDouble(Member::weight).sum();
    double toTotal = to.members().stream().mapToDouble(Member::weight).sum();
    from.members().forEach(m -> share.computeIfAbsent(m.id(), x -> new double[2])[0] = m.weight() / fromTotal);
    to.members().forEach(m -> share.computeIfAbsent(m.id(), x -> new double[2])[1] = m.weight() / toTotal);
    return share.values().stream().mapToDouble(v -> Math.max(0, v[1] - v[0])).sum();
  }

  private static void checkFraction(String what, double actual, double expected, double tolerance) {
    check(Math.abs(actual - expected) <= tolerance, () -> what + " = " + actual + ", expected " + expected);
  }

  /** Five standard deviations of a sampled proportion: a false alarm about once in 3.5 million checks. */
  private static void checkSampled(String what, double exact, double sampled, int samples) {
    double p = Math.max(exact, 1.0 / samples);
    // Five standard deviations, plus eight samples' worth: for a small p the count is Poisson, whose upper tail
    // is far heavier than the normal one (seed 7160526368236647477 saw 16 hits where 4.6 were expected).
    double tolerance = 5 * Math.sqrt(p * (1 - Math.min(p, 0.999)) / samples) + 8.0 / samples;
    check(Math.abs(exact - sampled) <= tolerance,
        () -> what + " = " + exact + " but sampling " + samples + " positions gives " + sampled);
  }

  // ---- membership changes ----

  /**
   * True when the zone rule cannot shift replicas between bystanders: both rings have at least R zones (the
   * walk takes the first node of each of the first R zones met), or both have one zone (a plain walk). With
   * 2..R-1 zones a node that changes which zone completes the set can also move other nodes in or out; the
   * rule allows that, docs/placement.md says so, and ReplicaPlacementTest pins an example.
   */
  static boolean zoneMonotone(RingSnapshot from, RingSnapshot to) {
    int r = to.replicas();
    int a = from.zones().size();
    int b = to.zones().size();
    return from.replicas() == r && ((a >= r && b >= r) || (a == 1 && b == 1));
  }

  /**
   * A node joined (or gained tokens through a weight increase): primary ownership moves only to it, and every
   * position whose new replica list does not name it keeps its old list exactly. When {@link #zoneMonotone}
   * holds, no other node gains anything either.
   */
  static void checkGrowth(RingSnapshot from, RingSnapshot to, RingDiff diff, String grower, Random rnd) {
    boolean monotone = zoneMonotone(from, to);
    for (long p : TestRings.probePositions(from, to, rnd, 500)) {
      ReplicaSet before = from.replicasAt(p);
      ReplicaSet after = to.replicasAt(p);
      String oldOwner = before.primary().id();
      String newOwner = after.primary().id();
      check(oldOwner.equals(newOwner) || newOwner.equals(grower), () -> "primary of "
          + Long.toUnsignedString(p) + " moved " + oldOwner + " -> " + newOwner + ", not to " + grower);
      if (!after.contains(grower)) {
        check(before.sameIds(after), () -> "replicas of " + Long.toUnsignedString(p) + " changed " + before + " -> "
            + after + " without involving " + grower);
      }
      if (monotone) {
        List<String> gained = added(before.ids(), after.ids());
        check(gained.isEmpty() || gained.equals(List.of(grower)),
            () -> "replicas of " + Long.toUnsignedString(p) + " changed " + before + " -> " + after
                + ": a node other than " + grower + " gained it");
      }
    }
    for (NodeMovement m : diff.perNode().values()) {
      if (!m.nodeId().equals(grower)) {
        check(m.primaryGained() == 0, () -> m.nodeId() + " gained primary ownership when " + grower + " grew: " + m);
        check(!monotone || m.gained() == 0, () -> m.nodeId() + " gained replicas when " + grower + " grew: " + m);
      }
    }
  }

  /**
   * A node left (or lost tokens through a weight decrease): primary ownership moves only away from it, and
   * every position whose old replica list did not name it keeps its list exactly. When {@link #zoneMonotone}
   * holds, no other node loses anything either.
   */
  static void checkShrink(RingSnapshot from, RingSnapshot to, RingDiff diff, String shrinker, Random rnd) {
    boolean monotone = zoneMonotone(from, to);
    for (long p : TestRings.probePositions(from, to, rnd, 500)) {
      ReplicaSet before = from.replicasAt(p);
      ReplicaSet after = to.replicasAt(p);
      String oldOwner = before.primary().id();
      String newOwner = after.primary().id();
      check(oldOwner.equals(newOwner) || oldOwner.equals(shrinker), () -> "primary of "
          + Long.toUnsignedString(p) + " moved " + oldOwner + " -> " + newOwner + ", not away from " + shrinker);
      if (!before.contains(shrinker)) {
        check(before.sameIds(after), () -> "replicas of " + Long.toUnsignedString(p) + " changed " + before
            + " -> " + after + " although " + shrinker + " did not hold it");
      }
      if (monotone) {
        List<String> lost = added(after.ids(), before.ids());
        check(lost.isEmpty() || lost.equals(List.of(shrinker)),
            () -> "replicas of " + Long.toUnsignedString(p) + " changed " + before + " -> " + after
                + ": a node other than " + shrinker + " lost it");
      }
    }
    for (NodeMovement m : diff.perNode().values()) {
      if (!m.nodeId().equals(shrinker)) {
        check(m.primaryLost() == 0, () -> m.nodeId() + " lost primary ownership when " + shrinker + " shrank: " + m);
        check(!monotone || m.lost() == 0, () -> m.nodeId() + " lost replicas when " + shrinker + " shrank: " + m);
      }
    }
  }
}
