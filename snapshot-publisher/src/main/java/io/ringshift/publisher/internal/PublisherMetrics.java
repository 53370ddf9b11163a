package io.ringshift.publisher.internal;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.ringshift.schemas.avro.EpochRecord;
import io.ringshift.schemas.avro.EpochState;
import java.time.Clock;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;

/**
 * A publisher's meters (docs/metrics.md). The per-cluster gauges appear with the first PUBLISHED record of a cluster
 * that the publisher reads or writes (its sessions read {@code ring.epochs} from the beginning, so an active publisher
 * knows every cluster's last publication, its own or an earlier one's); a standby, which reads nothing, shows what
 * it saw while it was active. Refusals are tagged with the check that failed ({@link Check}, a fixed set).
 */
public final class PublisherMetrics implements AutoCloseable {
  public static final String EPOCH = "ringshift.publisher.epoch";
  public static final String SNAPSHOT_AGE = "ringshift.publisher.snapshot.age";
  public static final String PUBLISHED = "ringshift.publisher.published";
  public static final String REFUSALS = "ringshift.publisher.refusals";
  public static final String WAITS = "ringshift.publisher.waits";
  public static final String ACTIVE = "ringshift.publisher.active";
  public static final String TRANSITIONS = "ringshift.publisher.transitions";
  public static final String STRAGGLERS = "ringshift.publisher.barrier.stragglers";

  private final MeterRegistry registry;
  private final Clock clock;
  private final List<Meter> meters = new CopyOnWriteArrayList<>();
  private final Counter published;
  private final Counter waits;
  private final Map<Check, Counter> refusals = new ConcurrentHashMap<>();
  private final Counter unclassified;
  private final Map<String, Publication> clusters = new ConcurrentHashMap<>();
  private final Map<String, Counter> transitions = new ConcurrentHashMap<>();

  /** @param active whether this instance is the one that publishes (it holds the lease) */
  public PublisherMetrics(MeterRegistry registry, Clock clock, BooleanSupplier active) {
    this.registry = registry;
    this.clock = clock;
    published = add(Counter.builder(PUBLISHED).description("epochs this instance published").register(registry));
    waits = add(Counter.builder(WAITS).description("READY epochs that waited for their tasks before a decision")
        .register(registry));
    for (Check check : Check.values()) {
      refusals.put(check, add(Counter.builder(REFUSALS).description("epochs rejected, by the check that failed")
          .tag("reason", tag(check)).register(registry)));
    }
    unclassified = add(Counter.builder(REFUSALS).description("epochs rejected, by the check that failed")
        .tag("reason", "other").register(registry));
    add(Gauge.builder(ACTIVE, active, a -> a.getAsBoolean() ? 1 : 0)
        .description("1 while this instance holds the lease and publishes, 0 while it stands by")
        .strongReference(true).register(registry));
  }

  private static String tag(Check check) {
    return check.name().toLowerCase(Locale.ROOT);
  }

  private <M extends Meter> M add(M meter) {
    meters.add(meter);
    return meter;
  }

  /** This instance committed {@code record} (PUBLISHED). */
  public void published(EpochRecord record) {
    published.increment();
    seen(record);
  }

  /** This instance committed {@code record} (REJECTED); its reason starts with the check's name and a colon. */
  public void rejected(EpochRecord record) {
    String reason = record.getReason() == null ? "" : record.getReason();
    int colon = reason.indexOf(':');
    Counter c = null;
    if (colon > 0) {
      try {
        c = refusals.get(Check.valueOf(reason.substring(0, colon).trim().toUpperCase(Locale.ROOT)));
      } catch (IllegalArgumentException e) {
        c = null;
      }
    }
    (c == null ? unclassified : c).increment();
  }

  public void waiting() {
    waits.increment();
  }

  /**
   * This instance committed {@code record}: STAGED (tag {@code stage1}, {@code stage2}), REVERTED, FENCE_CUTOVER or
   * CONVERGED ({@code converged1}, {@code converged3}).
   */
  public void transition(EpochRecord record) {
    String kind = record.getState().name().toLowerCase(Locale.ROOT)
        + (record.getStage() == null || record.getState() == EpochState.REVERTED ? "" : record.getStage());
    transitions.computeIfAbsent(kind, k -> add(Counter.builder(TRANSITIONS)
        .description("transition records this instance wrote, by kind").tag("kind", k).register(registry)))
        .increment();
  }

  /** How many live participants the cluster's current barrier waits for (0 when none, or no barrier). */
  public void stragglers(String clusterId, int count) {
    clusters.computeIfAbsent(clusterId, this::register).stragglers.set(count);
  }

  /** A PUBLISHED record of the cluster's history, read or written: the cluster's latest if its epoch is higher. */
  public void seen(EpochRecord record) {
    Publication p = clusters.computeIfAbsent(record.getClusterId(), this::register);
    synchronized (p) {
      if (record.getEpoch() >= p.epoch.get()) {
        p.epoch.set(record.getEpoch());
        p.publishedMillis.set(record.getTimestampMillis());
      }
    }
  }

  private Publication register(String clusterId) {
    Publication p = new Publication();
    Tags tags = Tags.of("cluster", clusterId);
    add(Gauge.builder(EPOCH, p.epoch, AtomicLong::get).description("the cluster's last published epoch")
        .tags(tags).strongReference(true).register(registry));
    add(Gauge.builder(SNAPSHOT_AGE, p, q -> Math.max(0, clock.millis() - q.publishedMillis.get()) / 1000.0)
        .description("time since the cluster's last snapshot was published (its PUBLISHED record's timestamp)")
        .baseUnit("seconds").tags(tags).strongReference(true).register(registry));
    add(Gauge.builder(STRAGGLERS, p.stragglers, AtomicLong::get)
        .description("live participants the cluster's current transition barrier waits for")
        .tags(tags).strongReference(true).register(registry));
    return p;
  }

  @Override
  public void close() {
    meters.forEach(registry::remove);
    meters.clear();
    clusters.clear();
  }

  private static final class Publication {
    final AtomicLong epoch = new AtomicLong(-1);
    final AtomicLong publishedMillis = new AtomicLong();
    final AtomicLong stragglers = new AtomicLong();
  }
}
