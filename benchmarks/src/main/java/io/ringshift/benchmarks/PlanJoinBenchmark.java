package io.ringshift.benchmarks;

import io.ringshift.protocol.RingSnapshotCodec;
import io.ringshift.ring.PlacementPolicy;
import io.ringshift.ring.RingDiff;
import io.ringshift.ring.RingSnapshot;
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
 * What the orchestrator computes to plan a join at 1,000 nodes: the next ring from the active one (under the
 * balanced policy, the joiner's tokens from the allocator) and the diff, for each policy at 8 and 256 tokens per
 * node. The setup prints the snapshot's encoded size, which is what the balanced policy's listed tokens cost.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(1)
@State(Scope.Thread)
public class PlanJoinBenchmark {
  @Param({"HASHED", "BALANCED"})
  public PlacementPolicy policy;

  @Param({"8", "256"})
  public int vnodes;

  private RingSnapshot before;

  @Setup(Level.Trial)
  public void setUp() {
    before = Rings.referenceBuilder(1000, vnodes).policy(policy).build();
    System.out.printf("%n%s at 1,000 x %d: snapshot %,d bytes%n", policy, vnodes,
        new RingSnapshotCodec().encode(before).length);
  }

  @Benchmark
  public RingDiff planJoin() {
    RingSnapshot after = before.toBuilder().epoch(1).addMember(Rings.nodeId(1000), "az-1").build();
    return RingDiff.between(before, after);
  }
}
