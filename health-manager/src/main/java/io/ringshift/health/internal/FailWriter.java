package io.ringshift.health.internal;

import io.ringshift.protocol.KafkaClients;
import io.ringshift.protocol.KafkaProperties;
import io.ringshift.protocol.RecordKeys;
import io.ringshift.protocol.RecordSerdes;
import io.ringshift.schemas.avro.MembershipAction;
import io.ringshift.schemas.avro.MembershipEvent;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.util.Properties;
import java.util.UUID;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.errors.InvalidProducerEpochException;
import org.apache.kafka.common.errors.ProducerFencedException;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * The deciding manager's producer of FAIL events: transactional, with the transactional id every manager of the
 * deployment shares, so that opening it ({@code initTransactions}) fences the manager that decided before (its
 * FAIL still in flight is committed or aborted first) and a manager that lost the lease without noticing cannot
 * write any more. Each FAIL is one transaction, written as {@code ringshift fail} writes it: key
 * {@link RecordKeys#membershipKey}, a random request id, {@code requestedBy} {@code health-manager}.
 */
public final class FailWriter implements AutoCloseable {
  private final KafkaProducer<byte[], byte[]> producer;
  private final String topic;
  private final String clusterId;
  private final String requestedBy;
  private final Clock clock;

  /** Opens the producer and fences every earlier one of {@code transactionalId}. */
  public FailWriter(String bootstrapServers, KafkaProperties kafkaProperties, Duration timeout, String transactionalId,
      String clientId, String topic, String clusterId, String requestedBy, Clock clock) {
    this.topic = topic;
    this.clusterId = clusterId;
    this.requestedBy = requestedBy;
    this.clock = clock;
    Properties p = KafkaClients.boundedProperties(bootstrapServers, kafkaProperties, timeout, clientId);
    p.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, transactionalId);
    p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
    p.put(ProducerConfig.ACKS_CONFIG, "all");
    p.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, timeout.toMillis());
    p.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, (int) Math.max(timeout.toMillis() * 2, 1000));
    this.producer = new KafkaProducer<>(p, new ByteArraySerializer(), new ByteArraySerializer());
    try {
      producer.initTransactions();
    } catch (RuntimeException e) {
      producer.close(Duration.ZERO);
      throw e;
    }
  }

  /**
   * Writes a FAIL of {@code node} in a transaction of its own and returns its request id.
   *
   * @throws org.apache.kafka.common.KafkaException when it was not committed; {@link #fenced} tells whether another
   *     manager took over
   */
  public String fail(String node) {
    MembershipEvent event = MembershipEvent.newBuilder()
        .setClusterId(clusterId).setNodeId(node).setAction(MembershipAction.FAIL)
        .setRequestId(UUID.randomUUID().toString()).setRequestedBy(requestedBy)
        .setTimestampMillis(clock.millis())
        .build();
    producer.beginTransaction();
    try {
      producer.send(new ProducerRecord<>(topic, RecordKeys.membershipKey(event).getBytes(StandardCharsets.UTF_8),
          RecordSerdes.membershipEvent().serialize(event)));
      producer.commitTransaction();
    } catch (RuntimeException e) {
      if (!fenced(e)) {
        try {
          producer.abortTransaction();
        } catch (RuntimeException abort) {
          e.addSuppressed(abort);
        }
      }
      throw e;
    }
    return event.getRequestId();
  }

  /**
   * Whether {@code e} says that a producer with the same transactional id took over. With transaction protocol v2 a
   * fenced producer may get {@link InvalidProducerEpochException} instead of {@link ProducerFencedException}.
   */
  public static boolean fenced(Throwable e) {
    for (Throwable t = e; t != null; t = t.getCause()) {
      if (t instanceof ProducerFencedException || t instanceof InvalidProducerEpochException) {
        return true;
      }
    }
    return false;
  }

  @Override
  public void close() {
    producer.close(Duration.ofSeconds(5));
  }
}
