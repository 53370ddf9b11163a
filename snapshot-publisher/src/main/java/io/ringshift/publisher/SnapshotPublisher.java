package io.ringshift.publisher;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.ringshift.protocol.LeaseGroup;
import io.ringshift.protocol.Topic;
import io.ringshift.protocol.TopicReplication;
import io.ringshift.protocol.Topics;
import io.ringshift.publisher.internal.PublisherMetrics;
import io.ringshift.publisher.internal.PublishingSession;
import io.ringshift.schemas.avro.EpochRecord;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.common.config.TopicConfig;
import org.apache.kafka.common.errors.AuthorizationException;
import org.apache.kafka.common.errors.InvalidProducerEpochException;
import org.apache.kafka.common.errors.ProducerFencedException;
import org.apache.kafka.common.errors.TopicExistsException;
import org.apache.kafka.common.errors.UnsupportedVersionException;
import org.apache.kafka.common.errors.WakeupException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The snapshot publisher (docs/architecture.md, migration step 5; docs/publisher.md): for every READY epoch on
 * {@code ring.epochs} it rebuilds the ring from the record's membership and parameters with the {@code ring}
 * library, checks it, and either publishes the signed, chained snapshot to {@code ring.snapshots} together with a
 * PUBLISHED epoch record, or writes a REJECTED epoch record naming the failed check and publishes nothing.
 *
 * <p>Guarantees:
 * <ul>
 *   <li>Every published snapshot passed every check: its checksum equals the rebuild's, its replicas are distinct
 *       nodes (and zones when the ring has at least R zones), its epoch is the cluster's last published epoch + 1
 *       and it carries that epoch's checksum, every COPY/REPAIR task of the epoch is VERIFIED, and every replica
 *       it adds since the last complete epoch was filled by a verified task or is marked filling (marks only on a
 *       ring with at least R zones).
 *   <li>A check on the epoch's tasks that fails is not final at first sight: the tasks read may lag behind the
 *       READY record, so the publisher reads them again every 200 ms and rejects the epoch only if the check still
 *       fails after 3 x the configured timeout ({@link PublisherListener#waiting}). Every other check rejects at
 *       once.
 *   <li>The snapshot and the PUBLISHED record are written in one Kafka transaction under a stable transactional
 *       id, and all state is rebuilt from {@code ring.epochs} on every start: a publisher killed at any point and
 *       started again never publishes an epoch twice and never skips one. A new instance with the same
 *       transactional id fences the old one, which stops ({@link #terminated()} completes exceptionally).
 *   <li>An error that a new connection may cure (a broker restart, a timeout) ends the current session; the
 *       publisher starts a new one a second later, from the beginning of the log.
 * </ul>
 */
public final class SnapshotPublisher implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(SnapshotPublisher.class);
  private static final Duration RETRY_AFTER = Duration.ofSeconds(1);
  /** How often a standby looks whether it took the lease. */
  private static final Duration LEASE_CHECK = Duration.ofMillis(100);

  private final PublisherConfig config;
  private final PublisherListener listener;
  private final MeterRegistry registry;
  private final PublisherMetrics metrics;
  private final CountDownLatch stopRequested = new CountDownLatch(1);
  private final CompletableFuture<Void> caughtUp = new CompletableFuture<>();
  private final CompletableFuture<Void> terminated = new CompletableFuture<>();
  private final AtomicLong published = new AtomicLong();
  private final AtomicLong rejected = new AtomicLong();
  private volatile boolean running;
  private volatile PublishingSession session;
  private Thread thread;
  private LeaseGroup lease;
  /** Set when {@link #start()} has returned: a first catch-up that fails after that (a standby's) is retried. */
  private volatile boolean startReturned;

  public SnapshotPublisher(PublisherConfig config) {
    this(config, PublisherListener.NONE);
  }

  /** A publisher that tells {@code listener} of every decision it commits. */
  public SnapshotPublisher(PublisherConfig config, PublisherListener listener) {
    this(config, listener, new SimpleMeterRegistry());
  }

  /**
   * A publisher that tells {@code listener} of every decision it commits, with its meters on {@code registry}
   * (docs/metrics.md): {@code ringshift.publisher.*} and Micrometer's Kafka client binders ({@code kafka.producer.*},
   * {@code kafka.consumer.*}) of each session's clients. {@link #close()} removes them.
   */
  public SnapshotPublisher(PublisherConfig config, PublisherListener listener, MeterRegistry registry) {
    this.config = Objects.requireNonNull(config, "config");
    this.listener = Objects.requireNonNull(listener, "listener");
    this.registry = Objects.requireNonNull(registry, "registry");
    this.metrics = new PublisherMetrics(registry, config.clock(), this::active);
  }

  /**
   * Creates {@code ring.snapshots} if it is missing (compacted, with the configured partitions and replication
   * factor), fences any earlier publisher with the same transactional id, reads {@code ring.epochs} to its end and
   * decides the READY epochs nobody has answered yet; returns then, and goes on deciding new ones on its own
   * thread until {@link #close()}.
   *
   * @throws IllegalStateException when Kafka cannot be reached, a topic the orchestrator creates is missing, or
   *     the first catch-up fails; nothing is left running
   */
  public synchronized SnapshotPublisher start() {
    if (thread != null) {
      throw new IllegalStateException("publisher " + config.transactionalId() + " is already started");
    }
    createSnapshotsTopic();
    running = true;
    CompletableFuture<?> started = caughtUp;
    if (!config.leaseTimeout().isZero()) {
      lease = new LeaseGroup(config.bootstrapServers(), config.kafkaProperties(), config.topics().snapshots().name(),
          config.transactionalId() + ".lease", config.transactionalId(), config.leaseTimeout(),
          new LeaseGroup.Listener() {
            @Override
            public void taken() {
              listener.activeChanged(true);
            }

            @Override
            public void lost() {
              // Stop publishing at once: another publisher is about to start, and would fence this one.
              PublishingSession s = session;
              if (s != null) {
                s.wakeup();
              }
              listener.activeChanged(false);
            }
          }).start();
      // A standby is started once it knows another publisher holds the lease; it catches up when it takes over.
      started = CompletableFuture.anyOf(caughtUp, lease.firstAssignment().thenCompose(held -> held
          ? caughtUp : CompletableFuture.completedFuture(null)));
    }
    thread = new Thread(this::run, "ringshift-publisher");
    thread.start();
    try {
      started.get(config.timeout().multipliedBy(4).plus(config.leaseTimeout()).toMillis(), TimeUnit.MILLISECONDS);
    } catch (ExecutionException e) {
      close();
      throw new IllegalStateException("the publisher could not start against Kafka at " + config.bootstrapServers()
          + ": " + e.getCause().getMessage(), e.getCause());
    } catch (TimeoutException e) {
      close();
      throw new IllegalStateException("the publisher did not read " + config.topics().epochs().name() + " to its "
          + "end within " + config.timeout().multipliedBy(4) + " (Kafka at " + config.bootstrapServers() + ")", e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      close();
      throw new IllegalStateException("interrupted while starting the publisher", e);
    }
    LOG.info("publisher {} started{}: key {}, topics {} -> {}", config.transactionalId(),
        active() ? "" : " as a standby", config.signingKey().id(), config.topics().epochs().name(),
        config.topics().snapshots().name());
    startReturned = true;
    return this;
  }

  /**
   * Whether this instance is the one that publishes: it holds the lease of its transactional id (always, when the
   * election is off). A standby takes over when the active publisher stops.
   */
  public boolean active() {
    LeaseGroup l = lease;
    return l == null || l.held();
  }

  public PublisherConfig config() {
    return config;
  }

  /** Epochs this instance has published. */
  public long publishedCount() {
    return published.get();
  }

  /** Epochs this instance has rejected. */
  public long rejectedCount() {
    return rejected.get();
  }

  /**
   * Completes when the publisher has stopped: normally after {@link #close()}; exceptionally when it stopped on its
   * own because it cannot go on (another publisher with its transactional id fenced it, Kafka refuses it the
   * transactional id or a topic, or an {@link Error} was thrown on its thread, a listener's included). Call
   * {@link #close()} to release the rest.
   */
  public CompletionStage<Void> terminated() {
    return terminated;
  }

  private void run() {
    PublishingSession.Settings settings = new PublishingSession.Settings(config.bootstrapServers(),
        config.kafkaProperties(), config.topics(),
        config.transactionalId(), config.signingKey(), config.clock(), config.timeout(), config.historyKeys(),
        registry, config.transitionStages());
    PublishingSession.Outcomes outcomes = new PublishingSession.Outcomes() {
      @Override
      public void published(EpochRecord record) {
        published.incrementAndGet();
        metrics.published(record);
        listener.published(record);
      }

      @Override
      public void rejected(EpochRecord record) {
        rejected.incrementAndGet();
        metrics.rejected(record);
        listener.rejected(record);
      }

      @Override
      public void waiting(EpochRecord ready, String reason, Duration patience) {
        metrics.waiting();
        listener.waiting(ready, reason, patience);
      }

      @Override
      public void history(EpochRecord published) {
        metrics.seen(published);
      }

      @Override
      public void staged(EpochRecord record) {
        metrics.transition(record);
        listener.transition(record);
      }

      @Override
      public void noted(EpochRecord record) {
        metrics.transition(record);
        listener.transition(record);
      }

      @Override
      public void holding(EpochRecord record, String reason) {
        listener.holding(record, reason);
      }

      @Override
      public void stragglers(String clusterId, int count) {
        metrics.stragglers(clusterId, count);
      }
    };
    Throwable fatal = null;
    try {
      fatal = runSessions(settings, outcomes);
    } catch (Throwable e) {
      // An Error (a listener's included), or a bug in a session's clean-up: nothing to retry, but whoever waits on
      // terminated() (ringshift publisher does) must learn that the publisher stopped.
      fatal = e;
      running = false;
      LOG.error("publisher {} stopped on an unexpected error: {}", config.transactionalId(), e.toString(), e);
    } finally {
      if (fatal != null) {
        caughtUp.completeExceptionally(fatal);
        terminated.completeExceptionally(fatal);
      } else {
        caughtUp.completeExceptionally(new IllegalStateException("closed before it had read the log"));
        terminated.complete(null);
      }
    }
  }

  /** Runs sessions until {@link #close()} or an error a new session would not cure, which it returns. */
  private RuntimeException runSessions(PublishingSession.Settings settings, PublishingSession.Outcomes outcomes) {
    RuntimeException fatal = null;
    while (running) {
      if (!active()) {
        Throwable leaseFailure = lease.failure();
        if (leaseFailure != null) {
          running = false;
          return new IllegalStateException("the publisher's lease group failed: " + leaseFailure, leaseFailure);
        }
        awaitStop(LEASE_CHECK);
        continue;
      }
      PublishingSession s = new PublishingSession(settings, outcomes);
      session = s;
      try {
        s.open();
        s.catchUp();
        caughtUp.complete(null);
        while (running && active()) {
          s.step();
        }
      } catch (WakeupException e) {
        LOG.debug("publisher {}: woken to stop{}", config.transactionalId(), active() ? "" : " (lease lost)");
      } catch (RuntimeException e) {
        if (lease != null && isFenced(e)) {
          // With the election only a lease holder opens a session, so whoever fenced this one took the lease, or
          // held it a moment ago and has not noticed losing it yet: stand by if the lease is gone, else take the id
          // back a second later (the old holder stops opening sessions as soon as it notices).
          if (leaseLostWithin(config.leaseTimeout())) {
            LOG.info("publisher {}: fenced by the publisher that took the lease ({}); standing by",
                config.transactionalId(), e.toString());
          } else {
            LOG.warn("publisher {}: fenced while it holds the lease ({}); opening a new session in {} ms",
                config.transactionalId(), e.toString(), RETRY_AFTER.toMillis());
            awaitStop(RETRY_AFTER);
          }
        } else if (isFatal(e) || (!caughtUp.isDone() && !startReturned)) {
          // Fenced, refused, or unable to start at all: retrying would not help.
          fatal = e;
          running = false;
          if (caughtUp.isDone()) {
            LOG.error("publisher {} stopped: {}", config.transactionalId(), e.toString(), e);
          }
        } else {
          LOG.warn("publisher {}: session ended by {}; starting a new one in {} ms", config.transactionalId(),
              e.toString(), RETRY_AFTER.toMillis());
          awaitStop(RETRY_AFTER);
        }
      } finally {
        session = null;
        s.close();
      }
    }
    return fatal;
  }

  /**
   * Errors a new session would not cure. With transaction protocol v2 a producer whose transactional id another
   * producer has taken over gets {@link InvalidProducerEpochException} rather than {@link ProducerFencedException};
   * a new session would take the id back and fence the newer publisher in turn, and the two would take turns, so
   * both mean "fenced". (The other cause, the coordinator aborting a transaction that outlived its 10 s timeout,
   * cannot be told apart and is as rare as it is harmless to stop for.)
   */
  /** Waits up to {@code d} for the lease to be lost (a fence may arrive before the group says so). */
  private boolean leaseLostWithin(Duration d) {
    long deadline = System.nanoTime() + d.toNanos();
    while (lease.held() && running && System.nanoTime() - deadline < 0) {
      awaitStop(LEASE_CHECK);
    }
    return !lease.held();
  }

  private static boolean isFenced(Throwable e) {
    for (Throwable t = e; t != null; t = t.getCause()) {
      if (t instanceof ProducerFencedException || t instanceof InvalidProducerEpochException) {
        return true;
      }
    }
    return false;
  }

  private static boolean isFatal(Throwable e) {
    for (Throwable t = e; t != null; t = t.getCause()) {
      if (t instanceof ProducerFencedException || t instanceof InvalidProducerEpochException
          || t instanceof AuthorizationException || t instanceof UnsupportedVersionException) {
        return true;
      }
    }
    return false;
  }

  private void awaitStop(Duration d) {
    try {
      stopRequested.await(d.toMillis(), TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      running = false;
    }
  }

  private void createSnapshotsTopic() {
    Topic<?, ?> topic = config.topics().snapshots();
    long timeout = config.timeout().toMillis();
    Properties p = config.kafkaProperties().applyTo(new Properties());
    p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, config.bootstrapServers());
    // The admin client refuses an API timeout below its request timeout: lower both.
    p.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, (int) timeout);
    p.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, (int) timeout);
    try (Admin admin = Admin.create(p)) {
      Set<String> existing = admin.listTopics().names().get(timeout, TimeUnit.MILLISECONDS);
      if (existing.contains(topic.name())) {
        return;
      }
      TopicReplication replication = config.replicationFactor() == PublisherConfig.REPLICATION_FROM_CLUSTER
          ? Topics.replicationFor(admin, config.timeout()) : TopicReplication.ofFactor(config.replicationFactor());
      Map<String, String> configs = new TreeMap<>(topic.configs());
      configs.put(TopicConfig.MIN_IN_SYNC_REPLICAS_CONFIG, String.valueOf(replication.minInSync()));
      admin.createTopics(List.of(new NewTopic(topic.name(), config.partitions(), replication.factor())
          .configs(configs))).all().get(timeout, TimeUnit.MILLISECONDS);
      LOG.info("publisher {}: created topic {}", config.transactionalId(), topic.name());
    } catch (ExecutionException e) {
      if (!(e.getCause() instanceof TopicExistsException)) {
        throw new IllegalStateException("could not create topic " + topic.name() + " on " + config.bootstrapServers()
            + ": " + e.getCause(), e.getCause());
      }
      // Created a moment ago by the orchestrator or another publisher: what we wanted.
    } catch (TimeoutException e) {
      throw new IllegalStateException("no answer from Kafka at " + config.bootstrapServers() + " within "
          + config.timeout() + " while checking topic " + topic.name(), e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while creating topic " + topic.name(), e);
    }
  }

  /**
   * Stops deciding, lets a transaction in progress finish, and closes the clients. Idempotent. An epoch whose
   * READY record arrived but was not decided yet is decided by the next publisher to start.
   */
  @Override
  public void close() {
    Thread t;
    synchronized (this) {
      t = thread;
      running = false;
    }
    stopRequested.countDown();
    PublishingSession s = session;
    if (s != null) {
      s.wakeup();
    }
    if (t != null && t != Thread.currentThread()) {
      try {
        t.join(config.timeout().plusSeconds(15).toMillis());
        if (t.isAlive()) {
          LOG.warn("publisher {}: its thread did not stop in time", config.transactionalId());
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
    // Only now, with nothing left in flight, may a standby take over.
    LeaseGroup l = lease;
    if (l != null) {
      l.close();
    }
    metrics.close();
  }
}
