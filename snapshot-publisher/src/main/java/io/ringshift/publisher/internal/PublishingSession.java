package io.ringshift.publisher.internal;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.kafka.KafkaClientMetrics;
import io.ringshift.protocol.AvroBytes;
import io.ringshift.protocol.KafkaProperties;
import io.ringshift.protocol.Topics;
import io.ringshift.protocol.ReadToEnd;
import io.ringshift.protocol.SigningKey;
import io.ringshift.protocol.TrustedKeys;
import io.ringshift.schemas.avro.EpochRecord;
import io.ringshift.schemas.avro.RangeCopyTask;
import io.ringshift.schemas.avro.TaskStatus;
import io.ringshift.schemas.avro.ParticipantReport;
import io.ringshift.schemas.avro.EpochState;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Properties;
import java.util.function.Consumer;
import org.apache.kafka.clients.consumer.CloseOptions;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.Deserializer;
import org.apache.kafka.common.serialization.Serializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One life of the publisher against Kafka, from fencing its predecessor to the first error or {@link #close}: the
 * transactional producer, a reader of {@code ring.epochs} and a reader of {@code ring.tasks} and
 * {@code ring.task-status}, all partitions assigned (no consumer group) from the beginning, read_committed. The
 * state ({@link PublisherState}, {@link TaskBook}) is built afresh by every session, so a session that fails is
 * simply replaced by a new one.
 *
 * <p>Order of {@link #open} matters: {@code initTransactions} with the stable transactional id fences any earlier
 * producer with that id and settles its open transaction (committed or aborted) <em>before</em> this session reads
 * {@code ring.epochs}. Reading first could miss a PUBLISHED record that a zombie commits a moment later and
 * publish that epoch again.
 *
 * <p>A READY record whose tasks do not add up yet ({@link Verdict.NotYet}) is not rejected at first sight: it
 * waits in the {@link DecisionQueue}, and every {@value #RECHECK_MILLIS} ms the session reads the control topics
 * again and decides it again, for up to {@value #PATIENCE_TIMEOUTS} times the timeout before it rejects it.
 *
 * <p>Not thread-safe, except {@link #wakeup}: one thread drives a session.
 */
public final class PublishingSession implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(PublishingSession.class);
  private static final Duration POLL = Duration.ofMillis(100);
  /** How often a waiting READY record's tasks are read and checked again. */
  static final long RECHECK_MILLIS = 200;
  /** How many timeouts a READY record whose tasks do not add up may wait before it is rejected. */
  static final int PATIENCE_TIMEOUTS = 3;

  /** What a session needs. */
  public record Settings(String bootstrapServers, KafkaProperties kafkaProperties, Topics topics,
      String transactionalId, SigningKey key, Clock clock, Duration timeout, TrustedKeys historyKeys,
      MeterRegistry registry, boolean stages) {
    public Settings(String bootstrapServers, KafkaProperties kafkaProperties, Topics topics, String transactionalId,
        SigningKey key, Clock clock, Duration timeout, TrustedKeys historyKeys, MeterRegistry registry) {
      this(bootstrapServers, kafkaProperties, topics, transactionalId, key, clock, timeout, historyKeys, registry,
          true);
    }

    public Settings {
      Objects.requireNonNull(bootstrapServers, "bootstrapServers");
      Objects.requireNonNull(kafkaProperties, "kafkaProperties");
      Objects.requireNonNull(topics, "topics");
      Objects.requireNonNull(transactionalId, "transactionalId");
      Objects.requireNonNull(key, "key");
      Objects.requireNonNull(clock, "clock");
      Objects.requireNonNull(timeout, "timeout");
      Objects.requireNonNull(historyKeys, "historyKeys");
      Objects.requireNonNull(registry, "registry");
    }
  }

  /** Told of every record the session commits, after the commit, and of every READY record that waits. */
  public interface Outcomes {
    void published(EpochRecord record);

    void rejected(EpochRecord record);

    /** {@code ready} fails a check on its tasks as read so far; it waits for up to {@code patience}. */
    void waiting(EpochRecord ready, String reason, Duration patience);

    /** A PUBLISHED record read from {@code ring.epochs} that the cluster's history now ends with. */
    default void history(EpochRecord published) { }

    /** A transition stage published, or a revert (STAGED, REVERTED), after the commit. */
    default void staged(EpochRecord record) { }

    /** A record written alone (FENCE_CUTOVER, CONVERGED), after the commit. */
    default void noted(EpochRecord record) { }

    /** {@code record} waits for the participants to reach a stage. */
    default void holding(EpochRecord record, String reason) { }

    /** How many live participants the cluster's transition barrier waits for, after each decision round. */
    default void stragglers(String clusterId, int count) { }
  }

  private final Settings settings;
  private final Outcomes outcomes;
  /** What the session knows and decides: the same core the deterministic simulation drives. */
  private final io.ringshift.publisher.PublisherCore core;
  /** System.nanoTime() after which a waiting record's tasks are read again. */
  private long nextRecheck;
  private final Deserializer<EpochRecord> epochDecoder;
  private final Serializer<EpochRecord> epochEncoder;
  private final Deserializer<RangeCopyTask> taskDecoder;
  private final Deserializer<TaskStatus> statusDecoder;
  private final Deserializer<ParticipantReport> participantDecoder;
  private KafkaProducer<String, byte[]> producer;
  // Volatile: wakeup() reads them from another thread.
  private volatile KafkaConsumer<String, byte[]> epochs;
  private volatile KafkaConsumer<String, byte[]> control;
  private final List<KafkaClientMetrics> clientMetrics = new ArrayList<>();

  public PublishingSession(Settings settings, Outcomes outcomes) {
    this.settings = Objects.requireNonNull(settings, "settings");
    this.outcomes = Objects.requireNonNull(outcomes, "outcomes");
    Topics topics = settings.topics();
    this.epochDecoder = topics.epochs().valueSerde().deserializer();
    this.epochEncoder = topics.epochs().valueSerde().serializer();
    this.taskDecoder = topics.tasks().valueSerde().deserializer();
    this.statusDecoder = topics.taskStatus().valueSerde().deserializer();
    this.participantDecoder = topics.participants().valueSerde().deserializer();
    this.core = new io.ringshift.publisher.PublisherCore(settings.key(), settings.historyKeys(),
        settings.timeout().multipliedBy(PATIENCE_TIMEOUTS), settings.stages());
  }

  /**
   * Fences earlier producers with the transactional id and assigns the readers.
   *
   * @throws IllegalStateException when a topic is missing
   * @throws org.apache.kafka.common.KafkaException when Kafka cannot be reached or refuses the producer
   */
  public void open() {
    producer = new KafkaProducer<>(producerProperties(), new StringSerializer(), new ByteArraySerializer());
    bind(new KafkaClientMetrics(producer));
    producer.initTransactions();
    Topics topics = settings.topics();
    epochs = new KafkaConsumer<>(consumerProperties("epochs"), new StringDeserializer(),
        new ByteArrayDeserializer());
    bind(new KafkaClientMetrics(epochs));
    assignFromBeginning(epochs, List.of(topics.epochs().name()));
    control = new KafkaConsumer<>(consumerProperties("tasks"), new StringDeserializer(),
        new ByteArrayDeserializer());
    bind(new KafkaClientMetrics(control));
    assignFromBeginning(control, List.of(topics.tasks().name(), topics.taskStatus().name(),
        topics.participants().name()));
  }

  private void bind(KafkaClientMetrics binder) {
    binder.bindTo(settings.registry());
    clientMetrics.add(binder);
  }

  /** Reads {@code ring.epochs} to its end as of now, then decides the READY records no one has answered yet. */
  public void catchUp() {
    readToEnd(epochs, this::onEpochRecord, "ring.epochs");
    LOG.info("publisher {}: read {} to its end; {} READY record(s) to decide", settings.transactionalId(),
        settings.topics().epochs().name(), core.queued());
    decidePending();
  }

  /** Polls {@code ring.epochs} once and decides the READY records read, and those that wait when it is time. */
  public void step() {
    for (ConsumerRecord<String, byte[]> r : epochs.poll(POLL)) {
      onEpochRecord(r);
    }
    decidePending();
  }

  /** Makes a blocked poll of this session throw {@link org.apache.kafka.common.errors.WakeupException}. */
  public void wakeup() {
    KafkaConsumer<String, byte[]> e = epochs;
    KafkaConsumer<String, byte[]> c = control;
    if (e != null) {
      e.wakeup();
    }
    if (c != null) {
      c.wakeup();
    }
  }

  private void decidePending() {
    boolean fresh = core.fresh();
    if ((core.queued() == 0 && !core.inTransition()) || (!fresh && System.nanoTime() - nextRecheck < 0)) {
      return;
    }
    // Every READY record queued was read before this point, and the orchestrator wrote it after the statuses that
    // made it ready: reading the control topics to their end offsets of now normally sees them all. Not always:
    // Kafka commits a transaction partition by partition, hence the queue's patience.
    readToEnd(control, this::onControlRecord, "ring.tasks, ring.task-status and ring.participants");
    core.decide(System.nanoTime(), settings.clock().millis(), this::act,
        new io.ringshift.publisher.PublisherCore.Waiting() {
          @Override
          public void waiting(EpochRecord ready, String reason, Duration patience) {
            LOG.info("publisher {}: READY epoch {} of cluster {} does not pass yet, {}; the tasks read so far may lag "
                + "behind it, so they are read again every {} ms for up to {} before it is rejected",
                settings.transactionalId(), ready.getEpoch(), ready.getClusterId(), reason, RECHECK_MILLIS, patience);
            outcomes.waiting(ready, reason, patience);
          }

          @Override
          public void holding(EpochRecord record, String reason) {
            LOG.info("publisher {}: epoch {} of cluster {} {}", settings.transactionalId(), record.getEpoch(),
                record.getClusterId(), reason);
            outcomes.holding(record, reason);
          }
        });
    core.stragglers(settings.clock().millis()).forEach(outcomes::stragglers);
    nextRecheck = System.nanoTime() + Duration.ofMillis(RECHECK_MILLIS).toNanos();
  }

  private void act(io.ringshift.publisher.PublisherCore.Decision decision) {
    Topics topics = settings.topics();
    if (decision instanceof io.ringshift.publisher.PublisherCore.Publish p) {
      EpochRecord record = p.record();
      String cluster = record.getClusterId();
      commit(List.of(
          new ProducerRecord<>(topics.snapshots().name(), cluster, p.snapshot()),
          new ProducerRecord<>(topics.epochs().name(), cluster, epochEncoder.serialize(topics.epochs().name(),
              record))));
      LOG.info("publisher {}: published epoch {} of cluster {} (checksum {}, key {}, {} filling marks)",
          settings.transactionalId(), record.getEpoch(), cluster, AvroBytes.hex(record.getTargetChecksum()),
          record.getSigningKeyId(), record.getFilling().size());
      outcomes.published(record);
    } else if (decision instanceof io.ringshift.publisher.PublisherCore.Reject r) {
      EpochRecord record = r.record();
      if (r.waited()) {
        LOG.warn("publisher {}: READY epoch {} of cluster {} still fails after {}", settings.transactionalId(),
            record.getEpoch(), record.getClusterId(), core.patience());
      }
      commit(List.of(new ProducerRecord<>(topics.epochs().name(), record.getClusterId(),
          epochEncoder.serialize(topics.epochs().name(), record))));
      LOG.warn("publisher {}: rejected epoch {} of cluster {}: {}", settings.transactionalId(), record.getEpoch(),
          record.getClusterId(), record.getReason());
      outcomes.rejected(record);
    } else if (decision instanceof io.ringshift.publisher.PublisherCore.Stage st) {
      EpochRecord record = st.record();
      String cluster = record.getClusterId();
      commit(List.of(
          new ProducerRecord<>(topics.snapshots().name(), cluster, st.snapshot()),
          new ProducerRecord<>(topics.epochs().name(), cluster, epochEncoder.serialize(topics.epochs().name(),
              record))));
      LOG.info("publisher {}: {} epoch {} of cluster {}{}", settings.transactionalId(),
          record.getState() == EpochState.REVERTED ? "reverted" : "published stage " + record.getStage() + " of",
          record.getEpoch(), cluster, record.getReason() == null ? "" : ": " + record.getReason());
      outcomes.staged(record);
    } else if (decision instanceof io.ringshift.publisher.PublisherCore.Note n) {
      EpochRecord record = n.record();
      commit(List.of(new ProducerRecord<>(topics.epochs().name(), record.getClusterId(),
          epochEncoder.serialize(topics.epochs().name(), record))));
      LOG.info("publisher {}: {} epoch {} of cluster {}: {}", settings.transactionalId(), record.getState(),
          record.getEpoch(), record.getClusterId(), record.getReason());
      outcomes.noted(record);
    }
  }

  /** Sends the records in one transaction; they become visible together or not at all. */
  private void commit(List<ProducerRecord<String, byte[]>> records) {
    producer.beginTransaction();
    for (ProducerRecord<String, byte[]> r : records) {
      producer.send(r);
    }
    // Throws if any send failed; the session then ends, and its successor's initTransactions aborts what is open.
    producer.commitTransaction();
  }

  private void onEpochRecord(ConsumerRecord<String, byte[]> r) {
    if (r.value() == null) {
      return;
    }
    EpochRecord record;
    try {
      record = epochDecoder.deserialize(r.topic(), r.value());
    } catch (RuntimeException e) {
      LOG.warn("publisher: skipping an unreadable epoch record at {}-{}@{}: {}", r.topic(), r.partition(),
          r.offset(), e.toString());
      return;
    }
    if (core.onEpochRecord(record)) {
      outcomes.history(record);
    }
  }

  private void onControlRecord(ConsumerRecord<String, byte[]> r) {
    try {
      if (r.topic().equals(settings.topics().tasks().name())) {
        core.onTask(r.key(), r.value() == null ? null : taskDecoder.deserialize(r.topic(), r.value()));
      } else if (r.topic().equals(settings.topics().participants().name())) {
        core.onParticipant(r.key(), r.value() == null ? null : participantDecoder.deserialize(r.topic(), r.value()),
            settings.clock().millis());
      } else {
        core.onStatus(r.key(), r.value() == null ? null : statusDecoder.deserialize(r.topic(), r.value()));
      }
    } catch (RuntimeException e) {
      LOG.warn("publisher: skipping an unreadable record at {}-{}@{}: {}", r.topic(), r.partition(), r.offset(),
          e.toString());
    }
  }

  /**
   * Reads every assigned partition up to its end offset as of the call ({@link ReadToEnd}).
   *
   * @throws IllegalStateException when no position moves for {@code timeout} while the end is not reached
   */
  private void readToEnd(KafkaConsumer<String, byte[]> consumer, Consumer<ConsumerRecord<String, byte[]>> handler,
      String what) {
    ReadToEnd.read(consumer, handler, settings.timeout(), System::nanoTime, what);
  }

  private void assignFromBeginning(KafkaConsumer<String, byte[]> consumer, List<String> topics) {
    List<TopicPartition> partitions = new ArrayList<>();
    for (String topic : topics) {
      List<PartitionInfo> infos = consumer.partitionsFor(topic, settings.timeout());
      if (infos == null || infos.isEmpty()) {
        throw new IllegalStateException("topic " + topic + " does not exist; start the orchestrator (it creates "
            + "the ring.* topics) or check the topic prefix");
      }
      infos.forEach(i -> partitions.add(new TopicPartition(topic, i.partition())));
    }
    consumer.assign(partitions);
    consumer.seekToBeginning(partitions);
  }

  private Properties producerProperties() {
    Properties p = settings.kafkaProperties().applyTo(new Properties());
    p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, settings.bootstrapServers());
    p.put(ProducerConfig.CLIENT_ID_CONFIG, settings.transactionalId() + "-producer");
    p.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, settings.transactionalId());
    p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
    p.put(ProducerConfig.ACKS_CONFIG, "all");
    p.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, (int) settings.timeout().toMillis());
    // A publisher that dies inside a transaction holds back read_committed readers of ring.snapshots until the
    // transaction is aborted: by its successor's initTransactions, or by the coordinator after this long.
    p.put(ProducerConfig.TRANSACTION_TIMEOUT_CONFIG, 10_000);
    return p;
  }

  private Properties consumerProperties(String role) {
    Properties p = settings.kafkaProperties().applyTo(new Properties());
    p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, settings.bootstrapServers());
    p.put(ConsumerConfig.CLIENT_ID_CONFIG, settings.transactionalId() + "-" + role);
    p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
    // ring.epochs and ring.tasks are written in transactions (the orchestrator's and this publisher's).
    p.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
    p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
    p.put(ConsumerConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, (int) settings.timeout().toMillis());
    return p;
  }

  /** Closes the clients; an open transaction is left to the next session's {@code initTransactions}. */
  @Override
  public void close() {
    clientMetrics.forEach(KafkaClientMetrics::close);
    clientMetrics.clear();
    if (epochs != null) {
      epochs.close(CloseOptions.timeout(Duration.ofSeconds(5)));
      epochs = null;
    }
    if (control != null) {
      control.close(CloseOptions.timeout(Duration.ofSeconds(5)));
      control = null;
    }
    if (producer != null) {
      producer.close(Duration.ofSeconds(5));
      producer = null;
    }
  }
}
