package io.ringshift.simulator;

import io.ringshift.ring.RingSnapshot;
import io.ringshift.simulator.internal.SimulationRun;
import java.util.function.ToLongFunction;

/**
 * The reference-scenario placement simulation behind {@code ringshift simulate} (docs/simulate.md): a seeded
 * workload of keys, values and request rates placed by the ring and by the peer schemes of
 * {@link io.ringshift.simulator.placement}, measured under a join, a drain, a failure and a weight change.
 *
 * <p>Deterministic: for the same parameters every figure of the result is the same in any JVM, on any number of
 * threads, except the timings (build ms, ns/lookup and the run's wall times). {@link TextReport} and
 * {@link HtmlReport} render a result.
 */
public final class Simulation {
  private Simulation() {}

  /**
   * Runs the scenario of {@code parameters}. Takes seconds at the reference scale (one million keys) and about
   * 48 MiB plus 150 bytes per key of heap; rendezvous lookups use every available processor.
   *
   * @param progress receives the stages of the run and records their wall times
   * @param snapshotWireBytes encoded size of a ring snapshot, by the codec that ships snapshots to clients: the
   *     simulator reports what a client must download, and the wire format is not the simulator's to define
   * @throws io.ringshift.ring.RingException when the ring library rejects a ring the parameters ask for
   */
  public static SimulationResult run(SimulationParameters parameters, SimulationProgress progress,
      ToLongFunction<RingSnapshot> snapshotWireBytes) {
    return SimulationRun.run(parameters, progress, snapshotWireBytes);
  }
}
