package io.ringshift.demo;

import static org.assertj.core.api.Assertions.assertThat;

import io.ringshift.demo.DemoResult.ChangeReport;
import io.ringshift.ring.PlacementPolicy;
import java.io.PrintWriter;
import java.io.StringWriter;
import org.junit.jupiter.api.Test;

/**
 * The demo end to end on a cluster of the balanced placement policy (docs/placement.md, section 12): the
 * orchestrator allocates tokens for the INIT, the join, the weight change and the failure from the active ring's,
 * the publisher signs snapshots that list them, the application's RingClient routes by them, and the audit proves
 * every epoch's tokens are those the allocator gives. Six nodes and two spares, 8 tokens each, 5,000 keys.
 */
class DemoBalancedIT {
  @Test
  void shouldRunTheScenarioOnABalancedClusterAndPassEveryCheck() throws Exception {
    DemoSettings settings = DemoIT.small("DemoBalancedIT").withPolicy(PlacementPolicy.BALANCED);
    StringWriter text = new StringWriter();
    DemoResult result;
    try (Demo demo = Demo.start(settings, new PrintWriter(text, true), false)) {
      result = demo.run();
    } finally {
      System.out.println(text);
    }
    assertThat(result.failures()).isEmpty();
    assertThat(result.passed()).isTrue();
    assertThat(result.changes()).extracting(ChangeReport::outcome)
        .containsExactly("PUBLISHED", "CANCELLED", "PUBLISHED", "PUBLISHED", "PUBLISHED");
    assertThat(result.changes()).allSatisfy(c -> assertThat(c.tasks()).isPositive());
    assertThat(result.lostWrites()).isZero();
    assertThat(result.staleReads()).isZero();
    assertThat(result.fillingReads()).isZero();
    assertThat(result.auditPassed()).isTrue();
  }
}
