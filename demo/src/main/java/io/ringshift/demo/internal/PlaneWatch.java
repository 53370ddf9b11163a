package io.ringshift.demo.internal;

import io.ringshift.orchestrator.admin.ClusterView;
import io.ringshift.orchestrator.admin.ControlPlaneAdmin;
import io.ringshift.schemas.avro.EpochRecord;
import io.ringshift.schemas.avro.EpochState;
import io.ringshift.schemas.avro.RangeCopyTask;
import io.ringshift.schemas.avro.RejectedEvent;
import io.ringshift.schemas.avro.TaskKind;
import io.ringshift.schemas.avro.TaskState;
import io.ringshift.schemas.avro.TaskStatus;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeoutException;
import java.util.function.Predicate;

/**
 * The demo's view of the control plane, from its topics only: a follower of {@code ring.epochs}, {@code ring.tasks},
 * {@code ring.task-status} and {@code ring.rejected} polled on a thread of its own, which keeps the current {@link
 * ClusterView} and, for the summary, facts that the topics forget: finished tasks and their statuses are tombstoned
 * after cleanup, so each task's kind, range, target, largest copied bytes and the time it was first seen caught up
 * and verified are kept here as they pass.
 */
public final class PlaneWatch implements AutoCloseable {
  private static final Duration POLL = Duration.ofMillis(200);
  /**
   * While task statuses stream in (thousands within seconds at 120 x 256), the view is rebuilt at most once per this:
   * rebuilt on every batch, the watch took a good share of the two cores the demo's application shares with it.
   */
  private static final Duration GATHER = Duration.ofMillis(200);
  private static final EnumSet<TaskState> CAUGHT_UP_OR_LATER =
      EnumSet.of(TaskState.CAUGHT_UP, TaskState.FENCED, TaskState.VERIFIED);

  /** What the demo keeps of one task after the topics forget it. */
  public static final class TaskFacts {
    final String id;
    final TaskKind kind;
    final long epoch;
    final String target;
    final long rangeStart;
    final long rangeEnd;
    final long plannedMillis;
    long copiedBytes;
    long rangeBytes;
    long startedMillis = -1;
    long caughtUpMillis = -1;
    long verifiedMillis = -1;
    TaskState state = TaskState.PENDING;

    TaskFacts(RangeCopyTask task) {
      this.id = task.getTaskId();
      this.kind = task.getKind();
      this.epoch = task.getEpoch();
      this.target = task.getTarget();
      this.rangeStart = task.getRangeStart();
      this.rangeEnd = task.getRangeEnd();
      this.plannedMillis = task.getTimestampMillis();
    }

    public String id() {
      return id;
    }

    /** When the orchestrator emitted the task first (its clock). */
    public long plannedMillis() {
      return plannedMillis;
    }

    public TaskKind kind() {
      return kind;
    }

    public long epoch() {
      return epoch;
    }

    public String target() {
      return target;
    }

    public long rangeStart() {
      return rangeStart;
    }

    public long rangeEnd() {
      return rangeEnd;
    }

    public long copiedBytes() {
      return copiedBytes;
    }

    /** When the task was first seen CAUGHT_UP or later (its status' time), or -1. */
    public long caughtUpMillis() {
      return caughtUpMillis;
    }

    /** When its worker verified it (the VERIFIED status' time), or -1 while it is not. */
    public long verifiedMillis() {
      return verifiedMillis;
    }

    public TaskState state() {
      return state;
    }
  }

  private final ControlPlaneAdmin.Follower follower;
  private final String clusterId;
  private final Thread thread;
  private final Map<String, TaskFacts> tasks = new LinkedHashMap<>();
  private volatile ClusterView view;
  private volatile List<RejectedEvent> rejected = List.of();
  private volatile RuntimeException failure;
  private volatile boolean running = true;

  public PlaneWatch(ControlPlaneAdmin admin, String clusterId) {
    this.follower = admin.follow(EnumSet.allOf(ControlPlaneAdmin.Part.class));
    this.clusterId = clusterId;
    update(follower.poll(POLL));
    this.thread = new Thread(this::run, "ringshift-demo-watch");
    thread.setDaemon(true);
    thread.start();
  }

  private void run() {
    try {
      while (running) {
        update(follower.poll(POLL, GATHER));
      }
    } catch (RuntimeException e) {
      failure = e;
    } finally {
      synchronized (this) {
        notifyAll();
      }
    }
  }

  private void update(ControlPlaneAdmin.Contents contents) {
    synchronized (this) {
      for (RangeCopyTask task : contents.tasks()) {
        if (clusterId.equals(task.getClusterId())) {
          tasks.computeIfAbsent(task.getTaskId(), id -> new TaskFacts(task));
        }
      }
      for (TaskStatus status : contents.statuses()) {
        TaskFacts facts = tasks.get(status.getTaskId());
        if (facts == null || status.getEpoch() != facts.epoch) {
          continue;
        }
        facts.state = status.getState();
        facts.copiedBytes = Math.max(facts.copiedBytes, status.getCopiedBytes());
        if (status.getRangeBytes() != null) {
          facts.rangeBytes = status.getRangeBytes();
        }
        if (status.getStartedMillis() != null && facts.startedMillis < 0) {
          facts.startedMillis = status.getStartedMillis();
        }
        if (CAUGHT_UP_OR_LATER.contains(status.getState()) && facts.caughtUpMillis < 0) {
          facts.caughtUpMillis = status.getTimestampMillis();
        }
        if (status.getState() == TaskState.VERIFIED && facts.verifiedMillis < 0) {
          facts.verifiedMillis = status.getTimestampMillis();
        }
      }
      view = ClusterView.of(clusterId, contents, 10);
      rejected = contents.rejected();
      notifyAll();
    }
  }

  /** The cluster as the topics describe it now. */
  public ClusterView view() {
    return view;
  }

  /** Every task of {@code epoch} seen so far (cleanups included), whatever became of it on the topics. */
  public synchronized List<TaskFacts> tasksOf(long epoch) {
    return tasks.values().stream().filter(t -> t.epoch == epoch).toList();
  }

  /** Every task seen so far. */
  public synchronized List<TaskFacts> allTasks() {
    return List.copyOf(tasks.values());
  }

  /** The first record of {@code epoch} in {@code state}, if one was written. */
  public Optional<EpochRecord> record(long epoch, EpochState state) {
    ClusterView v = view;
    if (v == null) {
      return Optional.empty();
    }
    return v.history().stream().filter(e -> e.getEpoch() == epoch && e.getState() == state).findFirst();
  }

  /** Every record of {@code epoch} in {@code state}, in log order. */
  public List<EpochRecord> records(long epoch, EpochState state) {
    ClusterView v = view;
    if (v == null) {
      return List.of();
    }
    return v.history().stream().filter(e -> e.getEpoch() == epoch && e.getState() == state).toList();
  }

  /** The orchestrator's refusal of request {@code requestId}, if there is one. */
  public Optional<RejectedEvent> rejection(String requestId) {
    return rejected.stream().filter(r -> requestId.equals(r.getRequestId())).findFirst();
  }

  /**
   * Waits until {@code condition} holds of this watch, re-checked after every poll.
   *
   * @throws TimeoutException naming {@code what} when it does not hold within {@code timeout}
   * @throws IllegalStateException when the follower failed (Kafka gone)
   */
  public synchronized void await(Predicate<PlaneWatch> condition, Duration timeout, String what)
      throws InterruptedException, TimeoutException {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (!condition.test(this)) {
      if (failure != null) {
        throw new IllegalStateException("lost the control plane's topics while waiting for " + what + ": "
            + failure.getMessage(), failure);
      }
      long left = deadline - System.nanoTime();
      if (left <= 0) {
        throw new TimeoutException(what + " did not happen within " + timeout.toSeconds() + " s");
      }
      wait(Math.max(1, left / 1_000_000));
    }
  }

  /** The records of {@code epoch}, in log order. */
  public List<EpochRecord> recordsOf(long epoch) {
    ClusterView v = view;
    return v == null ? List.of() : new ArrayList<>(v.history().stream().filter(e -> e.getEpoch() == epoch).toList());
  }

  @Override
  public void close() {
    running = false;
    try {
      thread.join(5_000);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    follower.close();
  }
}
