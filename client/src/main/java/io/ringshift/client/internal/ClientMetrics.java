package io.ringshift.client.internal;

import io.ringshift.client.RefusalReason;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.function.DoubleSupplier;
import java.util.function.LongSupplier;

/**
 * The client's meters, all tagged {@code cluster} (docs/client.md lists them). Every refusal counter is
 * registered up front at zero, so a dashboard shows a reason before it first happens. {@link #close()} removes
 * the meters, so a registry that outlives the client does not report a stopped client's epoch forever.
 */
public final class ClientMetrics implements AutoCloseable {
  public static final String EPOCH = "ringshift.client.epoch";
  public static final String SNAPSHOT_AGE = "ringshift.client.snapshot.age";
  public static final String SWAPS = "ringshift.client.swaps";
  public static final String REFUSALS = "ringshift.client.refusals";
  public static final String GAPS = "ringshift.client.gaps";
  public static final String INSTALL_FAILURES = "ringshift.client.install.failures";
  public static final String HOT_KEY_SHARE = "ringshift.client.hot.key.share";
  public static final String STAGE = "ringshift.client.stage";
  public static final String LEASE_HELD = "ringshift.client.participant.lease.held";
  public static final String REPORT_AGE = "ringshift.client.participant.report.age";
  /** Ranks of the hot-key gauges: one series each, whatever the keys. */
  public static final int HOT_KEY_RANKS = 5;

  private final MeterRegistry registry;
  private final List<Meter> meters = new ArrayList<>();
  private final String clusterId;
  private final Counter swaps;
  private final Counter gaps;
  private final Counter installFailures;
  private final Map<RefusalReason, Counter> refusals = new EnumMap<>(RefusalReason.class);

  public ClientMetrics(MeterRegistry registry, String clusterId, LongSupplier epoch, DoubleSupplier ageSeconds) {
    this.registry = registry;
    this.clusterId = clusterId;
    Tags tags = Tags.of("cluster", clusterId);
    // Strong references: the suppliers are lambdas nothing else holds, and a weakly held one would read NaN.
    meters.add(Gauge.builder(EPOCH, epoch, s -> s.getAsLong())
        .description("epoch of the snapshot the client routes by; -1 before the first one")
        .tags(tags).strongReference(true).register(registry));
    meters.add(Gauge.builder(SNAPSHOT_AGE, ageSeconds, DoubleSupplier::getAsDouble)
        .description("time since the routed snapshot was published; NaN before the first one")
        .baseUnit("seconds").tags(tags).strongReference(true).register(registry));
    swaps = Counter.builder(SWAPS).description("routing table swaps, the cold-start file's included")
        .tags(tags).register(registry);
    gaps = Counter.builder(GAPS).description("accepted snapshots that skipped epochs (compacted topic)")
        .tags(tags).register(registry);
    installFailures = Counter.builder(INSTALL_FAILURES)
        .description("verified snapshots the client could not route by (building the routing table failed); it "
            + "kept its last good snapshot")
        .tags(tags).register(registry);
    meters.add(swaps);
    meters.add(gaps);
    meters.add(installFailures);
    for (RefusalReason reason : RefusalReason.values()) {
      Counter c = Counter.builder(REFUSALS).description("refused snapshots by reason")
          .tags(tags.and("reason", reason.name())).register(registry);
      refusals.put(reason, c);
      meters.add(c);
    }
  }

  /**
   * Registers {@value #HOT_KEY_SHARE} for ranks 1 to {@value #HOT_KEY_RANKS}: the estimated share of recent lookups
   * of the rank-th hottest key ({@code shareOfRank}). The keys themselves are not tags (unbounded series); {@code
   * RingClient.hotKeys} names them.
   */
  public void hotKeys(java.util.function.IntToDoubleFunction shareOfRank) {
    Tags tags = Tags.of("cluster", clusterId);
    for (int rank = 1; rank <= HOT_KEY_RANKS; rank++) {
      int r = rank;
      meters.add(Gauge.builder(HOT_KEY_SHARE, () -> shareOfRank.applyAsDouble(r))
          .description("estimated share of this client's recent lookups taken by its rank-th hottest key")
          .tags(tags.and("rank", Integer.toString(rank))).strongReference(true).register(registry));
    }
  }

  /**
   * Registers the transition gauges: {@value #STAGE}, the stage of the routed snapshot (1 to 3, 3 FINAL), and for a
   * participant {@value #LEASE_HELD} (1 while its lease in the barrier holds) and {@value #REPORT_AGE} (seconds since
   * its last acknowledged report; NaN before the first).
   */
  public void transitions(java.util.function.IntSupplier stage, ParticipantReporter participant,
      java.time.Clock clock) {
    Tags tags = Tags.of("cluster", clusterId);
    meters.add(Gauge.builder(STAGE, stage, s -> s.getAsInt())
        .description("transition stage of the routed snapshot: 1 write both, read old; 2 write both, read new; 3 final")
        .tags(tags).strongReference(true).register(registry));
    if (participant != null) {
      meters.add(Gauge.builder(LEASE_HELD, participant, p -> p.leaseHeld() ? 1 : 0)
          .description("1 while the client's report to the transition barrier holds its lease; 0 and the client stops "
              + "serving the ranges a transition moves")
          .tags(tags).strongReference(true).register(registry));
      meters.add(Gauge.builder(REPORT_AGE, participant, p -> p.lastAcknowledgedMillis() < 0 ? Double.NaN
              : (clock.millis() - p.lastAcknowledgedMillis()) / 1000.0)
          .description("time since the last report to the transition barrier that Kafka acknowledged")
          .baseUnit("seconds").tags(tags).strongReference(true).register(registry));
    }
  }

  public void swapped() {
    swaps.increment();
  }

  public void gap() {
    gaps.increment();
  }

  public void installFailed() {
    installFailures.increment();
  }

  public void refused(RefusalReason reason) {
    refusals.get(reason).increment();
  }

  @Override
  public void close() {
    meters.forEach(registry::remove);
  }
}
