package io.ringshift.cli.internal.audit;

import io.ringshift.cli.BadInputException;
import io.ringshift.cli.KafkaUnavailableException;
import io.ringshift.orchestrator.Topics;
import io.ringshift.schemas.CodecException;
import io.ringshift.schemas.RecordSerdes;
import io.ringshift.schemas.avro.EpochRecord;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import org.apache.kafka.clients.CommonClientConfigs;
import org.apache.kafka.clients.consumer.CloseOptions;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

/**
 * What audit reads: {@code ring.epochs} and {@code ring.snapshots}, every partition, from the beginning to the end
 * offsets taken when the read starts ({@code read_committed}: the last stable offsets), with partitions assigned by
 * hand (no consumer group, nothing committed).
 *
 * <p>Design: the publisher writes a snapshot and its PUBLISHED record in one transaction. The end offsets of
 * {@code ring.snapshots} are taken <em>before</em> those of {@code ring.epochs}, so every snapshot read was committed
 * before the epochs' end was taken and its PUBLISHED record is within the read: a snapshot without one is a real
 * discrepancy, never a race with the publisher. The other way round, an epoch published between the two moments
 * has its record read but not its snapshot, which audit reports as {@code absent}, not as a failure.
 */
final class AuditLog {
  private static final Duration POLL = Duration.ofMillis(100);
  private static final Duration CLOSE = Duration.ofSeconds(2);

  private AuditLog() {}

  /** An epoch record that did not decode, with where it is. */
  record Unreadable(String key, String where, String problem) {}

  /**
   * What was read.
   *
   * @param epochs the decoded epoch records of the audited cluster(s), per partition in log order
   * @param unreadableEpochs epoch records of the audited cluster(s) that did not decode
   * @param snapshots the snapshot records of the audited cluster(s), tombstones dropped
   * @param epochRecordsRead every record read from {@code ring.epochs}, of any cluster
   */
  record Contents(List<EpochRecord> epochs, List<Unreadable> unreadableEpochs, List<SnapshotRecord> snapshots,
      int epochRecordsRead) {}

  /**
   * Reads both topics.
   *
   * @param cluster the only cluster to keep, or null for all
   * @throws KafkaUnavailableException when no broker answers within {@code timeout} or a read makes no progress
   *     for that long
   * @throws BadInputException when a topic does not exist (no orchestrator ever ran there, or a different prefix)
   */
  static Contents read(String bootstrap, Topics topics, Duration timeout, String cluster) {
    String epochsTopic = topics.epochs().name();
    String snapshotsTopic = topics.snapshots().name();
    KafkaConsumer<byte[], byte[]> consumer = consumer(bootstrap, timeout);
    try {
      Map<String, List<PartitionInfo>> existing = consumer.listTopics(timeout);
      List<TopicPartition> snapshotPartitions = partitions(existing, snapshotsTopic, bootstrap);
      List<TopicPartition> epochPartitions = partitions(existing, epochsTopic, bootstrap);
      // Snapshots first: see the class comment.
      Map<TopicPartition, Long> end = new HashMap<>(consumer.endOffsets(snapshotPartitions, timeout));
      end.putAll(consumer.endOffsets(epochPartitions, timeout));
      List<ConsumerRecord<byte[], byte[]>> records = readToEnd(consumer, end, bootstrap, timeout);
      return decode(records, epochsTopic, cluster);
    } catch (org.apache.kafka.common.errors.TimeoutException e) {
      throw unreachable(bootstrap, timeout, e);
    } finally {
      consumer.close(CloseOptions.timeout(CLOSE));
    }
  }

  private static Contents decode(List<ConsumerRecord<byte[], byte[]>> records, String epochsTopic, String cluster) {
    List<EpochRecord> epochs = new ArrayList<>();
    List<Unreadable> unreadable = new ArrayList<>();
    List<SnapshotRecord> snapshots = new ArrayList<>();
    int epochRecordsRead = 0;
    for (ConsumerRecord<byte[], byte[]> r : records) {
      String key = r.key() == null ? "" : new String(r.key(), StandardCharsets.UTF_8);
      boolean epochsRecord = r.topic().equals(epochsTopic);
      epochRecordsRead += epochsRecord ? 1 : 0;
      if (r.value() == null || (cluster != null && !cluster.equals(key))) {
        continue; // a tombstone on the compacted ring.snapshots, or another cluster (the key is the cluster id)
      }
      if (!epochsRecord) {
        snapshots.add(new SnapshotRecord(key, r.value(), r.partition(), r.offset()));
        continue;
      }
      try {
        EpochRecord e = RecordSerdes.epochRecord().deserialize(r.value());
        if (cluster == null || cluster.equals(e.getClusterId())) {
          epochs.add(e);
        }
      } catch (CodecException e) {
        unreadable.add(new Unreadable(key, String.format(Locale.ROOT, "ring.epochs partition %d offset %d",
            r.partition(), r.offset()), e.getMessage()));
      }
    }
    return new Contents(epochs, unreadable, snapshots, epochRecordsRead);
  }

  /** Every record below {@code end}, in offset order per partition. */
  private static List<ConsumerRecord<byte[], byte[]>> readToEnd(KafkaConsumer<byte[], byte[]> consumer,
      Map<TopicPartition, Long> end, String bootstrap, Duration timeout) {
    consumer.assign(end.keySet());
    consumer.seekToBeginning(end.keySet());
    Map<TopicPartition, List<ConsumerRecord<byte[], byte[]>>> read = new HashMap<>();
    Set<TopicPartition> remaining = new HashSet<>();
    for (var e : end.entrySet()) {
      read.put(e.getKey(), new ArrayList<>());
      if (consumer.position(e.getKey(), timeout) < e.getValue()) {
        remaining.add(e.getKey());
      }
    }
    long lastProgress = System.nanoTime();
    while (!remaining.isEmpty()) {
      var records = consumer.poll(POLL);
      for (ConsumerRecord<byte[], byte[]> r : records) {
        TopicPartition tp = new TopicPartition(r.topic(), r.partition());
        if (r.offset() < end.get(tp)) {
          read.get(tp).add(r);
        }
      }
      boolean progressed = !records.isEmpty();
      // position() passes transaction markers and aborted records, which poll() never returns.
      progressed |= remaining.removeIf(tp -> consumer.position(tp, timeout) >= end.get(tp));
      if (progressed) {
        lastProgress = System.nanoTime();
      } else if (System.nanoTime() - lastProgress > timeout.toNanos()) {
        List<String> left = new ArrayList<>();
        remaining.forEach(tp -> left.add(tp + " at " + consumer.position(tp, timeout) + " of " + end.get(tp)));
        throw new KafkaUnavailableException(String.format(Locale.ROOT,
            "reading from Kafka at %s made no progress for %d s (still to read: %s)", bootstrap,
            timeout.toSeconds(), String.join(", ", left)));
      }
    }
    List<TopicPartition> order = new ArrayList<>(read.keySet());
    order.sort(Comparator.comparing(TopicPartition::topic).thenComparingInt(TopicPartition::partition));
    List<ConsumerRecord<byte[], byte[]>> out = new ArrayList<>();
    order.forEach(tp -> out.addAll(read.get(tp)));
    return out;
  }

  private static List<TopicPartition> partitions(Map<String, List<PartitionInfo>> existing, String topic,
      String bootstrap) {
    List<PartitionInfo> infos = existing.get(topic);
    if (infos == null || infos.isEmpty()) {
      throw new BadInputException(String.format(Locale.ROOT, "Kafka at %s has no topic %s: the orchestrator "
          + "creates it when it starts (`ringshift dev` runs one); is this the control plane's broker, and the "
          + "right --topic-prefix?", bootstrap, topic));
    }
    List<TopicPartition> partitions = new ArrayList<>();
    infos.forEach(i -> partitions.add(new TopicPartition(i.topic(), i.partition())));
    return partitions;
  }

  private static KafkaConsumer<byte[], byte[]> consumer(String bootstrap, Duration timeout) {
    int ms = (int) timeout.toMillis();
    Properties p = new Properties();
    p.put(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    p.put(CommonClientConfigs.CLIENT_ID_CONFIG, "ringshift-audit");
    p.put(CommonClientConfigs.REQUEST_TIMEOUT_MS_CONFIG, ms);
    p.put(CommonClientConfigs.DEFAULT_API_TIMEOUT_MS_CONFIG, ms);
    p.put(CommonClientConfigs.SOCKET_CONNECTION_SETUP_TIMEOUT_MS_CONFIG, (long) Math.min(ms, 10_000));
    p.put(CommonClientConfigs.SOCKET_CONNECTION_SETUP_TIMEOUT_MAX_MS_CONFIG, (long) Math.min(ms, 10_000));
    p.put(CommonClientConfigs.RECONNECT_BACKOFF_MAX_MS_CONFIG, 1000L);
    p.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, IsolationLevel.READ_COMMITTED.toString());
    p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
    p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
    p.put(ConsumerConfig.ALLOW_AUTO_CREATE_TOPICS_CONFIG, false);
    try {
      return new KafkaConsumer<>(p, new ByteArrayDeserializer(), new ByteArrayDeserializer());
    } catch (KafkaException e) {
      throw new KafkaUnavailableException("cannot connect to Kafka at " + bootstrap + ": " + rootMessage(e), e);
    }
  }

  private static KafkaUnavailableException unreachable(String bootstrap, Duration timeout, Throwable cause) {
    return new KafkaUnavailableException(String.format(Locale.ROOT,
        "no answer from Kafka at %s within %d s (is the broker running there? `ringshift dev` starts one): %s",
        bootstrap, timeout.toSeconds(), rootMessage(cause)), cause);
  }

  private static String rootMessage(Throwable e) {
    Throwable root = e;
    while (root.getCause() != null && root.getCause() != root) {
      root = root.getCause();
    }
    String message = root.getMessage() == null ? root.getClass().getSimpleName() : root.getMessage();
    return message.strip();
  }
}
