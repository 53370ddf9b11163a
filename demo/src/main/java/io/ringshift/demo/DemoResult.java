package io.ringshift.demo;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * What a demo run measured and whether every check passed ({@link #passed()}): no acknowledged write missing from a
 * replica of the final ring, no stale read, no read served by a replica still being filled, the audit of every
 * published snapshot, and every change ending as the scenario expects.
 *
 * @param seed the seed the run drew its nodes and workload from (to replay it)
 * @param settings what ran
 * @param changes each membership change of the scenario, in order
 * @param loaded keys loaded before the first change, and their bytes (one copy)
 * @param loadedBytes logical bytes of those keys
 * @param loadMillis how long the bulk load took
 * @param workloadMillis how long the application wrote and read
 * @param writes acknowledged writes of the workload (the load not included)
 * @param refusedAttempts write attempts refused for a newer epoch (fences, moved ranges)
 * @param failedAttempts write attempts failed on a replica (a node down)
 * @param abandonedWrites writes never acknowledged when the workload stopped (nothing was promised for them)
 * @param reads reads served
 * @param readsBehind of those, reads of a key acknowledged by a newer ring than the reader's (not checked: reads are
 *     not fenced)
 * @param staleReads reads that returned an older value than the last acknowledged one, or none (must be 0)
 * @param fillingReads reads served by a replica before its copy or repair was verified (must be 0)
 * @param replicaReads (key, replica) pairs of the final ring read back at the end
 * @param lostWrites of those, the ones missing the key's last acknowledged write (must be 0)
 * @param examples the first few violations, described
 * @param auditEpochs published epochs the audit proved
 * @param audit the audit's verdict, one line
 * @param auditPassed whether it proved every published snapshot
 * @param elapsedMillis from the start of the plane to the end of the checks
 * @param failures every check that failed, described; empty when the run passed
 * @param steadyWriteP99Millis the p99 latency of the writes acknowledged while no change was in progress (from a
 *     request to {@link ChangeReport#endedAt}, plus a second), or -1 when there were none
 * @param steadyCpuCores the demo process's CPU use over those same seconds, in cores busy on average (every role,
 *     the nodes and the application share the process), or -1 when not measured
 */
public record DemoResult(long seed, DemoSettings settings, List<ChangeReport> changes, int loaded, long loadedBytes,
    long loadMillis, long workloadMillis, long writes, long refusedAttempts, long failedAttempts, long abandonedWrites, long reads,
    long readsBehind, long staleReads, long fillingReads, long replicaReads, long lostWrites, List<String> examples,
    int auditEpochs, String audit, boolean auditPassed, long elapsedMillis, List<String> failures,
    double steadyWriteP99Millis, double steadyCpuCores) {

  /** Without the steady-state CPU use. */
  public DemoResult(long seed, DemoSettings settings, List<ChangeReport> changes, int loaded, long loadedBytes,
      long loadMillis, long workloadMillis, long writes, long refusedAttempts, long failedAttempts,
      long abandonedWrites, long reads, long readsBehind, long staleReads, long fillingReads, long replicaReads,
      long lostWrites, List<String> examples, int auditEpochs, String audit, boolean auditPassed, long elapsedMillis,
      List<String> failures, double steadyWriteP99Millis) {
    this(seed, settings, changes, loaded, loadedBytes, loadMillis, workloadMillis, writes, refusedAttempts,
        failedAttempts, abandonedWrites, reads, readsBehind, staleReads, fillingReads, replicaReads, lostWrites,
        examples, auditEpochs, audit, auditPassed, elapsedMillis, failures, steadyWriteP99Millis, -1);
  }

  /** Without the steady-state latency. */
  public DemoResult(long seed, DemoSettings settings, List<ChangeReport> changes, int loaded, long loadedBytes,
      long loadMillis, long workloadMillis, long writes, long refusedAttempts, long failedAttempts,
      long abandonedWrites, long reads, long readsBehind, long staleReads, long fillingReads, long replicaReads,
      long lostWrites, List<String> examples, int auditEpochs, String audit, boolean auditPassed, long elapsedMillis,
      List<String> failures) {
    this(seed, settings, changes, loaded, loadedBytes, loadMillis, workloadMillis, writes, refusedAttempts,
        failedAttempts, abandonedWrites, reads, readsBehind, staleReads, fillingReads, replicaReads, lostWrites,
        examples, auditEpochs, audit, auditPassed, elapsedMillis, failures, -1, -1);
  }

  public DemoResult {
    changes = List.copyOf(changes);
    examples = List.copyOf(examples);
    failures = List.copyOf(failures);
  }

  /** Whether every check passed. */
  public boolean passed() {
    return failures.isEmpty();
  }

  /** Percentiles of a set of durations, in milliseconds; {@code count} 0 when there were none. */
  public record Spread(int count, long p50, long p99, long max) {
    public static final Spread NONE = new Spread(0, 0, 0, 0);

    /** The spread of {@code millis} (any order). */
    public static Spread of(long[] millis) {
      if (millis.length == 0) {
        return NONE;
      }
      long[] sorted = millis.clone();
      java.util.Arrays.sort(sorted);
      return new Spread(sorted.length, at(sorted, 0.50), at(sorted, 0.99), sorted[sorted.length - 1]);
    }

    private static long at(long[] sorted, double p) {
      return sorted[(int) Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)];
    }
  }

  /**
   * One change of the scenario and what it cost.
   *
   * @param label what the change was, as the terminal shows it ("scale-out: join node-13 (az-1)")
   * @param epochs the epochs it made (a failure makes two: the failure epoch and the repair epoch)
   * @param outcome PUBLISHED, or CANCELLED for the cancelled join
   * @param tasks its COPY and REPAIR tasks
   * @param bytesMoved bytes its tasks copied (snapshot copy, catch-up, re-copies)
   * @param idealBytes what a perfect placement would move: the weight share that changes hands, times the replica
   *     bytes when the change was asked for
   * @param movedFraction the fraction of replica data whose placement changed (the ring's own diff)
   * @param idealFraction the weight share that changes hands
   * @param marks when each stage was reached (wall-clock millis): requested, planned, copied (every task caught up),
   *     ready, published, cleaned (its cleanups verified), cancelled; absent stages are left out
   * @param fenceWindows writes refused at this change's fences, from their first attempt to their acknowledgement
   * @param downWindows writes that failed on a replica that was down, until its failure was published
   * @param swapDelayMillis how long after publication the demo's client routed by the change's last epoch, or -1
   * @param cutover how the change was cut over: {@code stages}, {@code fence: <reason>}, {@code reverted}, or
   *     {@code -} (it moved nothing, or was not planned)
   * @param transition when the publisher wrote each transition record of its last epoch (docs/protocol.md):
   *     {@code stage 1}, {@code barrier 1} (every live participant at stage 1), {@code stage 2}, {@code final}
   *     (published after every live participant reached stage 2), {@code barrier 3} (every one at FINAL), or
   *     {@code reverted}
   * @param writeP99Millis the p99 latency of the writes acknowledged from its request to its publication or cancel,
   *     or its last transition record when later ({@link #endedAt}), or -1
   * @param cpuCores the demo process's CPU use over the same seconds, in cores busy on average, or -1
   */
  public record ChangeReport(String label, List<Long> epochs, String outcome, int tasks, long bytesMoved,
      long idealBytes, double movedFraction, double idealFraction, List<Mark> marks, Spread fenceWindows,
      Spread downWindows, long swapDelayMillis, String cutover, List<Mark> transition, double writeP99Millis,
      double cpuCores) {

    public ChangeReport {
      epochs = List.copyOf(epochs);
      marks = List.copyOf(marks);
      transition = List.copyOf(transition);
    }

    /** Without the CPU use. */
    public ChangeReport(String label, List<Long> epochs, String outcome, int tasks, long bytesMoved,
        long idealBytes, double movedFraction, double idealFraction, List<Mark> marks, Spread fenceWindows,
        Spread downWindows, long swapDelayMillis, String cutover, List<Mark> transition, double writeP99Millis) {
      this(label, epochs, outcome, tasks, bytesMoved, idealBytes, movedFraction, idealFraction, marks, fenceWindows,
          downWindows, swapDelayMillis, cutover, transition, writeP99Millis, -1);
    }

    /** Without transition figures (a change cut over before stages, or not measured). */
    public ChangeReport(String label, List<Long> epochs, String outcome, int tasks, long bytesMoved, long idealBytes,
        double movedFraction, double idealFraction, List<Mark> marks, Spread fenceWindows, Spread downWindows,
        long swapDelayMillis) {
      this(label, epochs, outcome, tasks, bytesMoved, idealBytes, movedFraction, idealFraction, marks, fenceWindows,
          downWindows, swapDelayMillis, "-", List.of(), -1, -1);
    }

    /** When a transition record was written, or -1. */
    public long transitionAt(String step) {
      return transition.stream().filter(m -> m.stage().equals(step)).mapToLong(Mark::millis).findFirst()
          .orElse(-1);
    }

    /** When a stage was reached, or -1 when it was not. */
    public long at(String stage) {
      return marks.stream().filter(m -> m.stage().equals(stage)).mapToLong(Mark::millis).findFirst().orElse(-1);
    }

    /**
     * When the change stopped moving the ring clients route by: its publication or cancel, or its last transition
     * mark when later (a cancelled change in its first stage is reverted after the cancel); -1 before any mark.
     */
    public long endedAt() {
      return endOf(marks, transition);
    }

    /** {@link #endedAt} of a change with these marks and transition marks, before its report is built. */
    public static long endOf(List<Mark> marks, List<Mark> transition) {
      long end = -1;
      for (Mark m : marks) {
        if (m.stage().equals("published") || m.stage().equals("cancelled")) {
          end = Math.max(end, m.millis());
        }
      }
      for (Mark m : transition) {
        end = Math.max(end, m.millis());
      }
      return end;
    }

    /** Bytes moved over the ideal, or -1 when the ideal is 0 (a cancelled change). */
    public double movedToIdeal() {
      return idealBytes > 0 ? (double) bytesMoved / idealBytes : -1;
    }

    /**
     * The time between consecutive stages: {@code planned} (request to plan), {@code copied} (plan to every task
     * caught up), {@code verified} (to READY: fences, drains, digests), {@code published}, {@code cleaned}.
     */
    public Map<String, Long> phases() {
      Map<String, Long> phases = new LinkedHashMap<>();
      for (int i = 1; i < marks.size(); i++) {
        phases.put(marks.get(i).stage(), Math.max(0, marks.get(i).millis() - marks.get(i - 1).millis()));
      }
      return phases;
    }
  }

  /** A stage of a change and when it was reached (wall-clock millis). */
  public record Mark(String stage, long millis) {}
}
