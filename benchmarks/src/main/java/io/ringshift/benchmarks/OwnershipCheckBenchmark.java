package io.ringshift.benchmarks;

import io.ringshift.ring.RingRange;
import io.ringshift.ring.RingSnapshot;
import java.util.SplittableRandom;
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
 * The ownership check of a storage node's range delete at 120 nodes x 256 tokens: before each of the 64 pieces a
 * delete (a cleanup, a copy clearing its target) is cut into, the node asks whether its ring makes it a replica of
 * any part of the piece ({@code OwnershipCheckedStore.deleteRange}). One operation checks the 64 pieces of one range
 * of the ring for a node that replicates none of it, the common case (a cleanup of a range the node lost), so every
 * piece is checked in full.
 *
 * <p>{@code search}: {@link RingSnapshot#firstReplicatedRange}, a binary search for the piece's first ring range,
 * then a walk over the ring ranges that overlap the piece. {@code scan}: the check as it was, every range of the ring
 * tested against the piece (30,720 per piece, 1.97 M per delete); the baseline of the same run.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(1)
@State(Scope.Thread)
public class OwnershipCheckBenchmark {
  private static final int PIECES = 64;
  private static final int CASES = 256;

  @Param({"search", "scan"})
  public String impl;

  private RingSnapshot ring;
  private RingRange[][] pieces;
  private String[] nodes;
  private int next;

  @Setup(Level.Trial)
  public void setUp() {
    ring = Rings.reference(120, 256);
    SplittableRandom random = new SplittableRandom(42);
    pieces = new RingRange[CASES][];
    nodes = new String[CASES];
    for (int c = 0; c < CASES; c++) {
      int r = random.nextInt(ring.tokenCount());
      pieces[c] = RingRange.of(ring.rangeStart(r), ring.rangeEnd(r)).split(PIECES).toArray(RingRange[]::new);
      String node;
      do {
        node = Rings.nodeId(random.nextInt(120));
      } while (ring.replicasOfRange(r).contains(node));
      nodes[c] = node;
    }
  }

  /** The 64 checks of one delete; returns how many pieces the node replicates part of (0). */
  @Benchmark
  public int deleteChecks() {
    int c = next++ & (CASES - 1);
    String node = nodes[c];
    int replicated = 0;
    for (RingRange piece : pieces[c]) {
      int r = "search".equals(impl) ? ring.firstReplicatedRange(piece, node) : scan(piece, node);
      if (r >= 0) {
        replicated++;
      }
    }
    return replicated;
  }

  private int scan(RingRange range, String node) {
    for (int r = 0; r < ring.tokenCount(); r++) {
      boolean empty = ring.rangeStart(r) == ring.rangeEnd(r) && ring.tokenCount() > 1;
      if (!empty && RingRange.of(ring.rangeStart(r), ring.rangeEnd(r)).intersects(range)
          && ring.replicasOfRange(r).contains(node)) {
        return r;
      }
    }
    return -1;
  }
}
