package io.ringshift.publisher.internal;

import io.ringshift.schemas.avro.RangeCopyTask;
import io.ringshift.schemas.avro.TaskKind;
import io.ringshift.schemas.avro.TaskState;
import io.ringshift.schemas.avro.TaskStatus;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The current value of every task id on {@code ring.tasks} and {@code ring.task-status}, as the compacted topics
 * hold it: a tombstone removes a task, so what is left are the live tasks. Only COPY and REPAIR tasks are kept,
 * the only kinds an epoch waits for. Not thread-safe: the publisher's one thread owns it.
 */
public final class TaskBook {
  /** A live COPY or REPAIR task and its latest status, or null when no worker has reported one. */
  public record Entry(RangeCopyTask task, TaskStatus status) {
    boolean verified() {
      return status != null && status.getState() == TaskState.VERIFIED;
    }

    String stateName() {
      return status == null ? "no status" : status.getState().name();
    }
  }

  private final Map<String, RangeCopyTask> tasks = new HashMap<>();
  private final Map<String, TaskStatus> statuses = new HashMap<>();

  /** A record of {@code ring.tasks}; {@code task} null is a tombstone. */
  public void onTask(String taskId, RangeCopyTask task) {
    if (task == null || (task.getKind() != TaskKind.COPY && task.getKind() != TaskKind.REPAIR)) {
      tasks.remove(taskId);
    } else {
      tasks.put(taskId, task);
    }
  }

  /** A record of {@code ring.task-status}; {@code status} null is a tombstone. */
  public void onStatus(String taskId, TaskStatus status) {
    if (status == null) {
      statuses.remove(taskId);
    } else {
      statuses.put(taskId, status);
    }
  }

  /** The live COPY and REPAIR tasks of the epoch with their statuses, ordered by task id. */
  public List<Entry> tasksOf(String clusterId, long epoch) {
    List<Entry> out = new ArrayList<>();
    tasks.forEach((id, task) -> {
      if (task.getEpoch() == epoch && clusterId.equals(task.getClusterId())) {
        out.add(new Entry(task, statuses.get(id)));
      }
    });
    out.sort(Comparator.comparing(e -> e.task().getTaskId()));
    return out;
  }

  /**
   * Drops the tasks and statuses of the cluster's epochs up to {@code epoch}, once it is published: no later
   * decision reads them, and the topics keep them for whoever does.
   */
  public void forget(String clusterId, long epoch) {
    tasks.values().removeIf(t -> t.getEpoch() <= epoch && clusterId.equals(t.getClusterId()));
    statuses.values().removeIf(s -> s.getEpoch() <= epoch && clusterId.equals(s.getClusterId()));
  }

  /** Live COPY and REPAIR tasks held. */
  public int size() {
    return tasks.size();
  }
}
