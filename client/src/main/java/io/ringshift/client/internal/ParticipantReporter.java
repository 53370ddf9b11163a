package io.ringshift.client.internal;

import io.ringshift.protocol.PublishedSnapshot;
import io.ringshift.protocol.RecordSerdes;
import io.ringshift.protocol.TransitionStage;
import io.ringshift.schemas.avro.ParticipantKind;
import io.ringshift.schemas.avro.ParticipantReport;
import java.nio.ByteBuffer;
import java.time.Clock;
import java.time.Duration;
import java.util.Map;
import java.util.Objects;
import java.util.Properties;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongConsumer;
import java.util.function.LongSupplier;
import java.util.function.Supplier;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reports what a participant routes by to {@code ring.participants} (key {@code <cluster>/<participant id>}): at once on
 * every swap, and every third of its lease, so the publisher's barrier knows where it stands (docs/protocol.md, "The
 * client barrier"); a tombstone when it closes. The lease it holds runs from the last report Kafka acknowledged, on this
 * process's clock: {@link #leaseHeld()} turns false once that is more than a lease ago, and the client then stops
 * serving the moving ranges of a transition on its own. Nothing on the lookup path waits for a report.
 */
public final class ParticipantReporter implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(ParticipantReporter.class);

  private final String clusterId;
  private final String participantId;
  private final ParticipantKind kind;
  private final Duration lease;
  private final String topic;
  private final Clock clock;
  private final Supplier<PublishedSnapshot> current;
  private final LongSupplier unversionedWritesAt;
  private final KafkaProducer<String, byte[]> producer;
  private final ScheduledExecutorService timer;
  /** When the latest acknowledged report was sent, on {@link #clock}; -1 before the first. */
  private final AtomicLong ackedSentAt = new AtomicLong(-1);
  /**
   * The same moment on {@link System#nanoTime()}: the lease is timed on the monotonic clock, so that a wall clock
   * stepped back cannot stretch it past where the publisher counts it lapsed. {@link Long#MIN_VALUE}: none yet.
   */
  private final AtomicLong ackedSentAtNanos = new AtomicLong(Long.MIN_VALUE);
  /**
   * The lease's holding period: 0 before the first acknowledged report, then one more each time an acknowledgement
   * arrives when the lease was not held (the first, or one after a lapse). Guarded by {@code this} with the two above
   * when they move.
   */
  private final AtomicLong period = new AtomicLong();
  private volatile LongConsumer onAcquired = p -> { };
  private volatile boolean closed;

  /**
   * @param current the snapshot routed by now, or null before the first
   * @param unversionedWritesAt a node's last write without a version (-1: none); a client's is always -1
   */
  public ParticipantReporter(String clusterId, String participantId, boolean node, Duration lease, String topic,
      String bootstrapServers, Map<String, String> clientProperties, Clock clock, Supplier<PublishedSnapshot> current,
      LongSupplier unversionedWritesAt) {
    this.clusterId = clusterId;
    this.participantId = participantId;
    this.kind = node ? ParticipantKind.NODE : ParticipantKind.CLIENT;
    this.lease = lease;
    this.topic = topic;
    this.clock = clock;
    this.current = current;
    this.unversionedWritesAt = unversionedWritesAt;
    Properties p = new Properties();
    // The client's extra properties carry its security settings; consumer-only ones are ignored with a warning.
    p.putAll(clientProperties);
    p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
    p.put(ProducerConfig.CLIENT_ID_CONFIG, "ringshift-participant-" + participantId);
    p.put(ProducerConfig.ACKS_CONFIG, "all");
    p.put(ProducerConfig.LINGER_MS_CONFIG, "0");
    // A report that waits longer than a third of the lease is useless: the next one is due.
    long third = Math.max(1, lease.toMillis() / 3);
    p.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, (int) Math.min(third, 10_000));
    p.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, (int) Math.max(third, 1_000));
    p.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, (int) Math.max(third, 1_000));
    this.producer = new KafkaProducer<>(p, new StringSerializer(), new ByteArraySerializer());
    this.timer = Executors.newSingleThreadScheduledExecutor(r -> {
      Thread t = new Thread(r, "ringshift-participant-" + clusterId);
      t.setDaemon(true);
      return t;
    });
    timer.scheduleWithFixedDelay(this::report, 0, third, TimeUnit.MILLISECONDS);
  }

  /** The report of what {@code snapshot} (null: none yet) routes by, at {@code nowMillis}. */
  public ParticipantReport report(PublishedSnapshot snapshot, long nowMillis) {
    long unversioned = unversionedWritesAt.getAsLong();
    return ParticipantReport.newBuilder()
        .setClusterId(clusterId)
        .setParticipantId(participantId)
        .setKind(kind)
        .setEpoch(snapshot == null ? -1 : snapshot.epoch())
        .setStage(snapshot == null ? TransitionStage.FINAL.order() : snapshot.stage().order())
        .setChecksum(snapshot == null ? null : ByteBuffer.wrap(snapshot.checksum()))
        .setStagesSupported(true)
        .setLeaseMillis(lease.toMillis())
        .setReportedAtMillis(nowMillis)
        .setUnversionedWritesAtMillis(unversioned < 0 ? null : unversioned)
        .build();
  }

  /** Reports now, off the caller's thread: a swap. */
  public void swapped() {
    if (!closed) {
      timer.execute(this::report);
    }
  }

  private void report() {
    if (closed) {
      return;
    }
    long sentAt = clock.millis();
    long sentAtNanos = System.nanoTime();
    try {
      byte[] value = RecordSerdes.participantReport().serialize(report(current.get(), sentAt));
      producer.send(new ProducerRecord<>(topic, clusterId + "/" + participantId, value), (metadata, e) -> {
        if (e == null) {
          acknowledged(sentAt, sentAtNanos, System.nanoTime());
        } else {
          LOG.warn("cluster {}: participant {} could not report to {}: {}", clusterId, participantId, topic,
              e.toString());
        }
      });
    } catch (RuntimeException e) {
      LOG.warn("cluster {}: participant {} could not report to {}: {}", clusterId, participantId, topic,
          e.toString());
    }
  }

  /**
   * A report sent at {@code sentAt} ({@code sentAtNanos}) was acknowledged at {@code arrivedNanos}: the lease runs from
   * its sending; when it was not held until now (none yet, or lapsed), a new holding period starts.
   */
  void acknowledged(long sentAt, long sentAtNanos, long arrivedNanos) {
    long started;
    synchronized (this) {
      long held = ackedSentAtNanos.get();
      boolean lapsed = held == Long.MIN_VALUE || arrivedNanos - held >= lease.toNanos();
      // The period moves before the lease: a reader that reads the lease, then the period, sees a lease held again
      // only with its new period (RingClient.serving).
      started = lapsed ? period.incrementAndGet() : 0;
      ackedSentAt.accumulateAndGet(sentAt, Math::max);
      ackedSentAtNanos.accumulateAndGet(sentAtNanos,
          (h, next) -> h == Long.MIN_VALUE || next - h > 0 ? next : h);
    }
    if (started != 0) {
      onAcquired.accept(started);
    }
  }

  /**
   * The lease's holding period ({@link #acknowledged}): 0 before the first acknowledged report, one more each time
   * the lease is taken again after a lapse.
   */
  public long period() {
    return period.get();
  }

  /**
   * Calls {@code listener} with the new period each time the lease is taken (the first acknowledgement, and each
   * after a lapse), on the producer's thread; at once when it was taken already.
   */
  public void onLeaseAcquired(LongConsumer listener) {
    onAcquired = Objects.requireNonNull(listener, "listener");
    long now = period.get();
    if (now != 0) {
      listener.accept(now);
    }
  }

  /** Whether the lease holds: a report was acknowledged less than a lease ago (by this process's clock). */
  public boolean leaseHeld() {
    return heldSince(acknowledgedNanos());
  }

  /**
   * When the latest acknowledged report was sent, on {@link System#nanoTime()}; {@link Long#MIN_VALUE} before the
   * first. Read it before {@link #period()} (see {@link #acknowledged}).
   */
  public long acknowledgedNanos() {
    return ackedSentAtNanos.get();
  }

  /** Whether the lease holds now, by an {@link #acknowledgedNanos()} read earlier. */
  public boolean heldSince(long acked) {
    // Closed: the tombstone takes the participant out of the barrier at once, so it holds no lease from then on.
    return !closed && acked != Long.MIN_VALUE && System.nanoTime() - acked < lease.toNanos();
  }

  /** When the latest acknowledged report was sent, or -1. */
  public long lastAcknowledgedMillis() {
    return ackedSentAt.get();
  }

  /** Writes the tombstone (the participant leaves the barrier at once) and stops. */
  @Override
  public void close() {
    closed = true;
    timer.shutdownNow();
    if (ackedSentAt.get() < 0) {
      producer.close(Duration.ZERO); // nothing reached Kafka (no topic, no broker): there is no report to remove
      return;
    }
    try {
      producer.send(new ProducerRecord<>(topic, clusterId + "/" + participantId, null));
    } catch (RuntimeException e) {
      LOG.warn("cluster {}: participant {} could not write its tombstone to {}: {}; its lease lapses instead",
          clusterId, participantId, topic, e.toString());
    }
    // Waits at most this long for the tombstone: without it the lease lapses, which the barrier also handles.
    producer.close(Duration.ofSeconds(2));
  }
}
