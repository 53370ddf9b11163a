package io.ringshift.demo.internal;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.function.Function;

/**
 * Which members the demo's scenario drains, fails and reweights, drawn from the seed.
 *
 * <ul>
 *   <li>the <b>drained</b> member is the first of the members shuffled by the seed;
 *   <li>the <b>failed</b> member is the first in another zone than the drained one, so that three zones remain;
 *   <li>the <b>reweighted</b> member is the first, neither drained nor failed, whose zone still has another member
 *       when the weight changes (after the join and the drain). With as many zones as replicas, zone-aware
 *       placement gives a member alone in its zone a replica of every key whatever its weight, so a weight change
 *       there moves nothing: at six nodes, two per zone, draining one leaves its zone-mate alone, and reweighting
 *       that mate would be a change with no task.
 * </ul>
 *
 * @param <N> the node type
 */
record ScenarioPicks<N>(N drained, N failed, N reweighted) {

  /**
   * Draws the three members.
   *
   * @param members the ring's members at init, in a fixed order (the seed shuffles them)
   * @param zone a member's zone
   * @param joinerZone the zone of the spare that joins before the drain
   * @param seed the demo's seed
   * @throws IllegalArgumentException when the members cannot give three such picks (fewer than two zones with two
   *     members); the demo's smallest shape, six nodes in three zones, always can
   */
  static <N> ScenarioPicks<N> draw(List<N> members, Function<N, String> zone, String joinerZone, long seed) {
    List<N> shuffled = new ArrayList<>(members);
    Collections.shuffle(shuffled, new Random(seed));
    N drained = shuffled.get(0);
    String drainedZone = zone.apply(drained);
    N failed = shuffled.stream().filter(n -> !zone.apply(n).equals(drainedZone)).findFirst()
        .orElseThrow(() -> new IllegalArgumentException("the members are all in zone " + drainedZone
            + "; the scenario fails a member of another zone than the drained one"));
    Map<String, Integer> perZone = new HashMap<>();
    for (N n : members) {
      perZone.merge(zone.apply(n), 1, Integer::sum);
    }
    perZone.merge(joinerZone, 1, Integer::sum);
    perZone.merge(drainedZone, -1, Integer::sum);
    N reweighted = shuffled.stream()
        .filter(n -> n != drained && n != failed && perZone.get(zone.apply(n)) >= 2)
        .findFirst()
        .orElseThrow(() -> new IllegalArgumentException("no member left to reweight in a zone of two or more "
            + "members after the drain (zones " + perZone + "); a member alone in its zone holds every key"));
    return new ScenarioPicks<>(drained, failed, reweighted);
  }
}
