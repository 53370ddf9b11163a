package io.ringshift.cli.internal.control;

import io.ringshift.orchestrator.PlannedTask;
import io.ringshift.orchestrator.admin.ControlPlaneAdmin.Contents;
import io.ringshift.orchestrator.admin.EpochProgress;
import io.ringshift.orchestrator.admin.PlanPreview;
import io.ringshift.ring.ByteUnits;
import io.ringshift.ring.RingRange;
import io.ringshift.ring.RingSnapshot;
import io.ringshift.schemas.avro.RangeCopyTask;
import io.ringshift.schemas.avro.TaskKind;
import io.ringshift.schemas.avro.TaskState;
import io.ringshift.schemas.avro.TaskStatus;
import io.ringshift.storage.AdminSecret;
import io.ringshift.storage.RemoteStore;
import io.ringshift.storage.Store;
import io.ringshift.storage.StoreException;
import io.ringshift.worker.NodeDirectory;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * {@code plan}'s cost and risk report: the bytes each zone link carries, measured on the sources when the nodes are
 * reachable; an ETA from the throttle and the copy rate measured on the last epoch; and the peak under-replication
 * during the move.
 *
 * @param bytes the measured bytes of each COPY or REPAIR task, by task id (a task missing was not measured)
 * @param unreachable the sources that did not answer (a task then tries its next source)
 * @param measuredRate bytes per second the last epoch's copies ran at, or -1 when none is known
 * @param measuredOn which epoch the rate comes from, or -1
 * @param throttle the workers' total copy rate the operator gave (--rate), or 0
 * @param risk the peak under-replication while the change is carried out
 */
record PlanCost(Map<String, Long> bytes, Set<String> unreachable, double measuredRate, long measuredOn,
    long throttle, Risk risk) {

  /** A report with nothing measured: no nodes, no rate, no throttle. */
  static PlanCost unmeasured(PlanPreview preview, Collection<String> dead) {
    return new PlanCost(Map.of(), Set.of(), -1, -1, 0, risk(preview, dead));
  }

  /** How many threads measure ranges at once. */
  private static final int MEASURING_THREADS = 8;

  /**
   * The peak under-replication: the fewest complete replicas any range has while the change is carried out, and
   * the keyspace fraction that has fewer than the ring's replication.
   */
  record Risk(int replicas, int fewest, double underReplicatedFraction, String why) {}

  /**
   * Measures the bytes of every COPY and REPAIR task of the plan on its sources, in order of preference: the first
   * that answers {@code digest(range)} gives the range's key and value bytes (one read of the range on the node,
   * nothing on the network but the digest). Null {@code directory}: nothing measured.
   */
  static Map<String, Long> measure(List<PlannedTask> tasks, NodeDirectory directory, AdminSecret secret,
      Duration timeout, Set<String> unreachable) {
    Map<String, Long> bytes = new ConcurrentHashMap<>();
    if (directory == null) {
      return bytes;
    }
    Map<String, Store> stores = new ConcurrentHashMap<>();
    ExecutorService pool = Executors.newFixedThreadPool(MEASURING_THREADS, r -> {
      Thread t = new Thread(r, "ringshift-plan-measure");
      t.setDaemon(true);
      return t;
    });
    try {
      List<Future<?>> running = new ArrayList<>();
      for (PlannedTask task : tasks) {
        if (task.kind() == PlannedTask.Kind.CLEANUP) {
          continue;
        }
        running.add(pool.submit(() -> {
          for (String source : task.sources()) {
            if (unreachable.contains(source) || directory.address(source).isEmpty()) {
              continue;
            }
            try {
              Store store = stores.computeIfAbsent(source, s -> RemoteStore.connectAdmin(
                  directory.address(s).orElseThrow().toString(), secret, timeout));
              bytes.put(task.taskId(), store.digest(RingRange.of(task.rangeStart(), task.rangeEnd())).bytes());
              return;
            } catch (StoreException e) {
              unreachable.add(source);
            }
          }
        }));
      }
      for (Future<?> f : running) {
        try {
          f.get();
        } catch (java.util.concurrent.ExecutionException e) {
          throw new IllegalStateException("measuring a range failed: " + e.getCause().getMessage(), e.getCause());
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          return bytes;
        }
      }
    } finally {
      pool.shutdownNow();
      stores.values().forEach(Store::close);
    }
    return bytes;
  }

  /**
   * The copy rate of the latest epoch whose COPY or REPAIR statuses are still on ring.task-status (the last published
   * epoch's are kept): every byte copied over the time from the first start to the last VERIFIED status. Null when
   * no such epoch has a finished copy.
   */
  /** Whether a task id names a CLEANUP (a cancel's too); an id of another form counts as no cleanup. */
  private static boolean isCleanupId(String taskId) {
    try {
      return io.ringshift.protocol.RecordKeys.parseTaskId(taskId).kind() == TaskKind.CLEANUP;
    } catch (io.ringshift.protocol.CodecException e) {
      return false;
    }
  }

  static double[] measuredRate(Contents contents, String clusterId) {
    Map<String, RangeCopyTask> tasks = new HashMap<>();
    contents.tasks().forEach(t -> tasks.put(t.getTaskId(), t));
    TreeMap<Long, List<TaskStatus>> byEpoch = new TreeMap<>();
    for (TaskStatus s : contents.statuses()) {
      RangeCopyTask task = tasks.get(s.getTaskId());
      boolean copy = task == null ? !isCleanupId(s.getTaskId()) : task.getKind() != TaskKind.CLEANUP;
      if (clusterId.equals(s.getClusterId()) && copy && s.getState() == TaskState.VERIFIED
          && s.getStartedMillis() != null && s.getCopiedBytes() > 0) {
        byEpoch.computeIfAbsent(s.getEpoch(), e -> new ArrayList<>()).add(s);
      }
    }
    if (byEpoch.isEmpty()) {
      return null;
    }
    Map.Entry<Long, List<TaskStatus>> last = byEpoch.lastEntry();
    long copied = 0;
    long first = Long.MAX_VALUE;
    long end = 0;
    for (TaskStatus s : last.getValue()) {
      copied += s.getCopiedBytes();
      first = Math.min(first, s.getStartedMillis());
      end = Math.max(end, s.getTimestampMillis());
    }
    return end <= first ? null : new double[] {copied * 1000.0 / (end - first), last.getKey()};
  }

  /**
   * The peak under-replication. A join, drain or weight change copies before it switches: every range keeps its
   * replicas until the epoch is published, and the old copies are deleted only after it (and its grace period). A
   * FAIL removes the dead nodes' replicas at once (the failure epoch): the ranges they held have fewer complete
   * replicas until the repair epoch is READY.
   */
  static Risk risk(PlanPreview preview, Collection<String> dead) {
    RingSnapshot base = preview.base();
    int replicas = Math.min(base.replicas(), base.memberCount());
    boolean failure = preview.basis() == PlanPreview.Basis.FAILURE || preview.basis() == PlanPreview.Basis.REPLAN;
    if (!failure || dead.isEmpty()) {
      return new Risk(replicas, replicas, 0, "copies before it switches: every range keeps its " + replicas
          + " replicas until the epoch is published, and the old copies are deleted only after its grace period");
    }
    int fewest = replicas;
    double under = 0;
    for (int r = 0; r < base.tokenCount(); r++) {
      int complete = 0;
      for (io.ringshift.ring.Member m : base.replicasOfRange(r).members()) {
        if (!dead.contains(m.id())) {
          complete++;
        }
      }
      fewest = Math.min(fewest, complete);
      if (complete < replicas) {
        under += base.rangeFraction(r);
      }
    }
    return new Risk(replicas, fewest, under, "the FAIL removes " + String.join(", ", new TreeSet<>(dead))
        + " at once; the repair epoch restores the replicas");
  }

  /** The report's lines. */
  List<String> text(PlanPreview preview) {
    List<String> lines = new ArrayList<>();
    Totals totals = totals(preview);
    List<PlannedTask> copies = totals.copies();
    long total = totals.bytes();
    Map<String, Long> byLink = totals.byLink();
    int measured = totals.measured();
    boolean known = measured > 0 || preview.clusterBytes() > 0;
    String basis = measured == copies.size() && measured > 0 ? "measured on the sources"
        : measured > 0 ? String.format(Locale.ROOT, "measured on the sources for %d of %d tasks, the rest %s", measured,
            copies.size(), preview.clusterBytes() > 0 ? "estimated from --cluster-bytes" : "unknown (counted as 0)")
        : preview.clusterBytes() > 0 ? "estimated from --cluster-bytes" : null;
    if (copies.isEmpty()) {
      lines.add("cost       nothing to copy");
    } else if (!known) {
      lines.add("cost       unknown: give --nodes FILE and --node-secret-file FILE to measure the ranges on their "
          + "sources, or --cluster-bytes N to estimate");
    } else {
      List<String> links = new ArrayList<>();
      byLink.forEach((link, b) -> links.add(link + " " + ByteUnits.format(b)));
      lines.add(String.format(Locale.ROOT, "cost       %s to copy (%s): %s", ByteUnits.format(total), basis,
          String.join(", ", links)));
    }
    if (!unreachable.isEmpty()) {
      lines.add("           not measured on " + String.join(", ", new TreeSet<>(unreachable))
          + ": unreachable (their next sources were asked)");
    }
    double rate = rate();
    if (copies.isEmpty()) {
      lines.add("eta        0 s");
    } else if (!known || rate <= 0) {
      lines.add("eta        unknown: " + (!known ? "the bytes are unknown" : "no copy rate measured yet and no "
          + "--rate given (the workers' total --bytes-per-second)"));
    } else {
      String from = throttle > 0 && (measuredRate <= 0 || throttle <= measuredRate)
          ? "the throttle --rate " + ByteUnits.format(throttle) + "/s"
          : "the copy rate measured on epoch " + measuredOn;
      lines.add(String.format(Locale.ROOT, "eta        %s at %s/s (%s), copy time only: the fence and the publication "
          + "add seconds", EpochProgress.duration((long) Math.ceil(total / rate)), ByteUnits.format(rate), from));
    }
    if (risk.underReplicatedFraction() == 0) {
      lines.add(String.format(Locale.ROOT, "risk       no under-replication: the change %s", risk.why()));
    } else {
      lines.add(String.format(Locale.ROOT, "risk       peak under-replication: %s of the keyspace has fewer than %d "
          + "complete replicas, the fewest %d, until the repair is READY: %s",
          Text.percent(risk.underReplicatedFraction()), risk.replicas(), risk.fewest(), risk.why()));
    }
    return lines;
  }

  /** {@code plan --json}'s cost object. */
  record CostJson(long bytes, int measuredTasks, int tasks, Map<String, Long> bytesByZoneLink, List<String> unreachable,
      Double rateBytesPerSecond, Long etaSeconds, int replicas, int fewestCompleteReplicas,
      double underReplicatedFraction) {}

  CostJson json(PlanPreview preview) {
    Totals totals = totals(preview);
    List<PlannedTask> copies = totals.copies();
    long total = totals.bytes();
    int measured = totals.measured();
    Map<String, Long> byLink = totals.byLink();
    double rate = rate();
    Long eta = rate > 0 && (measured > 0 || preview.clusterBytes() > 0) ? (long) Math.ceil(total / rate) : null;
    return new CostJson(total, measured, copies.size(), byLink, List.copyOf(new TreeSet<>(unreachable)),
        rate > 0 ? rate : null, copies.isEmpty() ? Long.valueOf(0) : eta, risk.replicas(), risk.fewest(),
        risk.underReplicatedFraction());
  }

  /** The COPY and REPAIR tasks, their bytes (measured, else estimated) in all and per zone link. */
  private record Totals(List<PlannedTask> copies, long bytes, int measured, Map<String, Long> byLink) {}

  private Totals totals(PlanPreview preview) {
    List<PlannedTask> copies = preview.plan().tasks().stream().filter(t -> t.kind() != PlannedTask.Kind.CLEANUP)
        .toList();
    long total = 0;
    int measured = 0;
    Map<String, Long> byLink = new TreeMap<>();
    for (PlannedTask t : copies) {
      Long b = bytes.get(t.taskId());
      measured += b == null ? 0 : 1;
      long taskBytes = b != null ? b : t.estimatedBytes();
      total += taskBytes;
      String sourceZone = t.sources().isEmpty() ? "(no source)" : zoneOf(preview, t.sources().get(0));
      byLink.merge(sourceZone + " -> " + t.targetZone(), taskBytes, Long::sum);
    }
    return new Totals(copies, total, measured, byLink);
  }

  /** The rate the ETA assumes: the slower of the throttle and the measured rate, whichever is known; -1 neither. */
  private double rate() {
    return throttle > 0 && measuredRate > 0 ? Math.min(throttle, measuredRate) : throttle > 0 ? throttle
        : measuredRate;
  }

  private static String zoneOf(PlanPreview preview, String node) {
    var m = preview.base().member(node);
    if (m == null) {
      m = preview.plan().target().member(node);
    }
    return m == null ? "?" : m.zone();
  }
}
