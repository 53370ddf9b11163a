package io.ringshift.benchmarks;

import io.ringshift.ring.RingBuilder;
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
 * Building a snapshot (tokens, sort, bucket index, every replica set, SHA-256 checksum) and diffing a join
 * ({@code nodes -> nodes + 1}), at 120 x 256 and 1000 x 256 tokens. The orchestrator does both for every
 * membership change, and the publisher and every client rebuild the snapshot to verify it.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(1)
@State(Scope.Thread)
public class SnapshotBenchmark {
  @Param({"120", "1000"})
  public int nodes;

  private RingBuilder builder;
  private RingSnapshot before;
  private RingSnapshot after;

  @Setup(Level.Trial)
  public void setUp() {
    builder = Rings.referenceBuilder(nodes, LookupBenchmark.VNODES);
    before = builder.build();
    after = before.toBuilder().epoch(1).addMember(Rings.nodeId(nodes), "az-1").build();
  }

  @Benchmark
  public RingSnapshot build() {
    return builder.build();
  }

  @Benchmark
  public RingDiff diffJoin() {
    return RingDiff.between(before, after);
  }
}
