package io.ringshift.worker.internal;

import io.ringshift.protocol.RecordSerdes;
import io.ringshift.ring.RingRange;
import io.ringshift.schemas.avro.RangeCopyTask;
import io.ringshift.schemas.avro.TaskState;
import io.ringshift.schemas.avro.TaskStatus;
import io.ringshift.storage.Store;
import io.ringshift.storage.StoreException;
import java.time.Duration;
import java.util.function.Function;

/**
 * One task, run in steps by the worker's {@link TaskScheduler}, from the task record and the latest status on {@code ring.task-status}.
 * Subclasses implement a kind ({@link CopyRun}, {@link CleanupRun}, {@link UnknownKindRun}); this class holds
 * what they share: the latest task record (a re-emission may request the fence or change the sources), the
 * progress, publishing, and the stop controls.
 */
public abstract class TaskRun {
  static {
    // Copying a generated record (newBuilder(other), as republish does) needs Avro to trust the generated
    // classes; the schemas module installs that trust when its serdes are first used.
    RecordSerdes.taskStatus();
  }

  protected final TaskContext ctx;
  protected final TaskControl control = new TaskControl();
  protected final Progress progress;
  private final boolean fresh;
  private boolean started;
  private volatile RangeCopyTask task;
  private TaskStatus lastPublished;
  private volatile boolean finished;
  private long lastCheckpointMillis;
  private long bytesSinceCheckpoint;
  private long lastPublishNanos;
  private long throttledNanos;
  private String throttledBy;
  /** The change-log lag its last catch-up pass left, in source sequence numbers; read by the metrics. */
  private volatile long catchUpLag;

  protected TaskRun(RangeCopyTask task, TaskStatus previous, TaskContext ctx) {
    this.task = task;
    this.ctx = ctx;
    control.inline(ctx.inline());
    this.progress = Progress.from(previous);
    this.fresh = previous == null;
    this.lastPublished = previous;
    this.lastCheckpointMillis = ctx.clock().millis();
    this.lastPublishNanos = ctx.ticker().nanos();
  }

  /** The run for {@code task}'s kind, resuming from {@code previous} (null when the task has no status yet). */
  public static TaskRun of(RangeCopyTask task, TaskStatus previous, TaskContext ctx) {
    return switch (task.getKind()) {
      case COPY, REPAIR -> new CopyRun(task, previous, ctx);
      case CLEANUP -> new CleanupRun(task, previous, ctx);
      default -> new UnknownKindRun(task, previous, ctx);
    };
  }

  /**
   * Runs the task's next step ({@link TaskScheduler}): returns how long it waits before its next step (it holds no
   * thread meanwhile, and a stop, a restart or a wake ends the wait at once), or null when the run has ended.
   */
  final Duration step() {
    control.clearWoken();
    boolean ended = true;
    try {
      control.checkStopped();
      if (!started) {
        started = true;
        if (fresh) {
          publish();
        }
      }
      Duration next = execute();
      ended = next == null;
      return next;
    } catch (TaskControl.Stopped stopped) {
      // First out of what it waited in (a source's tail): from here the run alone touches its progress.
      stepEnded();
      if (control.stopRequested() == TaskControl.Stop.CHECKPOINT) {
        // The one status a stopped run writes: its last checkpoint, unless the stop became a cancel meanwhile.
        publishStatus();
      }
      return null;
    } finally {
      if (ended) {
        end();
      }
    }
  }

  private void end() {
    boolean drop;
    synchronized (this) {
      finished = true;
      drop = control.stopRequested() == TaskControl.Stop.DROPPED;
    }
    stepEnded();
    if (drop) {
      // Whatever ended the run (a stop, an interrupt reporting CANCEL, VERIFIED or BLOCKED just before the drop
      // arrived), a dropped task still lifts its fences.
      dropped();
    }
  }

  /**
   * The worker closes and the run's next step will not run: it ends where it is (a dropped run still lifts its
   * fences).
   */
  final void abandon() {
    end();
  }

  /**
   * The run ends (done, stopped or failed): leave what it waited in between steps. Idempotent; does nothing by
   * default.
   */
  protected void stepEnded() {}

  /**
   * Drops the task (a tombstone): a run that has not ended stops and lifts its fences itself as it ends, and this
   * returns true; a run that had already ended does nothing and this returns false (the dispatcher lifts the
   * fences from the task's status then). Atomic with the run's end, so exactly one of the two lifts them.
   */
  public synchronized boolean drop() {
    if (finished) {
      return false;
    }
    control.stop(TaskControl.Stop.DROPPED);
    return true;
  }

  /**
   * One step of the kind's work: returns null when the task is done for this worker, otherwise how long to wait
   * before the next step ({@link Duration#ZERO}: at once, after the other tasks' turns); throws
   * {@link TaskControl.Stopped}. A step waits only for work in progress (a throttle, a drain); it returns to wait
   * for anything else.
   */
  protected abstract Duration execute();

  /**
   * The task was dropped by a re-plan before this run ended: undo what would outlive it (a copy lifts
   * its fences). Best effort; writes no status. Does nothing by default.
   */
  protected void dropped() {}

  /** A newer record of this task arrived (same id): a fence request, or a re-plan's sources. */
  public void update(RangeCopyTask newer) {
    RangeCopyTask older = task;
    task = newer;
    String source = progress.source;
    if (source != null && !newer.getSources().contains(source)) {
      control.restart("source " + source + " is no longer among the task's sources " + newer.getSources());
    }
    if (newer.getFenceRequested() && !older.getFenceRequested()) {
      control.wake();
    }
  }

  /** Publishes the current status again (the orchestrator re-emitted the task and wants to hear from it). */
  public synchronized void republish() {
    if (lastPublished != null && control.stopRequested() == null) {
      TaskStatus again = TaskStatus.newBuilder(lastPublished)
          .setWorkerId(ctx.workerId())
          .setTimestampMillis(ctx.clock().millis())
          .build();
      lastPublished = again;
      ctx.sink().publish(again);
    }
  }

  /** Asks the run to stop; it does at its next checkpoint boundary. */
  public void stop(TaskControl.Stop mode) {
    control.stop(mode);
  }

  public boolean finished() {
    return finished;
  }

  public RangeCopyTask task() {
    return task;
  }

  /** The last status this run published (or resumed from), null if none. */
  public synchronized TaskStatus lastPublished() {
    return lastPublished;
  }

  protected RingRange range() {
    RangeCopyTask t = task;
    return RingRange.of(t.getRangeStart(), t.getRangeEnd());
  }

  /**
   * Publishes the progress as it is now; resets the checkpoint counters. A task that spent at least half the
   * time since its last status waiting on a throttle says so in blockedReason, keeping its state; the reason
   * goes away with the first status after it waits less. Does nothing once a stop was requested: a stopped run
   * (cancelled, revoked, closing) must not publish over what another worker writes for the task; the last
   * checkpoint of a CHECKPOINT stop is written by {@link #run} alone.
   */
  protected synchronized void publish() {
    if (control.stopRequested() == null) {
      publishStatus();
    }
  }

  private synchronized void publishStatus() {
    long nowNanos = ctx.ticker().nanos();
    long elapsed = nowNanos - lastPublishNanos;
    boolean throttled = throttledBy != null && elapsed > 0 && throttledNanos * 2 >= elapsed;
    if (throttled && progress.state != TaskState.BLOCKED) {
      progress.blockedReason = "throttled: " + throttledBy;
    } else if (!throttled && progress.blockedReason != null && progress.blockedReason.startsWith("throttled: ")) {
      progress.blockedReason = null;
    }
    lastPublishNanos = nowNanos;
    throttledNanos = 0;
    long now = ctx.clock().millis();
    lastPublished = progress.toStatus(task, ctx.workerId(), now);
    lastCheckpointMillis = now;
    bytesSinceCheckpoint = 0;
    ctx.sink().publish(lastPublished);
  }

  /** Counts time a batch spent waiting on a throttle, and which limit held it. */
  protected synchronized void throttled(long nanos, String holder) {
    if (nanos > 0 && holder != null) {
      throttledNanos += nanos;
      throttledBy = holder;
    }
  }

  /** The change-log lag its last catch-up pass left (0 before any), in source sequence numbers. */
  public long catchUpLag() {
    return catchUpLag;
  }

  protected void catchUpLag(long lag) {
    catchUpLag = Math.max(0, lag);
  }

  /** Counts applied bytes and publishes a checkpoint when enough bytes or time have passed. */
  protected void applied(long bytes) {
    counted(bytes);
    checkpointIfDue();
  }

  /** Counts {@code bytes} applied without publishing: {@link #checkpointIfDue} decides once for a run of them. */
  protected void counted(long bytes) {
    ctx.metrics().copied(bytes);
    bytesSinceCheckpoint += bytes;
  }

  /** Publishes a checkpoint when the bytes or the time since the last one call for it. */
  protected void checkpointIfDue() {
    if (bytesSinceCheckpoint >= ctx.tuning().checkpointBytes()
        || ctx.clock().millis() - lastCheckpointMillis >= ctx.tuning().checkpointInterval().toMillis()) {
      publish();
    }
  }

  /** Sets the state BLOCKED with a reason and publishes it when it differs from what was last published. */
  protected void blocked(String reason) {
    boolean changed = progress.state != TaskState.BLOCKED || !reason.equals(progress.blockedReason);
    progress.state = TaskState.BLOCKED;
    progress.blockedReason = reason;
    if (changed) {
      publish();
    }
  }

  /** Calls {@code node}'s store, turning "unreachable" into {@link NodeDown} with the node's role. */
  protected <T> T call(String node, NodeDown.Role role, Function<Store, T> call) {
    try {
      return call.apply(ctx.stores().store(node));
    } catch (StoreException.Unavailable e) {
      throw new NodeDown(node, role, e);
    }
  }
}
