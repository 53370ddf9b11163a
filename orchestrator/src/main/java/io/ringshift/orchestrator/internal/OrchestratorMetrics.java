package io.ringshift.orchestrator.internal;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.ringshift.orchestrator.internal.ClusterAggregate.EpochEvent;
import io.ringshift.ring.RingSnapshot;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The orchestrator's meters (docs/metrics.md). Counters are registered up front for every state and reason, so a
 * dashboard shows them at zero before they first happen; the per-cluster gauges appear with the first input of a
 * cluster this instance processes and show what its aggregate held after its latest input (an instance that handed a
 * cluster's partition to another keeps showing the values it last saw). Safe for any number of stream threads.
 *
 * <p>Processing may be retried under exactly-once (a task re-processes the inputs of an aborted transaction), so the
 * counters count what this instance processed, which can exceed what was committed after a crash or a rebalance.
 */
public final class OrchestratorMetrics {
  /** What every name starts with: {@link #removeAll} drops them. */
  public static final String PREFIX = "ringshift.orchestrator.";
  public static final String EPOCH = "ringshift.orchestrator.epoch";
  public static final String TARGET_EPOCH = "ringshift.orchestrator.target.epoch";
  public static final String PUBLISHED_EPOCH = "ringshift.orchestrator.published.epoch";
  public static final String TASKS = "ringshift.orchestrator.tasks";
  public static final String QUEUED = "ringshift.orchestrator.queued.changes";
  public static final String EPOCHS = "ringshift.orchestrator.epochs";
  public static final String REJECTS = "ringshift.orchestrator.rejects";

  /** The states an epoch record the orchestrator writes (or reads back from the publisher) has. */
  static final List<String> EPOCH_STATES = List.of("PLANNED", "READY", "SUPERSEDED", "CANCELLED", "PUBLISHED",
      "REJECTED", "REVERTED");

  /** Why the orchestrator refused an input: a fixed set, never the free text of the reject record. */
  public enum RejectReason {
    /** The bytes are not a membership event or task status. */
    MALFORMED,
    /** A record that decodes but breaks a rule checked before any state is read: blank ids, a bad weight, a bad key. */
    INVALID,
    /** A change for a cluster nobody declared with INIT. */
    UNKNOWN_CLUSTER,
    /** An INIT of a cluster that exists. */
    CLUSTER_EXISTS,
    /** A change the cluster's state refuses: a duplicate join, an unknown node, a ring that cannot be built. */
    REFUSED_CHANGE,
    /** A change withdrawn because the publisher rejected the epoch it was in or queued behind. */
    ROLLED_BACK;

    String tag() {
      return name().toLowerCase(Locale.ROOT);
    }
  }

  private final MeterRegistry registry;
  private final Map<String, Counter> epochs = new ConcurrentHashMap<>();
  private final Map<RejectReason, Counter> rejects = new ConcurrentHashMap<>();
  private final Map<String, ClusterGauges> clusters = new ConcurrentHashMap<>();

  public OrchestratorMetrics(MeterRegistry registry) {
    this.registry = registry;
    for (String state : EPOCH_STATES) {
      Counter c = Counter.builder(EPOCHS).description("epoch records by state: written by the orchestrator "
          + "(PLANNED, READY, SUPERSEDED, CANCELLED) or the publisher's records it processed (PUBLISHED, REJECTED, "
          + "REVERTED)")
          .tag("state", state).register(registry);
      epochs.put(state, c);
    }
    for (RejectReason reason : RejectReason.values()) {
      Counter c = Counter.builder(REJECTS).description("inputs refused onto ring.rejected, by reason")
          .tag("reason", reason.tag()).register(registry);
      rejects.put(reason, c);
    }
  }

  /** An epoch record the orchestrator emits. */
  void epoch(EpochEvent.State state) {
    epochs.get(state.name()).increment();
  }

  /** A publisher's record the orchestrator processed: {@code PUBLISHED}, {@code REJECTED} or {@code REVERTED}. */
  void answer(String state) {
    Counter c = epochs.get(state);
    if (c != null) {
      c.increment();
    }
  }

  public void rejected(RejectReason reason) {
    rejects.get(reason).increment();
  }

  /** The early reject of an input refused before any state is read, by its reason text. */
  public static RejectReason early(String reason) {
    return reason != null && reason.startsWith("malformed ") ? RejectReason.MALFORMED : RejectReason.INVALID;
  }

  /** A refusal of the cluster's aggregate, by its reason text and whether it answered a publisher's REJECTED. */
  static RejectReason refusal(String reason, boolean answeringRejection) {
    if (answeringRejection) {
      return RejectReason.ROLLED_BACK;
    }
    if (reason.startsWith("cluster is unknown")) {
      return RejectReason.UNKNOWN_CLUSTER;
    }
    if (reason.startsWith("cluster ") && reason.contains(" already exists")) {
      return RejectReason.CLUSTER_EXISTS;
    }
    return RejectReason.REFUSED_CHANGE;
  }

  /** What cluster {@code clusterId}'s aggregate holds after an input. */
  void cluster(String clusterId, ClusterAggregate next) {
    ClusterGauges g = clusters.computeIfAbsent(clusterId, this::register);
    RingSnapshot active = next.active();
    long activeEpoch = active == null ? -1 : active.epoch();
    g.active.set(activeEpoch);
    g.target.set(next.inFlight() == null ? activeEpoch : next.inFlight().plan().target().epoch());
    RingSnapshot published = next.publication().published();
    g.published.set(published == null ? -1 : published.epoch());
    Map<String, Boolean> progress = next.taskProgress();
    long verified = progress.values().stream().filter(v -> v).count();
    g.verified.set(verified);
    g.unverified.set(progress.size() - verified);
    g.queued.set(next.queue().size());
  }

  private ClusterGauges register(String clusterId) {
    ClusterGauges g = new ClusterGauges();
    Tags tags = Tags.of("cluster", clusterId);
    gauge(EPOCH, "epoch of the cluster's active ring; -1 before INIT", tags, g.active);
    gauge(TARGET_EPOCH, "epoch of the plan in flight, the active epoch when none", tags, g.target);
    gauge(PUBLISHED_EPOCH, "latest epoch the publisher published, as the orchestrator has read it; -1 before the "
        + "first", tags, g.published);
    gauge(TASKS, "COPY and REPAIR tasks of the epoch in flight, by state", tags.and("state", "verified"),
        g.verified);
    gauge(TASKS, "COPY and REPAIR tasks of the epoch in flight, by state", tags.and("state", "unverified"),
        g.unverified);
    gauge(QUEUED, "membership changes queued behind the one in flight", tags, g.queued);
    return g;
  }

  private void gauge(String name, String description, Tags tags, AtomicLong value) {
    Gauge.builder(name, value, AtomicLong::get).description(description).tags(tags).strongReference(true)
        .register(registry);
  }

  /** Removes every orchestrator meter from {@code registry} (the orchestrator closes). */
  public static void removeAll(MeterRegistry registry) {
    registry.getMeters().stream().filter(m -> m.getId().getName().startsWith(PREFIX)).toList()
        .forEach(registry::remove);
  }

  private static final class ClusterGauges {
    final AtomicLong active = new AtomicLong(-1);
    final AtomicLong target = new AtomicLong(-1);
    final AtomicLong published = new AtomicLong(-1);
    final AtomicLong verified = new AtomicLong();
    final AtomicLong unverified = new AtomicLong();
    final AtomicLong queued = new AtomicLong();
  }
}
