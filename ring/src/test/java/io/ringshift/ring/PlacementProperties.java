package io.ringshift.ring;

import static io.ringshift.ring.RingInvariants.check;
import static org.assertj.core.api.Assertions.assertThat;

import io.ringshift.ring.TestRings.RingSpec;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * Properties of placement and of its diff over generated rings. Each prints its seed; see {@link Seeded} for
 * replaying a run or a single case.
 */
class PlacementProperties {
  private static final int KEYS = 2000;

  @Test
  void shouldMatchTheReferencePlacementForAnyMembership() {
    // Token table, tie order, replica walk, under-replication, lookups and checksum, all against the model.
    Seeded.forAll("shouldMatchTheReferencePlacementForAnyMembership", 150, TestRings::randomRing,
        (spec, rnd) -> RingInvariants.checkSnapshot(spec.build(), rnd));
  }

  @Test
  void shouldMoveKeysOnlyToJoiningNode() {
    Seeded.forAll("shouldMoveKeysOnlyToJoiningNode", 60, TestRings::randomRing, (spec, rnd) -> {
      Set<String> taken = spec.members().stream().map(Member::id).collect(Collectors.toCollection(HashSet::new));
      // Sometimes into a new zone, which can lift the ring from "fewer zones than R" to fully zoned.
      Member joiner = TestRings.randomMember(rnd, taken, spec.zoneCount() + rnd.nextInt(2));
      List<Member> after = new ArrayList<>(spec.members());
      after.add(joiner);
      RingSnapshot from = spec.build();
      RingSnapshot to = from.toBuilder().epoch(1).members(after).build();
      RingDiff diff = from.diffTo(to);

      RingInvariants.checkDiff(from, to, diff, rnd);
      RingInvariants.checkGrowth(from, to, diff, joiner.id(), rnd);
      NodeMovement joined = diff.perNode().get(joiner.id());
      check(joined != null && joined.primaryGained() > 0 && joined.lost() == 0,
          () -> "the joining node should gain primary ranges and lose nothing: " + joined);
      for (int i = 0; i < KEYS; i++) {
        String key = "user:" + rnd.nextLong();
        String oldOwner = from.ownerOf(key).id();
        String newOwner = to.ownerOf(key).id();
        check(oldOwner.equals(newOwner) || newOwner.equals(joiner.id()),
            () -> "key " + key + " moved " + oldOwner + " -> " + newOwner + " on the join of " + joiner.id());
        checkKeyAgainstDiff(from, to, diff, key);
      }
    });
  }

  @Test
  void shouldMoveOnlyTheRemovedNodesKeys() {
    Seeded.forAll("shouldMoveOnlyTheRemovedNodesKeys", 60, rnd -> atLeastTwoNodes(rnd), (spec, rnd) -> {
      List<Member> after = new ArrayList<>(spec.members());
      Member removed = after.remove(rnd.nextInt(after.size()));
      RingSnapshot from = spec.build();
      RingSnapshot to = from.toBuilder().epoch(1).members(after).build();
      RingDiff diff = from.diffTo(to);

      RingInvariants.checkDiff(from, to, diff, rnd);
      RingInvariants.checkShrink(from, to, diff, removed.id(), rnd);
      check(to.member(removed.id()) == null && diff.perNode().containsKey(removed.id()),
          () -> "the removed node must appear in the diff");
      check(Math.abs(diff.perNode().get(removed.id()).primaryLost() - ownedFraction(from, removed.id())) < 1e-9,
          () -> "the removed node must lose exactly the primary share it owned");
      for (int i = 0; i < KEYS; i++) {
        String key = "user:" + rnd.nextLong();
        ReplicaSet before = from.replicasOf(key);
        ReplicaSet now = to.replicasOf(key);
        check(before.primary().id().equals(now.primary().id()) || before.primary().id().equals(removed.id()),
            () -> "key " + key + " moved " + before + " -> " + now + " although " + removed.id() + " did not own it");
        check(before.contains(removed.id()) || before.sameIds(now),
            () -> "key " + key + " changed replicas " + before + " -> " + now + " without involving "
                + removed.id());
        checkKeyAgainstDiff(from, to, diff, key);
      }
    });
  }

  @Test
  void shouldMoveKeysOnlyToOrFromTheReweightedNode() {
    Seeded.forAll("shouldMoveKeysOnlyToOrFromTheReweightedNode", 60, TestRings::randomRing, (spec, rnd) -> {
      List<Member> after = new ArrayList<>(spec.members());
      int i = rnd.nextInt(after.size());
      Member m = after.get(i);
      double weight = m.weight() * (rnd.nextBoolean() ? 2 : 0.5);
      weight = Math.max(weight, 1.0 / spec.vnodes());
      after.set(i, m.withWeight(weight));
      RingSnapshot from = spec.build();
      RingSnapshot to = from.toBuilder().epoch(1).members(after).build();
      RingDiff diff = from.diffTo(to);

      RingInvariants.checkDiff(from, to, diff, rnd);
      if (to.tokenCount(to.memberIndex(m.id())) >= from.tokenCount(from.memberIndex(m.id()))) {
        RingInvariants.checkGrowth(from, to, diff, m.id(), rnd);
      } else {
        RingInvariants.checkShrink(from, to, diff, m.id(), rnd);
      }
    });
  }

  @Test
  void shouldChangeReplicaSetsOnlyInsideTheReportedRanges() {
    // Arbitrary changes at once (joins, removals, weights, zones, states, R), so the diff cannot lean on the
    // structure of a single join or removal.
    Seeded.forAll("shouldChangeReplicaSetsOnlyInsideTheReportedRanges", 100,
        rnd -> {
          RingSpec spec = TestRings.randomRing(rnd);
          return new Change(spec, mutate(spec, rnd));
        },
        (change, rnd) -> {
          RingSnapshot from = change.from().build();
          RingSnapshot to = change.to().build();
          RingInvariants.checkDiff(from, to, from.diffTo(to), rnd);
          check(to.diffTo(to).isEmpty(), () -> "a snapshot differs from itself");
        });
  }

  @Test
  void shouldKeepReplicasDistinctAndZonesDistinctWheneverThereAreAtLeastRZones() {
    Seeded.forAll("shouldKeepReplicasDistinctAndZonesDistinctWheneverThereAreAtLeastRZones", 120,
        rnd -> {
          int replicas = 1 + rnd.nextInt(4);
          int zones = replicas + rnd.nextInt(3);
          List<Member> members = TestRings.randomMembers(rnd, zones + rnd.nextInt(6), zones);
          // Guarantee every zone a node, so the ring really has at least R zones.
          for (int z = 0; z < zones; z++) {
            Member m = members.get(z);
            members.set(z, new Member(m.id(), TestRings.zone(z), m.weight(), m.state()));
          }
          return new RingSpec(members, 1 + rnd.nextInt(24), replicas);
        },
        (spec, rnd) -> {
          RingSnapshot ring = spec.build();
          assertThat(ring.underReplication()).isEmpty();
          for (int r = 0; r < ring.tokenCount(); r++) {
            ReplicaSet set = ring.replicasOfRange(r);
            Set<String> nodes = new HashSet<>(set.ids());
            Set<String> zones = set.members().stream().map(Member::zone).collect(Collectors.toSet());
            int range = r;
            check(set.size() == spec.replicas() && nodes.size() == set.size() && zones.size() == set.size(),
                () -> "range " + range + " replicas " + set.members() + " are not " + spec.replicas()
                    + " distinct nodes in distinct zones");
            check(set.shortfall() == null, () -> "fully zoned range reports " + set.shortfall());
          }
        });
  }

  @Test
  void shouldReportUnderReplicationWhenNodesOrZonesAreShort() {
    Seeded.forAll("shouldReportUnderReplicationWhenNodesOrZonesAreShort", 120,
        rnd -> {
          int replicas = 2 + rnd.nextInt(3);
          boolean fewNodes = rnd.nextBoolean();
          int nodes = fewNodes ? 1 + rnd.nextInt(replicas - 1) : replicas + rnd.nextInt(5);
          int zones = 1 + rnd.nextInt(replicas - 1);
          return new RingSpec(TestRings.randomMembers(rnd, nodes, zones), 1 + rnd.nextInt(24), replicas);
        },
        (spec, rnd) -> {
          RingSnapshot ring = spec.build();
          int nodes = spec.members().size();
          UnderReplication.Reason expected = nodes < spec.replicas()
              ? UnderReplication.Reason.FEWER_NODES_THAN_REPLICAS
              : UnderReplication.Reason.FEWER_ZONES_THAN_REPLICAS;
          assertThat(ring.underReplication()).singleElement().satisfies(u -> {
            assertThat(u.reason()).isEqualTo(expected);
            assertThat(u.ranges()).isEqualTo(ring.tokenCount());
            assertThat(u.keyspaceFraction()).isEqualTo(1.0);
            assertThat(u.detail()).startsWith(spec.replicas() + " replicas requested but only ");
          });
          for (int r = 0; r < ring.tokenCount(); r++) {
            ReplicaSet set = ring.replicasOfRange(r);
            int range = r;
            // Short means reported, never papered over: no node twice, and every node used when nodes < R.
            check(set.shortfall() == expected && set.size() == Math.min(nodes, spec.replicas())
                    && new HashSet<>(set.ids()).size() == set.size(),
                () -> "range " + range + " replicas " + set.ids() + " shortfall " + set.shortfall());
          }
        });
  }

  @Test
  void shouldTakeAPrefixOfTheReplicaListWhenAskingForFewerReplicas() {
    // Clients that want fewer copies than R read a prefix; that only works if the walk has no look-ahead.
    Seeded.forAll("shouldTakeAPrefixOfTheReplicaListWhenAskingForFewerReplicas", 100, TestRings::randomRing,
        (spec, rnd) -> {
          RingSnapshot full = spec.build();
          for (int fewer = 1; fewer < spec.replicas(); fewer++) {
            RingSnapshot partial = full.toBuilder().replicas(fewer).build();
            for (int r = 0; r < full.tokenCount(); r++) {
              List<String> all = full.replicasOfRange(r).ids();
              List<String> prefix = partial.replicasOfRange(r).ids();
              int range = r;
              check(prefix.equals(all.subList(0, Math.min(all.size(), prefix.size())))
                      && prefix.size() == Math.min(fewer, spec.members().size()),
                  () -> "range " + range + ": R=" + spec.replicas() + " gives " + all + " but R=" + prefix.size()
                      + " gives " + prefix);
            }
          }
        });
  }

  @Test
  void shouldGiveTheSameChecksumForTheSameMembersInAnyOrder() {
    Seeded.forAll("shouldGiveTheSameChecksumForTheSameMembersInAnyOrder", 100, TestRings::randomRing,
        (spec, rnd) -> {
          RingSnapshot ring = spec.build();
          for (int i = 0; i < 3; i++) {
            RingBuilder builder = RingSnapshot.builder().vnodes(spec.vnodes()).replicas(spec.replicas());
            TestRings.shuffled(spec.members(), rnd).forEach(builder::addMember);
            RingSnapshot again = builder.build();
            check(again.checksumHex().equals(ring.checksumHex()), () -> "member order changed the checksum");
            check(again.memberIds().equals(ring.memberIds()), () -> "member order changed the canonical order");
          }
          check(!ring.toBuilder().epoch(1).build().checksumHex().equals(ring.checksumHex()),
              () -> "the epoch is not part of the checksum");
        });
  }

  // ---- helpers ----

  /** Two generated rings, before and after some changes. */
  private record Change(RingSpec from, RingSpec to) {
    @Override
    public String toString() {
      return "from " + from + " to " + to;
    }
  }

  private static RingSpec atLeastTwoNodes(Random rnd) {
    RingSpec spec = TestRings.randomRing(rnd);
    while (spec.members().size() < 2) {
      spec = TestRings.randomRing(rnd);
    }
    return spec;
  }

  /** The key's replica lists differ exactly when the diff reports a range containing its position. */
  private static void checkKeyAgainstDiff(RingSnapshot from, RingSnapshot to, RingDiff diff, String key) {
    long p = from.position(key);
    boolean changed = !from.replicasOf(key).sameIds(to.replicasOf(key));
    boolean reported = diff.changes().stream().anyMatch(c -> c.contains(p));
    check(changed == reported, () -> "key " + key + " changed=" + changed + " but reported=" + reported);
  }

  private static double ownedFraction(RingSnapshot ring, String id) {
    if (ring.tokenCount() == 1) {
      return 1.0;
    }
    double owned = 0;
    for (int r = 0; r < ring.tokenCount(); r++) {
      // A token equal to the one before it closes an empty range, not the whole ring.
      if (ring.rangeStart(r) != ring.rangeEnd(r) && ring.members().get(ring.tokenOwner(r)).id().equals(id)) {
        owned += RingRange.of(ring.rangeStart(r), ring.rangeEnd(r)).fraction();
      }
    }
    return owned;
  }

  /** One to four random changes at once, always leaving at least one member. */
  private static RingSpec mutate(RingSpec spec, Random rnd) {
    List<Member> members = new ArrayList<>(spec.members());
    Set<String> taken = members.stream().map(Member::id).collect(Collectors.toCollection(HashSet::new));
    int replicas = spec.replicas();
    for (int change = 1 + rnd.nextInt(4); change > 0; change--) {
      int i = rnd.nextInt(members.size());
      Member m = members.get(i);
      switch (rnd.nextInt(6)) {
        case 0 -> members.add(TestRings.randomMember(rnd, taken, 1 + rnd.nextInt(5)));
        case 1 -> {
          if (members.size() > 1) {
            members.remove(i);
          }
        }
        case 2 -> members.set(i, m.withWeight(TestRings.WEIGHTS[rnd.nextInt(TestRings.WEIGHTS.length)]));
        case 3 -> members.set(i, new Member(m.id(), TestRings.zone(rnd.nextInt(5)), m.weight(), m.state()));
        case 4 -> members.set(i, m.withState(m.readEligible() ? MemberState.FILLING : MemberState.ACTIVE));
        default -> replicas = 1 + rnd.nextInt(4);
      }
    }
    return new RingSpec(members, spec.vnodes(), replicas);
  }
}
