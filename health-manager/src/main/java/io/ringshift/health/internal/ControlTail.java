package io.ringshift.health.internal;

import io.ringshift.protocol.KafkaClients;
import io.ringshift.protocol.KafkaProperties;
import io.ringshift.protocol.RecordSerdes;
import io.ringshift.protocol.TopicTail;
import io.ringshift.protocol.Topics;
import io.ringshift.schemas.avro.EpochRecord;
import java.time.Duration;
import java.util.List;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.serialization.Deserializer;

/**
 * Tails every partition of {@code ring.membership}, {@code ring.epochs} and {@code ring.rejected} (the orchestrator's
 * refusals: a refused FAIL declared nothing) from the beginning ({@code
 * read_committed}, no consumer group) into a {@link MembershipView}, on its own thread ({@link TopicTail}).
 *
 * <p>{@link #awaitCaughtUp} is the barrier a manager passes after it took the lease and fenced the one before: it
 * returns once everything on both topics as of the call has been read, so the new decider has seen every FAIL the
 * old one committed.
 */
public final class ControlTail implements AutoCloseable {
  private final Topics topics;
  private final MembershipView view;
  private final Deserializer<EpochRecord> epochs;
  private final TopicTail tail;

  public ControlTail(String bootstrapServers, KafkaProperties kafkaProperties, Duration timeout, Topics topics,
      MembershipView view, String clientId) {
    this.topics = topics;
    this.view = view;
    this.epochs = topics.epochs().valueSerde().deserializer();
    this.tail = new TopicTail(KafkaClients.readCommittedConsumer(bootstrapServers, kafkaProperties, timeout,
        clientId), List.of(topics.membership().name(), topics.epochs().name(), topics.rejected().name()),
        this::onRecord, "ringshift-health-tail", topics.membership().name() + ", " + topics.epochs().name() + " and "
            + topics.rejected().name());
  }

  /**
   * Assigns every partition of the two topics from the beginning and starts reading.
   *
   * @throws IllegalStateException when a topic does not exist
   */
  public ControlTail start(Duration timeout) {
    tail.start(timeout);
    return this;
  }

  /**
   * Waits until everything on the two topics at the time of the call has been read.
   *
   * @throws IllegalStateException when that takes longer than {@code timeout} or the tail failed
   */
  public void awaitCaughtUp(Duration timeout) {
    tail.awaitCaughtUp(timeout);
  }

  /** The error that stopped the tail, or null while it runs. */
  public Throwable failure() {
    return tail.failure();
  }

  private void onRecord(ConsumerRecord<byte[], byte[]> r) {
    if (r.value() == null) {
      return;
    }
    if (r.topic().equals(topics.membership().name())) {
      view.onMembershipEvent(RecordSerdes.membershipEvent().deserialize(r.value()));
    } else if (r.topic().equals(topics.rejected().name())) {
      io.ringshift.schemas.avro.RejectedEvent rejected = RecordSerdes.rejectedEvent().deserialize(r.value());
      view.onRejected(rejected.getClusterId(), rejected.getRequestId());
    } else {
      view.onEpoch(epochs.deserialize(r.topic(), r.value()));
    }
  }

  @Override
  public void close() {
    tail.close();
  }
}
