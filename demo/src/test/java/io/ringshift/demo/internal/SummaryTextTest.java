package io.ringshift.demo.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.ringshift.demo.DemoResult;
import io.ringshift.demo.DemoResult.ChangeReport;
import io.ringshift.demo.DemoResult.Mark;
import io.ringshift.demo.DemoResult.Spread;
import io.ringshift.demo.DemoSettings;
import java.util.List;
import org.junit.jupiter.api.Test;

class SummaryTextTest {
  static DemoResult result(List<String> failures) {
    ChangeReport join = new ChangeReport("scale-out: join node-13 (az-1)", List.of(2L), "PUBLISHED", 66,
        14_000_000, 19_000_000, 0.07, 0.077, List.of(new Mark("requested", 1_000), new Mark("planned", 1_020),
            new Mark("copied", 8_700), new Mark("ready", 20_300), new Mark("published", 20_900),
            new Mark("cleaned", 33_200)), new Spread(32, 1_784, 2_364, 2_364), Spread.NONE, 106);
    ChangeReport cancel = new ChangeReport("mistaken join of node-14 (az-2), cancelled", List.of(3L), "CANCELLED",
        74, 4_500_000, 0, 0, 0, List.of(new Mark("requested", 21_000), new Mark("cancelled", 23_000)), Spread.NONE,
        Spread.NONE, -1);
    return new DemoResult(9, DemoSettings.defaults().withSeed(9), List.of(join, cancel), 200_000, 87_000_000,
        9_100, 60_000, 37_000, 126, 1_194, 0, 32_337, 0, 0, 0, 600_000, 0, List.of(), 6, "passed: 6 published",
        true, 79_000, failures);
  }

  @Test
  void shouldPrintAChangeTableAndPassWhenEveryCheckHolds() {
    List<String> lines = SummaryText.lines(result(List.of()));
    assertThat(lines.get(0)).isEqualTo("summary (seed 9, 1 min 19 s):");
    assertThat(lines.get(2)).contains("scale-out: join node-13 (az-1)").contains("66").contains("0.74")
        .contains("7.7 s").contains("1784/2364/2364 ms (32 writes)").contains("106 ms");
    assertThat(lines.get(3)).contains("3 CANCELLED").contains("-");
    assertThat(lines.get(1).indexOf("epochs") + "epochs".length()).as("right-aligned columns")
        .isEqualTo(lines.get(2).indexOf(" 2 ") + 2);
    assertThat(lines).anySatisfy(l -> assertThat(l).startsWith("writes: 37,000 acknowledged (617/s of the 1,000/s asked)"));
    assertThat(lines.get(lines.size() - 1)).startsWith("PASSED");
  }

  @Test
  void shouldPrintEachChangesStagesAndBarrierWaits() {
    ChangeReport join = new ChangeReport("scale-out: join node-13 (az-1)", List.of(2L), "PUBLISHED", 66,
        14_000_000, 19_000_000, 0.07, 0.077, List.of(new Mark("requested", 1_000), new Mark("planned", 1_020),
            new Mark("copied", 8_700), new Mark("ready", 20_300), new Mark("published", 20_900)), Spread.NONE,
        Spread.NONE, 106, "stages", List.of(new Mark("stage 1", 1_070), new Mark("barrier 1", 1_190),
            new Mark("stage 2", 20_350), new Mark("final", 20_900), new Mark("barrier 3", 21_010)), 18.5);
    DemoResult r = new DemoResult(9, DemoSettings.defaults().withSeed(9), List.of(join), 200_000, 87_000_000,
        9_100, 60_000, 37_000, 0, 0, 0, 32_337, 0, 0, 0, 600_000, 0, List.of(), 6, "passed: 6 published", true,
        79_000, List.of(), 12.25);

    List<String> lines = SummaryText.lines(r);

    assertThat(lines).contains("  scale-out: join node-13 (az-1): stages: stage 1 0.1 s after the plan, barrier 1 "
        + "120 ms, stage 2 at READY, 19.3 s after stage 1, barrier 2 550 ms to FINAL, barrier 3 110 ms; write p99 "
        + "18.5 ms; 0 writes refused at its fences", "  write p99 while no change was in progress: 12.3 ms");
  }

  /** Each latency figure says how busy the process was over the same seconds, when that was measured. */
  @Test
  void shouldPrintTheProcessCpuBesideEachLatencyFigure() {
    ChangeReport join = new ChangeReport("scale-out: join node-13 (az-1)", List.of(2L), "PUBLISHED", 66,
        14_000_000, 19_000_000, 0.07, 0.077, List.of(new Mark("requested", 1_000), new Mark("planned", 1_020),
            new Mark("published", 20_900)), Spread.NONE, Spread.NONE, 106, "stages",
        List.of(new Mark("stage 1", 1_070)), 18.5, 1.94);
    DemoResult r = new DemoResult(9, DemoSettings.defaults().withSeed(9), List.of(join), 200_000, 87_000_000,
        9_100, 60_000, 37_000, 0, 0, 0, 32_337, 0, 0, 0, 600_000, 0, List.of(), 6, "passed: 6 published", true,
        79_000, List.of(), 12.25, 1.26);
    int cores = Runtime.getRuntime().availableProcessors();

    List<String> lines = SummaryText.lines(r);

    assertThat(lines).anySatisfy(l -> assertThat(l).startsWith("  scale-out: join node-13 (az-1): stages:")
        .contains("; write p99 18.5 ms (process CPU 1.9 of " + cores + " cores); 0 writes refused"));
    assertThat(lines).contains("  write p99 while no change was in progress: 12.3 ms (process CPU 1.3 of " + cores
        + " cores)");
  }

  @Test
  void shouldNameEveryFailedCheck() {
    List<String> lines = SummaryText.lines(result(List.of("3 stale reads", "audit FAILED: x")));
    assertThat(lines.get(lines.size() - 1)).isEqualTo("FAILED: 3 stale reads; audit FAILED: x");
  }

  @Test
  void shouldDrawASelfContainedReport() {
    Timeline timeline = new Timeline(0);
    timeline.acknowledged(500, 450);
    timeline.refused(21_500);
    timeline.read(30_000, false, false);
    String html = DemoReport.render(result(List.of()), timeline);
    assertThat(html).startsWith("<!DOCTYPE html>").contains("<svg").contains("PASSED")
        .contains("scale-out: join node-13 (az-1)").doesNotContain("<script").doesNotContain("http://")
        .doesNotContain("https://");
  }
}
