package io.ringshift.protocol;

import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Objects;
import java.util.Properties;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.kafka.clients.consumer.CloseOptions;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.WakeupException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A lease among the instances of one role that must act one at a time (the publishers sharing a transactional id,
 * the health managers): the one that holds it has every partition of a topic in a consumer group of their own, given
 * to one member by {@link SingleOwnerAssignor}. The others stand by; when the holder stops (or misses its session
 * timeout) one of them gets the lease, and the listener of each hears it.
 *
 * <p>The lease only decides who should act; it does not make acting safe. That is the role's transactional id: the
 * new holder's {@code initTransactions} fences whatever the old holder still had in flight, and a holder that lost
 * the lease without knowing it (a long pause) is fenced at its next commit.
 *
 * <p>The group's consumer reads nothing (its partitions are paused); its thread polls to take part in the group.
 */
public final class LeaseGroup implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(LeaseGroup.class);
  private static final Duration POLL = Duration.ofMillis(100);

  /** Told when the lease is taken and when it is lost, on the lease's thread. */
  public interface Listener {
    void taken();

    void lost();
  }

  private final KafkaConsumer<byte[], byte[]> consumer;
  private final String topic;
  private final String name;
  private final String group;
  private final Listener listener;
  private final AtomicBoolean held = new AtomicBoolean();
  private final CompletableFuture<Boolean> firstAssignment = new CompletableFuture<>();
  private final Thread thread;
  private volatile boolean running = true;
  private volatile Throwable failure;
  private boolean started;

  /**
   * @param topic the topic whose partitions are the lease (any existing topic; nothing is read from it)
   * @param group the consumer group of the instances that share the lease
   * @param memberName this instance's name in log lines and its client id
   * @param sessionTimeout how long a holder that stopped answering keeps the lease
   */
  public LeaseGroup(String bootstrapServers, KafkaProperties kafkaProperties, String topic, String group,
      String memberName, Duration sessionTimeout, Listener listener) {
    this.topic = Objects.requireNonNull(topic, "topic");
    this.name = memberName;
    this.group = group;
    this.listener = Objects.requireNonNull(listener, "listener");
    Properties p = kafkaProperties.applyTo(new Properties());
    p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
    p.put(ConsumerConfig.GROUP_ID_CONFIG, group);
    p.put(ConsumerConfig.CLIENT_ID_CONFIG, memberName + "-lease");
    p.put(ConsumerConfig.GROUP_PROTOCOL_CONFIG, "classic");
    p.put(ConsumerConfig.PARTITION_ASSIGNMENT_STRATEGY_CONFIG, SingleOwnerAssignor.class.getName());
    p.put(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG, (int) sessionTimeout.toMillis());
    p.put(ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG, (int) Math.max(100, sessionTimeout.toMillis() / 5));
    p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
    p.put(ConsumerConfig.ALLOW_AUTO_CREATE_TOPICS_CONFIG, false);
    this.consumer = new KafkaConsumer<>(p, new ByteArrayDeserializer(), new ByteArrayDeserializer());
    this.thread = new Thread(this::loop, "ringshift-lease-" + memberName);
    this.thread.setDaemon(true);
  }

  /** Joins the group; the listener hears when the lease is taken. */
  public synchronized LeaseGroup start() {
    started = true;
    thread.start();
    return this;
  }

  /** Whether this member holds the lease now. */
  public boolean held() {
    return held.get();
  }

  /**
   * Completes after the first rebalance this member took part in: true when it got the lease, false when another
   * member holds it; exceptionally when the group cannot be joined.
   */
  public CompletableFuture<Boolean> firstAssignment() {
    return firstAssignment;
  }

  /** The error that stopped the lease's thread, if one did; the lease is then not held. */
  public Throwable failure() {
    return failure;
  }

  private void loop() {
    try {
      consumer.subscribe(List.of(topic), new ConsumerRebalanceListener() {
        @Override
        public void onPartitionsAssigned(Collection<TopicPartition> partitions) {
          consumer.pause(consumer.assignment());
          if (!consumer.assignment().isEmpty() && held.compareAndSet(false, true)) {
            LOG.info("{} holds the lease of group {} ({} partitions of {})", name, group, consumer.assignment().size(), topic);
            listener.taken();
          }
          firstAssignment.complete(held.get());
        }

        @Override
        public void onPartitionsRevoked(Collection<TopicPartition> partitions) {
          drop(partitions, "revoked");
        }

        @Override
        public void onPartitionsLost(Collection<TopicPartition> partitions) {
          drop(partitions, "lost");
        }
      });
      while (running) {
        consumer.poll(POLL);
      }
    } catch (WakeupException e) {
      LOG.debug("{}: lease woken to stop", name);
    } catch (KafkaException | IllegalStateException e) {
      failure = e;
      firstAssignment.completeExceptionally(e);
      LOG.error("{}: the lease group {} failed: {}", name, group, e.toString(), e);
    } finally {
      if (held.compareAndSet(true, false)) {
        listener.lost();
      }
      try {
        consumer.close(CloseOptions.timeout(Duration.ofSeconds(5)));
      } catch (RuntimeException e) {
        LOG.debug("{}: closing the lease consumer failed", name, e);
      }
    }
  }

  private void drop(Collection<TopicPartition> partitions, String how) {
    if (!partitions.isEmpty() && held.compareAndSet(true, false)) {
      LOG.info("{}: lease of group {} {}", name, group, how);
      listener.lost();
    }
  }

  /** Leaves the group (another member takes the lease at once) and stops the thread. Idempotent. */
  @Override
  public void close() {
    running = false;
    synchronized (this) {
      if (!started) {
        started = true; // never starts now
        consumer.close(CloseOptions.timeout(Duration.ofSeconds(5)));
        return;
      }
    }
    consumer.wakeup();
    try {
      thread.join(10_000);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
