package io.ringshift.protocol;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class TopicReplicationTest {
  @Test
  void shouldReplicateThreeTimesWithTwoInSyncFromThreeBrokersUp() {
    assertThat(TopicReplication.forBrokers(1)).isEqualTo(new TopicReplication((short) 1, 1));
    assertThat(TopicReplication.forBrokers(2)).isEqualTo(new TopicReplication((short) 2, 1));
    assertThat(TopicReplication.forBrokers(3)).isEqualTo(TopicReplication.PRODUCTION);
    assertThat(TopicReplication.forBrokers(12)).isEqualTo(new TopicReplication((short) 3, 2));
  }

  @Test
  void shouldKeepOneReplicaSpareForAnExplicitFactor() {
    assertThat(TopicReplication.ofFactor((short) 1).minInSync()).isEqualTo(1);
    assertThat(TopicReplication.ofFactor((short) 2).minInSync()).isEqualTo(1);
    assertThat(TopicReplication.ofFactor((short) 5).minInSync()).isEqualTo(2);
  }

  @Test
  void shouldRefuseImpossibleSettings() {
    assertThatThrownBy(() -> TopicReplication.forBrokers(0))
        .hasMessage("the cluster had 0 brokers; it needs at least 1");
    assertThatThrownBy(() -> new TopicReplication((short) 2, 3))
        .hasMessage("min.insync.replicas was 3; it must be between 1 and the replication factor 2");
    assertThatThrownBy(() -> new TopicReplication((short) 0, 1))
        .hasMessage("replication factor was 0; it must be >= 1");
  }
}
