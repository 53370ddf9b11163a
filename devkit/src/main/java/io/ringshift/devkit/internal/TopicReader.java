package io.ringshift.devkit.internal;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.serialization.Deserializer;

/**
 * Reads a topic from the beginning until enough records arrived or time ran out. A subscription with a
 * fresh group rather than {@code assign}: it waits for a topic that does not exist yet instead of spinning on
 * empty metadata, and it commits nothing, so every read starts over.
 */
public final class TopicReader {
  private static final int DESCRIBED_RECORDS = 10;

  private TopicReader() {}

  public static <K, V> List<ConsumerRecord<K, V>> read(String bootstrapServers, String topic, int count,
      Duration timeout, IsolationLevel isolation, Deserializer<K> keys, Deserializer<V> values) {
    Objects.requireNonNull(topic, "topic");
    Objects.requireNonNull(timeout, "timeout");
    Objects.requireNonNull(isolation, "isolation");
    if (count < 1) {
      throw new IllegalArgumentException("count was " + count + "; must be at least 1");
    }
    Map<String, Object> config = Map.of(
        ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers,
        ConsumerConfig.GROUP_ID_CONFIG, "ringshift-devkit-reader-" + Uuid.randomUuid(),
        ConsumerConfig.CLIENT_ID_CONFIG, "ringshift-devkit-reader",
        ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest",
        ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false,
        ConsumerConfig.ISOLATION_LEVEL_CONFIG, isolation.toString());
    long deadline = System.nanoTime() + timeout.toNanos();
    List<ConsumerRecord<K, V>> records = new ArrayList<>();
    try (KafkaConsumer<K, V> consumer = new KafkaConsumer<>(config, keys, values)) {
      consumer.subscribe(List.of(topic));
      while (records.size() < count) {
        long remainingMs = TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime());
        if (remainingMs <= 0) {
          throw new AssertionError(String.format(Locale.ROOT,
              "expected at least %d records on topic '%s' (%s) at %s within %s, but read %d%s", count, topic,
              isolation, bootstrapServers, timeout, records.size(), describe(records)));
        }
        consumer.poll(Duration.ofMillis(remainingMs)).forEach(records::add);
      }
    }
    return records;
  }

  private static String describe(List<? extends ConsumerRecord<?, ?>> records) {
    if (records.isEmpty()) {
      return "";
    }
    return records.stream().limit(DESCRIBED_RECORDS)
        .map(r -> r.partition() + "@" + r.offset() + " key=" + abbreviate(r.key()))
        .collect(Collectors.joining(", ", ": [", records.size() > DESCRIBED_RECORDS ? ", ...]" : "]"));
  }

  private static String abbreviate(Object value) {
    String text = value instanceof byte[] bytes ? bytes.length + " bytes" : String.valueOf(value);
    return text.length() > 40 ? text.substring(0, 40) + "..." : text;
  }
}
