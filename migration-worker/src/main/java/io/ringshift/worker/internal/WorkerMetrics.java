package io.ringshift.worker.internal;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.ringshift.schemas.avro.TaskState;
import io.ringshift.schemas.avro.TaskStatus;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.function.Predicate;
import java.util.function.ToDoubleFunction;

/**
 * A worker's meters (docs/metrics.md). The gauges are read from the runs the worker holds when the registry is
 * scraped, so they cost nothing between scrapes and cannot drift from what the worker does; the byte counter is
 * counted where the bytes are applied to the target. Blocked tasks are tagged with a reason from a fixed set
 * ({@link BlockReason}), never with the free text of blockedReason, which names nodes, positions and rates.
 */
public final class WorkerMetrics implements AutoCloseable {
  public static final String TASKS = "ringshift.worker.tasks";
  public static final String BYTES_COPIED = "ringshift.worker.bytes.copied";
  public static final String CATCHUP_LAG = "ringshift.worker.catchup.lag";
  public static final String BLOCKED = "ringshift.worker.blocked.tasks";
  public static final String FENCES_HELD = "ringshift.worker.fences.held";
  public static final String DOMINANCE_ROUNDS = "ringshift.worker.dominance.rounds";

  /** Why a task waits, classified from its blockedReason. */
  public enum BlockReason {
    /** A byte-rate limit holds its copy (the task keeps its state). */
    THROTTLED("throttled: "),
    /** A concurrency cap: too many tasks in the worker, from the source or to the target (it keeps its state). */
    WAITING_FOR_SLOT("waiting for a copy slot"),
    /** The task names no source: no replica of the range survives. */
    NO_SOURCE("the task names no source"),
    /** A source, the target or a new replica does not answer. */
    NODE_UNREACHABLE("no source reachable", " unreachable"),
    /** The source's change log does not reach back to the watermark for as long as the copy takes. */
    FEED_LOST("change log (WAL retention)"),
    /** Source and target digests differ after draining to the fence. */
    DIGEST_MISMATCH("range digests differ"),
    /** A cleanup waits for its epoch to be published. */
    WAITING_FOR_PUBLICATION("waiting for epoch "),
    /** A cleanup waits for the grace period after publication. */
    GRACE_PERIOD("grace period ends"),
    /**
     * A copy of a staged epoch waits to fence, or a cleanup of one to delete, until every live participant routes by
     * a stage of the epoch (a CONVERGED record; the copy keeps its state).
     */
    WAITING_FOR_CONVERGENCE(CopyRun.CONVERGENCE_WAIT),
    /** A copy waits to fence until the publisher decided how its epoch is cut over (STAGED or FENCE_CUTOVER). */
    WAITING_FOR_CUTOVER_DECISION(CopyRun.DECISION_WAIT_REASON),
    /** A cleanup waits for the copies of its range to be VERIFIED. */
    COPIES_NOT_VERIFIED(" not VERIFIED"),
    /** A store failed a call; the task retries. */
    STORE_ERROR("store error", "unexpected error", "deleting the range on "),
    /** A task kind this worker version does not know. */
    UNKNOWN_KIND(UnknownKindRun.REASON),
    /** Anything else (a reason this version does not classify yet). */
    OTHER();

    private final List<String> marks;

    BlockReason(String... marks) {
      this.marks = List.of(marks);
    }

    /** The tag value: {@code throttled}, {@code node_unreachable}, ... */
    public String tag() {
      return name().toLowerCase(Locale.ROOT);
    }

    /**
     * The class of {@code reason}: the first class one of whose marks the reason starts with, else the first one of
     * whose marks it contains (a reason that names a node first), else {@link #OTHER}. A cleanup's reason lists
     * every condition it waits for, separated by {@code "; "}; its first decides.
     */
    public static BlockReason of(String reason) {
      if (reason == null) {
        return OTHER;
      }
      int end = reason.indexOf("; ");
      String first = end < 0 ? reason : reason.substring(0, end);
      for (BlockReason r : values()) {
        if (r.marks.stream().anyMatch(first::startsWith)) {
          return r;
        }
      }
      for (BlockReason r : values()) {
        if (r.marks.stream().anyMatch(first::contains)) {
          return r;
        }
      }
      return OTHER;
    }
  }

  /** What the gauges read: the runs the worker holds, and which epochs are published. */
  public interface View {
    /** Every run the worker holds now, finished ones included until their tombstone. */
    List<TaskRun> runs();

    /** The highest published epoch of the cluster, or -1. */
    long highestPublished(String clusterId);
  }

  private static final View EMPTY = new View() {
    @Override
    public List<TaskRun> runs() {
      return List.of();
    }

    @Override
    public long highestPublished(String clusterId) {
      return -1;
    }
  };

  private final MeterRegistry registry;
  private final List<Meter> meters = new ArrayList<>();
  private final Counter bytesCopied;
  private final Counter dominanceHeld;
  private final Counter dominanceDiffered;
  private volatile View view = EMPTY;

  public WorkerMetrics(MeterRegistry registry) {
    this.registry = registry;
    // No base unit: the name says bytes (ringshift_worker_bytes_copied_total).
    bytesCopied = Counter.builder(BYTES_COPIED)
        .description("bytes applied to targets: snapshot copies, catch-up and re-copies after a digest mismatch")
        .register(registry);
    meters.add(bytesCopied);
    dominanceHeld = dominanceRounds(registry, "holds");
    dominanceDiffered = dominanceRounds(registry, "differs");
    for (TaskState state : TaskState.values()) {
      gauge(TASKS, "tasks this worker holds by the state of their latest status (finished ones until their "
          + "tombstone)", "state", state.name(), runs -> count(runs, r -> state(r) == state));
    }
    for (BlockReason reason : BlockReason.values()) {
      gauge(BLOCKED, "running tasks that wait (state BLOCKED, or a throttle or slot wait), by reason", "reason",
          reason.tag(), runs -> count(runs, r -> !r.finished() && waiting(r)
              && BlockReason.of(r.lastPublished().getBlockedReason()) == reason));
    }
    gauge(CATCHUP_LAG, "largest change-log lag (source sequence numbers behind) a running task measured at the end "
        + "of its last catch-up pass", null, null, runs -> runs.stream().filter(r -> !r.finished())
        .mapToLong(TaskRun::catchUpLag).max().orElse(0));
    gauge(FENCES_HELD, "tasks whose fence is set on their nodes and whose epoch is not published yet", null, null,
        runs -> count(runs, this::holdsFence));
  }

  /** Meters that nobody reads. */
  public static WorkerMetrics none() {
    return new WorkerMetrics(new SimpleMeterRegistry());
  }

  /** Where the gauges read from from now on (the worker's dispatcher, once it exists). */
  public void view(View v) {
    this.view = v == null ? EMPTY : v;
  }

  void copied(long bytes) {
    bytesCopied.increment(bytes);
  }

  /** One round of a verification by dominance (a staged epoch's copy whose digests differed) ended; whether it held. */
  void dominanceRound(boolean held) {
    (held ? dominanceHeld : dominanceDiffered).increment();
  }

  private Counter dominanceRounds(MeterRegistry registry, String outcome) {
    Counter c = Counter.builder(DOMINANCE_ROUNDS)
        .description("rounds of verification by dominance (a copy of a staged epoch whose digests differed under dual "
            + "writes), by outcome: holds (verified) or differs (entries re-applied, checked again or BLOCKED)")
        .tag("outcome", outcome).register(registry);
    meters.add(c);
    return c;
  }

  private void gauge(String name, String description, String tag, String value,
      ToDoubleFunction<List<TaskRun>> read) {
    Gauge.Builder<WorkerMetrics> b = Gauge.builder(name, this, m -> read.applyAsDouble(m.view.runs()))
        .description(description).strongReference(true);
    if (tag != null) {
      b.tag(tag, value);
    }
    meters.add(b.register(registry));
  }

  private static double count(List<TaskRun> runs, Predicate<TaskRun> p) {
    return runs.stream().filter(p).count();
  }

  private static TaskState state(TaskRun r) {
    TaskStatus s = r.lastPublished();
    return s == null ? TaskState.PENDING : s.getState();
  }

  private static boolean waiting(TaskRun r) {
    TaskStatus s = r.lastPublished();
    return s != null && (s.getState() == TaskState.BLOCKED || s.getBlockedReason() != null);
  }

  private boolean holdsFence(TaskRun r) {
    TaskStatus s = r.lastPublished();
    return s != null && s.getState() != TaskState.FAILED
        && (s.getFencePosition() != null || s.getState() == TaskState.FENCED)
        && s.getEpoch() > view.highestPublished(s.getClusterId());
  }

  @Override
  public void close() {
    meters.forEach(registry::remove);
  }
}
