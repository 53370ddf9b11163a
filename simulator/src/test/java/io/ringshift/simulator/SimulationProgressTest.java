package io.ringshift.simulator;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** Progress output with an injected clock: plain lines for logs, one redrawn line on a terminal. */
class SimulationProgressTest {
  private final AtomicLong now = new AtomicLong();
  private final StringWriter text = new StringWriter();

  private SimulationProgress progress(boolean terminal, boolean quiet) {
    return new SimulationProgress(new PrintWriter(text, true), terminal, quiet, 4, now::get);
  }

  @Test
  void shouldPrintOnePlainLinePerStageWithTheOverallPercentageWhenNotATerminal() {
    SimulationProgress p = progress(false, false);
    p.stage("workload", 1);
    now.addAndGet(500_000_000L);
    p.update(0.5, "ignored in plain mode");
    p.stage("sweep", 3);
    now.addAndGet(1_500_000_000L);
    p.finish();
    assertThat(text.toString().lines()).containsExactly(
        "simulate: [  0%] workload", "simulate: [ 25%] sweep", "simulate: [100%] done in 2.0 s");
    assertThat(p.stageMillis()).containsExactly(
        java.util.Map.entry("workload", 500L), java.util.Map.entry("sweep", 1500L));
  }

  @Test
  void shouldRedrawOneLineInPlaceOnATerminal() {
    SimulationProgress p = progress(true, false);
    p.stage("sweep", 4);
    now.addAndGet(200_000_000L);
    p.update(0.5, "V=64");
    now.addAndGet(10_000_000L);
    p.update(0.6, "V=128");
    p.finish();
    String out = text.toString();
    assertThat(out).contains("\rsimulate: [  0%] sweep", "\rsimulate: [ 50%] sweep (V=64)")
        .doesNotContain("V=128").endsWith("done in 0.2 s" + System.lineSeparator());
    assertThat(out.chars().filter(c -> c == '\n')).as("a single line, redrawn with carriage returns").hasSize(1);
  }

  @Test
  void shouldPrintNothingWhenQuiet() {
    SimulationProgress p = progress(false, true);
    p.stage("workload", 1);
    p.finish();
    assertThat(text.toString()).isEmpty();
  }
}
