package io.ringshift.devkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.ringshift.devkit.junit.EmbeddedKafkaExtension;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.GroupProtocol;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.errors.TopicExistsException;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.junit.jupiter.api.RepeatedTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The extension as other modules' ITs use it: one broker for the class, unique names per test. */
class EmbeddedKafkaExtensionIT {
  @RegisterExtension
  static final EmbeddedKafkaExtension KAFKA = new EmbeddedKafkaExtension();

  private static final Duration TIMEOUT = Duration.ofSeconds(30);
  private static final Set<String> SEEN_IDS = ConcurrentHashMap.newKeySet();

  @Test
  void shouldProduceAndConsumeARecord() throws Exception {
    String topic = KAFKA.topic("greetings");
    KAFKA.createTopics(topic);

    Clients.send(KAFKA.bootstrapServers(), topic, "k", "hello");

    List<ConsumerRecord<String, String>> records = KAFKA.consume(topic, 1, TIMEOUT,
        IsolationLevel.READ_UNCOMMITTED, new StringDeserializer(), new StringDeserializer());
    assertThat(records).singleElement().satisfies(r -> {
      assertThat(r.key()).isEqualTo("k");
      assertThat(r.value()).isEqualTo("hello");
    });
  }

  /** Proves the EOS configuration: transactions complete on one broker and aborted records stay invisible. */
  @Test
  void shouldShowCommittedTransactionsButNotAbortedOnesToReadCommittedConsumers() throws Exception {
    String topic = KAFKA.topic("transactions");
    KAFKA.createTopics(topic);

    try (KafkaProducer<String, String> producer = Clients.producer(KAFKA.bootstrapServers(),
        Map.of(ProducerConfig.TRANSACTIONAL_ID_CONFIG, KAFKA.applicationId() + "-tx"))) {
      producer.initTransactions();
      producer.beginTransaction();
      producer.send(new ProducerRecord<>(topic, "committed-1", "a"));
      producer.commitTransaction();

      producer.beginTransaction();
      producer.send(new ProducerRecord<>(topic, "aborted", "b")).get(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
      producer.abortTransaction();

      producer.beginTransaction();
      producer.send(new ProducerRecord<>(topic, "committed-2", "c"));
      producer.commitTransaction();
    }

    List<ConsumerRecord<String, String>> committed = KAFKA.consume(topic, 2, TIMEOUT,
        IsolationLevel.READ_COMMITTED, new StringDeserializer(), new StringDeserializer());
    assertThat(committed).extracting(ConsumerRecord::key).containsExactly("committed-1", "committed-2");

    // The aborted record was written; only read_committed hides it.
    List<ConsumerRecord<String, String>> everything = KAFKA.consume(topic, 3, TIMEOUT,
        IsolationLevel.READ_UNCOMMITTED, new StringDeserializer(), new StringDeserializer());
    assertThat(everything).extracting(ConsumerRecord::key).containsExactly("committed-1", "aborted", "committed-2");
  }

  /** The new consumer group protocol (KIP-848) runs group-coordinator code the classic one does not. */
  @Test
  void shouldServeAConsumerGroupOfTheNewProtocol() throws Exception {
    String topic = KAFKA.topic("kip848");
    KAFKA.createTopics(topic);
    Clients.send(KAFKA.bootstrapServers(), topic, "k", "v");

    Map<String, Object> config = Map.of(
        ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, KAFKA.bootstrapServers(),
        ConsumerConfig.GROUP_ID_CONFIG, KAFKA.applicationId(),
        ConsumerConfig.GROUP_PROTOCOL_CONFIG, GroupProtocol.CONSUMER.name(),
        ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
    try (KafkaConsumer<String, String> consumer =
        new KafkaConsumer<>(config, new StringDeserializer(), new StringDeserializer())) {
      consumer.subscribe(List.of(topic));
      List<String> values = new ArrayList<>();
      await("the record through a KIP-848 group").atMost(TIMEOUT).pollInSameThread().until(() -> {
        consumer.poll(Duration.ofMillis(200)).forEach(r -> values.add(r.value()));
        return !values.isEmpty();
      });
      assertThat(values).containsExactly("v");
    }
  }

  @RepeatedTest(2)
  void shouldGiveEveryTestAndRepetitionItsOwnApplicationIdAndTopicPrefix() {
    String id = KAFKA.applicationId();

    assertThat(id).matches("EmbeddedKafkaExtensionIT-shouldGiveEveryTestAndRepetitionItsOwnApplicationIdAndTopicPrefix-\\d+");
    assertThat(KAFKA.applicationId()).as("stable within a test").isEqualTo(id);
    assertThat(KAFKA.topic("ring.tasks")).isEqualTo(id + ".ring.tasks");
    assertThat(SEEN_IDS.add(id)).as("%s was handed out before", id).isTrue();
  }

  @Test
  void shouldFailWithAMessageNamingTheTopicWhenTooFewRecordsArrive() throws Exception {
    String topic = KAFKA.topic("sparse");
    KAFKA.createTopics(topic);
    Clients.send(KAFKA.bootstrapServers(), topic, "only", "one");

    assertThatThrownBy(() -> KAFKA.consume(topic, 2, Duration.ofSeconds(2), IsolationLevel.READ_COMMITTED))
        .isInstanceOf(AssertionError.class)
        .hasMessageContaining("expected at least 2 records on topic '" + topic + "' (read_committed)")
        .hasMessageContaining("but read 1: [0@0 key=4 bytes]");
  }

  @Test
  void shouldRefuseToCreateATopicThatExists() {
    String topic = KAFKA.topic("twice");
    KAFKA.createTopics(topic);

    assertThatThrownBy(() -> KAFKA.createTopics(topic))
        .isInstanceOfSatisfying(EmbeddedKafkaException.class, e -> {
          assertThat(e.reason()).isEqualTo(EmbeddedKafkaException.Reason.ADMIN_FAILED);
          assertThat(e.isRetriable()).isFalse();
        })
        .hasMessageContaining(topic)
        .hasCauseInstanceOf(TopicExistsException.class);
  }
}
