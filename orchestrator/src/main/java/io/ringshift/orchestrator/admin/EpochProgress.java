package io.ringshift.orchestrator.admin;

import io.ringshift.ring.ByteUnits;
import io.ringshift.orchestrator.admin.ClusterView.TaskView;
import io.ringshift.schemas.avro.TaskState;
import io.ringshift.schemas.avro.TaskStatus;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * How far the tasks of one epoch are, from their latest statuses: bytes copied against the estimate, the copy
 * rate since the first task started, the time left at that rate, and why tasks wait. Pure.
 *
 * <p>A task's estimate is its {@code estimatedBytes} (from the orchestrator, when it was told the cluster's size),
 * else the {@code rangeBytes} its worker measured on the source when the copy started; a task with neither yet counts
 * as the mean of those that have one. Done fraction: a VERIFIED task counts as done; another counts {@code
 * copiedBytes / estimate} (at most 1), weighted by its estimate. When no task has an estimate yet, the fraction is
 * VERIFIED tasks over all tasks. The rate is every byte copied over the time since the earliest {@code
 * startedMillis}; the ETA is the bytes left (estimate minus copied, over unfinished tasks) at that rate.
 *
 * @param tasks the tasks counted
 * @param verified how many are VERIFIED
 * @param copiedBytes bytes copied so far, over all tasks
 * @param estimatedBytes the tasks' estimated bytes
 * @param fraction how much is done, in [0, 1]
 * @param bytesPerSecond the copy rate, or -1 when no task has started
 * @param etaSeconds the seconds left at that rate, or -1 when unknown (no rate, or no estimate)
 * @param waiting why tasks wait (blocked reasons and errors), each with how many tasks give it, most common first
 */
public record EpochProgress(int tasks, int verified, long copiedBytes, long estimatedBytes, double fraction,
    double bytesPerSecond, long etaSeconds, Map<String, Integer> waiting) {

  private static final int BAR = 30;

  public static EpochProgress of(List<TaskView> views, long nowMillis) {
    long known = 0;
    int withEstimate = 0;
    for (TaskView view : views) {
      long estimate = measured(view);
      if (estimate > 0) {
        known += estimate;
        withEstimate++;
      }
    }
    long mean = withEstimate == 0 ? 0 : known / withEstimate;
    int verified = 0;
    long copied = 0;
    long estimated = 0;
    long left = 0;
    double doneBytes = 0;
    long started = Long.MAX_VALUE;
    Map<String, Integer> reasons = new LinkedHashMap<>();
    for (TaskView view : views) {
      TaskStatus s = view.status();
      long estimate = measured(view) > 0 ? measured(view) : mean;
      long taskCopied = s == null ? 0 : Math.max(0, s.getCopiedBytes());
      boolean done = view.state() == TaskState.VERIFIED;
      verified += done ? 1 : 0;
      copied += taskCopied;
      estimated += estimate;
      double taskDone = done ? 1 : estimate == 0 ? 0 : Math.min(1.0, (double) taskCopied / estimate);
      doneBytes += taskDone * estimate;
      left += done ? 0 : Math.max(0, estimate - taskCopied);
      if (s != null && s.getStartedMillis() != null) {
        started = Math.min(started, s.getStartedMillis());
      }
      String why = s == null ? null : s.getError() != null ? s.getError() : s.getBlockedReason();
      if (why != null && !done) {
        reasons.merge(why, 1, Integer::sum);
      }
    }
    double fraction = views.isEmpty() ? 1.0
        : estimated > 0 ? doneBytes / estimated : (double) verified / views.size();
    double rate = -1;
    if (started != Long.MAX_VALUE && nowMillis > started) {
      rate = copied * 1000.0 / (nowMillis - started);
    }
    long eta = -1;
    if (verified == views.size()) {
      eta = 0;
    } else if (rate > 0 && estimated > 0) {
      eta = (long) Math.ceil(left / rate);
    }
    List<Map.Entry<String, Integer>> sorted = new ArrayList<>(reasons.entrySet());
    sorted.sort(Map.Entry.<String, Integer>comparingByValue(Comparator.reverseOrder()));
    Map<String, Integer> waiting = new LinkedHashMap<>();
    sorted.forEach(e -> waiting.put(e.getKey(), e.getValue()));
    return new EpochProgress(views.size(), verified, copied, estimated, Math.max(0, Math.min(1, fraction)), rate,
        eta, waiting);
  }

  /** The orchestrator's estimate of the task, else the range's size its worker measured; 0 when neither is known. */
  private static long measured(TaskView view) {
    long planned = view.task().getEstimatedBytes();
    if (planned > 0) {
      return planned;
    }
    TaskStatus s = view.status();
    return s == null || s.getRangeBytes() == null ? 0 : Math.max(0, s.getRangeBytes());
  }

  /** {@code [#########.....................]  31.0%  1.20 GiB of 3.87 GiB  at 48.0 MiB/s  ETA 57 s  (3 of 9 verified)}. */
  public String line() {
    int filled = (int) Math.floor(fraction * BAR);
    String bar = "[" + "#".repeat(filled) + ".".repeat(BAR - filled) + "]";
    String of = estimatedBytes > 0 ? " of " + ByteUnits.format(estimatedBytes) : "";
    String rate = bytesPerSecond < 0 ? "not started" : "at " + ByteUnits.format(bytesPerSecond) + "/s";
    String eta = etaSeconds < 0 ? "ETA unknown" : "ETA " + duration(etaSeconds);
    return String.format(Locale.ROOT, "%s %6.1f%%  %s%s copied  %s  %s  (%d of %d verified)", bar, 100 * fraction,
        ByteUnits.format(copiedBytes), of, rate, eta, verified, tasks);
  }

  /** {@code 57 s}, {@code 3 min 20 s}, {@code 2 h 5 min}. */
  public static String duration(long seconds) {
    if (seconds < 60) {
      return seconds + " s";
    }
    if (seconds < 3600) {
      return (seconds / 60) + " min " + (seconds % 60) + " s";
    }
    return (seconds / 3600) + " h " + ((seconds % 3600) / 60) + " min";
  }
}
