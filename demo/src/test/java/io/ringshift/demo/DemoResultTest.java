package io.ringshift.demo;

import static org.assertj.core.api.Assertions.assertThat;

import io.ringshift.demo.DemoResult.ChangeReport;
import io.ringshift.demo.DemoResult.Mark;
import io.ringshift.demo.DemoResult.Spread;
import java.util.List;
import org.junit.jupiter.api.Test;

class DemoResultTest {
  @Test
  void shouldTakeNearestRankPercentiles() {
    long[] millis = new long[100];
    for (int i = 0; i < 100; i++) {
      millis[i] = 100 - i; // 1..100, in reverse
    }
    assertThat(Spread.of(millis)).isEqualTo(new Spread(100, 50, 99, 100));
    assertThat(Spread.of(new long[] {7})).isEqualTo(new Spread(1, 7, 7, 7));
    assertThat(Spread.of(new long[0])).isEqualTo(Spread.NONE);
  }

  @Test
  void shouldMeasureEachPhaseFromThePreviousStage() {
    ChangeReport c = new ChangeReport("join", List.of(2L), "PUBLISHED", 10, 300, 200, 0.1, 0.08,
        List.of(new Mark("requested", 1_000), new Mark("planned", 1_050), new Mark("copied", 4_050),
            new Mark("ready", 5_000), new Mark("published", 5_200)), Spread.NONE, Spread.NONE, 12);
    assertThat(c.phases()).containsExactly(java.util.Map.entry("planned", 50L), java.util.Map.entry("copied", 3_000L),
        java.util.Map.entry("ready", 950L), java.util.Map.entry("published", 200L));
    assertThat(c.movedToIdeal()).isEqualTo(1.5);
    assertThat(c.at("ready")).isEqualTo(5_000);
    assertThat(c.at("cleaned")).isEqualTo(-1);
  }

  @Test
  void shouldEndACancelledChangeAtItsRevertWhenTheRevertCameLater() {
    List<Mark> marks = List.of(new Mark("requested", 1_000), new Mark("planned", 1_050), new Mark("cancelled",
        1_900));
    ChangeReport reverted = new ChangeReport("cancel", List.of(3L), "CANCELLED", 5, 100, 0, 0, 0, marks,
        Spread.NONE, Spread.NONE, -1, "reverted", List.of(new Mark("stage 1", 1_400), new Mark("barrier 1", 2_600),
            new Mark("reverted", 6_000)), 12.0);
    assertThat(reverted.endedAt()).isEqualTo(6_000);
    ChangeReport published = new ChangeReport("join", List.of(2L), "PUBLISHED", 10, 300, 200, 0.1, 0.08,
        List.of(new Mark("requested", 1_000), new Mark("published", 5_200)), Spread.NONE, Spread.NONE, 12);
    assertThat(published.endedAt()).isEqualTo(5_200);
    ChangeReport cancelledBeforeStages = new ChangeReport("cancel", List.of(3L), "CANCELLED", 5, 100, 0, 0, 0, marks,
        Spread.NONE, Spread.NONE, -1);
    assertThat(cancelledBeforeStages.endedAt()).isEqualTo(1_900);
  }

  @Test
  void shouldHaveNoIdealRatioWithoutAnIdeal() {
    ChangeReport cancelled = new ChangeReport("cancel", List.of(3L), "CANCELLED", 5, 100, 0, 0, 0, List.of(),
        Spread.NONE, Spread.NONE, -1);
    assertThat(cancelled.movedToIdeal()).isEqualTo(-1);
    assertThat(cancelled.phases()).isEmpty();
  }
}
