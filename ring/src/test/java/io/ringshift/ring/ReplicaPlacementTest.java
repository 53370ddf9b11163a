package io.ringshift.ring;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The replica walk: distinct nodes, distinct zones while unused zones remain, and honest under-replication. */
class ReplicaPlacementTest {

  @Test
  void shouldTakeNodesPassedOverInTheFirstLapWhenZonesAreFewerThanReplicas() {
    // One token each: whatever the order, some range meets a1 and a2 back to back and must skip the second
    // (its zone is used) before b1 completes the zones; only a second lap reaches it again.
    RingSnapshot ring = RingSnapshot.builder()
        .vnodes(1)
        .replicas(3)
        .addMember("a1", "az-1")
        .addMember("a2", "az-1")
        .addMember("b1", "az-2")
        .build();

    for (int r = 0; r < ring.tokenCount(); r++) {
      assertThat(ring.replicasOfRange(r).ids())
          .as("range %d", r)
          .containsExactlyInAnyOrder("a1", "a2", "b1");
      assertThat(ring.replicasOfRange(r).shortfall()).isEqualTo(UnderReplication.Reason.FEWER_ZONES_THAN_REPLICAS);
    }
  }

  /** A ring whose tokens the test places: member "id@zone" gets the token given, at V = 1. */
  private static RingSnapshot placed(int replicas, Map<String, Long> tokens) {
    Map<String, Long> table = new LinkedHashMap<>();
    RingBuilder builder = RingSnapshot.builder().vnodes(1).replicas(replicas);
    tokens.forEach((idAtZone, token) -> {
      String[] parts = idAtZone.split("@");
      table.put(parts[0] + "#0", token);
      builder.addMember(parts[0], parts[1]);
    });
    return builder.hash(new TestRings.TableHash("test/placed", table)).build();
  }

  @Test
  void shouldSkipANodeOfAnAlreadyUsedZoneWhileUnusedZonesRemain() {
    RingSnapshot ring = placed(3, Map.of("a1@az-1", 10L, "a2@az-1", 20L, "b1@az-2", 30L, "c1@az-3", 40L));

    assertThat(ring.replicasAt(5L).ids()).containsExactly("a1", "b1", "c1");
    assertThat(ring.replicasAt(15L).ids()).containsExactly("a2", "b1", "c1");
    assertThat(ring.replicasAt(35L).ids()).containsExactly("c1", "a1", "b1");
    assertThat(ring.underReplication()).isEmpty();
  }

  @Test
  void shouldTakeAnyUnusedNodeInWalkOrderOnceEveryZoneIsUsed() {
    RingSnapshot ring = placed(3, Map.of("a1@az-1", 10L, "a2@az-1", 20L, "b1@az-2", 30L, "b2@az-2", 40L));

    // Zones az-1 and az-2 are used after a1 and b1; then the walk takes the next node it meets, b2 ...
    assertThat(ring.replicasAt(5L).ids()).containsExactly("a1", "b1", "b2");
    // ... wrapping past the top when needed.
    assertThat(ring.replicasAt(35L).ids()).containsExactly("b2", "a1", "a2");
    assertThat(ring.underReplication()).singleElement().satisfies(u -> {
      assertThat(u.reason()).isEqualTo(UnderReplication.Reason.FEWER_ZONES_THAN_REPLICAS);
      assertThat(u.detail()).isEqualTo("3 replicas requested but only 2 zones [az-1, az-2]");
    });
  }

  @Test
  void shouldNeverNameANodeTwiceWhenNodesAreFewerThanReplicas() {
    RingSnapshot ring = RingSnapshot.builder().vnodes(8).replicas(3).addMember("n1", "az-1")
        .addMember("n2", "az-2").build();

    for (int r = 0; r < ring.tokenCount(); r++) {
      assertThat(ring.replicasOfRange(r).ids()).as("range %d", r).containsExactlyInAnyOrder("n1", "n2");
      assertThat(ring.replicasOfRange(r).shortfall()).isEqualTo(UnderReplication.Reason.FEWER_NODES_THAN_REPLICAS);
    }
    assertThat(ring.underReplication()).singleElement().satisfies(u -> {
      assertThat(u.reason()).isEqualTo(UnderReplication.Reason.FEWER_NODES_THAN_REPLICAS);
      assertThat(u.ranges()).isEqualTo(16);
      assertThat(u.keyspaceFraction()).isEqualTo(1.0);
      assertThat(u.detail()).isEqualTo("3 replicas requested but only 2 nodes");
    });
  }

  @Test
  void shouldPlaceFillingMembersButNotOfferThemForReads() {
    RingSnapshot ring = RingSnapshot.builder().vnodes(8).replicas(3).addMember("n1", "az-1")
        .addMember(new Member("n2", "az-2", 1.0, MemberState.FILLING)).addMember("n3", "az-3").build();

    for (int r = 0; r < ring.tokenCount(); r++) {
      ReplicaSet set = ring.replicasOfRange(r);
      assertThat(set.ids()).containsExactlyInAnyOrder("n1", "n2", "n3");
      assertThat(set.readableSize()).isEqualTo(2);
      assertThat(List.of(set.readable(0).id(), set.readable(1).id()))
          .isEqualTo(set.ids().stream().filter(id -> !id.equals("n2")).toList());
    }
  }

  @Test
  void shouldLetAJoinShiftReplicasBetweenOtherNodesWhenZonesAreFewerThanReplicas() {
    // Documented consequence of the zone rule with 2..R-1 zones: x (az-2) completes the zones earlier than b1
    // did, so the walk switches to "any node" before reaching b1 and b2 and takes a2 instead. Primary
    // ownership still moves only to x, and the diff reports every changed set.
    Map<String, Long> before = Map.of("a1@az-1", 100L, "a2@az-1", 200L, "b1@az-2", 300L, "b2@az-2", 400L);
    Map<String, Long> after = new LinkedHashMap<>(before);
    after.put("x@az-2", 150L);
    RingSnapshot from = placed(3, before);
    // Both test hashes share an id and agree on every common input, so the two rings may be diffed.
    RingSnapshot to = placed(3, after);
    RingDiff diff = RingDiff.between(from, to);

    assertThat(from.replicasAt(50L).ids()).containsExactly("a1", "b1", "b2");
    assertThat(to.replicasAt(50L).ids()).containsExactly("a1", "x", "a2");
    assertThat(diff.perNode().get("a2").gained()).isPositive();
    assertThat(diff.perNode().values()).allSatisfy(m -> {
      if (!m.nodeId().equals("x")) {
        assertThat(m.primaryGained()).isZero();
      }
    });
  }
}
