package io.ringshift.client.internal;

import io.ringshift.protocol.AvroSerde;
import io.ringshift.protocol.CodecException;
import io.ringshift.protocol.RecordSerdes;
import io.ringshift.protocol.TrustedKeys;
import io.ringshift.schemas.avro.EpochRecord;
import io.ringshift.schemas.avro.EpochState;
import java.time.Duration;
import java.util.List;
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
 * <p>Design. The epochs topic keeps every record for ever, so it is not read from the beginning: only the partition
 * the cluster's key goes to (Kafka's default partitioning, murmur2 of the key, as the orchestrator and the publisher
 * write it), its last {@link #WINDOW} records, then twice as many further back, and so on, until a verified PUBLISHED
 * record of the cluster is found, the partition's beginning is reached, or {@link #MAX_RECORDS} records were read
 * (then there is no floor, and a warning says so). PUBLISHED records follow each epoch's READY, so the
 * latest one is normally within the last few records. Records of other clusters, of other states, unsigned or
 * signed by an unknown key are skipped (a forged record cannot raise the floor, and an old one replayed cannot lower
 * the maximum). Uses the client's own consumer before it tails the snapshots, by assignment, no group.
 */
public final class EpochFloor {
  static final int WINDOW = 512;
  /** Most records one floor read looks at; a cluster without a PUBLISHED record that recent gets no floor. */
  static final long MAX_RECORDS = 1 << 16;
  private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(EpochFloor.class);
  private static final Duration POLL = Duration.ofMillis(200);

  private EpochFloor() {}

  /**
   * The floor, or -1 when the topic has no verified PUBLISHED record of the cluster (or does not exist).
   *
   * @throws org.apache.kafka.common.KafkaException when Kafka does not answer (the caller retries)
   */
  public static long read(Consumer<String, byte[]> consumer, String topic, String clusterId, TrustedKeys trusted,
      Duration timeout) {
    try {
      return readPartition(consumer, topic, clusterId, trusted, timeout);
    } catch (org.apache.kafka.common.errors.AuthorizationException e) {
      LOG.warn("cluster {}: cannot read {} ({}); no floor epoch, so a snapshot replayed on the snapshots topic is "
          + "not recognised on a start without a persist file: grant READ on {} or use noEpochFloor()", clusterId,
          topic, e.toString(), topic);
      return -1;
    } finally {
      consumer.assign(List.of());
    }
  }

  private static long readPartition(Consumer<String, byte[]> consumer, String topic, String clusterId,
      TrustedKeys trusted, Duration timeout) {
    List<PartitionInfo> infos = consumer.partitionsFor(topic, timeout);
    if (infos == null || infos.isEmpty()) {
      return -1;
    }
    int partition = org.apache.kafka.common.utils.Utils.toPositive(org.apache.kafka.common.utils.Utils.murmur2(
        clusterId.getBytes(java.nio.charset.StandardCharsets.UTF_8))) % infos.size();
    TopicPartition p = new TopicPartition(topic, partition);
    long end = consumer.endOffsets(List.of(p), timeout).getOrDefault(p, 0L);
    long begin = consumer.beginningOffsets(List.of(p), timeout).getOrDefault(p, 0L);
    AvroSerde<EpochRecord> serde = RecordSerdes.epochRecord();
    long window = WINDOW;
    long upTo = end;
    while (upTo > begin) {
      long from = Math.max(begin, upTo - window);
      long found = scan(consumer, p, from, upTo, serde, clusterId, trusted, timeout);
      if (found >= 0) {
        return found;
      }
      if (end - from >= MAX_RECORDS) {
        LOG.warn("cluster {}: no PUBLISHED record signed by a trusted key in the last {} records of {}; no floor "
            + "epoch", clusterId, end - from, p);
        return -1;
      }
      upTo = from;
      window *= 2;
    }
    return -1;
  }

  /** The highest verified PUBLISHED epoch of the cluster among offsets [from, to) of the partition, or -1. */
  private static long scan(Consumer<String, byte[]> consumer, TopicPartition partition, long from, long to,
      AvroSerde<EpochRecord> serde, String clusterId, TrustedKeys trusted, Duration timeout) {
    consumer.assign(List.of(partition));
    consumer.seek(partition, from);
    long best = -1;
    long deadline = System.nanoTime() + timeout.toNanos(); // moved on whenever the read advances
    long position = consumer.position(partition, timeout);
    while (position < to) {
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
      long now = consumer.position(partition, timeout);
      if (now > position) {
        position = now;
        deadline = System.nanoTime() + timeout.toNanos();
      } else if (System.nanoTime() > deadline) {
        throw new org.apache.kafka.common.errors.TimeoutException("reading " + partition + " from offset " + from
            + " to " + to + ": no progress for " + timeout.toMillis() + " ms (at " + position + ")");
      }
    }
    return best;
  }
}
