package io.ringshift.simulator.placement;

import com.dynatrace.hash4j.hashing.Hasher64;
import com.dynatrace.hash4j.hashing.Hashing;
import java.nio.charset.StandardCharsets;

/**
 * Rendezvous (highest random weight) hashing: every node scores the key, the R highest scores (unsigned) are
 * the replicas in preference order. The score of node {@code n} for a key is XXH3-64 over the 16 bytes
 * {@code (keyHash, XXH3-64(utf8(n.id)))}: XXH3 of key and node, with each side hashed once so the per-node work
 * is one 16-byte hash. Not zone-aware (plain top-R); a lookup costs one hash per node.
 */
public final class RendezvousPlacement extends MemberListPlacement {
  private static final Hasher64 XXH3 = Hashing.xxh3_64();

  private final int[] numbers;
  private final long[] nodeSeeds;

  /**
   * Rendezvous over {@code fleet}.
   *
   * @param replicas the requested R; fewer when the fleet has fewer nodes
   * @throws IllegalArgumentException when the fleet is empty or {@code replicas} is below 1
   */
  public RendezvousPlacement(Fleet fleet, int replicas) {
    super(fleet, Math.min(replicas, fleet.size()), "rendezvous", false, "member list");
    this.numbers = fleet.nodes().stream().mapToInt(Fleet.Node::number).toArray();
    this.nodeSeeds = new long[numbers.length];
    for (int i = 0; i < numbers.length; i++) {
      nodeSeeds[i] = XXH3.hashBytesToLong(fleet.get(i).id().getBytes(StandardCharsets.UTF_8));
    }
  }

  @Override
  public RendezvousPlacement changeTo(Fleet next) {
    return new RendezvousPlacement(next, replicas());
  }

  @Override
  public Lookup lookup() {
    int r = replicas();
    long[] seeds = nodeSeeds;
    int[] nodes = numbers;
    // Scores are kept with the sign bit flipped so that signed comparison orders them unsigned.
    long[] best = new long[r];
    int[] bestNode = new int[r];
    return (keyHash, out) -> {
      int filled = 0;
      for (int i = 0; i < seeds.length; i++) {
        long score = XXH3.hashLongLongToLong(keyHash, seeds[i]) ^ Long.MIN_VALUE;
        if (filled == r && score <= best[r - 1]) {
          continue;
        }
        int pos = filled < r ? filled++ : r - 1;
        while (pos > 0 && best[pos - 1] < score) {
          best[pos] = best[pos - 1];
          bestNode[pos] = bestNode[pos - 1];
          pos--;
        }
        best[pos] = score;
        bestNode[pos] = i;
      }
      for (int j = 0; j < r; j++) {
        out[j] = nodes[bestNode[j]];
      }
      return r;
    };
  }
}
