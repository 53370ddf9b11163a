package io.ringshift.demo.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;

class ScenarioPicksTest {
  /** A member: id and zone, as the demo numbers them (zones az-1, az-2, az-3 round-robin). */
  record M(String id, String zone) {}

  private static List<M> members(int count) {
    List<M> members = new ArrayList<>();
    for (int i = 1; i <= count; i++) {
      members.add(new M(String.format("node-%02d", i), "az-" + ((i - 1) % 3 + 1)));
    }
    return members;
  }

  @Test
  void shouldNotReweightAMemberLeftAloneInItsZoneBySeedThatFailedDemoIt() {
    // DemoIT with this seed reweighted node-06, alone in az-3 once node-03 was drained: it holds a replica of every
    // key whatever its weight, so the change was planned with no task.
    ScenarioPicks<M> picks = ScenarioPicks.draw(members(6), M::zone, "az-1", 7896607853839L);
    assertThat(picks.drained().id()).isEqualTo("node-03");
    assertThat(picks.reweighted().id()).isNotEqualTo("node-06");
    assertThat(picks.reweighted().zone()).isNotEqualTo("az-3");
  }

  @Test
  void shouldPickThreeDistinctMembersAndAReweightedOneWithAZoneMateForEverySeed() {
    long base = System.nanoTime();
    System.out.println("ScenarioPicksTest seed " + base);
    Random random = new Random(base);
    for (int trial = 0; trial < 2_000; trial++) {
      long seed = random.nextLong();
      int count = 6 + random.nextInt(115);
      List<M> members = members(count);
      String joinerZone = "az-" + ((count) % 3 + 1);
      ScenarioPicks<M> picks = ScenarioPicks.draw(members, M::zone, joinerZone, seed);
      assertThat(picks.failed().zone()).as("seed %d", seed).isNotEqualTo(picks.drained().zone());
      assertThat(picks.reweighted()).as("seed %d", seed).isNotIn(picks.drained(), picks.failed());
      Map<String, Integer> perZone = new HashMap<>();
      members.stream().filter(m -> m != picks.drained()).forEach(m -> perZone.merge(m.zone(), 1, Integer::sum));
      perZone.merge(joinerZone, 1, Integer::sum);
      assertThat(perZone.get(picks.reweighted().zone())).as("seed %d, %d members", seed, count).isGreaterThan(1);
    }
  }

  @Test
  void shouldSayWhyWhenNoMemberCanBeReweighted() {
    List<M> members = List.of(new M("a", "az-1"), new M("b", "az-2"), new M("c", "az-3"));
    assertThatThrownBy(() -> ScenarioPicks.draw(members, M::zone, "az-9", 1))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("alone in its zone");
  }
}
