package io.ringshift.simulator.placement;

import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

import java.util.List;
import org.junit.jupiter.api.Test;

/** The public placement types refuse what would otherwise fail later inside a lookup or an index. */
class PlacementArgumentsTest {
  private static final Fleet.Node NODE = new Fleet.Node(0, Fleet.Node.idOf(0), 0, 1.0);

  @Test
  void rejectsAFleetWhoseNodesDoNotFitIt() {
    assertThatIllegalArgumentException().isThrownBy(() -> new Fleet(List.of(NODE), 0))
        .withMessageContaining("zoneCount was 0");
    assertThatIllegalArgumentException().isThrownBy(() -> Fleet.uniform(3, 0)).withMessageContaining("zones was 0");
    assertThatIllegalArgumentException()
        .isThrownBy(() -> new Fleet(List.of(new Fleet.Node(0, "node-000", 3, 1.0)), 3))
        .withMessageContaining("zones are 0..2");
    assertThatIllegalArgumentException().isThrownBy(() -> new Fleet(List.of(NODE, NODE), 1))
        .withMessageContaining("numbers distinct");
    assertThatIllegalArgumentException()
        .isThrownBy(() -> new Fleet(List.of(new Fleet.Node(0, "node-000", 0, 0.0)), 1))
        .withMessageContaining("weights positive");
  }

  @Test
  void rejectsAnEmptyFleetAndFewerThanOneReplicaOrPartition() {
    Fleet empty = Fleet.uniform(0, 1);
    Fleet three = Fleet.uniform(3, 1);
    assertThatIllegalArgumentException().isThrownBy(() -> new ModuloPlacement(empty, 1))
        .withMessageContaining("the fleet is empty");
    assertThatIllegalArgumentException().isThrownBy(() -> new RendezvousPlacement(three, 0))
        .withMessageContaining("replicas was 0");
    assertThatIllegalArgumentException().isThrownBy(() -> JumpPlacement.of(three, 1).changeTo(empty))
        .withMessageContaining("the fleet is empty");
    assertThatIllegalArgumentException().isThrownBy(() -> PartitionPlacement.of(three, 0, 1))
        .withMessageContaining("partitions was 0");
    assertThatIllegalArgumentException().isThrownBy(() -> PartitionPlacement.of(three, 16, 3).changeTo(
        three.minus(0))).withMessageContaining("needs at least 3 nodes");
  }
}
