package io.ringshift.worker.internal;

import io.ringshift.protocol.KafkaProperties;
import io.ringshift.protocol.TopicTail;
import io.ringshift.protocol.Topics;
import io.ringshift.schemas.avro.EpochRecord;
import io.ringshift.schemas.avro.RangeCopyTask;
import io.ringshift.schemas.avro.TaskStatus;
import io.ringshift.schemas.avro.WorkerBudgets;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.CompletableFuture;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.Deserializer;

/**
 * Reads every partition of {@code ring.task-status}, {@code ring.tasks}, {@code ring.epochs} and
 * {@code ring.worker-budgets} from the beginning, without a consumer group, into a {@link ControlState}, on its own thread ({@link TopicTail}).
 *
 * <p>{@link #awaitCaughtUp} is a read-your-writes barrier: it returns once the reader has read up to the end
 * offsets as of the call. The worker waits on it before it starts tasks it did not run yet, so it never starts
 * a task from a checkpoint older than one already on the topic, nor re-runs a task whose VERIFIED status it has
 * not read yet.
 */
public final class ControlReader implements AutoCloseable {
  private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(ControlReader.class);
  private final Topics topics;
  private final ControlState state;
  private final TopicTail tail;
  private final Deserializer<TaskStatus> statuses;
  private final Deserializer<RangeCopyTask> tasks;
  private final Deserializer<EpochRecord> epochs;
  private final Deserializer<WorkerBudgets> budgets;

  public ControlReader(String bootstrapServers, KafkaProperties kafkaProperties, Topics topics, ControlState state,
      String clientId) {
    this.topics = topics;
    this.state = state;
    this.statuses = topics.taskStatus().valueSerde().deserializer();
    this.tasks = topics.tasks().valueSerde().deserializer();
    this.epochs = topics.epochs().valueSerde().deserializer();
    this.budgets = topics.workerBudgets().valueSerde().deserializer();
    Properties p = kafkaProperties.applyTo(new Properties());
    p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
    p.put(ConsumerConfig.CLIENT_ID_CONFIG, clientId);
    p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
    // ring.tasks and ring.epochs are written in the orchestrator's transactions.
    p.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
    p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
    this.tail = new TopicTail(new KafkaConsumer<>(p, new ByteArrayDeserializer(), new ByteArrayDeserializer()),
        List.of(topics.taskStatus().name(), topics.tasks().name(), topics.epochs().name(),
            topics.workerBudgets().name()), this::onRecord,
        "ringshift-worker-control-reader", "the control-plane topics");
  }

  /** Assigns every partition of the four topics from the beginning and starts reading. */
  public ControlReader start(Duration timeout) {
    tail.start(timeout);
    return this;
  }

  /**
   * Waits until everything on the four topics at the time of the call has been read.
   *
   * @throws IllegalStateException when that takes longer than {@code timeout} or the reader failed
   */
  public void awaitCaughtUp(Duration timeout) {
    tail.awaitCaughtUp(timeout);
  }

  /**
   * Asks the reader to catch up without waiting: the future completes once everything on the four topics at the time of
   * the call has been read (exceptionally when the reader fails).
   */
  public CompletableFuture<Void> catchUpAsync() {
    return tail.catchUpAsync();
  }

  private void onRecord(ConsumerRecord<byte[], byte[]> r) {
    String key = r.key() == null ? null : new String(r.key(), StandardCharsets.UTF_8);
    if (r.topic().equals(topics.taskStatus().name())) {
      state.onStatus(key, r.value() == null ? null : statuses.deserialize(r.topic(), r.value()));
    } else if (r.topic().equals(topics.tasks().name())) {
      state.onTask(key, r.value() == null ? null : tasks.deserialize(r.topic(), r.value()));
    } else if (r.topic().equals(topics.workerBudgets().name())) {
      onBudgets(key, r);
    } else if (r.value() != null) {
      state.onEpoch(epochs.deserialize(r.topic(), r.value()));
    }
  }

  /** A budgets record that does not decode is skipped with an error: the budgets in force stay. */
  private void onBudgets(String key, ConsumerRecord<byte[], byte[]> r) {
    if (r.value() == null) {
      state.onBudgets(key, null);
      return;
    }
    try {
      state.onBudgets(key, budgets.deserialize(r.topic(), r.value()));
    } catch (RuntimeException e) {
      LOG.error("ignoring the record of {} at {}-{} offset {}: it does not decode as WorkerBudgets: {}", key,
          r.topic(), r.partition(), r.offset(), e.getMessage());
    }
  }

  @Override
  public void close() {
    tail.close();
  }
}
