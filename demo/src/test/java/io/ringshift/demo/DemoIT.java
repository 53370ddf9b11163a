package io.ringshift.demo;

import static org.assertj.core.api.Assertions.assertThat;

import io.ringshift.demo.DemoResult.ChangeReport;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The demo end to end, small: its own embedded broker, six nodes and two spares, 8 tokens each, 5,000 keys, 200
 * operations/s. Every change of the scenario must end as planned and every check pass; the summary and the report
 * must say so.
 */
class DemoIT {
  @TempDir Path dir;

  /** The small shape of the demo ITs, with {@code -Ddemo.seed} or a fresh seed, printed for replay. */
  static DemoSettings small(String test) {
    long seed = Long.getLong("demo.seed", System.nanoTime());
    System.out.println(test + " seed " + seed + " (-Ddemo.seed to replay)");
    return DemoSettings.defaults().withNodes(6).withKeys(5_000).withRate(200).withVnodes(8)
        .withGrace(Duration.ofSeconds(1)).withDashboardPort(-1).withSeed(seed);
  }

  @Test
  void shouldRunTheScenarioAndPassEveryCheck() throws Exception {
    DemoSettings settings = small("DemoIT");
    StringWriter text = new StringWriter();
    PrintWriter out = new PrintWriter(text, true);
    DemoResult result;
    try (Demo demo = Demo.start(settings, out, false)) {
      result = demo.run();
      Path report = dir.resolve("demo.html");
      demo.writeReport(result, report);
      assertThat(Files.readString(report)).contains("<svg").contains("PASSED");
    } finally {
      System.out.println(text);
    }
    assertThat(result.failures()).isEmpty();
    assertThat(result.passed()).isTrue();
    assertThat(result.changes()).extracting(ChangeReport::outcome)
        .containsExactly("PUBLISHED", "CANCELLED", "PUBLISHED", "PUBLISHED", "PUBLISHED");
    assertThat(result.changes().get(4).epochs()).as("a failure epoch and a repair epoch").hasSize(2);
    assertThat(result.changes()).allSatisfy(c -> assertThat(c.tasks()).isPositive());
    assertThat(result.writes()).isPositive();
    assertThat(result.reads()).isPositive();
    assertThat(result.lostWrites()).isZero();
    assertThat(result.staleReads()).isZero();
    assertThat(result.fillingReads()).isZero();
    assertThat(result.replicaReads()).isEqualTo(3L * 5_000);
    assertThat(result.auditPassed()).isTrue();
    assertThat(text.toString()).contains("epoch 1 PUBLISHED").contains("CANCELLED").contains("PASSED");
  }
}
