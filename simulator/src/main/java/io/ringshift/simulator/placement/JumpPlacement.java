package io.ringshift.simulator.placement;

import com.dynatrace.hash4j.consistent.ConsistentBucketHasher;
import com.dynatrace.hash4j.consistent.ConsistentHashing;
import com.dynatrace.hash4j.random.PseudoRandomGeneratorProvider;
import io.ringshift.simulator.internal.SplitMix;
import java.util.ArrayList;
import java.util.List;

/**
 * Jump-style consistent hashing with hash4j's JumpBackHash ({@code ConsistentHashing.jumpBackHash}): key hash
 * to a bucket in {@code [0, N)}, bucket to node through a table. Replica {@code j > 0} draws again from a
 * re-mixed hash, skipping nodes already chosen, so each replica is itself a consistent choice.
 *
 * <p>Jump only grows or shrinks at the end: a new node becomes bucket N. Removing any other node moves the last
 * bucket's node into the freed bucket number (swap-remove), so the keys of both buckets move: about twice the
 * ideal. hash4j's JumpBackAnchor removes arbitrary buckets at the cost of per-client state; it is not simulated
 * here. Weights and zones are ignored.
 */
public final class JumpPlacement extends MemberListPlacement {
  private static final int MAX_DRAWS = 64;

  /** Node number of each bucket. */
  private final int[] bucketNode;

  private JumpPlacement(Fleet fleet, int replicas, int[] bucketNode) {
    super(fleet, Math.min(replicas, fleet.size()), "jump", false, "ordered member list");
    this.bucketNode = bucketNode;
  }

  /** Buckets {@code 0..N-1} in the fleet's positional order; {@code min(replicas, nodes)} replicas. */
  public static JumpPlacement of(Fleet fleet, int replicas) {
    return new JumpPlacement(fleet, replicas, fleet.nodes().stream().mapToInt(Fleet.Node::number).toArray());
  }

  @Override
  public JumpPlacement changeTo(Fleet next) {
    List<Integer> buckets = new ArrayList<>();
    for (int number : bucketNode) {
      buckets.add(number);
    }
    for (int b = 0; b < buckets.size(); ) {
      if (next.byNumber(buckets.get(b)) == null) {
        int last = buckets.remove(buckets.size() - 1);
        if (b < buckets.size()) {
          buckets.set(b, last);
        }
        // Re-examine bucket b: the node moved into it may itself be leaving.
      } else {
        b++;
      }
    }
    for (Fleet.Node n : next.nodes()) {
      if (!buckets.contains(n.number())) {
        buckets.add(n.number());
      }
    }
    return new JumpPlacement(next, replicas(), buckets.stream().mapToInt(Integer::intValue).toArray());
  }

  @Override
  public Lookup lookup() {
    // JumpBackHash keeps a pseudo-random generator inside: one hasher per lookup handle, that is per thread.
    ConsistentBucketHasher jump = ConsistentHashing.jumpBackHash(PseudoRandomGeneratorProvider.splitMix64_V1());
    int n = bucketNode.length;
    int r = replicas();
    int[] nodes = bucketNode;
    return (keyHash, out) -> {
      int filled = 0;
      long h = keyHash;
      for (int draw = 0; filled < r; draw++) {
        int node = draw < MAX_DRAWS ? nodes[jump.getBucket(h, n)] : nodes[(draw - MAX_DRAWS) % n];
        if (!contains(out, filled, node)) {
          out[filled++] = node;
        }
        h = SplitMix.mix64(h + 0x9E3779B97F4A7C15L);
      }
      return r;
    };
  }

  private static boolean contains(int[] values, int count, int value) {
    for (int i = 0; i < count; i++) {
      if (values[i] == value) {
        return true;
      }
    }
    return false;
  }
}
