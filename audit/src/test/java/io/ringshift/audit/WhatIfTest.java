package io.ringshift.audit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import io.ringshift.audit.WhatIf.ClusterWhatIf;
import io.ringshift.audit.WhatIf.Row;
import io.ringshift.ring.PlacementPolicy;
import io.ringshift.ring.RingDiff;
import io.ringshift.protocol.CodecException;
import io.ringshift.ring.RingException;
import io.ringshift.ring.RingSnapshot;
import io.ringshift.protocol.SigningKey;
import io.ringshift.schemas.avro.EpochRecord;
import io.ringshift.schemas.avro.EpochState;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

class WhatIfTest {
  private static History history;

  @BeforeAll
  static void buildHistory() {
    history = History.standard("default", SigningKey.generate());
  }

  private static ClusterWhatIf replay(List<EpochRecord> epochs, int vnodes, Integer replicas) {
    List<ClusterWhatIf> clusters = WhatIf.replay(epochs, vnodes, replicas);
    assertThat(clusters).hasSize(1);
    return clusters.get(0);
  }

  @Test
  void shouldReplayEveryPublishedEpochOnceInOrder() {
    ClusterWhatIf c = replay(history.epochs(), 64, null);

    assertThat(c.rows()).extracting(Row::epoch).containsExactly(1L, 2L, 3L, 4L, 5L);
    assertThat(c.rows()).extracting(Row::cause)
        .containsExactly("INIT", "JOIN node-010", "FAIL node-002", "FAIL node-002", "DRAIN node-005");
    assertThat(c.recordedVnodes()).containsExactly(16);
    assertThat(c.recordedReplicas()).containsExactly(3);
    assertThat(c.rows().get(0).movedActual()).as("the first epoch moves nothing: there is no epoch before it")
        .isNull();
  }

  @Test
  void shouldReplayAHashedHistoryUnderTheBalancedPolicyWithFewerTokensAndBetterBalance() {
    List<ClusterWhatIf> clusters = WhatIf.replay(history.epochs(), 8, null, PlacementPolicy.BALANCED);
    ClusterWhatIf c = clusters.get(0);

    assertThat(c.rows()).hasSize(5);
    assertThat(c.rows().get(0).balanceWhatIf()).as("a new balanced ring of equal zones").isCloseTo(1.0, within(1e-6));
    assertThat(c.rows().get(0).balanceActual()).as("hashed at V = 16").isGreaterThan(1.1);
    // The join of node-010 (the fourth member of az-1) under the balanced policy moves exactly its share.
    assertThat(c.rows().get(1).movedWhatIf()).isCloseTo(1.0 / 12, within(1e-6));
    System.out.printf("what-if balanced/8 over the standard history: moved %.4f (recorded %.4f), worst balance "
        + "%.3f (recorded %.3f)%n", c.totalMovedWhatIf(), c.totalMovedActual(), c.worstBalanceWhatIf(),
        c.worstBalanceActual());
  }

  @Test
  void shouldReproduceTheRecordedRingsOfABalancedHistoryAtItsOwnParameters() {
    History balanced = new History("default", SigningKey.generate(), 8, 3).policy(PlacementPolicy.BALANCED)
        .init(9, 3).join("node-010", "az-1").setWeight("node-004", 2.0).drain("node-005");

    ClusterWhatIf c = WhatIf.replay(balanced.epochs(), 8, null).get(0);

    assertThat(c.rows()).allSatisfy(r -> {
      assertThat(r.balanceWhatIf()).isEqualTo(r.balanceActual());
      assertThat(r.movedWhatIf()).isEqualTo(r.movedActual());
    });
  }

  @Test
  void shouldReportWhatTheRecordedParametersMovedAsTheRingDiffOfConsecutiveEpochs() {
    ClusterWhatIf c = replay(history.epochs(), 64, null);

    double joined = RingDiff.between(history.snapshot(1).ring(), history.snapshot(2).ring()).movedReplicaFraction();
    assertThat(c.rows().get(1).movedActual()).isEqualTo(joined);
    assertThat(c.rows().get(3).movedActual()).as("the repair epoch has the failure epoch's membership").isZero();
    assertThat(c.rows().get(3).movedWhatIf()).isZero();
    assertThat(c.totalMovedActual()).isCloseTo(
        c.rows().stream().skip(1).mapToDouble(Row::movedActual).sum(), within(1e-12));
  }

  @Test
  void shouldGiveTheRecordedFiguresWhenReplayedWithTheRecordedParameters() {
    ClusterWhatIf c = replay(history.epochs(), 16, 3);

    assertThat(c.rows()).allSatisfy(r -> {
      assertThat(r.movedWhatIf()).isEqualTo(r.movedActual());
      assertThat(r.balanceWhatIf()).isEqualTo(r.balanceActual());
    });
  }

  @Test
  void shouldBalanceBetterWithMoreTokensPerNode() {
    ClusterWhatIf many = replay(history.epochs(), 1024, null);

    // Epoch 1: 9 equal nodes, 3 per zone, so only token noise unbalances them.
    Row init = many.rows().get(0);
    assertThat(init.balanceWhatIf()).isLessThan(init.balanceActual());
    assertThat(init.balanceWhatIf()).isBetween(1.0, 1.1);
  }

  @Test
  void shouldShowAZoneLeftWithOneNodeInTheBalance() {
    ClusterWhatIf c = replay(history.epochs(), 1024, null);

    // After FAIL node-002 and DRAIN node-005, node-008 is az-2's only node and holds a replica of every key:
    // 1.0 of the keyspace against a weight share of 3/8.
    assertThat(c.rows().get(4).balanceWhatIf()).isCloseTo(8.0 / 3, within(1e-9));
    assertThat(c.worstBalanceActual()).isCloseTo(8.0 / 3, within(1e-9));
  }

  @Test
  void shouldPlaceFewerReplicasWhenAskedTo() {
    ClusterWhatIf one = replay(history.epochs(), 16, 1);

    assertThat(one.replicas()).isEqualTo(1);
    assertThat(one.rows().get(1).movedWhatIf()).isPositive();
    assertThat(one.rows().get(1).movedWhatIf()).isNotEqualTo(one.rows().get(1).movedActual());
  }

  @Test
  void shouldMeasureBalanceAgainstTheWeightShareOfEachNode() {
    RingSnapshot single = RingSnapshot.builder().vnodes(8).replicas(1).addMember("a", "z").build();
    RingSnapshot weighted = RingSnapshot.builder().vnodes(4096).replicas(1).addMember("a", "z", 1)
        .addMember("b", "z", 3).build();

    assertThat(WhatIf.balance(single)).isCloseTo(1.0, within(1e-9));
    // b holds about three quarters with weight 3 of 4: both near their share.
    assertThat(WhatIf.balance(weighted)).isBetween(1.0, 1.1);
  }

  @Test
  void shouldSkipASecondPublishedRecordOfAnEpoch() {
    List<EpochRecord> epochs = new ArrayList<>(history.epochs());
    epochs.add(history.publishedRecord(5));

    assertThat(replay(epochs, 64, null).rows()).hasSize(5);
  }

  @Test
  void shouldIgnoreRecordsThatAreNotPublished() {
    List<EpochRecord> planned = history.epochs().stream().filter(r -> r.getState() != EpochState.PUBLISHED).toList();

    assertThat(WhatIf.replay(planned, 64, null)).isEmpty();
  }

  @Test
  void rejectsParametersThatCannotPlaceTheMembership() {
    History weighted = new History("default", SigningKey.generate(), 16, 3).init(3, 3).setWeight("node-001", 0.1);

    assertThatThrownBy(() -> WhatIf.replay(weighted.epochs(), 2, null))
        .isInstanceOf(CodecException.class)
        .hasCauseInstanceOf(RingException.class)
        .hasMessageContaining("node-001");
  }
}
