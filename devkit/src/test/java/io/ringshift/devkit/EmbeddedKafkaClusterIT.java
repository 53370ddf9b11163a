package io.ringshift.devkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A 3-broker in-process cluster: production replication, transactions with one broker down, a broker stopped and
 * started again on its ports and data. One cluster for the class (three nodes start in a few seconds).
 */
class EmbeddedKafkaClusterIT {
  private static EmbeddedKafkaCluster kafka;

  @BeforeAll
  static void start() {
    kafka = EmbeddedKafkaCluster.builder().brokers(3).build().start();
  }

  @AfterAll
  static void stop() {
    kafka.close();
  }

  @Test
  void shouldKeepAcknowledgedRecordsAndTakeTransactionsWithOneBrokerStopped() throws Exception {
    assertThat(kafka.bootstrapServers().split(",")).hasSize(3);
    assertThat(kafka.brokerIds()).containsExactly(1, 2, 3);
    try (Admin admin = admin()) {
      admin.createTopics(List.of(new NewTopic("replicated", 3, (short) 3)
          .configs(Map.of("min.insync.replicas", "2")))).all().get(30, TimeUnit.SECONDS);
      TopicDescription topic = admin.describeTopics(List.of("replicated")).allTopicNames()
          .get(30, TimeUnit.SECONDS).get("replicated");
      assertThat(topic.partitions()).allSatisfy(p -> assertThat(p.isr()).hasSize(3));
    }
    Clients.send(kafka.bootstrapServers(), "replicated", "k", "before");

    kafka.stopBroker(2);
    assertThat(kafka.isRunning(2)).isFalse();
    try (KafkaProducer<String, String> producer = Clients.producer(kafka.bootstrapServers(), Map.of(
        ProducerConfig.TRANSACTIONAL_ID_CONFIG, "cluster-it"))) {
      producer.initTransactions();
      producer.beginTransaction();
      for (int i = 0; i < 10; i++) {
        producer.send(new ProducerRecord<>("replicated", "k" + i, "while broker 2 is down"));
      }
      producer.commitTransaction();
    }
    List<ConsumerRecord<String, String>> read = Clients.read(kafka.bootstrapServers(), "replicated", 11);
    assertThat(read).hasSize(11);

    kafka.startBroker(2);
    assertThat(kafka.isRunning(2)).isTrue();
    try (Admin admin = admin()) {
      assertThat(admin.describeCluster().nodes().get(30, TimeUnit.SECONDS)).hasSize(3);
    }
    assertThat(kafka.fatalFault()).isEmpty();
  }

  @Test
  void shouldRefuseToStopABrokerTwiceOrOneThatDoesNotExist() {
    assertThatThrownBy(() -> kafka.stopBroker(7)).isInstanceOf(IllegalArgumentException.class)
        .hasMessage("broker id was 7; the cluster has brokers [1, 2, 3]");
    assertThatThrownBy(() -> kafka.startBroker(1)).isInstanceOf(IllegalStateException.class)
        .hasMessage("broker 1 runs already");
  }

  private static Admin admin() {
    return Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers(),
        AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, (int) Duration.ofSeconds(30).toMillis()));
  }
}
