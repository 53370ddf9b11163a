package io.ringshift.worker.internal;

import io.ringshift.protocol.KafkaProperties;
import io.ringshift.protocol.Topics;
import io.ringshift.schemas.avro.EpochRecord;
import io.ringshift.schemas.avro.RangeCopyTask;
import io.ringshift.schemas.avro.TaskStatus;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.kafka.clients.consumer.CloseOptions;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.WakeupException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.Deserializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reads every partition of {@code ring.task-status}, {@code ring.tasks} and {@code ring.epochs} from the
 * beginning, without a consumer group, into a {@link ControlState}, on its own thread.
 *
 * <p>{@link #awaitCaughtUp} is a read-your-writes barrier: it returns once the reader has read up to the end
 * offsets as of the call. The worker waits on it before it starts tasks it did not run yet, so it never starts
 * a task from a checkpoint older than one already on the topic, nor re-runs a task whose VERIFIED status it has
 * not read yet.
 */
public final class ControlReader implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(ControlReader.class);

  private final Topics topics;
  private final ControlState state;
  private final KafkaConsumer<String, byte[]> consumer;
  private final Thread thread;
  private final ConcurrentLinkedQueue<CompletableFuture<Void>> barriers = new ConcurrentLinkedQueue<>();
  private volatile boolean running = true;
  private volatile boolean started;
  private volatile Throwable failure;

  public ControlReader(String bootstrapServers, KafkaProperties kafkaProperties, Topics topics, ControlState state,
      String clientId) {
    this.topics = topics;
    this.state = state;
    Properties p = kafkaProperties.applyTo(new Properties());
    p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
    p.put(ConsumerConfig.CLIENT_ID_CONFIG, clientId);
    p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
    // ring.tasks and ring.epochs are written in the orchestrator's transactions.
    p.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
    p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
    this.consumer = new KafkaConsumer<>(p, new StringDeserializer(), new ByteArrayDeserializer());
    this.thread = new Thread(this::loop, "ringshift-worker-control-reader");
    this.thread.setDaemon(true);
  }

  /** Assigns every partition of the three topics from the beginning and starts reading. */
  public ControlReader start(Duration timeout) {
    List<TopicPartition> partitions = new ArrayList<>();
    for (String topic : List.of(topics.taskStatus().name(), topics.tasks().name(), topics.epochs().name())) {
      List<PartitionInfo> infos = consumer.partitionsFor(topic, timeout);
      if (infos == null || infos.isEmpty()) {
        throw new IllegalStateException("topic " + topic + " does not exist; start the orchestrator (it creates "
            + "the ring.* topics) or check the topic prefix");
      }
      infos.forEach(i -> partitions.add(new TopicPartition(topic, i.partition())));
    }
    consumer.assign(partitions);
    consumer.seekToBeginning(partitions);
    started = true;
    thread.start();
    return this;
  }

  /**
   * Waits until everything on the three topics at the time of the call has been read.
   *
   * @throws IllegalStateException when that takes longer than {@code timeout} or the reader failed
   */
  public void awaitCaughtUp(Duration timeout) {
    CompletableFuture<Void> barrier = new CompletableFuture<>();
    barriers.add(barrier);
    try {
      barrier.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
    } catch (TimeoutException e) {
      throw new IllegalStateException("the control-plane topics were not read to their end within " + timeout
          + (failure == null ? "" : " (reader failed: " + failure + ")"), e);
    } catch (ExecutionException e) {
      throw new IllegalStateException("the control-plane reader failed: " + e.getCause(), e.getCause());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while reading the control-plane topics", e);
    }
  }

  private void loop() {
    Map<CompletableFuture<Void>, Map<TopicPartition, Long>> pending = new HashMap<>();
    Deserializer<TaskStatus> statuses = topics.taskStatus().valueSerde().deserializer();
    Deserializer<RangeCopyTask> tasks = topics.tasks().valueSerde().deserializer();
    Deserializer<EpochRecord> epochs = topics.epochs().valueSerde().deserializer();
    try {
      while (running) {
        CompletableFuture<Void> b;
        while ((b = barriers.poll()) != null) {
          pending.put(b, consumer.endOffsets(consumer.assignment()));
        }
        for (ConsumerRecord<String, byte[]> r : consumer.poll(Duration.ofMillis(100))) {
          try {
            if (r.topic().equals(topics.taskStatus().name())) {
              state.onStatus(r.key(), r.value() == null ? null : statuses.deserialize(r.topic(), r.value()));
            } else if (r.topic().equals(topics.tasks().name())) {
              state.onTask(r.key(), r.value() == null ? null : tasks.deserialize(r.topic(), r.value()));
            } else if (r.value() != null) {
              state.onEpoch(epochs.deserialize(r.topic(), r.value()));
            }
          } catch (RuntimeException e) {
            LOG.warn("skipping an unreadable record at {}-{}@{}: {}", r.topic(), r.partition(), r.offset(),
                e.toString());
          }
        }
        pending.entrySet().removeIf(e -> {
          boolean reached = e.getValue().entrySet().stream()
              .allMatch(end -> consumer.position(end.getKey()) >= end.getValue());
          if (reached) {
            e.getKey().complete(null);
          }
          return reached;
        });
      }
    } catch (WakeupException e) {
      LOG.debug("control reader woken to stop");
    } catch (RuntimeException e) {
      failure = e;
      LOG.error("the control-plane reader stopped", e);
      pending.keySet().forEach(f -> f.completeExceptionally(e));
      barriers.forEach(f -> f.completeExceptionally(e));
    } finally {
      consumer.close(CloseOptions.timeout(Duration.ofSeconds(5)));
    }
  }

  @Override
  public void close() {
    running = false;
    if (!started) {
      consumer.close(CloseOptions.timeout(Duration.ofSeconds(5)));
      return;
    }
    consumer.wakeup();
    try {
      thread.join(TimeUnit.SECONDS.toMillis(10));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
