package io.ringshift.simulation;

import io.ringshift.simulation.internal.Scenario;
import io.ringshift.simulation.internal.World;
import java.util.List;
import java.util.Map;

/**
 * The deterministic simulation of the whole protocol (docs/development.md, "The deterministic simulation"): one
 * scenario per seed, run on the calling thread, on one seeded random source and one virtual clock, with the production
 * cores of every role inside simulated shells, simulated Kafka and in-memory stores, operations and faults drawn from the
 * seed, and the invariants checked as it runs. The same seed gives the same run, event for event ({@link Result#trace}).
 */
public final class ProtocolSimulation {
  private ProtocolSimulation() {}

  /**
   * What one scenario did.
   *
   * @param violation the first invariant broken, or null when every check passed
   * @param step the event at which it was broken
   * @param trace a hash of every event and every record written: equal for two runs of the same seed
   * @param lastEvents the last events before the end or the violation (only when asked to keep them)
   * @param strays keys left on nodes the last published ring does not place them on
   */
  public record Result(long seed, String scenario, String violation, long step, long steps, long trace,
      Map<String, Long> counts, long strays, List<String> lastEvents) {
    public boolean passed() {
      return violation == null;
    }
  }

  /** Runs the scenario of {@code seed}; {@code keepEvents} keeps its last events for a report. */
  public static Result run(long seed, boolean keepEvents) {
    return run(seed, keepEvents, false);
  }

  /**
   * Runs the scenario of {@code seed}; {@code keepEvents} keeps its last events for a report, {@code taskRecords} adds
   * every record of the task and status topics to them (and keeps more of them), to follow one task through a failure.
   */
  public static Result run(long seed, boolean keepEvents, boolean taskRecords) {
    Scenario scenario = Scenario.of(seed);
    World world = new World(scenario, keepEvents, taskRecords);
    world.run();
    return new Result(seed, scenario.toString(), world.violation(), world.violationStep(), world.steps(),
        world.trace().hash(), Map.copyOf(world.counts()), world.violation() == null ? world.strays() : -1,
        world.trace().lastLines());
  }
}
