package io.ringshift.worker.internal;

import io.ringshift.worker.NodeStores;
import io.ringshift.worker.TaskTuning;
import java.time.Clock;
import java.time.Duration;

/**
 * What every task of one worker shares: the node stores, the throttles and caps, where statuses go, the view of
 * the control plane, the clocks and the tuning.
 *
 * @param clock wall time: status timestamps, checkpoint intervals, the cleanup grace period
 * @param ticker monotonic time for the token buckets
 * @param metrics the worker's meters (bytes copied)
 * @param tails the change feeds caught-up tasks follow while they wait for their fence, one per source node
 * @param lifts the fences of dropped tasks, lifted until they are
 * @param inline whether a run does everything on the thread that steps it, with no thread of its own ({@link
 *     SteppedScheduler}: the deterministic simulation): its scan is read as it is applied, its applies run one at a
 *     time, its source's tail is followed when the driver says so, it never waits inside a step, and it copies
 *     without bulk loads
 */
public record TaskContext(String workerId, NodeStores stores, Throttles throttles, Slots slots, StatusSink sink,
    ControlState control, Clock clock, Ticker ticker, TaskTuning tuning, Duration grace, WorkerMetrics metrics,
    SourceTails tails, FenceLifts lifts, boolean inline) {

  /**
   * A context whose caught-up tasks follow their sources' feeds together ({@link SourceTails}) and whose dropped tasks'
   * fences are lifted until they are ({@link FenceLifts}).
   */
  public TaskContext(String workerId, NodeStores stores, Throttles throttles, Slots slots, StatusSink sink,
      ControlState control, Clock clock, Ticker ticker, TaskTuning tuning, Duration grace, WorkerMetrics metrics) {
    this(workerId, stores, throttles, slots, sink, control, clock, ticker, tuning, grace, metrics,
        new SourceTails(stores, tuning, false), new FenceLifts(control, stores, clock), false);
  }

  /**
   * A context for runs driven by a {@link SteppedScheduler} on the caller's thread (the deterministic simulation):
   * {@link #inline} set, the tails followed when {@link SourceTails#passAll} is called.
   */
  public static TaskContext inline(String workerId, NodeStores stores, Throttles throttles, Slots slots,
      StatusSink sink, ControlState control, Clock clock, Ticker ticker, TaskTuning tuning, Duration grace) {
    return new TaskContext(workerId, stores, throttles, slots, sink, control, clock, ticker, tuning, grace,
        WorkerMetrics.none(), new SourceTails(stores, tuning, true), new FenceLifts(control, stores, clock), true);
  }

  /** A context whose meters nobody reads. */
  public TaskContext(String workerId, NodeStores stores, Throttles throttles, Slots slots, StatusSink sink,
      ControlState control, Clock clock, Ticker ticker, TaskTuning tuning, Duration grace) {
    this(workerId, stores, throttles, slots, sink, control, clock, ticker, tuning, grace, WorkerMetrics.none());
  }
}
