package io.ringshift.health;

import io.ringshift.health.internal.MembershipView;
import io.ringshift.health.internal.ControlTail;
import io.ringshift.health.internal.Debounce;
import io.ringshift.health.internal.Decider;
import io.ringshift.health.internal.FailWriter;
import io.ringshift.health.internal.HttpProber;
import io.ringshift.protocol.LeaseGroup;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.kafka.common.KafkaException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Failure detection for one cluster (docs/operations.md, "Failure detection"): probes every member's {@code /health}
 * and writes a FAIL to {@code ring.membership} only for a node that missed {@code misses} consecutive probes over at
 * least {@code minDown}; never on one timeout, never twice for the same life of a node, never a JOIN.
 *
 * <h2>Design</h2>
 * Several managers may run; they agree through Kafka. One decides: the holder of a lease, every partition of
 * {@code ring.membership} in the consumer group {@code <transactionalId>.lease} ({@link LeaseGroup}). The others
 * probe too, so a takeover is warm, but write nothing. A manager that takes the lease first opens the FAIL producer
 * with the shared transactional id, which fences the previous decider (a FAIL it still had in flight is committed or
 * aborted), then reads {@code ring.membership} and {@code ring.epochs} to their end: every FAIL committed before is
 * seen, and the node it names is not failed again. Which nodes were failed therefore comes from Kafka, not from
 * memory; memory only covers the moment between a FAIL's commit and reading it back.
 *
 * <p>Threads: the tail of the two topics, the lease group's, and the probing thread, which runs a round every
 * {@code probeInterval} and tells the {@link HealthListener} everything it sees.
 */
public final class HealthManager implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(HealthManager.class);

  private final HealthManagerConfig config;
  private final HealthListener listener;
  private final Decider.Prober prober;
  private final MembershipView view;
  private final Decider decider;
  private final CountDownLatch stopRequested = new CountDownLatch(1);
  private final CompletableFuture<Void> terminated = new CompletableFuture<>();
  private final List<String> failed = new CopyOnWriteArrayList<>();
  private ControlTail tail;
  private LeaseGroup lease;
  private Thread thread;
  private volatile boolean running;
  private volatile boolean deciding;
  private FailWriter writer;
  private long reopenAfterNanos;

  public HealthManager(HealthManagerConfig config) {
    this(config, HealthListener.NONE);
  }

  public HealthManager(HealthManagerConfig config, HealthListener listener) {
    this(config, listener, new HttpProber(config.nodes(), config.probeTimeout()));
  }

  HealthManager(HealthManagerConfig config, HealthListener listener, Decider.Prober prober) {
    this.config = Objects.requireNonNull(config, "config");
    this.listener = Objects.requireNonNull(listener, "listener");
    this.prober = prober;
    this.view = new MembershipView(config.clusterId());
    this.decider = new Decider(view, config.nodes().keySet(), new Debounce(config.misses(), config.minDown()),
        config.clock(), listener);
  }

  /**
   * Reads {@code ring.membership} and {@code ring.epochs} to their end, joins the lease group, and starts probing;
   * returns once it knows whether it decides or stands by.
   *
   * @throws IllegalStateException when Kafka cannot be reached or a topic is missing; nothing is left running
   */
  public synchronized HealthManager start() {
    if (thread != null) {
      throw new IllegalStateException("health manager " + config.managerId() + " is already started");
    }
    try {
      tail = new ControlTail(config.bootstrapServers(), config.kafkaProperties(), config.timeout(), config.topics(),
          view, config.managerId() + "-tail").start(config.timeout());
      tail.awaitCaughtUp(config.timeout().multipliedBy(4));
      lease = new LeaseGroup(config.bootstrapServers(), config.kafkaProperties(), config.topics().membership().name(),
          config.transactionalId() + ".lease", config.managerId(), config.leaseTimeout(), new LeaseGroup.Listener() {
            @Override
            public void taken() {}

            @Override
            public void lost() {}
          }).start();
      lease.firstAssignment().get(config.timeout().plus(config.leaseTimeout()).multipliedBy(2).toMillis(),
          TimeUnit.MILLISECONDS);
    } catch (ExecutionException e) {
      close();
      throw new IllegalStateException("health manager " + config.managerId() + " could not join its lease group "
          + config.transactionalId() + ".lease at " + config.bootstrapServers() + ": " + e.getCause().getMessage(),
          e.getCause());
    } catch (TimeoutException e) {
      close();
      throw new IllegalStateException("health manager " + config.managerId() + " got no answer from its lease group "
          + config.transactionalId() + ".lease at " + config.bootstrapServers(), e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      close();
      throw new IllegalStateException("interrupted while starting the health manager", e);
    } catch (RuntimeException e) {
      close();
      throw new IllegalStateException("health manager " + config.managerId() + " could not start against Kafka at "
          + config.bootstrapServers() + ": " + e.getMessage(), e);
    }
    running = true;
    thread = new Thread(this::run, "ringshift-health-manager");
    thread.start();
    LOG.info("health manager {} started for cluster {}{}", config.managerId(), config.clusterId(),
        lease.held() ? "" : " as a standby");
    return this;
  }

  /** Whether this manager holds the lease: it decides, or is about to once it has fenced and caught up. */
  public boolean holdsLease() {
    LeaseGroup l = lease;
    return l != null && l.held();
  }

  /** Whether this manager decides now: it holds the lease, has fenced the one before and read the topics. */
  public boolean deciding() {
    return deciding;
  }

  public HealthManagerConfig config() {
    return config;
  }

  /** The nodes this manager has failed, in order. */
  public List<String> failedNodes() {
    return List.copyOf(failed);
  }

  /**
   * Completes when the manager has stopped: normally after {@link #close()}; exceptionally when it cannot go on (its
   * lease group or its tail of the topics failed, or an {@link Error} on its thread).
   */
  public CompletionStage<Void> terminated() {
    return terminated;
  }

  private void run() {
    Throwable fatal = null;
    try {
      while (running) {
        long started = System.nanoTime();
        fatal = lease.failure() != null ? lease.failure() : tail.failure();
        if (fatal != null) {
          LOG.error("health manager {} stopped: {}", config.managerId(), fatal.toString());
          break;
        }
        round();
        long left = config.probeInterval().toNanos() - (System.nanoTime() - started);
        if (left > 0 && stopRequested.await(left, TimeUnit.NANOSECONDS)) {
          break;
        }
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (Throwable e) {
      fatal = e;
      LOG.error("health manager {} stopped on an unexpected error: {}", config.managerId(), e.toString(), e);
    } finally {
      closeWriter();
      setDeciding(false);
      if (fatal != null) {
        terminated.completeExceptionally(fatal);
      } else {
        terminated.complete(null);
      }
    }
  }

  private void round() {
    boolean decides = ensureDecider();
    try {
      decider.round(prober, decides, node -> writer.fail(node)).forEach(failed::add);
    } catch (KafkaException | IllegalStateException e) {
      if (FailWriter.fenced(e)) {
        LOG.info("health manager {}: fenced by the manager that took the lease ({}); standing by",
            config.managerId(), e.toString());
        closeWriter();
        setDeciding(false);
        reopenAfterNanos = System.nanoTime() + config.leaseTimeout().toNanos();
      } else {
        LOG.warn("health manager {}: writing a FAIL failed ({}); trying again next round", config.managerId(),
            e.toString());
      }
    }
  }

  /** Opens the decider when the lease was taken (fence, then catch up), closes it when lost; whether it decides. */
  private boolean ensureDecider() {
    if (!lease.held()) {
      closeWriter();
      setDeciding(false);
      return false;
    }
    if (writer == null) {
      if (System.nanoTime() - reopenAfterNanos < 0) {
        return false;
      }
      try {
        writer = new FailWriter(config.bootstrapServers(), config.kafkaProperties(), config.timeout(),
            config.transactionalId(), config.managerId() + "-fail", config.topics().membership().name(),
            config.clusterId(), HealthManagerConfig.REQUESTED_BY, config.clock());
        tail.awaitCaughtUp(config.timeout().multipliedBy(4));
      } catch (KafkaException | IllegalStateException e) {
        LOG.warn("health manager {}: holds the lease but could not open its FAIL producer or catch up ({}); trying "
            + "again next round", config.managerId(), e.toString());
        closeWriter();
        return false;
      }
    }
    setDeciding(true);
    return true;
  }

  private void setDeciding(boolean value) {
    if (deciding != value) {
      deciding = value;
      LOG.info("health manager {} {}", config.managerId(), value ? "decides" : "stands by");
      listener.activeChanged(value);
    }
  }

  private void closeWriter() {
    if (writer != null) {
      try {
        writer.close();
      } catch (RuntimeException e) {
        LOG.debug("closing the FAIL producer failed", e);
      }
      writer = null;
    }
  }

  /** Stops probing, leaves the lease group (a standby takes over at once) and closes the clients. Idempotent. */
  @Override
  public void close() {
    Thread t;
    synchronized (this) {
      running = false;
      stopRequested.countDown();
      t = thread;
    }
    if (t != null) {
      try {
        t.join(config.probeTimeout().plusSeconds(10).toMillis());
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
    if (lease != null) {
      lease.close();
    }
    if (tail != null) {
      tail.close();
    }
    if (prober instanceof AutoCloseable c) {
      try {
        c.close();
      } catch (Exception e) {
        LOG.debug("closing the prober failed", e);
      }
    }
    if (t == null) {
      terminated.complete(null);
    }
  }
}
