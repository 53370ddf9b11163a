package io.ringshift.ring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The balanced policy (docs/placement.md, section 12): balance, minimal movement, determinism, validation. */
class BalancedPolicyTest {

  static RingSnapshot fleet(PlacementPolicy policy, int nodes, int vnodes) {
    RingBuilder b = RingSnapshot.builder().policy(policy).vnodes(vnodes).replicas(3);
    for (int i = 1; i <= nodes; i++) {
      b.addMember(String.format("node-%03d", i), "az-" + ((i - 1) % 3 + 1));
    }
    return b.build();
  }

  /** Each member's share of the replicas, as a keyspace fraction summed over the ranges it is a replica of. */
  static Map<String, Double> replicaLoad(RingSnapshot ring) {
    Map<String, Double> load = new HashMap<>();
    ring.members().forEach(m -> load.put(m.id(), 0.0));
    for (int r = 0; r < ring.tokenCount(); r++) {
      double width = ring.rangeFraction(r);
      ReplicaSet set = ring.replicasOfRange(r);
      for (int j = 0; j < set.size(); j++) {
        load.merge(set.get(j).id(), width, Double::sum);
      }
    }
    return load;
  }

  static double busiestToMean(RingSnapshot ring) {
    Map<String, Double> load = replicaLoad(ring);
    double mean = load.values().stream().mapToDouble(Double::doubleValue).average().orElseThrow();
    return load.values().stream().mapToDouble(Double::doubleValue).max().orElseThrow() / mean;
  }

  @Test
  void shouldBalanceReplicaLoadOfTheReferenceFleetWithEightTokens() {
    double hashed8 = busiestToMean(fleet(PlacementPolicy.HASHED, 120, 8));
    double hashed256 = busiestToMean(fleet(PlacementPolicy.HASHED, 120, 256));
    double balanced8 = busiestToMean(fleet(PlacementPolicy.BALANCED, 120, 8));
    double balanced16 = busiestToMean(fleet(PlacementPolicy.BALANCED, 120, 16));
    System.out.printf("busiest replica load / mean at 120 nodes, 3 zones, R = 3: hashed V=8 %.4f, V=256 %.4f; "
        + "balanced V=8 %.4f, V=16 %.4f%n", hashed8, hashed256, balanced8, balanced16);
    assertThat(balanced8).isLessThanOrEqualTo(1.05);
    assertThat(balanced16).isLessThanOrEqualTo(1.03);
    assertThat(balanced8).isLessThan(hashed256);
  }

  @Test
  void shouldMoveDataOnlyToTheJoinerAndAboutItsShare() {
    RingSnapshot before = fleet(PlacementPolicy.BALANCED, 120, 8);
    RingSnapshot after = before.toBuilder().epoch(1).addMember("node-121", "az-1").build();
    RingDiff diff = before.diffTo(after);
    for (RangeChange c : diff.changes()) {
      assertThat(c.added()).as("%s", c).containsExactly("node-121");
    }
    Map<String, Double> load = replicaLoad(after);
    assertThat(load.get("node-121")).isCloseTo(1.0 / 41, org.assertj.core.api.Assertions.within(1e-6));
    System.out.printf("join of node-121 at 120 x 8 balanced: moved %.5f of replicas, ideal %.5f (%.3fx); busiest "
        + "after %.4f%n", diff.movedReplicaFraction(), diff.idealMovedFraction(), diff.movedToIdeal(),
        busiestToMean(after));
    assertThat(diff.movedToIdeal()).isLessThanOrEqualTo(1.05);
    // The members that held tokens keep every one of them.
    for (Member m : before.members()) {
      assertThat(after.tokensOf(after.memberIndex(m.id()))).isEqualTo(before.tokensOf(before.memberIndex(m.id())));
    }
  }

  @Test
  void shouldMoveDataOnlyAwayFromADrainedMember() {
    RingSnapshot before = fleet(PlacementPolicy.BALANCED, 30, 8);
    List<Member> rest = new ArrayList<>(before.members());
    rest.removeIf(m -> m.id().equals("node-007"));
    RingSnapshot after = before.toBuilder().epoch(1).members(rest).build();
    for (RangeChange c : before.diffTo(after).changes()) {
      assertThat(c.removed()).as("%s", c).containsExactly("node-007");
    }
  }

  @Test
  void shouldRealiseWeightsOneTwoFourWithinTwoPercent() {
    RingBuilder b = RingSnapshot.builder().policy(PlacementPolicy.BALANCED).vnodes(8).replicas(3);
    double[] weights = {1, 2, 4};
    for (int i = 0; i < 120; i++) {
      b.addMember(String.format("node-%03d", i), "az-" + (i % 3 + 1), weights[(i / 3) % 3]);
    }
    RingSnapshot ring = b.build();
    Map<String, Double> load = replicaLoad(ring);
    Map<Double, Double> perUnitOfWeight = new HashMap<>();
    double totalWeight = ring.members().stream().mapToDouble(Member::weight).sum();
    for (Member m : ring.members()) {
      double realised = load.get(m.id()) / 3 / (m.weight() / totalWeight);
      assertThat(realised).as("%s weight %s", m.id(), m.weight()).isBetween(0.98, 1.02);
      perUnitOfWeight.merge(m.weight(), realised, Math::max);
    }
    System.out.println("1:2:4 balanced at V = 8, 120 nodes: worst realised share / weight share " + perUnitOfWeight);
  }

  @Test
  void shouldKeepTheFirstTokensWhenTheWeightDropsAndAddTokensWhenItRises() {
    RingSnapshot ring = fleet(PlacementPolicy.BALANCED, 12, 8);
    int i = ring.memberIndex("node-004");
    long[] tokens = ring.tokensOf(i);
    RingSnapshot lighter = ring.toBuilder().epoch(1).members(reweighted(ring, "node-004", 0.5)).build();
    assertThat(lighter.tokensOf(i)).containsExactly(Arrays.copyOf(tokens, 4));
    RingSnapshot heavier = ring.toBuilder().epoch(1).members(reweighted(ring, "node-004", 2.0)).build();
    assertThat(Arrays.copyOf(heavier.tokensOf(i), 8)).containsExactly(tokens);
    for (RangeChange c : ring.diffTo(heavier).changes()) {
      assertThat(c.added()).containsExactly("node-004");
    }
    for (RangeChange c : ring.diffTo(lighter).changes()) {
      assertThat(c.removed()).containsExactly("node-004");
    }
  }

  @Test
  void shouldBuildTheSameRingFromAnyMemberOrderAndFromItsOwnTokens() {
    RingSnapshot ring = fleet(PlacementPolicy.BALANCED, 24, 16);
    List<Member> shuffled = new ArrayList<>(ring.members());
    Collections.shuffle(shuffled, new java.util.Random(7));
    RingSnapshot again = RingSnapshot.builder().policy(PlacementPolicy.BALANCED).vnodes(16).members(shuffled).build();
    assertThat(again.checksumHex()).isEqualTo(ring.checksumHex());
    assertThat(ring.toBuilder().build().checksumHex()).isEqualTo(ring.checksumHex());
    assertThat(ring.policyId()).isEqualTo("balanced-tokens/zone-aware-walk/v1");
    assertThat(ring.checksumHex()).isNotEqualTo(fleet(PlacementPolicy.HASHED, 24, 16).checksumHex());
  }

  @Test
  void shouldGiveEveryMemberDistinctTokensWithinItsZoneThroughAHistoryOfChanges() {
    long seed = Seeded.runSeed("BalancedPolicyTest#history");
    java.util.Random random = new java.util.Random(seed);
    RingSnapshot ring = fleet(PlacementPolicy.BALANCED, 9, 8);
    int next = 10;
    for (int step = 0; step < 60; step++) {
      List<Member> members = new ArrayList<>(ring.members());
      int action = random.nextInt(3);
      String changed;
      if (action == 0 || members.size() < 6) {
        changed = String.format("node-%03d", next++);
        members.add(Member.of(changed, "az-" + (random.nextInt(3) + 1), 0.5 + random.nextInt(4) * 0.5));
      } else if (action == 1) {
        changed = members.remove(random.nextInt(members.size())).id();
      } else {
        int k = random.nextInt(members.size());
        changed = members.get(k).id();
        members.set(k, members.get(k).withWeight(0.5 + random.nextInt(4) * 0.5));
      }
      RingSnapshot after = ring.toBuilder().epoch(step + 1).members(members).build();
      // With 2 .. R-1 zones the walk's zone rule can shift replicas between other members too (docs/placement.md,
      // section 7), under any policy; the only-the-changed-member property holds with >= R zones in both rings.
      boolean zonesSuffice = ring.zones().size() >= 3 && after.zones().size() >= 3;
      for (RangeChange c : zonesSuffice ? ring.diffTo(after).changes() : List.<RangeChange>of()) {
        Set<String> touched = new HashSet<>(c.added());
        touched.addAll(c.removed());
        if (touched.isEmpty()) {
          touched.addAll(c.before()); // a reordering: the changed member's new or lost token reordered the walk
        }
        assertThat(touched).as("seed %d step %d: %s changed, %s", seed, step, changed, c).contains(changed);
        assertThat(c.added().size() + c.removed().size()).as("seed %d step %d: %s", seed, step, c)
            .isLessThanOrEqualTo(2);
      }
      for (int m = 0; m < after.memberCount(); m++) {
        assertThat(after.tokensOf(m)).hasSize((int) Math.round(after.members().get(m).weight() * 8));
      }
      assertThat(RingSnapshot.builder().policy(PlacementPolicy.BALANCED).vnodes(8).epoch(step + 1)
          .members(after.members()).tokensFrom(after).build().checksumHex()).isEqualTo(after.checksumHex());
      ring = after;
    }
  }

  @Test
  void shouldRefuseTokensUnderTheHashedPolicyAndRepeatedTokensInAZone() {
    assertThatThrownBy(() -> RingSnapshot.builder().addMember("a", "z").tokens("a", new long[] {1}).build())
        .isInstanceOf(RingException.class).hasMessageContaining("only the balanced policy");
    assertThatThrownBy(() -> RingSnapshot.builder().policy(PlacementPolicy.BALANCED).vnodes(1)
        .addMember("a", "z").addMember("b", "z").tokens("a", new long[] {5}).tokens("b", new long[] {5}).build())
        .isInstanceOf(RingException.class).hasMessageContaining("tokens of one zone are distinct");
    assertThatThrownBy(() -> PlacementPolicy.parse("greedy"))
        .isInstanceOf(RingException.class).hasMessageContaining("\"greedy\"").hasMessageContaining("balanced");
  }

  private static List<Member> reweighted(RingSnapshot ring, String id, double weight) {
    List<Member> members = new ArrayList<>(ring.members());
    members.replaceAll(m -> m.id().equals(id) ? m.withWeight(weight) : m);
    return members;
  }
}
