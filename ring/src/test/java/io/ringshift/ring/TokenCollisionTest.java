package io.ringshift.ring;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * Equal tokens are ordered by {@code (token, nodeId, index)}, with node ids compared as unsigned UTF-8 bytes.
 * XXH3 collisions are too rare to meet by chance, so an injected hash forces them.
 */
class TokenCollisionTest {
  /** U+FF5E sorts after U+1F600 in UTF-16 (0xFF5E > 0xD83D) but before it in UTF-8 (EF.. < F0..). */
  private static final String FULLWIDTH_TILDE = "\uFF5E";
  private static final String GRINNING_FACE = "\uD83D\uDE00";

  @Test
  void shouldOrderEqualTokensByNodeIdInUtf8ByteOrderThenByIndex() {
    RingSnapshot ring = RingSnapshot.builder()
        .hash(new TestRings.FewValuesHash(3))
        .vnodes(8)
        .replicas(3)
        .addMember(GRINNING_FACE, "az-1")
        .addMember(FULLWIDTH_TILDE, "az-2")
        .addMember("b", "az-3")
        .addMember("a", "az-1")
        .build();

    assertThat(ring.memberIds()).containsExactly("a", "b", FULLWIDTH_TILDE, GRINNING_FACE);
    for (int t = 1; t < ring.tokenCount(); t++) {
      long previous = ring.token(t - 1);
      int order = Long.compareUnsigned(previous, ring.token(t));
      assertThat(order).as("token %d after token %d", t, t - 1).isLessThanOrEqualTo(0);
      if (order == 0) {
        byte[] previousId = ring.members().get(ring.tokenOwner(t - 1)).id().getBytes(StandardCharsets.UTF_8);
        byte[] id = ring.members().get(ring.tokenOwner(t)).id().getBytes(StandardCharsets.UTF_8);
        int byId = Arrays.compareUnsigned(previousId, id);
        assertThat(byId).as("tie at token %d: node order", t).isLessThanOrEqualTo(0);
        if (byId == 0) {
          assertThat(ring.tokenIndexWithinMember(t - 1)).as("tie at token %d: index order", t)
              .isLessThan(ring.tokenIndexWithinMember(t));
        }
      }
    }
    RingInvariants.checkSnapshot(ring, new Random(1));
  }

  @Test
  void shouldGiveAKeyOnATiedTokenToTheFirstNodeInTieOrder() {
    // b and a share token 100; a sorts first, so it owns (50, 100] and b's equal token closes an empty range.
    RingSnapshot ring = RingSnapshot.builder()
        .hash(new TestRings.TableHash("test/tie", Map.of("a#0", 100L, "b#0", 100L, "c#0", 50L)))
        .vnodes(1)
        .replicas(3)
        .addMember("b", "az-2")
        .addMember("c", "az-3")
        .addMember("a", "az-1")
        .build();

    assertThat(ring.replicasAt(100L).ids()).containsExactly("a", "b", "c");
    assertThat(ring.replicasAt(51L).ids()).containsExactly("a", "b", "c");
    assertThat(ring.replicasAt(101L).ids()).containsExactly("c", "a", "b");
    assertThat(ring.rangeOf(100L)).isEqualTo(1);
    assertThat(ring.rangeStart(2)).isEqualTo(ring.rangeEnd(2)).isEqualTo(100L);
    assertThat(ring.replicasOfRange(2).ids()).containsExactly("b", "c", "a");
  }

  @Test
  void shouldStillPlaceValidReplicaSetsWhenEveryTokenCollides() {
    // One hash value for every input: the whole table is one tie, ordered purely by (nodeId, index).
    RingSnapshot ring = RingSnapshot.builder()
        .hash(new TestRings.FewValuesHash(1))
        .vnodes(3)
        .replicas(3)
        .addMember("n3", "az-2")
        .addMember("n1", "az-1")
        .addMember("n2", "az-1")
        .addMember("n4", "az-3")
        .build();

    assertThat(ring.tokenOwner(0)).isEqualTo(0);
    assertThat(ring.tokenIndexWithinMember(0)).isEqualTo(0);
    assertThat(ring.tokenIndexWithinMember(2)).isEqualTo(2);
    assertThat(ring.replicasOf("any key").ids()).containsExactly("n1", "n3", "n4");
    RingInvariants.checkSnapshot(ring, new Random(2));
  }

  @Test
  void shouldKeepEveryInvariantUnderHeavyCollisionsForManyMemberships() {
    Random rnd = new Random(Seeded.runSeed("shouldKeepEveryInvariantUnderHeavyCollisionsForManyMemberships"));
    for (int i = 0; i < 40; i++) {
      TestRings.RingSpec spec = TestRings.randomRing(rnd);
      RingHash hash = new TestRings.FewValuesHash(1 + rnd.nextInt(6));
      RingSnapshot ring = RingSnapshot.builder().hash(hash).vnodes(spec.vnodes()).replicas(spec.replicas())
          .members(spec.members()).build();
      RingInvariants.checkSnapshot(ring, rnd);
      List<Member> fewer = spec.members().subList(0, Math.max(1, spec.members().size() - 1));
      RingSnapshot next = ring.toBuilder().epoch(1).members(fewer).build();
      RingInvariants.checkDiff(ring, next, ring.diffTo(next), rnd);
    }
  }
}
