package io.ringshift.audit;

import io.ringshift.protocol.Topics;
import io.ringshift.protocol.CodecException;
import io.ringshift.protocol.ReadToEnd;
import io.ringshift.protocol.RecordSerdes;
import io.ringshift.schemas.avro.EpochRecord;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;

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
public final class AuditLog {

  private AuditLog() {}

  /** An epoch record that did not decode, with where it is. */
  public record Unreadable(String key, String where, String problem) {}

  /**
   * What was read.
   *
   * @param epochs the decoded epoch records of the audited cluster(s), per partition in log order
   * @param unreadableEpochs epoch records of the audited cluster(s) that did not decode
   * @param snapshots the snapshot records of the audited cluster(s), tombstones dropped
   * @param epochRecordsRead every record read from {@code ring.epochs}, of any cluster
   */
  public record Contents(List<EpochRecord> epochs, List<Unreadable> unreadableEpochs, List<SnapshotRecord> snapshots,
      int epochRecordsRead) {}

  /**
   * Reads both topics from the beginning to their end offsets as of the call, with {@code consumer} (a
   * {@code read_committed} consumer without a group; the caller creates and closes it).
   *
   * @param cluster the only cluster to keep, or null for all
   * @param where names the Kafka cluster in messages ({@code Kafka at host:9092})
   * @throws AuditException {@link AuditException.Reason#MISSING_TOPIC} when a topic does not exist, {@link
   *     AuditException.Reason#STALLED} when a read makes no progress for {@code timeout}
   * @throws org.apache.kafka.common.errors.TimeoutException when Kafka does not answer a request in time
   */
  public static Contents read(Consumer<byte[], byte[]> consumer, Topics topics, Duration timeout, String cluster,
      String where) {
    String epochsTopic = topics.epochs().name();
    String snapshotsTopic = topics.snapshots().name();
    Map<String, List<PartitionInfo>> existing = consumer.listTopics(timeout);
    List<TopicPartition> snapshotPartitions = partitions(existing, snapshotsTopic, where);
    List<TopicPartition> epochPartitions = partitions(existing, epochsTopic, where);
    // Snapshots first: see the class comment.
    Map<TopicPartition, Long> end = new HashMap<>(consumer.endOffsets(snapshotPartitions, timeout));
    end.putAll(consumer.endOffsets(epochPartitions, timeout));
    List<ConsumerRecord<byte[], byte[]>> records;
    try {
      records = new ArrayList<>(ReadToEnd.fromBeginning(consumer, end, timeout, "reading from " + where));
    } catch (IllegalStateException e) {
      throw new AuditException(AuditException.Reason.STALLED, e.getMessage(), e);
    }
    // By partition, each in offset order (a stable sort of the records as polled).
    records.sort(Comparator.comparing((ConsumerRecord<byte[], byte[]> r) -> r.topic())
        .thenComparingInt(ConsumerRecord::partition));
    return decode(records, epochsTopic, cluster);
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

  private static List<TopicPartition> partitions(Map<String, List<PartitionInfo>> existing, String topic,
      String where) {
    List<PartitionInfo> infos = existing.get(topic);
    if (infos == null || infos.isEmpty()) {
      throw new AuditException(AuditException.Reason.MISSING_TOPIC, String.format(Locale.ROOT, "%s has no topic "
          + "%s: the orchestrator creates it when it starts (`ringshift dev` runs one); is this the control "
          + "plane's broker, and the right --topic-prefix?", where, topic), null);
    }
    List<TopicPartition> partitions = new ArrayList<>();
    infos.forEach(i -> partitions.add(new TopicPartition(i.topic(), i.partition())));
    return partitions;
  }
}
