package io.ringshift.worker.internal;

import io.ringshift.ring.RingRange;
import io.ringshift.schemas.avro.RangeCopyTask;
import io.ringshift.schemas.avro.TaskKind;
import io.ringshift.schemas.avro.TaskState;
import io.ringshift.schemas.avro.TaskStatus;
import io.ringshift.storage.StoreException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Turns the records of {@code ring.tasks} into running tasks: starts a task it does not run yet (unless its
 * latest status is VERIFIED or FAILED), hands a newer record of a running task to it (fence request, re-plan)
 * and re-publishes its status, drops a task on a tombstone (lifting the fences it set: a running run lifts its
 * own, for one that had ended the dispatcher lifts them from the task's status and last record), and stops the
 * tasks of revoked partitions, which never lifts fences (another worker continues the task). Every task is
 * tagged with an owner (its partition), so a rebalance stops exactly the tasks it takes away. Called from the
 * worker's poll thread only; tasks and the lifting of fences run on the worker's {@link TaskScheduler}.
 */
public final class TaskDispatcher {
  private static final Logger LOG = LoggerFactory.getLogger(TaskDispatcher.class);

  private record Running(Object owner, TaskRun run, CompletableFuture<Void> done) {}

  private final TaskContext ctx;
  private final TaskExecution scheduler;
  private final Map<String, Running> tasks = new ConcurrentHashMap<>();
  private final Set<CompletableFuture<Void>> lifting = ConcurrentHashMap.newKeySet();

  public TaskDispatcher(TaskContext ctx, TaskExecution scheduler) {
    this.ctx = ctx;
    this.scheduler = scheduler;
  }

  /** Whether this dispatcher has a run (running or finished) for the task. */
  public boolean knows(String taskId) {
    return tasks.containsKey(taskId);
  }

  /** A record of {@code ring.tasks} owned by {@code owner}; {@code task} null is a tombstone. */
  public void onTask(Object owner, String taskId, RangeCopyTask task) {
    Running current = tasks.get(taskId);
    if (task == null) {
      // Not live from now on, whatever record of it the control view still holds: a fence it shares with another
      // dropped task of its epoch must not be kept for it.
      ctx.control().onDropped(taskId);
      tasks.remove(taskId);
      if (current != null && current.run().drop()) {
        LOG.info("task {} dropped by a tombstone; its run stops and lifts the fences it set", taskId);
      } else {
        liftFences(taskId, current == null ? null : current.run());
      }
      return;
    }
    ctx.control().onUndropped(taskId);
    if (current != null) {
      current.run().update(task);
      current.run().republish();
      return;
    }
    TaskStatus previous = ctx.control().status(taskId).orElse(null);
    if (previous != null
        && (previous.getState() == TaskState.VERIFIED || previous.getState() == TaskState.FAILED)) {
      LOG.debug("task {} is already {}; not running it again", taskId, previous.getState());
      return;
    }
    TaskRun run = TaskRun.of(task, previous, ctx);
    // Registered before its first step, so a record or a stop that comes at once finds it.
    CompletableFuture<Void> done = new CompletableFuture<>();
    tasks.put(taskId, new Running(owner, run, done));
    scheduler.start(run).whenComplete((v, e) -> {
      if (e != null) {
        done.completeExceptionally(e);
      } else {
        done.complete(null);
      }
    });
  }

  /**
   * A tombstone dropped a task that has no running run (it ended VERIFIED or BLOCKED here, or before a restart or
   * rebalance): when its latest status says it fenced, lifts the fence of its range at its epoch on every source
   * of its last record, on the scheduler's pool, best effort (a node that does not answer is logged and skipped). The
   * record is the ended run's, else the last one {@link ControlState} kept; the status is {@link ControlState}'s,
   * else the ended run's last.
   */
  private void liftFences(String taskId, TaskRun ended) {
    RangeCopyTask known = ended != null ? ended.task() : ctx.control().lastRecord(taskId).orElse(null);
    if (known != null && ctx.control().published(known.getClusterId(), known.getEpoch())) {
      // The epoch is published: its fences refuse only writes of older epochs, which the move made stale; lifting
      // them could let such a write through on a node whose ring lags. The nodes prune them (docs/storage.md).
      LOG.debug("task {} of published epoch {} dropped by a tombstone; its fences stay for the nodes to prune",
          taskId, known.getEpoch());
      return;
    }
    TaskStatus status = ctx.control().status(taskId).orElse(ended == null ? null : ended.lastPublished());
    if (status == null || (status.getFencePosition() == null && status.getState() != TaskState.FENCED)) {
      LOG.info("task {} dropped by a tombstone; it never fenced, nothing to undo", taskId);
      return;
    }
    RangeCopyTask record = ended != null ? ended.task() : ctx.control().lastRecord(taskId).orElse(null);
    if (record == null) {
      LOG.warn("task {} dropped by a tombstone after it fenced ({}), but no record of it names the nodes it fenced: the "
          + "fences stay until its epoch is published, or, if it never will be, until the worker's sweep lifts the "
          + "fences of its epoch", taskId, status.getState());
      return;
    }
    if (record.getKind() != TaskKind.COPY && record.getKind() != TaskKind.REPAIR) {
      return;
    }
    RingRange range = RingRange.of(record.getRangeStart(), record.getRangeEnd());
    // The target too: a run fences it before the sources.
    List<String> fencedNodes = new java.util.ArrayList<>(record.getSources());
    fencedNodes.add(0, record.getTarget());
    CompletableFuture<Void> lift = scheduler.runAsync(() ->
        ctx.lifts().lift(record.getClusterId(), record.getEpoch(), range, fencedNodes, taskId));
    lifting.add(lift);
    lift.whenComplete((v, e) -> lifting.remove(lift));
  }

  private final java.util.concurrent.atomic.AtomicBoolean retrying = new java.util.concurrent.atomic.AtomicBoolean();

  /**
   * Tries again the fence lifts that a live task or an unanswering node held back, and lifts the fences of epochs that
   * can no longer be published ({@link FenceLifts#retry}), on the scheduler's pool, one pass at a time: the worker's
   * sweep calls it.
   */
  public void retryFenceLifts() {
    if (!retrying.compareAndSet(false, true)) {
      return;
    }
    CompletableFuture<Void> pass;
    try {
      pass = scheduler.runAsync(() -> ctx.lifts().retry());
    } catch (java.util.concurrent.RejectedExecutionException e) {
      retrying.set(false);
      return;
    }
    lifting.add(pass);
    pass.whenComplete((v, e) -> {
      lifting.remove(pass);
      retrying.set(false);
      if (e != null) {
        LOG.warn("lifting the fences of dropped tasks and of epochs that will not be published failed; trying again at "
            + "the next sweep", e);
      }
    });
  }

  /** Whether fences of dropped tasks are still being lifted. */
  public boolean lifting() {
    return !lifting.isEmpty();
  }

  /**
   * Stops the tasks of these owners at their next checkpoint boundary (writing that checkpoint when
   * {@code checkpoint}) and waits up to {@code timeout} for them; a task that does not stop in time is cancelled,
   * so it writes nothing after its partition moved.
   */
  public void stopOwned(Collection<?> owners, boolean checkpoint, Duration timeout) {
    TaskControl.Stop mode = checkpoint ? TaskControl.Stop.CHECKPOINT : TaskControl.Stop.CANCEL;
    List<Map.Entry<String, Running>> stopping = new ArrayList<>();
    tasks.forEach((id, running) -> {
      if (owners.contains(running.owner())) {
        running.run().stop(mode);
        stopping.add(Map.entry(id, running));
      }
    });
    awaitStopped(stopping, timeout);
    stopping.forEach(e -> tasks.remove(e.getKey()));
  }

  /** Stops every task at its next checkpoint boundary, writing that checkpoint (the worker closes). */
  public void stopAll(Duration timeout) {
    List<Map.Entry<String, Running>> stopping = new ArrayList<>(tasks.entrySet());
    stopping.forEach(e -> e.getValue().run().stop(TaskControl.Stop.CHECKPOINT));
    awaitStopped(stopping, timeout);
    tasks.clear();
    // Fences being lifted finish before the stores close; they are never started by a close.
    List<CompletableFuture<Void>> late = scheduler.await(List.copyOf(lifting), timeout);
    if (!late.isEmpty()) {
      LOG.warn("fences of dropped tasks still being lifted after {}", timeout);
    }
  }

  /** The run of a task, if this dispatcher has one. */
  public TaskRun run(String taskId) {
    Running r = tasks.get(taskId);
    return r == null ? null : r.run();
  }

  /** Every run it holds now, finished ones included (until their tombstone). */
  public List<TaskRun> runs() {
    List<TaskRun> runs = new ArrayList<>(tasks.size());
    tasks.values().forEach(r -> runs.add(r.run()));
    return runs;
  }

  /** Tasks not finished yet. */
  public int active() {
    return (int) tasks.values().stream().filter(r -> !r.run().finished()).count();
  }

  private void awaitStopped(List<Map.Entry<String, Running>> stopping, Duration timeout) {
    List<CompletableFuture<Void>> futures = new ArrayList<>();
    stopping.forEach(e -> futures.add(e.getValue().done()));
    List<CompletableFuture<Void>> late = scheduler.await(futures, timeout);
    for (Map.Entry<String, Running> e : stopping) {
      if (late.contains(e.getValue().done())) {
        LOG.warn("task {} did not stop within {}; cancelling it without a last checkpoint", e.getKey(), timeout);
        e.getValue().run().stop(TaskControl.Stop.CANCEL);
      }
    }
  }
}
