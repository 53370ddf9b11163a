package io.ringshift.systemtests;

import static org.awaitility.Awaitility.await;

import io.ringshift.protocol.Topics;
import io.ringshift.schemas.avro.EpochRecord;
import io.ringshift.schemas.avro.EpochState;
import io.ringshift.schemas.avro.RangeCopyTask;
import io.ringshift.schemas.avro.TaskKind;
import io.ringshift.schemas.avro.TaskStatus;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Predicate;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.WakeupException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.awaitility.core.ConditionTimeoutException;

/**
 * Watches the control plane as an operator's dashboard would: reads every partition of {@code ring.epochs},
 * {@code ring.tasks} and {@code ring.task-status} from the beginning ({@code read_committed}) on its own thread
 * and keeps every record with the {@link System#nanoTime()} it was read at, so the pipeline IT can both assert
 * on the history and time its phases. Thread safe.
 */
public final class ControlPlaneTail implements AutoCloseable {
  public static final Duration TIMEOUT = Duration.ofSeconds(60);

  /** A record as read: its key, its value (null for a tombstone) and when this tail read it. */
  public record Seen<V>(String key, V value, long readNanos) {}

  private final Topics topics;
  private final KafkaConsumer<String, byte[]> consumer;
  private final Thread thread;
  private final List<Seen<EpochRecord>> epochs = new CopyOnWriteArrayList<>();
  private final List<Seen<RangeCopyTask>> tasks = new CopyOnWriteArrayList<>();
  private final List<Seen<TaskStatus>> statuses = new CopyOnWriteArrayList<>();
  private final Map<String, CompletableFuture<EpochRecord>> epochWaiters = new ConcurrentHashMap<>();
  private volatile boolean running = true;
  private volatile Throwable failure;

  public ControlPlaneTail(String bootstrapServers, Topics topics) {
    this.topics = topics;
    Properties p = new Properties();
    p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
    p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
    p.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
    p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
    consumer = new KafkaConsumer<>(p, new StringDeserializer(), new ByteArrayDeserializer());
    List<TopicPartition> partitions = new ArrayList<>();
    for (String topic : List.of(topics.epochs().name(), topics.tasks().name(), topics.taskStatus().name())) {
      consumer.partitionsFor(topic, TIMEOUT).forEach(i -> partitions.add(new TopicPartition(topic, i.partition())));
    }
    consumer.assign(partitions);
    consumer.seekToBeginning(partitions);
    thread = new Thread(this::loop, "pipeline-it-tail");
    thread.setDaemon(true);
    thread.start();
  }

  private void loop() {
    var epochSerde = topics.epochs().valueSerde().deserializer();
    var taskSerde = topics.tasks().valueSerde().deserializer();
    var statusSerde = topics.taskStatus().valueSerde().deserializer();
    try {
      while (running) {
        for (ConsumerRecord<String, byte[]> r : consumer.poll(Duration.ofMillis(50))) {
          long now = System.nanoTime();
          if (r.topic().equals(topics.epochs().name())) {
            EpochRecord e = epochSerde.deserialize(r.topic(), r.value());
            epochs.add(new Seen<>(r.key(), e, now));
            epochWaiters.computeIfAbsent(waiterKey(e.getEpoch(), e.getState()), k -> new CompletableFuture<>())
                .complete(e);
          } else if (r.topic().equals(topics.tasks().name())) {
            tasks.add(new Seen<>(r.key(), r.value() == null ? null : taskSerde.deserialize(r.topic(), r.value()),
                now));
          } else {
            statuses.add(new Seen<>(r.key(),
                r.value() == null ? null : statusSerde.deserialize(r.topic(), r.value()), now));
          }
        }
      }
    } catch (WakeupException e) {
      // close() asked the loop to stop.
    } catch (RuntimeException e) {
      // Kept for the waiters and the assertions' messages: a dead tail must not look like a slow pipeline.
      failure = e;
      epochWaiters.values().forEach(f -> f.completeExceptionally(e));
    } finally {
      consumer.close();
    }
  }

  private static String waiterKey(long epoch, EpochState state) {
    return epoch + "/" + state;
  }

  /** Completes with the first record of {@code epoch} in {@code state} (now, if it was already read). */
  public CompletableFuture<EpochRecord> whenEpoch(long epoch, EpochState state) {
    return epochWaiters.computeIfAbsent(waiterKey(epoch, state), k -> new CompletableFuture<>());
  }

  /** The first record of {@code epoch} in {@code state}, waiting up to {@link #TIMEOUT} for it. */
  public Seen<EpochRecord> awaitEpoch(long epoch, EpochState state) {
    try {
      return await("epoch " + epoch + " " + state + " on " + topics.epochs().name()).atMost(TIMEOUT)
          .pollInterval(Duration.ofMillis(20)).until(() -> epoch(epoch, state).orElse(null), s -> s != null);
    } catch (ConditionTimeoutException e) {
      throw new AssertionError("epoch " + epoch + " was not " + state + " within " + TIMEOUT + "; epochs read: "
          + epochSummary() + (failure == null ? "" : "; the tail failed: " + failure), e);
    }
  }

  public Optional<Seen<EpochRecord>> epoch(long epoch, EpochState state) {
    return epochs.stream().filter(s -> s.value().getEpoch() == epoch && s.value().getState() == state).findFirst();
  }

  /** Every epoch record read, in order. */
  public List<EpochRecord> epochRecords() {
    return epochs.stream().map(Seen::value).toList();
  }

  /** Every epoch record read, with when it was read, in order. */
  public List<Seen<EpochRecord>> epochsRead() {
    return List.copyOf(epochs);
  }

  /** Every status read from {@code ring.task-status}, with when it was read, in order (tombstones included). */
  public List<Seen<TaskStatus>> statusesRead() {
    return List.copyOf(statuses);
  }

  /** Every epoch record as {@code STATE@epoch}, in the order read. */
  public List<String> epochSummary() {
    return epochs.stream().map(s -> s.value().getState() + "@" + s.value().getEpoch()).toList();
  }

  /** Every record read from {@code ring.tasks}, in the order read (tombstones included). */
  public List<Seen<RangeCopyTask>> taskRecords() {
    return List.copyOf(tasks);
  }

  /** The latest record of each task of {@code epoch} of one of {@code kinds}, dropped (tombstoned) tasks left out. */
  public Map<String, RangeCopyTask> latestTasks(long epoch, TaskKind... kinds) {
    Map<String, RangeCopyTask> latest = new LinkedHashMap<>();
    for (Seen<RangeCopyTask> s : tasks) {
      if (s.value() == null) {
        latest.remove(s.key());
      } else if (s.value().getEpoch() == epoch && List.of(kinds).contains(s.value().getKind())) {
        latest.put(s.key(), s.value());
      }
    }
    return latest;
  }

  /** Every status of {@code taskId}, in the order read. */
  public List<TaskStatus> statuses(String taskId) {
    return statuses.stream().filter(s -> s.key().equals(taskId) && s.value() != null).map(Seen::value).toList();
  }

  /** The latest status of {@code taskId}, if any. */
  public Optional<TaskStatus> latestStatus(String taskId) {
    List<TaskStatus> all = statuses(taskId);
    return all.isEmpty() ? Optional.empty() : Optional.of(all.get(all.size() - 1));
  }

  /** When each status that matches was read ({@link System#nanoTime()}), in the order read. */
  public List<Long> statusTimes(Predicate<TaskStatus> condition) {
    return statuses.stream().filter(s -> s.value() != null && condition.test(s.value())).map(Seen::readNanos)
        .toList();
  }

  /** The first status read that matches, with when it was read. */
  public Optional<Seen<TaskStatus>> firstStatus(Predicate<TaskStatus> condition) {
    return statuses.stream().filter(s -> s.value() != null && condition.test(s.value())).findFirst();
  }

  @Override
  public void close() {
    running = false;
    consumer.wakeup();
    try {
      thread.join(Duration.ofSeconds(10).toMillis());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
