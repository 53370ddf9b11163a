package io.ringshift.storage;

import static io.ringshift.storage.TestKeys.bytes;

import io.ringshift.ring.RingRange;
import io.ringshift.ring.RingSnapshot;
import java.util.List;
import java.util.function.Predicate;

/**
 * Two consecutive published rings for ownership tests: epoch 4 on node-1, node-2, node-3 (one per zone) and epoch
 * 5 after node-4 joined zone az-1, two replicas per key; and epoch 6 after node-1 left. Small token counts keep the
 * rings cheap to build; keys are found by searching {@code key-0}, {@code key-1}, ...
 */
final class Rings {
  static final List<String> NODES = List.of("node-1", "node-2", "node-3", "node-4");
  static final RingSnapshot EPOCH_4 = RingSnapshot.builder().clusterId("test").epoch(4).vnodes(16).replicas(2)
      .addMember("node-1", "az-1").addMember("node-2", "az-2").addMember("node-3", "az-3").build();
  static final RingSnapshot EPOCH_5 = EPOCH_4.toBuilder().epoch(5).addMember("node-4", "az-1").build();
  static final RingSnapshot EPOCH_6 = RingSnapshot.builder().clusterId("test").epoch(6).vnodes(16).replicas(2)
      .addMember("node-2", "az-2").addMember("node-3", "az-3").addMember("node-4", "az-1").build();

  private Rings() {}

  static boolean replicates(RingSnapshot ring, String node, String key) {
    return ring.replicasOf(bytes(key)).contains(node);
  }

  /** The first {@code key-i} that passes {@code test}. */
  static String key(Predicate<String> test) {
    for (int i = 0; i < 100_000; i++) {
      String key = "key-" + i;
      if (test.test(key)) {
        return key;
      }
    }
    throw new AssertionError("no key among key-0 .. key-99999 passes the test");
  }

  /** A key {@code node} replicates at epoch 4 and no longer at epoch 5: it moved to node-4. */
  static String movedAwayFrom(String node) {
    return key(k -> replicates(EPOCH_4, node, k) && !replicates(EPOCH_5, node, k));
  }

  /** A key {@code node} replicates at epochs 4 and 5. */
  static String keptBy(String node) {
    return key(k -> replicates(EPOCH_4, node, k) && replicates(EPOCH_5, node, k));
  }

  /** The ring range holding {@code key} in {@code ring}: what a not-a-replica refusal names. */
  static RingRange rangeOf(RingSnapshot ring, String key) {
    int r = ring.rangeOf(ring.position(bytes(key)));
    return RingRange.of(ring.rangeStart(r), ring.rangeEnd(r));
  }

  /** A node's view that a test swaps by hand: to a ring, or to a transition stage between two. */
  static final class View implements RingView {
    private volatile RingSnapshot ring;
    private volatile RoutedRings rings;

    View(RingSnapshot ring) {
      this.ring = ring;
    }

    void swap(RingSnapshot next) {
      rings = null;
      ring = next;
    }

    /** A transition stage from {@code previous} to {@code next}, reading the previous ring or the next one. */
    void swapToStage(RingSnapshot previous, RingSnapshot next, boolean readsPrevious) {
      rings = new RoutedRings(next, previous, readsPrevious);
      ring = next;
    }

    @Override
    public RingSnapshot current() {
      return ring;
    }

    @Override
    public RoutedRings rings() {
      return rings;
    }
  }
}
