package io.ringshift.ring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.lang.management.ManagementFactory;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Lookups: lower bound on unsigned tokens, wrap-around, ranges {@code (start, end]}, degenerate rings. */
class RingLookupTest {

  /** Three nodes with one token each, chosen by the test: 1000, 2^63 (negative as a signed long) and -1000. */
  private static final TestRings.TableHash THREE_TOKENS = new TestRings.TableHash("test/three-tokens",
      Map.of("a#0", 1000L, "b#0", Long.MIN_VALUE, "c#0", -1000L));

  private static RingSnapshot threeTokenRing() {
    return RingSnapshot.builder()
        .hash(THREE_TOKENS)
        .vnodes(1)
        .replicas(2)
        .addMember("a", "az-1")
        .addMember("b", "az-2")
        .addMember("c", "az-3")
        .build();
  }

  @Test
  void shouldCompareTokensAndPositionsUnsigned() {
    RingSnapshot ring = threeTokenRing();

    // Signed order would put b (2^63) and c (2^64 - 1000) before a (1000).
    assertThat(ring.token(0)).isEqualTo(1000L);
    assertThat(ring.token(1)).isEqualTo(Long.MIN_VALUE);
    assertThat(ring.token(2)).isEqualTo(-1000L);
    assertThat(ring.replicasAt(1001L).primary().id()).isEqualTo("b");
    assertThat(ring.replicasAt(Long.MAX_VALUE).primary().id()).isEqualTo("b");
    assertThat(ring.replicasAt(Long.MIN_VALUE + 1).primary().id()).isEqualTo("c");
  }

  @Test
  void shouldMapAPositionEqualToATokenToThatTokensRange() {
    RingSnapshot ring = threeTokenRing();

    assertThat(ring.rangeOf(1000L)).isEqualTo(0);
    assertThat(ring.rangeOf(999L)).isEqualTo(0);
    assertThat(ring.rangeOf(1001L)).isEqualTo(1);
    assertThat(ring.rangeOf(Long.MIN_VALUE)).isEqualTo(1);
    assertThat(ring.rangeOf(-1000L)).isEqualTo(2);
  }

  @Test
  void shouldWrapPositionsAboveTheLastTokenToTheFirstTokensNode() {
    RingSnapshot ring = threeTokenRing();

    for (long above : new long[] {-999L, -1L, 0L, 1L}) {
      assertThat(ring.rangeOf(above)).as("position %s", Long.toUnsignedString(above)).isEqualTo(0);
      assertThat(ring.replicasAt(above).ids()).containsExactly("a", "b");
    }
    // Range 0 is the wrapping one: (last token, first token].
    assertThat(ring.rangeStart(0)).isEqualTo(-1000L);
    assertThat(ring.rangeEnd(0)).isEqualTo(1000L);
    assertThat(RingRange.of(ring.rangeStart(0), ring.rangeEnd(0)).contains(-1L)).isTrue();
    assertThat(RingRange.of(ring.rangeStart(0), ring.rangeEnd(0)).contains(-1000L)).isFalse();
  }

  @Test
  void shouldWrapAKeyHashedAboveTheLastTokenToRangeZero() {
    RingSnapshot ring = RingSnapshot.builder().vnodes(4).addMember("n1", "az-1").addMember("n2", "az-2").build();
    long last = ring.token(ring.tokenCount() - 1);
    String key = null;
    for (int i = 0; key == null; i++) {
      if (Long.compareUnsigned(ring.position("k" + i), last) > 0) {
        key = "k" + i;
      }
    }

    assertThat(ring.rangeOf(ring.position(key))).isEqualTo(0);
    assertThat(ring.ownerOf(key)).isEqualTo(ring.members().get(ring.tokenOwner(0)));
    assertThat(ring.replicasOf(key)).isSameAs(ring.replicasOfRange(0));
  }

  @Test
  void shouldPlaceEveryKeyOnTheOnlyNodeOfAOneNodeRing() {
    RingSnapshot ring = RingSnapshot.builder().vnodes(1).replicas(3).addMember("solo", "az-1").build();

    assertThat(ring.tokenCount()).isEqualTo(1);
    assertThat(ring.token(0)).isEqualTo(TestRings.xxh3("solo#0"));
    // A single token's range (t, t] is the whole ring.
    assertThat(RingRange.of(ring.rangeStart(0), ring.rangeEnd(0)).fraction()).isEqualTo(1.0);
    for (String key : new String[] {"", "a", "zzz", "\uD83D\uDE00"}) {
      assertThat(ring.replicasOf(key).ids()).containsExactly("solo");
    }
    assertThat(ring.underReplication()).singleElement().satisfies(u -> {
      assertThat(u.reason()).isEqualTo(UnderReplication.Reason.FEWER_NODES_THAN_REPLICAS);
      assertThat(u.detail()).isEqualTo("3 replicas requested but only 1 node");
    });
  }

  @Test
  void shouldRefuseAnEmptyRingWithAClearError() {
    assertThatThrownBy(() -> RingSnapshot.builder().build())
        .isInstanceOf(RingException.class)
        .hasMessage("members was empty; a ring needs at least one member");
  }

  @Test
  void shouldReturnTheSamePrecomputedReplicaSetForEveryKeyOfARange() {
    RingSnapshot ring = RingSnapshot.builder().vnodes(16).addMember("n1", "az-1").addMember("n2", "az-2")
        .addMember("n3", "az-3").build();

    for (int i = 0; i < 1000; i++) {
      String key = "key-" + i;
      assertThat(ring.replicasOf(key)).isSameAs(ring.replicasOfRange(ring.rangeOf(ring.position(key))));
    }
  }

  @Test
  void shouldLookUpWithoutAllocating() {
    com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
    RingSnapshot ring = RingSnapshot.builder().vnodes(64).addMember("n1", "az-1").addMember("n2", "az-2")
        .addMember("n3", "az-3").build();
    String[] keys = new String[1024];
    for (int i = 0; i < keys.length; i++) {
      keys[i] = "user:" + i + ":\u00e9";
    }
    long sink = 0;
    for (int i = 0; i < 20_000; i++) {
      sink += ring.replicasOf(keys[i & 1023]).size() + ring.ownerOf(keys[i & 1023]).id().length();
    }
    long thread = Thread.currentThread().getId();
    long before = threads.getThreadAllocatedBytes(thread);
    for (int i = 0; i < 200_000; i++) {
      sink += ring.replicasOf(keys[i & 1023]).size() + ring.ownerOf(keys[i & 1023]).id().length();
    }
    long allocated = threads.getThreadAllocatedBytes(thread) - before;

    // 400,000 lookups: anything per lookup would be megabytes; allow a little for the measurement itself.
    assertThat(allocated).as("bytes allocated by 400,000 lookups").isLessThan(4096);
    assertThat(sink).isPositive();
  }
}
