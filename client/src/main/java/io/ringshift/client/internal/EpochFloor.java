package io.ringshift.client.internal;

import io.ringshift.protocol.AvroSerde;
import io.ringshift.protocol.CodecException;
import io.ringshift.protocol.RecordSerdes;
import io.ringshift.protocol.TrustedKeys;
import io.ringshift.schemas.avro.EpochRecord;
import io.ringshift.schemas.avro.EpochState;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;

/**
 * The floor epoch of a client that starts: the latest epoch of its cluster whose PUBLISHED record on the epochs
 * topic ({@code ring.epochs}, the append-only audit log) is signed by a trusted publisher key. A snapshot below it
 * is an old one replayed on the compacted snapshots topic, where compaction may have left it as the cluster's only
 * record ({@link SnapshotGate#check(byte[], AcceptedSnapshot, long)}).
 *
 * <p>Design. The epochs topic keeps every record for ever, so it is not read from the beginning: per partition, the
 * last {@link #WINDOW} records, then twice as many further back, and so on, until a verified PUBLISHED record of the
 * cluster is found or the partition's beginning is reached. PUBLISHED records follow each epoch's READY, so the
 * latest one is normally within the last few records. Records of other clusters, of other states, unsigned or
 * signed by an unknown key are skipped (a forged record cannot raise the floor, and an old one replayed cannot lower
 * the maximum). Uses the client's own consumer before it tails the snapshots, by assignment, no group.
 */
public final class EpochFloor {
  static final int WINDOW = 512;
  private static final Duration POLL = Duration.ofMillis(200);

  private EpochFloor() {}

  /**
   * The floor, or -1 when the topic has no verified PUBLISHED record of the cluster (or does not exist).
   *
   * @throws org.apache.kafka.common.KafkaException when Kafka does not answer (the caller retries)
   */
  public static long read(Consumer<String, byte[]> consumer, String topic, String clusterId, TrustedKeys trusted,
      Duration timeout) {
    List<PartitionInfo> infos = consumer.partitionsFor(topic, timeout);
    if (infos == null || infos.isEmpty()) {
      return -1;
    }
    List<TopicPartition> partitions = new ArrayList<>();
    infos.forEach(i -> partitions.add(new TopicPartition(topic, i.partition())));
    Map<TopicPartition, Long> ends = consumer.endOffsets(partitions, timeout);
    Map<TopicPartition, Long> begins = consumer.beginningOffsets(partitions, timeout);
    AvroSerde<EpochRecord> serde = RecordSerdes.epochRecord();
    long floor = -1;
    for (TopicPartition p : partitions) {
      long end = ends.getOrDefault(p, 0L);
      long begin = begins.getOrDefault(p, 0L);
      long window = WINDOW;
      long upTo = end;
      while (upTo > begin) {
        long from = Math.max(begin, upTo - window);
        long found = scan(consumer, p, from, upTo, serde, clusterId, trusted, timeout);
        if (found >= 0) {
          floor = Math.max(floor, found);
          break;
        }
        upTo = from;
        window *= 2;
      }
    }
    consumer.assign(List.of());
    return floor;
  }

  /** The highest verified PUBLISHED epoch of the cluster among offsets [from, to) of the partition, or -1. */
  private static long scan(Consumer<String, byte[]> consumer, TopicPartition partition, long from, long to,
      AvroSerde<EpochRecord> serde, String clusterId, TrustedKeys trusted, Duration timeout) {
    consumer.assign(List.of(partition));
    consumer.seek(partition, from);
    long best = -1;
    long deadline = System.nanoTime() + timeout.toNanos();
    while (consumer.position(partition, timeout) < to) {
      for (ConsumerRecord<String, byte[]> r : consumer.poll(POLL)) {
        if (r.offset() >= to || r.value() == null || !clusterId.equals(r.key())) {
          continue;
        }
        EpochRecord record;
        try {
          record = serde.deserialize(r.value());
        } catch (RuntimeException e) {
          continue; // the publisher and audit report bad records; here they only cannot raise the floor
        }
        if (record.getState() != EpochState.PUBLISHED || !clusterId.equals(record.getClusterId())
            || record.getEpoch() <= best) {
          continue;
        }
        try {
          trusted.verify(record);
          best = record.getEpoch();
        } catch (CodecException e) {
          // Unsigned, altered or signed by a key this client does not trust: no floor from it.
        }
      }
      if (System.nanoTime() > deadline) {
        throw new org.apache.kafka.common.errors.TimeoutException("reading " + partition + " from offset " + from
            + " to " + to + " took longer than " + timeout.toMillis() + " ms");
      }
    }
    return best;
  }
}
