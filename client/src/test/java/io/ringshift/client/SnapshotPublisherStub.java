package io.ringshift.client;

import io.ringshift.protocol.PublishedSnapshot;
import java.util.Properties;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * Writes to the snapshots topic as the snapshot publisher does (one transaction per snapshot, key = cluster
 * id) or, when not transactional, as a forger with write access to the topic would.
 */
final class SnapshotPublisherStub implements AutoCloseable {
  private final KafkaProducer<String, byte[]> producer;
  private final String topic;
  private final boolean transactional;

  SnapshotPublisherStub(String bootstrapServers, String topic, String transactionalId) {
    Properties p = new Properties();
    p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
    if (transactionalId != null) {
      p.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, transactionalId);
    }
    this.producer = new KafkaProducer<>(p, new StringSerializer(), new ByteArraySerializer());
    this.topic = topic;
    this.transactional = transactionalId != null;
    if (transactional) {
      producer.initTransactions();
    }
  }

  /** A publisher: every snapshot in its own committed transaction. */
  static SnapshotPublisherStub publisher(String bootstrapServers, String topic, String transactionalId) {
    return new SnapshotPublisherStub(bootstrapServers, topic, transactionalId);
  }

  /** A plain producer writing whatever bytes it is given. */
  static SnapshotPublisherStub forger(String bootstrapServers, String topic) {
    return new SnapshotPublisherStub(bootstrapServers, topic, null);
  }

  void publish(PublishedSnapshot snapshot, long timestampMillis) {
    send(snapshot.clusterId(), TestSnapshots.encode(snapshot), timestampMillis, true);
  }

  void publish(PublishedSnapshot snapshot) {
    publish(snapshot, System.currentTimeMillis());
  }

  /** Sends one snapshot in a transaction that is then aborted (a publisher that failed half-way). */
  void publishAborted(PublishedSnapshot snapshot) {
    send(snapshot.clusterId(), TestSnapshots.encode(snapshot), System.currentTimeMillis(), false);
  }

  /** Sends raw bytes under a key. */
  void sendRaw(String key, byte[] value) {
    send(key, value, System.currentTimeMillis(), true);
  }

  private void send(String key, byte[] value, long timestampMillis, boolean commit) {
    if (transactional) {
      producer.beginTransaction();
    }
    producer.send(new ProducerRecord<>(topic, null, timestampMillis, key, value));
    if (!transactional) {
      producer.flush();
    } else if (commit) {
      producer.commitTransaction();
    } else {
      producer.flush();
      producer.abortTransaction();
    }
  }

  @Override
  public void close() {
    producer.close();
  }
}
