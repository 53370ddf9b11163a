package io.ringshift.simulation;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Runs the deterministic simulation of the protocol over a fixed range of seeds (about a minute in CI), or over any
 * range: {@code -Dsim.seed=S -Dsim.scenarios=N} runs N scenarios from seed S. A scenario that breaks an invariant
 * fails the test with its seed, what it broke at which event, its operations and its last events, and the command that
 * replays it alone; the run stops after 3 such scenarios ({@code -Dsim.stopAfter=K}), and
 * {@code -Dsim.tasks=true} adds every task and status record to their events.
 */
class ProtocolSimulationTest {
  /** The first seed CI runs; its scenarios are always the same ones. */
  static final long CI_FIRST_SEED = 20_261_207L;
  /** About a minute; enough to find each of the five defects of protocol-simulation/teeth (the last at 1,607). */
  static final int CI_SCENARIOS = 1_700;

  @Test
  void shouldKeepEveryInvariantInEveryScenario() {
    long first = Long.getLong("sim.seed", CI_FIRST_SEED);
    int count = Integer.getInteger("sim.scenarios", CI_SCENARIOS);
    long started = System.nanoTime();
    List<ProtocolSimulation.Result> failed = new ArrayList<>();
    long events = 0;
    long epochs = 0;
    java.util.Map<String, Long> totals = new java.util.TreeMap<>();
    for (long seed = first; seed < first + count; seed++) {
      ProtocolSimulation.Result r = ProtocolSimulation.run(seed, false);
      events += r.steps();
      epochs += r.counts().getOrDefault("epochs published", 0L);
      r.counts().forEach((k, v) -> totals.merge(k, v, Long::sum));
      if (!r.passed()) {
        // Again, keeping its events: the same run. -Dsim.tasks=true adds the task and status records to them.
        failed.add(ProtocolSimulation.run(seed, true, Boolean.getBoolean("sim.tasks")));
        if (failed.size() >= Integer.getInteger("sim.stopAfter", 3)) {
          count = (int) (seed - first + 1);
          break;
        }
      }
    }
    double seconds = (System.nanoTime() - started) / 1e9;
    System.out.printf("protocol simulation: %d scenarios from seed %d in %.1f s (%.0f a minute), %d events, %d epochs "
        + "published, %d failed%n", count, first, seconds, count * 60 / seconds, events, epochs, failed.size());
    System.out.println("  transitions: " + totals.entrySet().stream()
        .filter(e -> e.getKey()
            .matches(".*(stage|barrier|fence cutover|in place|revert|muted|lease|acknowledged|refused).*"))
        .map(e -> e.getKey() + " " + e.getValue()).collect(java.util.stream.Collectors.joining(", ")));
    for (ProtocolSimulation.Result r : failed) {
      System.out.println(report(r));
    }
    assertThat(failed).as("scenarios that broke an invariant (reports above)")
        .extracting(r -> r.seed() + ": " + r.violation()).isEmpty();
  }

  static String report(ProtocolSimulation.Result r) {
    StringBuilder out = new StringBuilder();
    out.append("seed ").append(r.seed()).append(" broke an invariant at event ").append(r.step()).append(": ")
        .append(r.violation()).append('\n').append("  ").append(r.scenario()).append('\n')
        .append("  replay: ./mvnw -B -o verify -pl protocol-simulation -am -DskipITs -Dtest=ProtocolSimulationTest ")
        .append("-Dsurefire.failIfNoSpecifiedTests=false -Dsim.seed=").append(r.seed())
        .append(" -Dsim.scenarios=1\n  last events:\n");
    r.lastEvents().forEach(l -> out.append("    ").append(l).append('\n'));
    return out.toString();
  }
}
