package io.ringshift.worker;

import io.ringshift.protocol.TrustedKeys;
import io.ringshift.schemas.avro.EpochRecord;
import io.ringshift.schemas.avro.RangeCopyTask;
import io.ringshift.schemas.avro.TaskStatus;
import io.ringshift.schemas.avro.WorkerBudgets;
import io.ringshift.worker.internal.ControlState;
import io.ringshift.worker.internal.Slots;
import io.ringshift.worker.internal.SteppedScheduler;
import io.ringshift.worker.internal.TaskContext;
import io.ringshift.worker.internal.TaskDispatcher;
import io.ringshift.worker.internal.Throttles;
import io.ringshift.worker.internal.Ticker;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Objects;
import java.util.function.Consumer;
import java.util.function.LongSupplier;

/**
 * The migration worker without Kafka and without threads: the same control view ({@code ControlState}), dispatcher,
 * task state machines (copy, catch-up, fence, verify, cleanup, the handling of tombstones and revocations) and fence
 * lifts as {@link MigrationWorker}, driven by the caller one step at a time on a virtual clock. The deterministic
 * simulation of the protocol runs it; {@link MigrationWorker} is the shell that feeds the same parts from Kafka on its
 * own threads.
 *
 * <p>The caller feeds it what the worker's two consumers read: every record of {@code ring.task-status},
 * {@code ring.tasks} and {@code ring.epochs} (the control view, {@link #onStatus}, {@link #onTaskRecord},
 * {@link #onEpoch}), and the records of the {@code ring.tasks} partitions the group gave it ({@link #onTask}), read
 * after the control view caught up, as the worker does; it takes the statuses the tasks publish, calls
 * {@link #runDue} when the virtual clock reaches the time it returned, and {@link #sweep} every sweep interval. Copies
 * run without bulk loads and without throttles (their limits are the caller's {@link Limits}), and a step that would
 * wait inside (a drain that made no progress) retries after the retry interval instead. Not thread safe.
 */
public final class WorkerCore implements AutoCloseable {
  private final ControlState control;
  private final SteppedScheduler scheduler;
  private final TaskContext ctx;
  private final TaskDispatcher dispatcher;
  private final LongSupplier nanos;
  private final Duration tailInterval;
  private long nextTailNanos;

  /**
   * @param clock the worker's clock (status times, the grace period), which may be skewed against the others'
   * @param nanos the virtual monotonic clock, in nanoseconds
   * @param trusted the publisher keys whose PUBLISHED records open the cleanup gate
   * @param statuses where the tasks' statuses go, in order
   */
  public WorkerCore(String workerId, NodeStores stores, Clock clock, LongSupplier nanos, TrustedKeys trusted,
      TaskTuning tuning, Duration grace, Limits limits, Consumer<TaskStatus> statuses) {
    Objects.requireNonNull(statuses, "statuses");
    this.nanos = nanos;
    this.tailInterval = tuning.tailInterval();
    this.control = new ControlState(trusted, clock);
    Ticker ticker = nanos::getAsLong;
    this.scheduler = new SteppedScheduler(nanos);
    this.ctx = TaskContext.inline(workerId, stores, new Throttles(limits, ticker), new Slots(limits),
        statuses::accept, control, clock, ticker, tuning, grace);
    this.dispatcher = new TaskDispatcher(ctx, scheduler);
    this.nextTailNanos = nanos.getAsLong() + tailInterval.toNanos();
  }

  /** A record of {@code ring.task-status} ({@code null}: a tombstone), for the control view. */
  public void onStatus(String taskId, TaskStatus status) {
    control.onStatus(taskId, status);
  }

  /** A record of {@code ring.tasks} ({@code null}: a tombstone), for the control view (every partition). */
  public void onTaskRecord(String taskId, RangeCopyTask task) {
    control.onTask(taskId, task);
  }

  /** A record of {@code ring.epochs}, for the control view. */
  public void onEpoch(EpochRecord record) {
    control.onEpoch(record);
  }

  /**
   * Everything committed on the control-plane topics before {@code millis} (the worker's clock) has been fed: the view is
   * that fresh. A worker whose view ages (it is cut off from Kafka) deletes nothing (docs/worker.md, "CLEANUP").
   */
  public void viewCaughtUpAt(long millis) {
    control.viewCaughtUpAt(millis);
  }

  /** A record of {@code ring.worker-budgets} ({@code null}: a tombstone). */
  public void onBudgets(String groupId, WorkerBudgets budgets) {
    control.onBudgets(groupId, budgets);
  }

  /** A record of a {@code ring.tasks} partition the group gave this worker ({@code owner}); null is a tombstone. */
  public void onTask(Object owner, String taskId, RangeCopyTask task) {
    dispatcher.onTask(owner, taskId, task);
  }

  /** Partitions taken away: their tasks stop, writing their last checkpoint when {@code checkpoint}. */
  public void revoke(Collection<?> owners, boolean checkpoint) {
    dispatcher.stopOwned(owners, checkpoint, Duration.ofSeconds(15));
  }

  /**
   * Runs what is due at the virtual clock's time: a pass over the followed sources' feeds every tail interval, and
   * every task step and job due. Returns the virtual time (nanoseconds) to call it again at.
   */
  public long runDue() {
    long now = nanos.getAsLong();
    if (now >= nextTailNanos) {
      ctx.tails().passAll();
      nextTailNanos = now + tailInterval.toNanos();
    }
    long next = scheduler.runDue();
    return Math.min(next, nextTailNanos);
  }

  /**
   * The worker's sweep: tries the held-back fence lifts again (at the next {@link #runDue}) and forgets the epochs it is
   * done with, returning the ids of their tasks, whose records and statuses the worker tombstones.
   */
  public List<String> sweep() {
    dispatcher.retryFenceLifts();
    List<String> ids = new ArrayList<>();
    control.sweep().forEach(f -> ids.addAll(f.taskIds()));
    return ids;
  }

  /** Runs not ended yet. */
  public int activeTasks() {
    return dispatcher.active();
  }

  /** The worker closes: every task stops at its next step and writes its last checkpoint. */
  @Override
  public void close() {
    dispatcher.stopAll(Duration.ofSeconds(15));
    scheduler.close();
  }

  /** The worker's process dies: nothing more runs or is written. */
  public void crash() {
    scheduler.close();
  }
}
