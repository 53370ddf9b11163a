package io.ringshift.worker;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.kafka.KafkaClientMetrics;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.ringshift.schemas.avro.RangeCopyTask;
import io.ringshift.schemas.avro.TaskStatus;
import io.ringshift.worker.internal.ControlReader;
import io.ringshift.worker.internal.ControlState;
import io.ringshift.worker.internal.Slots;
import io.ringshift.worker.internal.StatusSink;
import io.ringshift.worker.internal.GroupShares;
import io.ringshift.worker.internal.TaskContext;
import io.ringshift.worker.internal.TaskDispatcher;
import io.ringshift.worker.internal.TaskRun;
import io.ringshift.worker.internal.TaskScheduler;
import io.ringshift.worker.internal.Throttles;
import io.ringshift.worker.internal.Ticker;
import io.ringshift.worker.internal.WorkerMetrics;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.consumer.CloseOptions;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.CooperativeStickyAssignor;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.WakeupException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.Deserializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A migration worker: runs the range-copy, repair and cleanup tasks of {@code ring.tasks} against the storage
 * nodes and reports their progress on {@code ring.task-status} (docs/worker.md).
 *
 * <p>Guarantees:
 * <ul>
 *   <li>Workers of one deployment share a consumer group on {@code ring.tasks}; add instances to scale. A task's
 *       progress lives in {@code ring.task-status}, never in consumer offsets: on every partition it is given,
 *       a worker reads the partition from the beginning (the topic is compacted) and runs each task that is not
 *       VERIFIED or FAILED yet, resuming from its latest checkpoint.
 *   <li>Before it starts a task it has not run yet, it has read {@code ring.task-status} up to its end, so it
 *       never resumes from a checkpoint older than the newest, nor re-runs a task whose VERIFIED status exists.
 *   <li>Tasks run on their own threads, never on the poll thread: a task can wait minutes for its fence.
 *   <li>When a partition is taken away, or on {@link #close()}, its tasks stop at their next checkpoint
 *       boundary and write that checkpoint; the worker then leaves the group, so others take over at once.
 *   <li>A worker is a static group member ({@code group.instance.id} = its worker id): restarted with the same id
 *       after a crash, it gets its partitions back at once instead of after the session timeout.
 * </ul>
 */
public final class MigrationWorker implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(MigrationWorker.class);
  private static final Duration STOP_TIMEOUT = Duration.ofSeconds(15);
  /** How often the worker recounts its shares of the group's budgets. */
  private static final Duration SHARES_INTERVAL = Duration.ofMillis(500);
  /** How often the worker asks its control reader to catch up, which dates its view of the control plane. */
  private static final Duration VIEW_INTERVAL = Duration.ofSeconds(2);

  private final WorkerConfig config;
  private final NodeStores stores;
  private final Clock clock;
  private final ControlState control;
  private final Throttles throttles;
  private final Slots slots;
  private final MeterRegistry registry;
  private final WorkerMetrics metrics;
  private final List<KafkaClientMetrics> clientMetrics = new ArrayList<>();
  private final CountDownLatch stopped = new CountDownLatch(1);
  private final CompletableFuture<Void> terminated = new CompletableFuture<>();
  private volatile Limits limits;
  private volatile boolean running;
  private volatile RuntimeException failure;
  private KafkaProducer<String, TaskStatus> producer;
  private ControlReader reader;
  private KafkaConsumer<String, byte[]> consumer;
  private volatile TaskDispatcher dispatcher;
  private volatile TaskScheduler scheduler;
  private java.util.concurrent.ScheduledExecutorService shares;
  private Thread pollThread;

  /** A worker reaching the nodes of {@code config.nodes()} over their HTTP API, on the system clock. */
  public MigrationWorker(WorkerConfig config) {
    this(config, new SimpleMeterRegistry());
  }

  /**
   * A worker reaching the nodes of {@code config.nodes()} over their HTTP API, on the system clock, with its meters on
   * {@code registry} (docs/metrics.md): {@code ringshift.worker.*} and Micrometer's Kafka client binders
   * ({@code kafka.producer.*}, {@code kafka.consumer.*}) of its status producer and task consumer. {@link #close()}
   * removes them.
   */
  public MigrationWorker(WorkerConfig config, MeterRegistry registry) {
    this(config, NodeStores.remote(config.nodes(), config.nodeSecret(), config.nodeTimeout()), Clock.systemUTC(),
        registry);
  }

  /**
   * A worker reaching the nodes through {@code stores}, on {@code clock}.
   *
   * @param stores the nodes' stores; the worker closes them when it closes
   */
  public MigrationWorker(WorkerConfig config, NodeStores stores, Clock clock) {
    this(config, stores, clock, new SimpleMeterRegistry());
  }

  /** As {@link #MigrationWorker(WorkerConfig, NodeStores, Clock)}, with its meters on {@code registry}. */
  public MigrationWorker(WorkerConfig config, NodeStores stores, Clock clock, MeterRegistry registry) {
    this.registry = Objects.requireNonNull(registry, "registry");
    this.metrics = new WorkerMetrics(registry);
    this.config = Objects.requireNonNull(config, "config");
    this.stores = Objects.requireNonNull(stores, "stores");
    this.clock = Objects.requireNonNull(clock, "clock");
    this.control = new ControlState(config.trustedKeys(), clock);
    this.limits = config.limits();
    this.throttles = new Throttles(limits, Ticker.system());
    this.slots = new Slots(limits);
  }

  /**
   * Connects to Kafka, reads the control plane's topics to their end, joins the group and starts running tasks.
   *
   * @throws IllegalStateException when Kafka cannot be reached or the topics do not exist within the start
   *     timeout
   */
  public synchronized MigrationWorker start() {
    if (running) {
      throw new IllegalStateException("worker " + config.workerId() + " is already started");
    }
    Duration timeout = config.startTimeout();
    try {
      producer = new KafkaProducer<>(producerProperties(), new StringSerializer(),
          config.topics().taskStatus().valueSerde().serializer());
      bind(new KafkaClientMetrics(producer));
      reader = new ControlReader(config.bootstrapServers(), config.kafkaProperties(), config.topics(), control,
          config.workerId() + "-control");
      reader.start(timeout);
      reader.awaitCaughtUp(timeout);
      throttles.shareWith(new GroupShares(config.groupId(), config.workerId(), control, clock));
      shares = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "ringshift-worker-" + config.workerId() + "-budgets");
        t.setDaemon(true);
        return t;
      });
      // The group's shares follow its workers as they start and stop copying (docs/worker.md, "Group budgets").
      shares.scheduleWithFixedDelay(this::refreshShares, SHARES_INTERVAL.toMillis(), SHARES_INTERVAL.toMillis(),
          TimeUnit.MILLISECONDS);
      // How old the view of the control plane is: a cleanup deletes only on a fresh one (docs/worker.md, "CLEANUP").
      control.viewCaughtUpAt(clock.millis());
      shares.scheduleWithFixedDelay(this::refreshView, VIEW_INTERVAL.toMillis(), VIEW_INTERVAL.toMillis(),
          TimeUnit.MILLISECONDS);
      scheduler = new TaskScheduler("ringshift-worker-" + config.workerId(), limits.maxTasks());
      StatusSink sink = this::send;
      TaskContext ctx = new TaskContext(config.workerId(), stores, throttles, slots, sink, control, clock,
          Ticker.system(), config.tuning(), config.grace(), metrics);
      TaskDispatcher tasks = new TaskDispatcher(ctx, scheduler);
      dispatcher = tasks;
      metrics.view(new WorkerMetrics.View() {
        @Override
        public List<TaskRun> runs() {
          return tasks.runs();
        }

        @Override
        public long highestPublished(String clusterId) {
          return control.highestPublished(clusterId);
        }
      });
      consumer = new KafkaConsumer<>(consumerProperties(), new StringDeserializer(), new ByteArrayDeserializer());
      bind(new KafkaClientMetrics(consumer));
    } catch (RuntimeException e) {
      // Nothing runs yet: release what was opened, so a failed start leaks no client or thread.
      close();
      throw e;
    }
    running = true;
    pollThread = new Thread(this::pollLoop, "ringshift-worker-poll");
    pollThread.start();
    LOG.info("worker {} started: group {}, topic {}, limits {}", config.workerId(), config.groupId(),
        config.topics().tasks().name(), limits);
    return this;
  }

  private void bind(KafkaClientMetrics binder) {
    binder.bindTo(registry);
    clientMetrics.add(binder);
  }

  /** The byte rates and caps in force. */
  public Limits limits() {
    return limits;
  }

  /**
   * Changes the byte rates and caps while tasks run. A task waiting on a throttle sees the new rate within
   * 100 ms; a lowered cap admits no new task until the running ones are under it.
   */
  public void setLimits(Limits next) {
    Objects.requireNonNull(next, "limits");
    throttles.setLimits(next);
    slots.setLimits(next);
    TaskScheduler s = scheduler;
    if (s != null) {
      s.copySlots(next.maxTasks());
    }
    limits = next;
    LOG.info("worker {}: limits now {}", config.workerId(), next);
  }

  /** Tasks this worker runs now (copying, catching up, waiting for a fence or a cleanup gate). */
  public int activeTasks() {
    TaskDispatcher d = dispatcher;
    return d == null ? 0 : d.active();
  }

  public WorkerConfig config() {
    return config;
  }

  /**
   * Completes when the worker has stopped: normally after {@link #close()}, exceptionally when an error stopped
   * it on its own (a fatal consumer error, such as a group id that another kind of application uses); its tasks
   * were stopped at their checkpoint boundary either way. Call {@link #close()} to release the rest.
   */
  public CompletionStage<Void> terminated() {
    return terminated;
  }

  private void send(TaskStatus status) {
    producer.send(new ProducerRecord<>(config.topics().taskStatus().name(), status.getTaskId(), status),
        (metadata, error) -> {
          if (error != null) {
            LOG.warn("could not write the status of task {} ({}): {}", status.getTaskId(), status.getState(),
                error.toString());
          }
        });
  }

  /**
   * Tombstones, on ring.tasks and ring.task-status, the tasks and statuses of every epoch the worker's view says is
   * done with ({@link ControlState#sweep}: published, a later epoch published too, every task final), and forgets
   * them, so that neither the worker's state nor the topics a starting worker reads grow with the history. Every
   * worker sees the same records, so several may tombstone the same task: a tombstone is idempotent. The
   * dispatcher lifts no fence for the tombstone of a task of a published epoch (the nodes prune those fences).
   */
  private void sweep() {
    dispatcher.retryFenceLifts();
    for (ControlState.Finished f : control.sweep()) {
      for (String id : f.taskIds()) {
        producer.send(new ProducerRecord<>(config.topics().tasks().name(), id, null));
        producer.send(new ProducerRecord<>(config.topics().taskStatus().name(), id, null));
      }
      LOG.info("worker {}: epoch {} of cluster {} is done with: tombstoned its {} tasks and their statuses",
          config.workerId(), f.epoch(), f.clusterId(), f.taskIds().size());
    }
  }

  /** The poll thread: stages records, rebuilds newly assigned partitions from the beginning, dispatches. */
  private void pollLoop() {
    // This thread owns the consumer (close() only wakes it up).
    KafkaConsumer<String, byte[]> consumer = this.consumer;
    Deserializer<RangeCopyTask> decoder = config.topics().tasks().valueSerde().deserializer();
    Map<String, Staged> staged = new LinkedHashMap<>();
    Map<TopicPartition, Long> rebuilding = new HashMap<>();
    ConsumerRebalanceListener listener = new ConsumerRebalanceListener() {
      @Override
      public void onPartitionsAssigned(Collection<TopicPartition> partitions) {
        if (partitions.isEmpty()) {
          return;
        }
        LOG.info("worker {}: assigned {}", config.workerId(), partitions);
        consumer.seekToBeginning(partitions);
        rebuilding.putAll(consumer.endOffsets(partitions));
      }

      @Override
      public void onPartitionsRevoked(Collection<TopicPartition> partitions) {
        if (!partitions.isEmpty()) {
          LOG.info("worker {}: revoked {}", config.workerId(), partitions);
          release(partitions, true);
        }
      }

      @Override
      public void onPartitionsLost(Collection<TopicPartition> partitions) {
        LOG.warn("worker {}: lost {}", config.workerId(), partitions);
        release(partitions, false);
      }

      /** Stops the tasks of partitions taken away; with a checkpoint unless another worker may own them. */
      private void release(Collection<TopicPartition> partitions, boolean checkpoint) {
        Set<TopicPartition> gone = Set.copyOf(partitions);
        staged.values().removeIf(s -> gone.contains(s.partition()));
        rebuilding.keySet().removeAll(gone);
        dispatcher.stopOwned(gone, checkpoint, STOP_TIMEOUT);
        producer.flush();
      }
    };
    try {
      consumer.subscribe(List.of(config.topics().tasks().name()), listener);
      long nextSweep = System.nanoTime() + config.sweepInterval().toNanos();
      while (running) {
        if (System.nanoTime() - nextSweep >= 0) {
          nextSweep = System.nanoTime() + config.sweepInterval().toNanos();
          sweep();
        }
        for (ConsumerRecord<String, byte[]> r : consumer.poll(Duration.ofMillis(200))) {
          RangeCopyTask task;
          try {
            task = r.value() == null ? null : decoder.deserialize(r.topic(), r.value());
          } catch (RuntimeException e) {
            LOG.warn("skipping an unreadable task record at {}-{}@{}: {}", r.topic(), r.partition(), r.offset(),
                e.toString());
            continue;
          }
          staged.remove(r.key());
          staged.put(r.key(), new Staged(new TopicPartition(r.topic(), r.partition()), task));
        }
        rebuilding.entrySet().removeIf(e -> consumer.position(e.getKey()) >= e.getValue());
        if (rebuilding.isEmpty() && !staged.isEmpty()) {
          dispatch(staged);
        }
      }
    } catch (WakeupException e) {
      LOG.debug("worker {}: poll thread woken to stop", config.workerId());
    } catch (RuntimeException e) {
      LOG.error("worker {}: stopped by an error in the consumer of {}", config.workerId(),
          config.topics().tasks().name(), e);
      failure = e;
    } finally {
      dispatcher.stopAll(STOP_TIMEOUT);
      producer.flush();
      consumer.close(CloseOptions.groupMembershipOperation(CloseOptions.GroupMembershipOperation.LEAVE_GROUP)
          .withTimeout(Duration.ofSeconds(10)));
      stopped.countDown();
      if (failure != null) {
        terminated.completeExceptionally(failure);
      }
    }
  }

  private void dispatch(Map<String, Staged> staged) {
    boolean anyNew = staged.keySet().stream().anyMatch(id -> !dispatcher.knows(id));
    if (anyNew) {
      // Read-your-writes: the newest checkpoints (and VERIFIED statuses) of these tasks must be known first.
      reader.awaitCaughtUp(config.startTimeout());
    }
    staged.forEach((id, s) -> dispatcher.onTask(s.partition(), id, s.task()));
    staged.clear();
  }

  private record Staged(TopicPartition partition, RangeCopyTask task) {}

  /**
   * Stops the tasks at their next checkpoint boundary, writes their last checkpoints, leaves the group and
   * releases the stores. Idempotent.
   */
  @Override
  public void close() {
    Thread poll;
    synchronized (this) {
      poll = pollThread;
      pollThread = null;
      running = false;
    }
    if (poll != null) {
      consumer.wakeup();
      try {
        if (!stopped.await(STOP_TIMEOUT.toMillis() + 15_000, TimeUnit.MILLISECONDS)) {
          LOG.warn("worker {}: the poll thread did not stop in time", config.workerId());
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    } else if (consumer != null && !running) {
      // Created by a start that failed before the poll thread ran: nothing else closes it.
      consumer.close(CloseOptions.timeout(Duration.ofSeconds(5)));
    }
    consumer = null;
    if (reader != null) {
      reader.close();
      reader = null;
    }
    if (producer != null) {
      producer.close(Duration.ofSeconds(10));
      producer = null;
    }
    if (scheduler != null) {
      scheduler.close();
      scheduler = null;
    }
    if (shares != null) {
      shares.shutdownNow();
      shares = null;
    }
    stores.close();
    clientMetrics.forEach(KafkaClientMetrics::close);
    clientMetrics.clear();
    metrics.view(null);
    metrics.close();
    terminated.complete(null);
    LOG.info("worker {} closed", config.workerId());
  }

  private Properties producerProperties() {
    Properties p = config.kafkaProperties().applyTo(new Properties());
    p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, config.bootstrapServers());
    p.put(ProducerConfig.CLIENT_ID_CONFIG, config.workerId() + "-status");
    p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
    p.put(ProducerConfig.ACKS_CONFIG, "all");
    p.put(ProducerConfig.LINGER_MS_CONFIG, 5);
    p.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, (int) config.startTimeout().toMillis());
    return p;
  }

  private Properties consumerProperties() {
    Properties p = config.kafkaProperties().applyTo(new Properties());
    p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, config.bootstrapServers());
    p.put(ConsumerConfig.GROUP_ID_CONFIG, config.groupId());
    p.put(ConsumerConfig.GROUP_INSTANCE_ID_CONFIG, config.workerId());
    p.put(ConsumerConfig.CLIENT_ID_CONFIG, config.workerId() + "-tasks");
    // The classic protocol: a static member restarted after a crash replaces its old incarnation at once.
    p.put(ConsumerConfig.GROUP_PROTOCOL_CONFIG, "classic");
    // Cooperative: a rebalance moves only the partitions that change owner; the other tasks keep running.
    p.put(ConsumerConfig.PARTITION_ASSIGNMENT_STRATEGY_CONFIG, CooperativeStickyAssignor.class.getName());
    // Progress lives in ring.task-status; every assigned partition is read from its beginning.
    p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
    p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
    p.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
    return p;
  }

  /** A read-your-writes barrier of the control reader in flight, null when none. */
  private volatile CompletableFuture<Void> viewBarrier;

  /** Asks the control reader to catch up, unless it still does; when it has, the view is as fresh as the asking. */
  private void refreshView() {
    CompletableFuture<Void> pending = viewBarrier;
    ControlReader r = reader;
    if (r == null || (pending != null && !pending.isDone())) {
      return;
    }
    long askedAt = clock.millis();
    viewBarrier = r.catchUpAsync().thenRun(() -> control.viewCaughtUpAt(askedAt));
  }

  private void refreshShares() {
    try {
      throttles.refresh();
    } catch (RuntimeException e) {
      // Keep the shares in force and try again at the next interval; a scheduled task that throws stops running.
      LOG.warn("worker {}: recounting the group's budget shares failed: {}", config.workerId(), e.toString());
    }
  }
}
