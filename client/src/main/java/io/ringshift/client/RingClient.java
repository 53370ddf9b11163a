package io.ringshift.client;

import io.ringshift.client.internal.AcceptedSnapshot;
import io.ringshift.client.internal.ClientMetrics;
import io.ringshift.client.internal.HotKeySketch;
import io.ringshift.client.internal.HotKeysReporter;
import io.ringshift.client.internal.ParticipantReporter;
import io.ringshift.client.internal.ReadBalancer;
import io.ringshift.ring.Member;
import io.ringshift.client.internal.EpochFloor;
import io.ringshift.client.internal.GateOutcome;
import io.ringshift.client.internal.SnapshotFile;
import io.ringshift.client.internal.SnapshotGate;
import io.ringshift.client.internal.SnapshotTail;
import io.ringshift.protocol.PublishedSnapshot;
import io.ringshift.protocol.RingSnapshotCodec;
import io.ringshift.protocol.TransitionStage;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Properties;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Consumer;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Routes keys by the latest verified ring snapshot of one cluster, read from {@code ring.snapshots}.
 *
 * <pre>{@code
 * RingClientConfig config = RingClientConfig.builder()
 *     .bootstrapServers("kafka:9092")
 *     .clusterId("prod-eu")
 *     .trustedKeyFiles(Path.of("/etc/ringshift/publisher.pub"))
 *     .persistFile(Path.of("/var/lib/app/ring-snapshot.bin"))
 *     .build();
 * try (RingClient ring = new RingClient(config).start()) {
 *   ring.awaitEpoch(0, Duration.ofSeconds(30));        // any snapshot
 *   Placement p = ring.placement(key);                  // local, lock-free, allocation-free
 *   write(p.owners()); read(p.readable());
 * }
 * }</pre>
 *
 * <p>Guarantees:
 * <ul>
 *   <li>It routes only by snapshots that pass every check of docs/client.md, in this order: the cluster id,
 *       the checksum of the rebuilt ring, a signature by a trusted key, a newer epoch, and the hash chain to the
 *       current epoch (a gap of epochs, normal on a compacted topic, is accepted on the signature). A snapshot
 *       that fails one is refused, counted by reason, logged at WARN with its epoch and reason, and changes
 *       nothing. The signature proves who published a snapshot, not that it is the latest: see docs/client.md,
 *       "Replays, and who may write", for the Kafka ACLs that keep anyone else from writing to
 *       {@code ring.snapshots}.
 *   <li>Lookups never touch Kafka, take no lock and allocate nothing: one volatile read, one search, one array
 *       read. A swap replaces the whole routing table at once, so a lookup sees one epoch or the next, never a
 *       mix.
 *   <li>At start it first reads the topic to its end, verifying the retained snapshots in order, and swaps once.
 *   <li>While Kafka is unreachable it keeps routing by its last good snapshot and retries for ever, logging at
 *       WARN once per outage.
 *   <li>With a persist file, every swap writes the snapshot and its publish time there atomically, and
 *       {@link #start()} routes from the file at once, re-verified, before Kafka answers.
 * </ul>
 *
 * <p>Thread-safe. Swaps to snapshots from Kafka, the file writes that follow them and their swap listeners run on
 * the client's own thread, {@code ringshift-client-<cluster>}. The swap to the persisted snapshot, and its swap
 * listeners, run in {@link #start()}, on the caller's thread, before the client's thread starts.
 */
public final class RingClient implements AutoCloseable {
  /** What {@link #epoch()} returns before the first snapshot (real epochs are {@code >= 0}). */
  public static final long NO_EPOCH = -1;

  private static final Logger LOG = LoggerFactory.getLogger(RingClient.class);
  private static final AtomicInteger INSTANCES = new AtomicInteger();
  /** Sampled lookups after which the hot-key counts halve: about 8 M lookups, seconds at a busy client. */
  private static final long HOT_KEY_HALF_LIFE = 1L << 20;

  private enum State { NEW, RUNNING, CLOSED }

  private final RingClientConfig config;
  private final String clusterId;
  private final SnapshotGate gate;
  private final ClientMetrics metrics;
  /** The hot-key sketch, or null when the configuration turns it off. */
  private final HotKeySketch hotKeys;
  /** The bounded-load read chooser, or null: reads from the first read-eligible replica. */
  private final ReadBalancer reads;
  private final List<Consumer<SnapshotSwap>> listeners = new CopyOnWriteArrayList<>();
  private final ReentrantLock swapLock = new ReentrantLock();
  private final Condition swapped = swapLock.newCondition();
  private final Object lifecycle = new Object();
  private State state = State.NEW;
  private SnapshotTail tail;
  private HotKeysReporter reporter;
  /** Reports what the client routes by to the transition barrier; null when it does not participate. */
  private volatile ParticipantReporter participant;
  /**
   * The lease's holding period ({@link ParticipantReporter#period}) after whose start the tail read the snapshots
   * topic to its end: the moving ranges of a transition are served only while it is the current one.
   */
  private volatile long syncedPeriod;
  /** A node's last client write without a version (-1: none); set by the node through {@link #unversionedWrites}. */
  private volatile java.util.function.LongSupplier unversionedWritesAt = () -> -1;

  /** The table lookups read: one volatile read per lookup. {@code null} before the first snapshot. */
  private volatile RoutingTable table;
  /**
   * The latest accepted snapshot, swapped or not: during catch-up it runs ahead of {@link #table}. Written by
   * {@link #start()} before the tail thread starts, then only by that thread.
   */
  private AcceptedSnapshot latest;
  /** Epoch of the snapshot loaded from the persist file, or {@link #NO_EPOCH}; written before the tail starts. */
  private long persistedEpoch = NO_EPOCH;
  /** The floor epoch read from the epochs topic before the snapshots, or -1; the tail's thread only. */
  private long floor = -1;

  /**
   * A client that is not started yet: add swap listeners, then {@link #start()} it. Registers the meters.
   */
  public RingClient(RingClientConfig config) {
    this.config = Objects.requireNonNull(config, "config");
    this.clusterId = config.clusterId();
    this.gate = new SnapshotGate(clusterId, config.trustedKeys());
    this.metrics = new ClientMetrics(config.meterRegistry(), clusterId, this::epoch, this::ageSeconds);
    this.hotKeys = config.hotKeyCapacity() == 0 ? null
        : new HotKeySketch(config.hotKeyCapacity(), HOT_KEY_HALF_LIFE);
    this.reads = config.readBalanceFactor() == 0 ? null
        : new ReadBalancer(config.readBalanceFactor(), System::nanoTime);
    if (hotKeys != null) {
      metrics.hotKeys(rank -> {
        List<HotKeySketch.Entry> top = hotKeys.top(rank);
        long total = hotKeys.total();
        return top.size() < rank || total == 0 ? 0.0 : (double) top.get(rank - 1).count() / total;
      });
    }
  }

  /**
   * Loads the persist file, if one is configured and holds a verified snapshot of the cluster, and routes by it
   * at once, on the calling thread (swap listeners added before run here too); then starts tailing the snapshots
   * topic on the client's thread. Returns without waiting for Kafka.
   *
   * @return this client
   * @throws IllegalArgumentException when the extra consumer properties are invalid for Kafka
   * @throws IllegalStateException when the client was started or closed before
   */
  public RingClient start() {
    synchronized (lifecycle) {
      if (state != State.NEW) {
        throw new IllegalStateException("this RingClient for cluster " + clusterId + " was already "
            + (state == State.RUNNING ? "started" : "closed") + "; a client starts once");
      }
      KafkaConsumer<String, byte[]> consumer = newConsumer();
      tail = new SnapshotTail(consumer, config.topic(), clusterId, new TailHandler(), config.requestTimeout(),
          config.retryBackoff(), config.probeInterval(), config.bootstrapServers());
      if (config.epochsTopic() != null) {
        tail.withFloor(c -> EpochFloor.read(c, config.epochsTopic(), clusterId, config.trustedKeys(),
            config.requestTimeout()));
      }
      try {
        if (config.persistFile() != null) {
          loadPersisted(config.persistFile());
        }
        RingClientConfig.Participation participation = config.participation();
        if (participation != null) {
          participant = new ParticipantReporter(clusterId, participation.participantId(), participation.node(),
              participation.lease(), participation.topic(), config.bootstrapServers(), config.consumerProperties(),
              config.clock(), () -> {
                RoutingTable t = table;
                return t == null ? null : t.accepted.snapshot();
              }, () -> unversionedWritesAt.getAsLong());
          // Each time the lease is taken (the first time, and after a lapse) the tail reads to the end again.
          participant.onLeaseAcquired(tail::requestSync);
        }
        metrics.transitions(() -> {
          RoutingTable t = table;
          return t == null ? TransitionStage.FINAL.order() : t.stage().order();
        }, participant, config.clock());
        RingClientConfig.HotKeyReports reports = config.hotKeyReports();
        if (reports != null) {
          reporter = new HotKeysReporter(hotKeys, clusterId, reports.clientId(), reports.topic(),
              reports.interval(), config.bootstrapServers(), config.consumerProperties(), config.clock());
        }
      } catch (RuntimeException | Error e) {
        tail.close(); // closes the consumer it was never started with
        if (participant != null) {
          participant.close();
        }
        throw e;
      }
      tail.start();
      state = State.RUNNING;
      return this;
    }
  }

  private KafkaConsumer<String, byte[]> newConsumer() {
    Properties p = new Properties();
    p.put(ConsumerConfig.CLIENT_ID_CONFIG, "ringshift-client-" + clusterId + "-" + INSTANCES.incrementAndGet());
    p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
    p.put(ConsumerConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, String.valueOf(config.requestTimeout().toMillis()));
    // Asking for a topic that does not exist (the epochs topic of a cluster without one) must not create it.
    p.put(ConsumerConfig.ALLOW_AUTO_CREATE_TOPICS_CONFIG, "false");
    p.putAll(config.consumerProperties());
    p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, config.bootstrapServers());
    p.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
    p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
    try {
      return new KafkaConsumer<>(p, new StringDeserializer(), new ByteArrayDeserializer());
    } catch (KafkaException e) {
      throw new IllegalArgumentException("cannot create the Kafka consumer for bootstrap servers "
          + config.bootstrapServers() + " and consumer properties " + config.consumerProperties() + ": "
          + e.getMessage(), e);
    }
  }

  /**
   * Writes {@code snapshot} as a persist file, as the client itself does after a swap: for provisioning a
   * cold-start file out of band (baked into an image, copied from a healthy instance). Nothing is verified
   * here; a client that loads the file verifies it like any snapshot from Kafka.
   *
   * @param publishedAt when the snapshot was published; the client reports its age from it
   * @throws IOException when the file cannot be written
   */
  public static void writePersistFile(Path file, PublishedSnapshot snapshot, Instant publishedAt)
      throws IOException {
    SnapshotFile.write(file, new RingSnapshotCodec().encode(snapshot), publishedAt.toEpochMilli());
  }

  /** What a persist file holds: the snapshot (its ring verified, its signature not) and when it was published. */
  public record PersistedSnapshot(PublishedSnapshot snapshot, Instant publishedAt) {}

  /**
   * Reads a persist file, as a node's {@code ring-snapshot.bin} or a client's {@code persistFile}: for tools that
   * show or query it. The ring is rebuilt and its checksum verified; the signature is not checked (that needs the
   * trusted keys: {@link io.ringshift.protocol.TrustedKeys#verify}).
   *
   * @throws IOException naming the file when it cannot be read or its frame is broken (not a persist file,
   *     truncated, a CRC mismatch)
   * @throws io.ringshift.protocol.CodecException when the snapshot in it does not decode or verify
   */
  public static PersistedSnapshot readPersistFile(Path file) throws IOException {
    SnapshotFile.Contents contents = SnapshotFile.read(file);
    return new PersistedSnapshot(new RingSnapshotCodec().decodePublished(contents.snapshot()),
        Instant.ofEpochMilli(contents.publishedAtMillis()));
  }

  /** Whether {@code bytes} start like a persist file (its magic), rather than like a bare snapshot. */
  public static boolean looksLikePersistFile(byte[] bytes) {
    return SnapshotFile.hasMagic(bytes);
  }

  // ---- lookups: no Kafka, no lock, no allocation (with trackHotKeys one lookup in eight takes the sketch's lock) --

  /**
   * The placement of a key's bytes in the current snapshot.
   *
   * @throws RingClientException (retriable) before the first snapshot
   */
  public Placement placement(byte[] key) {
    // The lease's state is read before the table (see serving): the order the tail and the reporter write them in.
    ParticipantReporter reporting = participant;
    long acked = reporting == null ? 0 : reporting.acknowledgedNanos();
    boolean synced = reporting == null || reporting.period() == syncedPeriod;
    RoutingTable t = requireTable();
    long position = t.ring.position(key);
    if (hotKeys != null && ThreadLocalRandom.current().nextInt(HotKeySketch.SAMPLE) == 0) {
      hotKeys.offer(position, key);
    }
    return serving(t, t.at(position), reporting, acked, synced);
  }

  /**
   * {@code p}, unless it is a range a transition moves and the client's lease in the barrier lapsed: the publisher may
   * then move the transition on without it, so it stops serving those ranges until a report is acknowledged again and
   * the client has read the snapshots topic to its end since (a stage it routed by while it had no lease may be one
   * the publisher has moved on from; docs/protocol.md, "The client barrier").
   *
   * <p>The caller reads the lease ({@code acked}, then the period against the synced one) before the table: the
   * reporter moves the period before the lease, and the tail installs a snapshot before it marks a sync done, so a
   * lease seen held comes with its new period, and a sync seen done with a table at least as new as the one it read.
   */
  private Placement serving(RoutingTable t, Placement p, ParticipantReporter reporting, long acked, boolean synced) {
    if (!p.moving() || reporting == null) {
      return p;
    }
    boolean held = reporting.heldSince(acked);
    if (held && !synced) {
      throw new RingClientException(String.format(java.util.Locale.ROOT, "cluster %s epoch %d is in transition "
          + "stage %s and this client's lease in the barrier was taken at %s after it held none: it does not serve "
          + "the moving range (%s, %s] until it has read %s to its end since", clusterId, t.epoch(), t.stage(),
          Instant.ofEpochMilli(reporting.lastAcknowledgedMillis()), Long.toUnsignedString(p.rangeStart()),
          Long.toUnsignedString(p.rangeEnd()), config.topic()));
    }
    if (!held) {
      throw new RingClientException(String.format(java.util.Locale.ROOT, "cluster %s epoch %d is in transition "
          + "stage %s and this client's lease in the barrier lapsed (no report acknowledged on %s since %s): it does "
          + "not serve the moving range (%s, %s] until Kafka takes its report again", clusterId, t.epoch(), t.stage(),
          config.participation().topic(), reporting.lastAcknowledgedMillis() < 0 ? "it started"
              : Instant.ofEpochMilli(reporting.lastAcknowledgedMillis()), Long.toUnsignedString(p.rangeStart()),
          Long.toUnsignedString(p.rangeEnd())));
    }
    return p;
  }

  /**
   * For a storage node's view: where the node's last client write without a version is dated (-1: none), which its
   * reports carry so that the publisher keeps the fence while clients of before versions write (docs/protocol.md,
   * "Fallback").
   */
  public void unversionedWrites(java.util.function.LongSupplier lastMillis) {
    this.unversionedWritesAt = Objects.requireNonNull(lastMillis, "lastMillis");
  }

  /**
   * The placement of a key hashed as UTF-8 in the current snapshot. Keys up to the ring's per-thread buffer
   * size allocate nothing ({@code RingSnapshot.position(CharSequence)}).
   *
   * @throws RingClientException (retriable) before the first snapshot
   */
  public Placement placement(CharSequence key) {
    // The lease's state is read before the table (see serving): the order the tail and the reporter write them in.
    ParticipantReporter reporting = participant;
    long acked = reporting == null ? 0 : reporting.acknowledgedNanos();
    boolean synced = reporting == null || reporting.period() == syncedPeriod;
    RoutingTable t = requireTable();
    long position = t.ring.position(key);
    if (hotKeys != null && ThreadLocalRandom.current().nextInt(HotKeySketch.SAMPLE) == 0) {
      hotKeys.offer(position, key);
    }
    return serving(t, t.at(position), reporting, acked, synced);
  }

  /**
   * The read-eligible replica a read of {@code key} should go to: with
   * {@link RingClientConfig.Builder#boundedLoadReads} the first in preference order whose recent reads from this
   * client stay within the bound (a hot key's reads overflow from its primary to its other replicas), otherwise the
   * first read-eligible replica. Null when no owner of the key's range is read-eligible (all are being filled).
   * Counts the lookup like {@link #placement(byte[])}.
   *
   * @throws RingClientException (retriable) before the first snapshot
   */
  public Member readReplica(byte[] key) {
    return chooseReader(placement(key));
  }

  /** As {@link #readReplica(byte[])}, for a key hashed as UTF-8. */
  public Member readReplica(CharSequence key) {
    return chooseReader(placement(key));
  }

  private Member chooseReader(Placement p) {
    if (reads == null) {
      return p.readableCount() == 0 ? null : p.readable(0);
    }
    RoutingTable t = table;
    return reads.choose(p.readable(), t == null ? p.readableCount() : t.readEligibleMembers);
  }

  /**
   * The {@code n} keys this client looked up most recently, hottest first, as its bounded sketch estimates them
   * (counts decay, so they follow a changing workload).
   *
   * @throws IllegalStateException when hot-key tracking is off ({@link RingClientConfig.Builder#trackHotKeys})
   */
  public List<HotKey> hotKeys(int n) {
    if (hotKeys == null) {
      throw new IllegalStateException("hot-key tracking is off for this client; turn it on with "
          + "RingClientConfig.builder().trackHotKeys(64)");
    }
    if (n < 1) {
      throw new IllegalArgumentException("n was " + n + "; ask for at least 1 key");
    }
    long total = hotKeys.total();
    List<HotKey> top = new ArrayList<>();
    for (HotKeySketch.Entry e : hotKeys.top(n)) {
      top.add(new HotKey(e.key(), e.position(), total == 0 ? 0 : (double) e.count() / total,
          total == 0 ? 0 : (double) e.error() / total));
    }
    return List.copyOf(top);
  }

  private RoutingTable requireTable() {
    RoutingTable t = table;
    if (t == null) {
      throw new RingClientException("no verified snapshot of cluster " + clusterId + " yet: none came from "
          + (config.persistFile() == null ? "" : "the persist file " + config.persistFile() + " or ")
          + "topic " + config.topic() + " on " + config.bootstrapServers() + "; wait with awaitEpoch(0, timeout)");
    }
    return t;
  }

  // ---- state ----

  /** The cluster this client follows. */
  public String clusterId() {
    return clusterId;
  }

  /** The epoch routed by, or {@link #NO_EPOCH} ({@value #NO_EPOCH}) before the first snapshot. */
  public long epoch() {
    RoutingTable t = table;
    return t == null ? NO_EPOCH : t.epoch();
  }

  /** The snapshot routed by, empty before the first one. */
  public Optional<PublishedSnapshot> current() {
    RoutingTable t = table;
    return t == null ? Optional.empty() : Optional.of(t.accepted.snapshot());
  }

  /** When the snapshot routed by was published (its Kafka record timestamp), empty before the first one. */
  public Optional<Instant> publishedAt() {
    RoutingTable t = table;
    return t == null ? Optional.empty() : Optional.of(Instant.ofEpochMilli(t.accepted.publishedAtMillis()));
  }

  /**
   * Time since the snapshot routed by was published, measured with the configured clock; empty before the
   * first snapshot. A publish time ahead of the clock (clock skew) reads as zero. It grows while Kafka is
   * unreachable, and also while the cluster simply has no new epoch.
   */
  public Optional<Duration> snapshotAge() {
    RoutingTable t = table;
    return t == null ? Optional.empty() : Optional.of(age(t));
  }

  private Duration age(RoutingTable t) {
    Duration age = Duration.ofMillis(config.clock().millis() - t.accepted.publishedAtMillis());
    return age.isNegative() ? Duration.ZERO : age;
  }

  private double ageSeconds() {
    RoutingTable t = table;
    return t == null ? Double.NaN : age(t).toMillis() / 1000.0;
  }

  /**
   * Waits until the client routes by {@code epoch} or a later one. {@code awaitEpoch(0, timeout)} waits for
   * any snapshot. Blocks on a condition signalled by swaps; does not spin.
   *
   * @return true when the epoch was reached, false when the timeout passed first
   * @throws InterruptedException when the waiting thread is interrupted
   */
  public boolean awaitEpoch(long epoch, Duration timeout) throws InterruptedException {
    long nanos = timeout.toNanos();
    swapLock.lock();
    try {
      while (epoch() < epoch) {
        if (nanos <= 0) {
          return false;
        }
        nanos = swapped.awaitNanos(nanos);
      }
      return true;
    } finally {
      swapLock.unlock();
    }
  }

  /**
   * Calls {@code listener} after every later swap, with the old and new epoch: on the client's thread for a
   * snapshot from Kafka, on the thread calling {@link #start()} for the persisted one. A listener that throws is
   * logged and does not stop the client; a slow one delays the next swap, not lookups. Add listeners before
   * {@link #start()} to see the swap to the persisted snapshot and the first one from Kafka.
   */
  public void addSwapListener(Consumer<SnapshotSwap> listener) {
    listeners.add(Objects.requireNonNull(listener, "listener"));
  }

  /** Removes a listener added with {@link #addSwapListener}; true when it was there. */
  public boolean removeSwapListener(Consumer<SnapshotSwap> listener) {
    return listeners.remove(listener);
  }

  /**
   * Stops tailing Kafka and removes the client's meters from the registry. Lookups keep answering from the last
   * snapshot. Idempotent.
   */
  @Override
  public void close() {
    synchronized (lifecycle) {
      if (state == State.CLOSED) {
        return;
      }
      state = State.CLOSED;
      if (tail != null) {
        tail.close();
      }
      if (reporter != null) {
        reporter.close();
      }
      if (participant != null) {
        participant.close();
      }
      metrics.close();
    }
  }

  // ---- accepting snapshots ----

  private void loadPersisted(Path file) {
    if (!Files.exists(file)) {
      LOG.info("cluster {}: no persisted snapshot at {} yet; routing starts with the first snapshot from Kafka",
          clusterId, file);
      return;
    }
    SnapshotFile.Contents contents;
    try {
      contents = SnapshotFile.read(file);
    } catch (SnapshotFile.CorruptFileException e) {
      metrics.refused(RefusalReason.MALFORMED);
      LOG.warn("cluster {}: refusing the persisted snapshot (reason {}): {}; ignoring the file and waiting for "
          + "Kafka", clusterId, RefusalReason.MALFORMED, e.getMessage());
      return;
    } catch (IOException e) {
      LOG.warn("cluster {}: cannot read the persisted snapshot {}: {}; ignoring it and waiting for Kafka",
          clusterId, file, e.toString());
      return;
    }
    GateOutcome outcome = gate.check(contents.snapshot(), null);
    if (outcome instanceof GateOutcome.Accepted a) {
      latest = new AcceptedSnapshot(a.snapshot(), contents.snapshot(), contents.publishedAtMillis());
      persistedEpoch = latest.epoch();
      LOG.info("cluster {}: routing by epoch {} from the persisted snapshot {}, published {}", clusterId,
          latest.epoch(), file, Instant.ofEpochMilli(latest.publishedAtMillis()));
      install(latest, false);
    } else if (outcome instanceof GateOutcome.Refused r) {
      metrics.refused(r.reason());
      LOG.warn("cluster {}: refusing the persisted snapshot {} (epoch {}, reason {}): {}; ignoring the file and "
          + "waiting for Kafka", clusterId, file, r.epoch(), r.reason(), r.message());
    }
  }

  /** Swaps to the snapshot; persists it (unless it came from the file) and tells the listeners. */
  private void install(AcceptedSnapshot accepted, boolean persist) {
    RoutingTable next = RoutingTable.of(accepted);
    long previous;
    swapLock.lock();
    try {
      previous = epoch();
      table = next;
      swapped.signalAll();
    } finally {
      swapLock.unlock();
    }
    metrics.swapped();
    LOG.info("cluster {}: routing by epoch {} (was {}), checksum {}, published {}", clusterId, next.epoch(),
        previous, next.ring.checksumHex(), Instant.ofEpochMilli(accepted.publishedAtMillis()));
    if (persist && config.persistFile() != null) {
      persist(config.persistFile(), accepted);
    }
    SnapshotSwap swap = new SnapshotSwap(previous, next.epoch(), accepted.snapshot());
    for (Consumer<SnapshotSwap> listener : listeners) {
      try {
        listener.accept(swap);
      } catch (RuntimeException e) {
        LOG.warn("cluster {}: a swap listener failed on the swap to epoch {}", clusterId, next.epoch(), e);
      }
    }
    // Reported after the listeners: a node's view of the ring (its ownership check) swaps in one of them, and it must
    // enforce a stage before it tells the barrier it routes by it.
    ParticipantReporter reporting = participant;
    if (reporting != null) {
      reporting.swapped();
    }
  }

  private void persist(Path file, AcceptedSnapshot accepted) {
    try {
      SnapshotFile.write(file, accepted.bytes(), accepted.publishedAtMillis());
    } catch (IOException | RuntimeException e) {
      LOG.warn("cluster {}: cannot write the persist file {} for epoch {}: {}; a cold start will use an older "
          + "file or wait for Kafka", clusterId, file, accepted.epoch(), e.toString());
    }
  }

  /** What the tail's thread does with the records of the cluster. */
  private final class TailHandler implements SnapshotTail.Handler {
    @Override
    public void onFloor(long epoch) {
      floor = epoch;
      if (epoch >= 0) {
        LOG.info("cluster {}: epoch {} is the latest signed PUBLISHED on {}: no snapshot below it is routed by",
            clusterId, epoch, config.epochsTopic());
      }
    }

    @Override
    public void onRecord(byte[] value, long timestampMillis, String origin, boolean catchingUp) {
      GateOutcome outcome = gate.check(value, latest, floor);
      if (outcome instanceof GateOutcome.Duplicate d) {
        LOG.debug("cluster {}: {} repeats epoch {} byte for byte; nothing to do", clusterId, origin, d.epoch());
      } else if (outcome instanceof GateOutcome.Refused r && catchingUp && isHistory(r)) {
        LOG.debug("cluster {}: {} holds epoch {}, older than the persisted epoch {}; skipping history", clusterId,
            origin, r.epoch(), persistedEpoch);
      } else if (outcome instanceof GateOutcome.Refused r) {
        metrics.refused(r.reason());
        LOG.warn("cluster {}: refused the snapshot at {} (epoch {}, reason {}): {}; still routing by epoch {}",
            clusterId, origin, r.epoch() < 0 ? "unknown" : r.epoch(), r.reason(), r.message(), epoch());
      } else if (outcome instanceof GateOutcome.Accepted a) {
        long previous = latest == null ? NO_EPOCH : latest.epoch();
        if (a.gap()) {
          metrics.gap();
          LOG.info("cluster {}: epoch {} at {} follows epoch {} with a gap of {} epoch(s) (compacted topic, or a "
              + "refused snapshot); accepted on its trusted signature", clusterId, a.snapshot().epoch(), origin,
              previous, a.snapshot().epoch() - previous - 1);
        }
        long publishedAt = timestampMillis >= 0 ? timestampMillis : config.clock().millis();
        AcceptedSnapshot accepted = new AcceptedSnapshot(a.snapshot(), value, publishedAt);
        if (!catchingUp && !tryInstall(accepted)) {
          return; // the chain stays at the snapshot routed by
        }
        latest = accepted;
      }
    }

    /**
     * Installs a verified snapshot from Kafka; false, logged and counted, when that fails (building the routing
     * table, a bug): the client keeps routing by its last good snapshot and goes on with the next records.
     */
    private boolean tryInstall(AcceptedSnapshot accepted) {
      try {
        install(accepted, true);
        return true;
      } catch (RuntimeException e) {
        metrics.installFailed();
        LOG.error("cluster {}: epoch {} passed every check but could not be routed by; still routing by epoch {}",
            clusterId, accepted.epoch(), epoch(), e);
        return false;
      }
    }

    /**
     * A client that starts from its persist file reads the epochs before it again while catching up (compaction
     * never touches the active segment, so a few usually remain). The gate checks the signature before the
     * epoch, so such a record is a genuine old snapshot: history, neither routed by nor counted as a refusal.
     */
    private boolean isHistory(GateOutcome.Refused r) {
      return r.reason() == RefusalReason.OLDER_EPOCH && (r.epoch() <= persistedEpoch || r.epoch() < floor);
    }

    @Override
    public void onSynced(long token) {
      syncedPeriod = token;
      LOG.debug("cluster {}: read {} to its end after taking lease period {}; routing by epoch {}", clusterId,
          config.topic(), token, epoch());
    }

    @Override
    public void onCaughtUp() {
      RoutingTable t = table;
      if (latest != null && (t == null || t.accepted != latest) && !tryInstall(latest)) {
        latest = t == null ? null : t.accepted; // the chain goes on from the snapshot routed by
        return;
      }
      if (latest == null) {
        LOG.warn("cluster {}: caught up with topic {} on {}, which holds no verified snapshot of the cluster yet; "
            + "lookups fail until one is published", clusterId, config.topic(), config.bootstrapServers());
      } else {
        LOG.info("cluster {}: caught up with topic {}; routing by epoch {}", clusterId, config.topic(), epoch());
      }
    }

    @Override
    public long epoch() {
      return RingClient.this.epoch();
    }
  }
}
