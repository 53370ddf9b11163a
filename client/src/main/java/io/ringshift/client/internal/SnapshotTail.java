package io.ringshift.client.internal;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.consumer.CloseOptions;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.InterruptException;
import org.apache.kafka.common.errors.WakeupException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Tails the snapshots topic on its own thread and hands the records of one key (the cluster id) to a
 * {@link Handler}: first everything up to the end offsets as of the start (catch-up, after which the handler
 * swaps once), then every new record as it arrives.
 *
 * <p>Design: no consumer group. The tail assigns every partition of the topic, because which partition holds
 * the cluster's key depends on the producer's partitioner, and reads from the beginning (the compacted topic
 * keeps little more than the latest snapshot per cluster). Records are read with {@code read_committed}: the
 * publisher writes the snapshot and its audit record in one transaction.
 *
 * <p>Kafka being unreachable never stops the tail: every failed call (metadata, offsets, positions) is
 * retried after the backoff, for ever. A poll against an unreachable broker just returns nothing, so while no
 * record arrives the tail asks for the end offsets every probe interval to notice an outage. Outages are
 * logged at WARN once when they start and at INFO once when they end ({@link OutageTracker}); the consumer's
 * own network warnings are Kafka's loggers', {@code org.apache.kafka.clients.NetworkClient}.
 *
 * <p>A handler that throws does not stop the tail: the record (or the end of the catch-up) is logged at ERROR and
 * skipped. An interrupt of the tail's thread stops it, as {@link #close()} does.
 */
public final class SnapshotTail implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(SnapshotTail.class);
  private static final Duration POLL = Duration.ofMillis(200);
  /** While a sync reads up to its end offsets: short, so that the moving ranges it holds back come back soon. */
  private static final Duration SYNC_POLL = Duration.ofMillis(10);

  /** Receives the records of the followed key, on the tail's thread. */
  public interface Handler {
    /**
     * One record of the followed key.
     *
     * @param value the record value, {@code null} for a tombstone
     * @param timestampMillis the record timestamp: when the snapshot was published
     * @param origin {@code topic-partition@offset}, for log messages
     * @param catchingUp true until the tail has read up to the end offsets it found at start: the handler
     *     defers its swap to {@link #onCaughtUp()}
     */
    void onRecord(byte[] value, long timestampMillis, String origin, boolean catchingUp);

    /** The tail has read everything that was on the topic when it started. Called once. */
    void onCaughtUp();

    /** The epoch routed by now, for log messages. */
    long epoch();

    /** The floor epoch the tail read before the snapshots (-1: none); called once, before any record. */
    default void onFloor(long floor) {}

    /**
     * The tail has read, and handed to {@link #onRecord}, everything that was on the topic when sync {@code token} was
     * asked for ({@link SnapshotTail#requestSync}); not called during the catch-up at start.
     */
    default void onSynced(long token) {}
  }

  /** Reads the floor epoch with the tail's consumer, before it reads the snapshots ({@link EpochFloor}). */
  public interface FloorReader {
    /** @throws KafkaException when Kafka does not answer: the tail retries after its backoff */
    long read(Consumer<String, byte[]> consumer);
  }

  private final Consumer<String, byte[]> consumer;
  private final String topic;
  private final String key;
  private final Handler handler;
  private final Duration requestTimeout;
  private final Duration retryBackoff;
  private final Duration probeInterval;
  private final String description;
  private final OutageTracker outage;
  private final CountDownLatch closing = new CountDownLatch(1);
  private final Thread thread;
  private volatile boolean running = true;
  private volatile boolean started;
  private FloorReader floorReader;
  private boolean floorPending;

  private List<TopicPartition> partitions;
  private Map<TopicPartition, Long> catchUpEnd;
  private boolean catchingUp = true;
  private boolean topicMissing;
  /** The latest sync asked for ({@link #requestSync}); 0: none. */
  private final java.util.concurrent.atomic.AtomicLong syncAsked = new java.util.concurrent.atomic.AtomicLong();
  /** The latest sync started, and the end offsets it reads up to (null once it is done). */
  private long syncStarted;
  private Map<TopicPartition, Long> syncEnd;
  /** System.nanoTime() of the last call Kafka answered, or of the start. */
  private long lastContact = System.nanoTime();

  /**
   * @param description names the Kafka cluster and topic in log messages, for example the bootstrap servers
   */
  public SnapshotTail(Consumer<String, byte[]> consumer, String topic, String key, Handler handler,
      Duration requestTimeout, Duration retryBackoff, Duration probeInterval, String description) {
    this.consumer = Objects.requireNonNull(consumer, "consumer");
    this.topic = Objects.requireNonNull(topic, "topic");
    this.key = Objects.requireNonNull(key, "key");
    this.handler = Objects.requireNonNull(handler, "handler");
    this.requestTimeout = requestTimeout;
    this.retryBackoff = retryBackoff;
    this.probeInterval = probeInterval;
    this.description = description;
    this.outage = new OutageTracker(System::nanoTime);
    this.thread = new Thread(this::run, "ringshift-client-" + key);
    this.thread.setDaemon(true);
  }

  /** Reads a floor epoch first, before the snapshots; call before {@link #start()}. */
  public SnapshotTail withFloor(FloorReader reader) {
    this.floorReader = Objects.requireNonNull(reader, "reader");
    this.floorPending = true;
    return this;
  }

  public void start() {
    started = true;
    thread.start();
  }

  /**
   * Asks the tail to read the topic up to its end offsets as they are after this call, then to call
   * {@link Handler#onSynced} with {@code token}; a larger token replaces one not done yet, a smaller one (a late
   * call) changes nothing. Thread safe; does not wait.
   */
  public void requestSync(long token) {
    syncAsked.accumulateAndGet(token, Math::max);
  }

  private void run() {
    try {
      while (running) {
        try {
          step();
        } catch (WakeupException e) {
          if (running) {
            LOG.debug("snapshot tail of cluster {} woken while running; going on", key);
          }
        } catch (InterruptException e) {
          // Someone interrupted the thread: a stop. Looping would only spin, since every Kafka call of an
          // interrupted thread throws this again at once.
          if (running) {
            LOG.warn("the snapshot tail of cluster {} was interrupted and stops; the client keeps routing by epoch "
                + "{} but will not see new snapshots", key, handler.epoch());
          }
          running = false;
          Thread.interrupted(); // cleared so that the consumer closes cleanly; the thread ends right after
        } catch (KafkaException e) {
          failed(e);
          pause(retryBackoff);
        }
      }
    } catch (RuntimeException | Error e) {
      LOG.error("the snapshot tail of cluster {} stopped on an unexpected error; the client keeps routing by "
          + "epoch {} but will not see new snapshots", key, handler.epoch(), e);
      throw e;
    } finally {
      closeConsumer();
    }
  }

  private void step() {
    if (floorPending) {
      long floor = floorReader.read(consumer);
      succeeded();
      floorPending = false;
      LOG.debug("cluster {}: floor epoch {}", key, floor);
      handler.onFloor(floor);
    }
    if (partitions == null) {
      List<PartitionInfo> infos = consumer.partitionsFor(topic, requestTimeout);
      succeeded();
      if (infos == null || infos.isEmpty()) {
        if (!topicMissing) {
          topicMissing = true;
          LOG.warn("topic {} does not exist on {}; cluster {} routes by epoch {} until it does (checking every "
              + "{} ms)", topic, description, key, handler.epoch(), retryBackoff.toMillis());
        }
        pause(retryBackoff);
        return;
      }
      topicMissing = false;
      List<TopicPartition> assigned = new ArrayList<>(infos.size());
      infos.forEach(info -> assigned.add(new TopicPartition(topic, info.partition())));
      consumer.assign(assigned);
      consumer.seekToBeginning(assigned);
      partitions = assigned;
    }
    if (catchingUp && catchUpEnd == null) {
      catchUpEnd = consumer.endOffsets(partitions, requestTimeout);
      succeeded();
      LOG.debug("cluster {}: catching up on {} to end offsets {}", key, topic, catchUpEnd);
    }
    long asked = syncAsked.get();
    if (!catchingUp && asked > syncStarted) {
      // The end offsets are read after the request: whatever was on the topic when it was made is below them.
      syncEnd = consumer.endOffsets(partitions, requestTimeout);
      succeeded();
      syncStarted = asked;
    }
    ConsumerRecords<String, byte[]> records = consumer.poll(syncEnd != null ? SYNC_POLL : POLL);
    if (!records.isEmpty()) {
      succeeded();
    }
    for (ConsumerRecord<String, byte[]> r : records) {
      if (key.equals(r.key())) {
        deliver(r);
      }
    }
    if (catchingUp) {
      if (caughtUp()) {
        catchingUp = false;
        caughtUpHandled();
      }
    } else if (syncEnd != null && reached(syncEnd)) {
      syncEnd = null;
      synced(syncStarted);
    } else if (System.nanoTime() - lastContact >= probeInterval.toNanos()) {
      consumer.endOffsets(partitions, requestTimeout);
      succeeded();
    }
  }

  private boolean caughtUp() {
    return reached(catchUpEnd);
  }

  private boolean reached(Map<TopicPartition, Long> ends) {
    for (Map.Entry<TopicPartition, Long> end : ends.entrySet()) {
      if (consumer.position(end.getKey(), requestTimeout) < end.getValue()) {
        return false;
      }
    }
    succeeded();
    return true;
  }

  private void deliver(ConsumerRecord<String, byte[]> r) {
    String origin = r.topic() + "-" + r.partition() + "@" + r.offset();
    try {
      handler.onRecord(r.value(), r.timestamp(), origin, catchingUp);
    } catch (RuntimeException e) {
      // A bug in the handler must not stop the tail, nor look like a Kafka outage.
      LOG.error("cluster {}: the record at {} could not be handled; skipping it", key, origin, e);
    }
  }

  private void synced(long token) {
    try {
      handler.onSynced(token);
    } catch (RuntimeException e) {
      LOG.error("cluster {}: handling the end of sync {} failed; going on with new records", key, token, e);
    }
  }

  private void caughtUpHandled() {
    try {
      handler.onCaughtUp();
    } catch (RuntimeException e) {
      // As in deliver(): the handler keeps its last good snapshot, and the tail goes on with the live records.
      LOG.error("cluster {}: handling the end of the catch-up failed; going on with new records, routing by epoch {}",
          key, handler.epoch(), e);
    }
  }

  private void succeeded() {
    lastContact = System.nanoTime();
    Duration length = outage.succeeded();
    if (length != null) {
      LOG.info("Kafka at {} answers again after an outage of about {} s; cluster {} routes by epoch {}",
          description, String.format(Locale.ROOT, "%.1f", length.toMillis() / 1000.0), key,
          handler.epoch());
    }
  }

  private void failed(KafkaException e) {
    if (outage.failed()) {
      LOG.warn("Kafka at {} is unreachable ({}); cluster {} keeps routing by epoch {}, its last good snapshot, "
          + "and retries every {} ms (logged once per outage)", description, e.toString(), key,
          handler.epoch(), retryBackoff.toMillis());
    } else {
      LOG.debug("Kafka at {} still unreachable: {}", description, e.toString());
    }
  }

  private void pause(Duration duration) {
    try {
      closing.await(duration.toMillis(), TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      running = false;
    }
  }

  private void closeConsumer() {
    try {
      consumer.close(CloseOptions.timeout(Duration.ofSeconds(5)));
    } catch (RuntimeException e) {
      LOG.warn("closing the snapshot consumer of cluster {} failed: {}", key, e.toString());
    }
  }

  /** Stops the thread (waking a poll or a backoff) and closes the consumer; waits up to 10 s. */
  @Override
  public void close() {
    running = false;
    closing.countDown();
    if (!started) {
      closeConsumer();
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
