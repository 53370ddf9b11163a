package io.ringshift.benchmarks;

import com.dynatrace.hash4j.consistent.ConsistentBucketSetHasher;
import com.dynatrace.hash4j.consistent.ConsistentHashing;
import com.dynatrace.hash4j.hashing.Hasher64;
import com.dynatrace.hash4j.hashing.Hashing;
import com.dynatrace.hash4j.random.PseudoRandomGeneratorProvider;
import io.ringshift.ring.Member;
import io.ringshift.ring.RingSnapshot;
import io.ringshift.simulator.placement.Fleet;
import io.ringshift.simulator.placement.PlacementScheme;
import io.ringshift.simulator.placement.RendezvousPlacement;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * One placement lookup of a 16-byte key, key hash included, at 120 nodes (x 256 tokens for the rings), for
 * ringshift and its peers, in one run so that their ratios are measured on the same machine at the same time.
 *
 * <p>Keys cycle through 4,096 distinct random keys (64 KiB of key bytes), as a request path sees keys that
 * were just read from the network; the rings' tables (about 400 KiB at 30,720 tokens) are touched at random
 * positions, so lookups pay real cache misses rather than hitting one hot key. Each impl runs in its own fork, so the call
 * through {@link Lookup} is monomorphic there.
 *
 * <p>Peers: {@code treemapMd5} is the textbook ketama ring (MD5 of the key, {@code TreeMap.ceilingEntry});
 * {@code guavaJump} is Guava's {@code Hashing.consistentHash} on an XXH3 key hash; {@code jumpBackAnchor} is
 * hash4j's JumpBackAnchor bucket set; {@code rendezvous} is the simulator's {@link RendezvousPlacement} (the
 * scheme {@code ringshift simulate} compares the ring with), primary only: it scores all 120 nodes with XXH3-64
 * of the key hash and a per-node hash and takes the highest.
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(1)
@State(Scope.Thread)
public class LookupBenchmark {
  static final int NODES = 120;
  static final int VNODES = 256;
  static final int KEY_COUNT = 1 << 12;

  @Param({"ringshift", "ringshiftReplicas", "treemapMd5", "guavaJump", "jumpBackAnchor", "rendezvous"})
  public String impl;

  private byte[][] keys;
  private int next;
  private Lookup lookup;

  /** One lookup; returns something derived from the owner so that nothing is optimised away. */
  interface Lookup {
    Object lookup(byte[] key);
  }

  @Setup(Level.Trial)
  public void setUp() {
    SplittableRandom random = new SplittableRandom(42);
    keys = new byte[KEY_COUNT][];
    for (int i = 0; i < KEY_COUNT; i++) {
      keys[i] = new byte[16];
      random.nextBytes(keys[i]);
    }
    lookup = create(impl);
  }

  static Lookup create(String impl) {
    switch (impl) {
      case "ringshift": {
        RingSnapshot ring = Rings.reference(NODES, VNODES);
        return ring::ownerOf;
      }
      case "ringshiftReplicas": {
        RingSnapshot ring = Rings.reference(NODES, VNODES);
        // Reads all three replicas (one search, then the flat replica table), as a client routing a write does.
        return key -> {
          int range = ring.rangeOf(ring.position(key));
          Member first = ring.replica(range, 0);
          Member second = ring.replica(range, 1);
          return ring.replica(range, 2) == first ? second : first;
        };
      }
      case "treemapMd5":
        return new TreeMapMd5Ring(NODES, VNODES);
      case "guavaJump": {
        Hasher64 xxh3 = Hashing.xxh3_64();
        return key -> com.google.common.hash.Hashing.consistentHash(xxh3.hashBytesToLong(key), NODES);
      }
      case "jumpBackAnchor": {
        Hasher64 xxh3 = Hashing.xxh3_64();
        ConsistentBucketSetHasher anchor =
            ConsistentHashing.jumpBackAnchorHash(PseudoRandomGeneratorProvider.splitMix64_V1());
        for (int i = 0; i < NODES; i++) {
          anchor.addBucket();
        }
        return key -> anchor.getBucket(xxh3.hashBytesToLong(key));
      }
      case "rendezvous": {
        Hasher64 xxh3 = Hashing.xxh3_64();
        PlacementScheme.Lookup rendezvous = new RendezvousPlacement(Fleet.uniform(NODES, 3), 1).lookup();
        int[] primary = new int[1];
        return key -> {
          rendezvous.replicasOf(xxh3.hashBytesToLong(key), primary);
          return primary[0];
        };
      }
      default:
        throw new IllegalArgumentException("impl was " + impl + "; see @Param for the known impls");
    }
  }

  @Benchmark
  public Object lookup() {
    return lookup.lookup(keys[next++ & (KEY_COUNT - 1)]);
  }

  /** The ketama-style ring memcached clients use: MD5 of "node#i" for tokens, MD5 of the key for lookups. */
  static final class TreeMapMd5Ring implements Lookup {
    private final TreeMap<Long, String> ring = new TreeMap<>();
    private final MessageDigest md5;

    TreeMapMd5Ring(int nodes, int vnodes) {
      try {
        md5 = MessageDigest.getInstance("MD5");
      } catch (NoSuchAlgorithmException e) {
        throw new IllegalStateException("MD5 is required by every Java platform", e);
      }
      for (int n = 0; n < nodes; n++) {
        String node = Rings.nodeId(n);
        for (int i = 0; i < vnodes; i++) {
          ring.put(hash((node + "#" + i).getBytes(StandardCharsets.UTF_8)), node);
        }
      }
    }

    private long hash(byte[] bytes) {
      byte[] d = md5.digest(bytes);
      long h = 0;
      for (int i = 0; i < 8; i++) {
        h = (h << 8) | (d[i] & 0xFF);
      }
      return h;
    }

    @Override
    public Object lookup(byte[] key) {
      Map.Entry<Long, String> e = ring.ceilingEntry(hash(key));
      return e != null ? e.getValue() : ring.firstEntry().getValue();
    }
  }
}
