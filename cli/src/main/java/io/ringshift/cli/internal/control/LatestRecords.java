package io.ringshift.cli.internal.control;

import io.ringshift.cli.KafkaUnavailableException;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.function.Predicate;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.StringDeserializer;

/** Reads a compacted topic to its end: the latest value of each key the filter keeps (tombstones remove it). */
public final class LatestRecords {
  private LatestRecords() {}

  /**
   * The latest values by key of {@code topic}, in the order keys were first seen; empty when the topic does not
   * exist.
   *
   * @throws KafkaUnavailableException when Kafka does not answer within the options' timeout
   */
  public static Optional<Map<String, byte[]>> read(KafkaOptions kafka, String topic, Predicate<String> keys) {
    Properties p = kafka.kafkaProperties().applyTo(new Properties());
    p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrap());
    p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
    Duration timeout = kafka.timeout();
    try (KafkaConsumer<String, byte[]> consumer = new KafkaConsumer<>(p, new StringDeserializer(),
        new ByteArrayDeserializer())) {
      List<PartitionInfo> infos = consumer.partitionsFor(topic, timeout);
      if (infos == null || infos.isEmpty()) {
        return Optional.empty();
      }
      List<TopicPartition> partitions = infos.stream().map(i -> new TopicPartition(topic, i.partition())).toList();
      consumer.assign(partitions);
      consumer.seekToBeginning(partitions);
      Map<TopicPartition, Long> end = consumer.endOffsets(partitions, timeout);
      Map<String, byte[]> latest = new LinkedHashMap<>();
      long deadline = System.nanoTime() + timeout.toNanos();
      while (partitions.stream().anyMatch(tp -> consumer.position(tp, timeout) < end.get(tp))) {
        if (System.nanoTime() > deadline) {
          throw new KafkaUnavailableException("reading " + topic + " at " + kafka.bootstrap() + " took longer than "
              + timeout.toSeconds() + " s");
        }
        for (ConsumerRecord<String, byte[]> r : consumer.poll(Duration.ofMillis(200))) {
          if (r.key() == null || !keys.test(r.key())) {
            continue;
          }
          if (r.value() == null) {
            latest.remove(r.key());
          } else {
            latest.put(r.key(), r.value());
          }
        }
      }
      return Optional.of(latest);
    } catch (org.apache.kafka.common.errors.TimeoutException e) {
      throw new KafkaUnavailableException("Kafka at " + kafka.bootstrap() + " did not answer within "
          + timeout.toSeconds() + " s: " + e.getMessage(), e);
    } catch (KafkaException e) {
      throw new KafkaUnavailableException("reading " + topic + " at " + kafka.bootstrap() + " failed: "
          + e.getMessage(), e);
    }
  }
}
