package io.ringshift.dashboard.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import io.ringshift.ring.RingSnapshot;
import java.net.URI;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class RingGeometryTest {
  private static RingSnapshot ring(String... ids) {
    var b = RingSnapshot.builder().clusterId("c").epoch(ids.length).vnodes(8).replicas(2);
    for (int i = 0; i < ids.length; i++) {
      b.addMember(ids[i], "az-" + (1 + i % 3));
    }
    return b.build();
  }

  @Test
  void shouldPlaceUnsignedTokensAroundTheCircle() {
    assertThat(RingGeometry.fraction(0)).isEqualTo(0.0);
    assertThat(RingGeometry.fraction(Long.MIN_VALUE)).isEqualTo(0.5);
    assertThat(RingGeometry.fraction(-1L)).isCloseTo(1.0, within(1e-15)).isLessThanOrEqualTo(1.0);
    assertThat(RingGeometry.fraction(1L << 62)).isEqualTo(0.25);
  }

  @Test
  void shouldListEveryRangeInTokenOrderWithItsPrimaryOwner() {
    RingSnapshot ring = ring("a", "b", "c");
    Map<String, Object> g = RingGeometry.of(ring, null);
    double[] ends = (double[]) g.get("ends");
    int[] owners = (int[]) g.get("owners");
    assertThat(ends).hasSize(ring.tokenCount()).isSorted();
    for (int r = 0; r < ends.length; r++) {
      assertThat(ring.members().get(owners[r]).id()).isEqualTo(ring.replicasOfRange(r).primary().id());
    }
    assertThat(g).doesNotContainKey("changed");
    assertThat((List<?>) g.get("members")).hasSize(3);
  }

  @Test
  void shouldMarkOnlyTheRangesWhoseReplicasAJoinChanges() {
    RingSnapshot before = ring("a", "b", "c");
    RingSnapshot after = ring("a", "b", "c", "d");
    Map<String, Object> g = RingGeometry.of(after, before);
    boolean[] changed = (boolean[]) g.get("changed");
    int count = 0;
    for (int r = 0; r < changed.length; r++) {
      boolean moved = after.replicasOfRange(r).contains("d");
      assertThat(changed[r]).as("range %d gains d: %s", r, moved).isEqualTo(moved);
      count += changed[r] ? 1 : 0;
    }
    assertThat(g.get("changedRanges")).isEqualTo(count);
    assertThat(count).isPositive();
  }

  @Test
  void shouldReadAQueryParameterOrFallBack() {
    assertThat(WebServer.query(URI.create("/api/state?cluster=shop&x=1"), "cluster", "default")).isEqualTo("shop");
    assertThat(WebServer.query(URI.create("/api/state?cluster=a%20b"), "cluster", "default")).isEqualTo("a b");
    assertThat(WebServer.query(URI.create("/api/state?cluster="), "cluster", "default")).isEqualTo("default");
    assertThat(WebServer.query(URI.create("/api/state"), "cluster", "default")).isEqualTo("default");
  }
}
