package io.ringshift.devkit;

import io.ringshift.devkit.internal.TopicReader;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

/** Plain clients for tests that run their own brokers rather than the extension's. */
final class Clients {
  static final Duration TIMEOUT = Duration.ofSeconds(30);

  private Clients() {}

  static KafkaProducer<String, String> producer(String bootstrapServers, Map<String, Object> extra) {
    Map<String, Object> config = new HashMap<>(Map.of(
        ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers,
        ProducerConfig.ACKS_CONFIG, "all"));
    config.putAll(extra);
    return new KafkaProducer<>(config, new StringSerializer(), new StringSerializer());
  }

  static void send(String bootstrapServers, String topic, String key, String value) throws Exception {
    try (KafkaProducer<String, String> producer = producer(bootstrapServers, Map.of())) {
      producer.send(new ProducerRecord<>(topic, key, value)).get(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
    }
  }

  static List<ConsumerRecord<String, String>> read(String bootstrapServers, String topic, int count) {
    return TopicReader.read(bootstrapServers, topic, count, TIMEOUT, IsolationLevel.READ_COMMITTED,
        new StringDeserializer(), new StringDeserializer());
  }

  static Set<String> topics(String bootstrapServers) throws Exception {
    try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers))) {
      return admin.listTopics().names().get(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
    }
  }
}
