package io.ringshift.simulation;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;

/**
 * Runs the deterministic simulation of the protocol over a fixed range of seeds (two to three minutes in CI), or over
 * any range: {@code -Dsim.seed=S -Dsim.scenarios=N} runs N scenarios from seed S. A scenario that breaks an invariant
 * fails the test with its seed, what it broke at which event, its operations and its last events, and the command that
 * replays it alone; the run stops after 3 such scenarios ({@code -Dsim.stopAfter=K}), and
 * {@code -Dsim.tasks=true} adds every task and status record to their events. Scenarios run on every core
 * ({@code -Dsim.threads=N} to choose); the results, the report and the stop are those of a run one after another.
 */
class ProtocolSimulationTest {
  /** The first seed CI runs; its scenarios are always the same ones. */
  static final long CI_FIRST_SEED = 20_261_207L;
  /** Enough to find each of the five defects of protocol-simulation/teeth (the last at 1,607). */
  static final int CI_SCENARIOS = 1_700;

  @Test
  void shouldKeepEveryInvariantInEveryScenario() throws Exception {
    long first = Long.getLong("sim.seed", CI_FIRST_SEED);
    int count = Integer.getInteger("sim.scenarios", CI_SCENARIOS);
    int threads = Integer.getInteger("sim.threads", Runtime.getRuntime().availableProcessors());
    long started = System.nanoTime();
    List<ProtocolSimulation.Result> failed = new ArrayList<>();
    long events = 0;
    long epochs = 0;
    java.util.Map<String, Long> totals = new java.util.TreeMap<>();
    // Scenarios are independent (each builds its own world from its seed), so they run on every core; their results
    // are taken in seed order, a window ahead, so the report and the stop after K failures are those of a serial run.
    ExecutorService pool = Executors.newFixedThreadPool(Math.max(1, threads));
    try {
      Deque<Future<ProtocolSimulation.Result>> ahead = new ArrayDeque<>();
      long next = first;
      int window = 4 * Math.max(1, threads);
      for (long seed = first; seed < first + count; seed++) {
        while (next < first + count && ahead.size() < window) {
          long s = next++;
          ahead.add(pool.submit(() -> ProtocolSimulation.run(s, false)));
        }
        ProtocolSimulation.Result r = ahead.removeFirst().get();
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
    } finally {
      pool.shutdownNow();
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
