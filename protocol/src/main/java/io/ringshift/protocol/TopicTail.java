package io.ringshift.protocol;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;
import org.apache.kafka.clients.consumer.CloseOptions;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.WakeupException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reads every partition of some control-plane topics from the beginning, without a consumer group, handing each
 * record to a handler on a thread of its own, for as long as it runs: how a role keeps a view of the topics it
 * follows (the worker's tasks and statuses, the health manager's membership).
 *
 * <p>{@link #awaitCaughtUp} is a read-your-writes barrier: it returns once the tail has read up to the end offsets as
 * of the call (with {@code read_committed}, the last stable offsets), so a role can act knowing everything committed
 * before. A record the handler cannot take (it throws) is skipped with a warning naming its position.
 */
public final class TopicTail implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(TopicTail.class);

  private final KafkaConsumer<byte[], byte[]> consumer;
  private final List<String> topics;
  private final Consumer<ConsumerRecord<byte[], byte[]>> handler;
  private final String what;
  private final Thread thread;
  private final ConcurrentLinkedQueue<CompletableFuture<Void>> barriers = new ConcurrentLinkedQueue<>();
  private volatile boolean running = true;
  private volatile boolean started;
  private volatile Throwable failure;

  /**
   * @param consumer a consumer without a group (the tail assigns the partitions and owns it from here on)
   * @param what names the topics in messages ("the control-plane topics")
   */
  public TopicTail(KafkaConsumer<byte[], byte[]> consumer, List<String> topics,
      Consumer<ConsumerRecord<byte[], byte[]>> handler, String threadName, String what) {
    this.consumer = Objects.requireNonNull(consumer, "consumer");
    this.topics = List.copyOf(topics);
    this.handler = Objects.requireNonNull(handler, "handler");
    this.what = what;
    this.thread = new Thread(this::loop, threadName);
    this.thread.setDaemon(true);
  }

  /**
   * Assigns every partition of the topics from the beginning and starts reading.
   *
   * @throws IllegalStateException when a topic does not exist
   */
  public TopicTail start(Duration timeout) {
    List<TopicPartition> partitions = new ArrayList<>();
    for (String topic : topics) {
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
   * Waits until everything on the topics at the time of the call has been read.
   *
   * @throws IllegalStateException when that takes longer than {@code timeout} or the tail failed
   */
  public void awaitCaughtUp(Duration timeout) {
    CompletableFuture<Void> barrier = new CompletableFuture<>();
    barriers.add(barrier);
    try {
      barrier.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
    } catch (TimeoutException e) {
      throw new IllegalStateException(what + " were not read to their end within " + timeout
          + (failure == null ? "" : " (reader failed: " + failure + ")"), e);
    } catch (ExecutionException e) {
      throw new IllegalStateException("the reader of " + what + " failed: " + e.getCause(), e.getCause());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while reading " + what, e);
    }
  }

  /**
   * As {@link #awaitCaughtUp}, without waiting: the future completes once everything on the topics at the time of the
   * call has been read, exceptionally when the tail fails.
   */
  public CompletableFuture<Void> catchUpAsync() {
    CompletableFuture<Void> barrier = new CompletableFuture<>();
    Throwable failed = failure;
    if (failed != null) {
      barrier.completeExceptionally(failed);
      return barrier;
    }
    barriers.add(barrier);
    return barrier;
  }

  /** The error that stopped the tail, or null while it runs. */
  public Throwable failure() {
    return failure;
  }

  private void loop() {
    Map<CompletableFuture<Void>, Map<TopicPartition, Long>> pending = new HashMap<>();
    try {
      while (running) {
        CompletableFuture<Void> b;
        while ((b = barriers.poll()) != null) {
          pending.put(b, consumer.endOffsets(consumer.assignment()));
        }
        for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(100))) {
          try {
            handler.accept(r);
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
      LOG.debug("the reader of {} was woken to stop", what);
    } catch (RuntimeException e) {
      failure = e;
      LOG.error("the reader of {} stopped", what, e);
      pending.keySet().forEach(f -> f.completeExceptionally(e));
      barriers.forEach(f -> f.completeExceptionally(e));
    } finally {
      consumer.close(CloseOptions.timeout(Duration.ofSeconds(5)));
    }
  }

  /** Stops reading and closes the consumer. Idempotent. */
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
