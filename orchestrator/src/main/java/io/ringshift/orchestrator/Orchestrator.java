package io.ringshift.orchestrator;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.kafka.KafkaStreamsMetrics;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.ringshift.orchestrator.internal.OrchestratorMetrics;
import io.ringshift.protocol.TopicReplication;
import io.ringshift.protocol.Topics;
import java.time.Duration;
import java.util.Objects;
import java.util.Properties;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.streams.CloseOptions;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.errors.StreamsUncaughtExceptionHandler;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs the orchestrator: creates its topics if they are missing, then runs {@link OrchestratorTopology} with
 * exactly-once processing until {@link #close()}.
 */
public final class Orchestrator implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(Orchestrator.class);

  private final OrchestratorConfig config;
  private final MeterRegistry registry;
  private final CompletableFuture<Void> terminated = new CompletableFuture<>();
  private final AtomicReference<Throwable> processingError = new AtomicReference<>();
  private KafkaStreams streams;
  private KafkaStreamsMetrics streamsMetrics;

  /** An orchestrator whose meters nobody reads. */
  public Orchestrator(OrchestratorConfig config) {
    this(config, new SimpleMeterRegistry());
  }

  /**
   * An orchestrator with its meters on {@code registry} (docs/metrics.md): the topology's
   * {@code ringshift.orchestrator.*} meters and Micrometer's Kafka Streams binder ({@code kafka.stream.*},
   * {@code kafka.consumer.*}, {@code kafka.producer.*} of its clients). {@link #close()} removes them.
   */
  public Orchestrator(OrchestratorConfig config, MeterRegistry registry) {
    this.config = config;
    this.registry = Objects.requireNonNull(registry, "registry");
  }

  /**
   * Creates the topics that do not exist yet (existing ones are left as they are) and starts processing;
   * returns once the application is RUNNING.
   *
   * @throws IllegalStateException when the broker cannot be reached or the application does not reach RUNNING
   *     within {@code timeout}
   */
  public Orchestrator start(Duration timeout) {
    TopicReplication replication = createTopics(config, timeout);
    streams = new KafkaStreams(
        OrchestratorTopology.build(config.topics(), config.clusterBytes(), config.partitions(), registry),
        config.streamsProperties(replication));
    streamsMetrics = new KafkaStreamsMetrics(streams);
    streamsMetrics.bindTo(registry);
    // An error in processing (a stored state that no longer rebuilds to its checksum, a bug) must not be lost in
    // a dying thread: log it and stop this instance, so that it is seen and nothing is planned from bad state.
    streams.setUncaughtExceptionHandler(e -> {
      LOG.error("orchestrator stopped by an error in processing", e);
      processingError.compareAndSet(null, e);
      return StreamsUncaughtExceptionHandler.StreamThreadExceptionResponse.SHUTDOWN_CLIENT;
    });
    CountDownLatch running = new CountDownLatch(1);
    streams.setStateListener((next, previous) -> {
      if (next == KafkaStreams.State.RUNNING) {
        running.countDown();
      } else if (next == KafkaStreams.State.ERROR) {
        Throwable cause = processingError.get();
        terminated.completeExceptionally(cause != null ? cause
            : new IllegalStateException("the orchestrator's Kafka Streams application went to state ERROR"));
      }
    });
    streams.start();
    try {
      if (!running.await(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
        throw new IllegalStateException("the orchestrator did not reach RUNNING within " + timeout
            + " (state " + streams.state() + ", bootstrap " + config.bootstrapServers() + ")");
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while starting the orchestrator", e);
    }
    return this;
  }

  /**
   * Completes when the orchestrator stops: normally after {@link #close()}, exceptionally with the error when
   * processing stopped it (the instance then plans nothing more; a restart rebuilds its state from the topics).
   */
  public CompletionStage<Void> terminated() {
    return terminated;
  }

  public KafkaStreams.State state() {
    return streams == null ? KafkaStreams.State.CREATED : streams.state();
  }

  /**
   * Creates the missing topics of {@code config} with their configs; a topic that already exists is kept as
   * it is. Idempotent.
   *
   * @return the replication the topics are created with: {@code config}'s replication factor, or when that is 0,
   *     the one {@link TopicReplication#forBrokers} picks for the cluster
   */
  public static TopicReplication createTopics(OrchestratorConfig config, Duration timeout) {
    Properties p = config.kafkaProperties().applyTo(new Properties());
    p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, config.bootstrapServers());
    p.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, (int) timeout.toMillis());
    // The admin client refuses a default API timeout below the request timeout (30 s unless set).
    p.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, (int) Math.min(timeout.toMillis(), 30_000));
    try (Admin admin = Admin.create(p)) {
      TopicReplication replication = config.replicationFactor() == OrchestratorConfig.REPLICATION_FROM_CLUSTER
          ? Topics.replicationFor(admin, timeout) : TopicReplication.ofFactor(config.replicationFactor());
      config.topics().createMissing(admin, config.partitions(), replication, timeout);
      return replication;
    } catch (IllegalStateException e) {
      throw new IllegalStateException(e.getMessage() + " (bootstrap " + config.bootstrapServers() + ")", e);
    }
  }

  @Override
  public void close() {
    if (streams != null) {
      // Leave the consumer group: a restarted orchestrator then takes over at once instead of waiting out the
      // old member's session timeout (45 s).
      streams.close(CloseOptions.groupMembershipOperation(CloseOptions.GroupMembershipOperation.LEAVE_GROUP)
          .withTimeout(Duration.ofSeconds(30)));
      streams = null;
    }
    if (streamsMetrics != null) {
      streamsMetrics.close();
      streamsMetrics = null;
    }
    OrchestratorMetrics.removeAll(registry);
    terminated.complete(null);
  }
}
