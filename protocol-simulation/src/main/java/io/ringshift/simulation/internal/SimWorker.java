package io.ringshift.simulation.internal;

import io.ringshift.protocol.RecordSerdes;
import io.ringshift.schemas.avro.RangeCopyTask;
import io.ringshift.schemas.avro.TaskStatus;
import io.ringshift.storage.Store;
import io.ringshift.worker.Limits;
import io.ringshift.worker.NodeStores;
import io.ringshift.worker.TaskTuning;
import io.ringshift.worker.WorkerCore;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

/**
 * A migration worker: its production core ({@link WorkerCore}: control view, dispatcher, task state machines, fence
 * lifts) inside a shell that does what {@code MigrationWorker} does with Kafka: a reader of every partition of
 * ring.task-status, ring.tasks and ring.epochs for the control view; the partitions of ring.tasks its group gives it,
 * read from the beginning and dispatched once the control view has caught up; statuses written without a transaction
 * (held while cut off from Kafka, as a producer's buffer holds them); a sweep every 30 s. Its nodes are reached over
 * the simulated network.
 */
final class SimWorker {
  private static final long SWEEP_INTERVAL = 30_000;

  private final World w;
  final String id;
  boolean up;
  private int life;
  private WorkerCore core;
  private SimClock clock;
  private SimKafka.Reader control;
  private SimKafka.Reader tasks;
  private final Set<Integer> assigned = new TreeSet<>();
  /** Partitions the group moved away while this worker was cut off: it learns so when it reconnects. */
  private final Set<Integer> lostWhileCutOff = new TreeSet<>();
  private final List<TaskStatus> held = new ArrayList<>();
  private boolean pollScheduled;
  private long runScheduledAt = Long.MAX_VALUE;

  SimWorker(World w, String id) {
    this.w = w;
    this.id = id;
    for (String topic : List.of(World.STATUS, World.TASKS, World.EPOCHS)) {
      w.kafka.onVisible(topic, this::schedulePoll);
    }
  }

  void start() {
    life++;
    up = true;
    if (clock == null) {
      clock = w.newClock();
    }
    NodeStores stores = new NodeStores() {
      @Override
      public Store store(String nodeId) {
        return w.storeFor(id, nodeId);
      }

      @Override
      public boolean knows(String nodeId) {
        return w.nodes.containsKey(nodeId);
      }

      @Override
      public void close() {
      }
    };
    TaskTuning tuning = TaskTuning.DEFAULTS.withIntervals(Duration.ofSeconds(1), Duration.ofSeconds(5))
        .withLoadBytes(0);
    core = new WorkerCore(id, stores, clock, () -> w.loop.now() * 1_000_000L, w.trusted, tuning,
        Duration.ofMillis(w.scenario.graceMillis()), Limits.unlimited(), this::publish);
    control = w.kafka.reader().assignAll(World.STATUS, World.TASKS, World.EPOCHS);
    tasks = w.kafka.reader();
    assigned.clear();
    lostWhileCutOff.clear();
    held.clear();
    pollScheduled = false;
    runScheduledAt = Long.MAX_VALUE;
    schedulePoll();
    scheduleSweep();
  }

  void crash() {
    if (!up) {
      return;
    }
    up = false;
    life++;
    core.crash();
    held.clear();
  }

  /** The group gives this worker {@code partitions} of ring.tasks (it holds exactly those from now on). */
  void assign(Set<Integer> partitions) {
    List<Integer> revoked = new ArrayList<>();
    for (Integer p : assigned) {
      if (!partitions.contains(p)) {
        revoked.add(p);
      }
    }
    if (!revoked.isEmpty()) {
      if (w.connected(id)) {
        core.revoke(revoked, true);
        revoked.forEach(p -> tasks.unassign(World.TASKS, p));
        assigned.removeAll(revoked);
      } else {
        // A cut-off member does not hear of the rebalance: its tasks run on until it reconnects.
        lostWhileCutOff.addAll(revoked);
      }
    }
    for (Integer p : partitions) {
      if (assigned.add(p)) {
        tasks.assign(World.TASKS, p);
      }
    }
    schedulePoll();
  }

  /** Kafka reachable again: partitions lost meanwhile stop without a checkpoint, held statuses go out. */
  void reconnected() {
    if (!up) {
      return;
    }
    if (!lostWhileCutOff.isEmpty()) {
      List<Integer> lost = new ArrayList<>(lostWhileCutOff);
      lostWhileCutOff.clear();
      core.revoke(lost, false);
      lost.forEach(p -> {
        tasks.unassign(World.TASKS, p);
        assigned.remove(p);
      });
    }
    List<TaskStatus> out = new ArrayList<>(held);
    held.clear();
    out.forEach(this::publish);
    schedulePoll();
    scheduleRun(w.loop.now());
  }

  private void publish(TaskStatus status) {
    if (!up) {
      return;
    }
    if (!w.connected(id)) {
      held.add(status);
      return;
    }
    w.kafka.append(World.STATUS, status.getTaskId(), RecordSerdes.taskStatus().serialize(status), clock.millis());
  }

  void schedulePoll() {
    if (!up || pollScheduled) {
      return;
    }
    pollScheduled = true;
    int at = life;
    w.loop.after(w.random.chance(0.1) ? w.random.between(200, 3_000) : w.random.between(1, 100),
        "worker " + id + " polls", () -> {
          pollScheduled = false;
          if (up && life == at) {
            poll();
          }
        });
  }

  private void poll() {
    if (!w.connected(id)) {
      scheduleRun(w.loop.now());
      return;
    }
    // The control view reads at its own pace: sometimes only part of what is there, so it lags behind the dispatcher.
    int controlBudget = w.random.chance(0.3) ? (int) w.random.between(0, 5) : Integer.MAX_VALUE;
    for (SimKafka.Rec r : control.poll(controlBudget)) {
      feedControl(r);
    }
    List<SimKafka.Rec> mine = tasks.poll(Integer.MAX_VALUE);
    if (!mine.isEmpty()) {
      // Read-your-writes: the control view catches up before tasks it does not run yet start.
      control.readToEnd(this::feedControl);
      for (SimKafka.Rec r : mine) {
        RangeCopyTask task = r.value == null ? null : decodeTask(r);
        core.onTask(r.partition, r.key, task);
      }
    }
    if (control.caughtUp()) {
      core.viewCaughtUpAt(clock.millis());
    } else {
      schedulePoll();
    }
    scheduleRun(w.loop.now());
  }

  private static RangeCopyTask decodeTask(SimKafka.Rec r) {
    if (r.decoded == null) {
      r.decoded = RecordSerdes.rangeCopyTask().deserialize(r.value);
    }
    return (RangeCopyTask) r.decoded;
  }

  private void feedControl(SimKafka.Rec r) {
    switch (r.topic) {
      case World.STATUS -> core.onStatus(r.key, r.value == null ? null : decodeStatus(r));
      case World.TASKS -> core.onTaskRecord(r.key, r.value == null ? null : decodeTask(r));
      default -> {
        if (r.value != null) {
          core.onEpoch(World.epochOf(r));
        }
      }
    }
  }

  private static TaskStatus decodeStatus(SimKafka.Rec r) {
    if (r.decoded == null) {
      r.decoded = RecordSerdes.taskStatus().deserialize(r.value);
    }
    return (TaskStatus) r.decoded;
  }

  /** Runs the core's due steps at {@code at} (or sooner, if something is due sooner). */
  private void scheduleRun(long at) {
    if (!up || at >= runScheduledAt) {
      return;
    }
    runScheduledAt = at;
    int life0 = life;
    w.loop.at(at, "worker " + id + " steps", () -> {
      if (!up || life != life0 || runScheduledAt != at) {
        return;
      }
      runScheduledAt = Long.MAX_VALUE;
      if (w.connected(id) && control.caughtUp()) {
        core.viewCaughtUpAt(clock.millis()); // what the worker's periodic read-your-writes barrier does
      }
      long next = core.runDue();
      if (next != Long.MAX_VALUE) {
        scheduleRun(Math.max(w.loop.now() + 1, next / 1_000_000L));
      }
    });
  }

  private void scheduleSweep() {
    int at = life;
    w.loop.after(SWEEP_INTERVAL, "worker " + id + " sweeps", () -> {
      if (!up || life != at) {
        return;
      }
      if (w.connected(id)) {
        for (String taskId : core.sweep()) {
          w.kafka.append(World.TASKS, taskId, null, clock.millis());
          w.kafka.append(World.STATUS, taskId, null, clock.millis());
        }
        scheduleRun(w.loop.now());
      }
      scheduleSweep();
    });
  }
}
