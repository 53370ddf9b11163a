package io.ringshift.protocol;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;

class SingleOwnerAssignorTest {
  private static final List<TopicPartition> PARTITIONS = List.of(new TopicPartition("ring.snapshots", 0),
      new TopicPartition("ring.snapshots", 1), new TopicPartition("ring.snapshots", 2));

  @Test
  void shouldGiveEveryPartitionToTheSmallestMemberWhenNobodyHoldsTheLease() {
    Map<String, List<TopicPartition>> assignment =
        SingleOwnerAssignor.assign(PARTITIONS, Map.of("b", List.of(), "a", List.of(), "c", List.of()));

    assertThat(assignment).containsOnlyKeys("a", "b", "c");
    assertThat(assignment.get("a")).containsExactlyElementsOf(PARTITIONS);
    assertThat(assignment.get("b")).isEmpty();
    assertThat(assignment.get("c")).isEmpty();
  }

  @Test
  void shouldLeaveTheLeaseWithItsHolderWhenAMemberJoins() {
    Map<String, List<TopicPartition>> assignment =
        SingleOwnerAssignor.assign(PARTITIONS, Map.of("b", PARTITIONS, "a", List.of()));

    assertThat(assignment.get("b")).containsExactlyElementsOf(PARTITIONS);
    assertThat(assignment.get("a")).isEmpty();
  }

  @Test
  void shouldHandTheLeaseToAnotherMemberWhenItsHolderLeft() {
    Map<String, List<TopicPartition>> assignment = SingleOwnerAssignor.assign(PARTITIONS, Map.of("c", List.of()));

    assertThat(assignment.get("c")).containsExactlyElementsOf(PARTITIONS);
  }

  @Test
  void shouldNotMoveAPartitionAnotherMemberStillOwnsInTheSameRebalance() {
    // After a split two members claim partitions: the smallest claimant keeps what it owns, the rest waits until
    // the other has given it up (the cooperative protocol's rule).
    Map<String, List<TopicPartition>> assignment = SingleOwnerAssignor.assign(PARTITIONS,
        Map.of("x", List.of(PARTITIONS.get(0), PARTITIONS.get(1)), "y", List.of(PARTITIONS.get(2))));

    assertThat(assignment.get("x")).containsExactly(PARTITIONS.get(0), PARTITIONS.get(1));
    assertThat(assignment.get("y")).isEmpty();
  }

  @Test
  void shouldAssignNothingToAnEmptyGroup() {
    assertThat(SingleOwnerAssignor.assign(PARTITIONS, Map.of())).isEmpty();
  }
}
