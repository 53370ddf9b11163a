package io.ringshift.worker.internal;

import io.ringshift.protocol.CodecException;
import io.ringshift.protocol.TrustedKeys;
import io.ringshift.ring.RingRange;
import io.ringshift.schemas.avro.EpochRecord;
import io.ringshift.schemas.avro.EpochState;
import io.ringshift.schemas.avro.RangeCopyTask;
import io.ringshift.schemas.avro.TaskKind;
import io.ringshift.schemas.avro.TaskStatus;
import java.time.Clock;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What a worker knows of the whole control plane, beyond its own partitions of {@code ring.tasks}: the latest
 * status of every task (checkpoints to resume from, VERIFIED checks for cleanups), the COPY and REPAIR tasks of
 * every epoch (whose targets a cleanup waits for), the last record of every task (kept after its tombstone: a
 * dropped task's sources, whose fences the dispatcher lifts), and when each epoch was PUBLISHED. Fed by a reader of all
 * partitions of {@code ring.task-status}, {@code ring.tasks} and {@code ring.epochs}; tests feed it directly.
 * Only PUBLISHED records signed by a trusted publisher key count, timed from when they are first seen.
 * Thread safe.
 */
public final class ControlState {
  private static final Logger LOG = LoggerFactory.getLogger(ControlState.class);

  private final TrustedKeys trusted;
  private final Clock clock;
  private final Map<String, TaskStatus> statuses = new ConcurrentHashMap<>();
  private final Map<String, Map<String, RangeCopyTask>> copyTasksByEpoch = new ConcurrentHashMap<>();
  private final Map<String, String> epochOfTask = new ConcurrentHashMap<>();
  private final Map<String, RangeCopyTask> lastRecords = new ConcurrentHashMap<>();
  private final Map<String, Long> publishedAt = new ConcurrentHashMap<>();

  /**
   * @param trusted the publisher keys whose PUBLISHED records count (a cleanup deletes only after one); null when
   *     none is configured, and then no PUBLISHED record counts
   * @param clock when a PUBLISHED record is first seen: the grace period runs from then, not from the record's
   *     timestamp, which anyone who can write to ring.epochs can set
   */
  public ControlState(TrustedKeys trusted, Clock clock) {
    this.trusted = trusted;
    this.clock = clock;
  }

  /** Whether PUBLISHED records can count at all: false when no publisher key is trusted. */
  public boolean verifiesPublished() {
    return trusted != null;
  }

  /** The latest status of a task ({@code null} removes it: a tombstone). */
  public void onStatus(String taskId, TaskStatus status) {
    if (status == null) {
      statuses.remove(taskId);
    } else {
      statuses.put(taskId, status);
    }
  }

  /** The latest record of a task on {@code ring.tasks} ({@code null}: the task was dropped). */
  public synchronized void onTask(String taskId, RangeCopyTask task) {
    if (task != null) {
      lastRecords.put(taskId, task);
    }
    String previous = epochOfTask.remove(taskId);
    if (previous != null) {
      Map<String, RangeCopyTask> tasks = copyTasksByEpoch.get(previous);
      if (tasks != null) {
        tasks.remove(taskId);
      }
    }
    if (task != null && (task.getKind() == TaskKind.COPY || task.getKind() == TaskKind.REPAIR)) {
      String epoch = epochKey(task.getClusterId(), task.getEpoch());
      epochOfTask.put(taskId, epoch);
      copyTasksByEpoch.computeIfAbsent(epoch, e -> new ConcurrentHashMap<>()).put(taskId, task);
    }
  }

  /**
   * An epoch record: a PUBLISHED one signed by a trusted publisher key opens its cleanups' grace period, timed from
   * now. A PUBLISHED record that is unsigned, signed by an unknown key or altered is logged and ignored: it could
   * otherwise make cleanups delete the old owners' copies of an epoch that was never published.
   */
  public void onEpoch(EpochRecord record) {
    if (record == null || record.getState() != EpochState.PUBLISHED) {
      return;
    }
    if (trusted == null) {
      return;
    }
    try {
      trusted.verify(record);
    } catch (CodecException e) {
      LOG.error("ignoring a PUBLISHED record on ring.epochs that does not verify ({}): {}", e.reason(),
          e.getMessage());
      return;
    }
    publishedAt.putIfAbsent(epochKey(record.getClusterId(), record.getEpoch()), clock.millis());
  }

  public Optional<TaskStatus> status(String taskId) {
    return Optional.ofNullable(statuses.get(taskId));
  }

  /**
   * The last record of a task on {@code ring.tasks} that was not a tombstone, kept after a tombstone: the worker's
   * poll loop may see only the tombstone (a record and its tombstone read in one poll, or a partition replayed
   * after a rebalance), and a dropped task that fenced needs the nodes it fenced.
   */
  public Optional<RangeCopyTask> lastRecord(String taskId) {
    return Optional.ofNullable(lastRecords.get(taskId));
  }

  /** When this worker first saw a verified PUBLISHED record of {@code epoch} of {@code clusterId}, if it has. */
  public OptionalLong publishedAt(String clusterId, long epoch) {
    Long at = publishedAt.get(epochKey(clusterId, epoch));
    return at == null ? OptionalLong.empty() : OptionalLong.of(at);
  }

  /** The COPY and REPAIR tasks of an epoch, as last emitted. */
  public List<RangeCopyTask> copyTasks(String clusterId, long epoch) {
    Map<String, RangeCopyTask> tasks = copyTasksByEpoch.get(epochKey(clusterId, epoch));
    return tasks == null ? List.of() : List.copyOf(tasks.values());
  }

  /**
   * The COPY and REPAIR tasks of epochs after {@code epoch} of {@code clusterId} that give {@code target} a range:
   * a later epoch may hand back to a node a range an earlier epoch's cleanup is about to delete from it.
   */
  public List<RangeCopyTask> laterCopiesTo(String clusterId, long epoch, String target) {
    List<RangeCopyTask> later = new java.util.ArrayList<>();
    for (Map<String, RangeCopyTask> tasks : copyTasksByEpoch.values()) {
      for (RangeCopyTask t : tasks.values()) {
        if (t.getEpoch() > epoch && t.getClusterId().equals(clusterId) && t.getTarget().equals(target)) {
          later.add(t);
        }
      }
    }
    return later;
  }

  /**
   * A live COPY or REPAIR task of {@code epoch}, other than {@code except}, whose range overlaps {@code range} and
   * which fences {@code node} (one of its sources, or its target): it may rely on the node's fence of the range at
   * that epoch, since fences are keyed by range and epoch, not by task. Null when there is none.
   */
  public String liveTaskFencing(String clusterId, long epoch, RingRange range, String node,
      String except) {
    for (RangeCopyTask other : copyTasks(clusterId, epoch)) {
      if (!other.getTaskId().equals(except)
          && (other.getSources().contains(node) || other.getTarget().equals(node))
          && range.intersects(RingRange.of(other.getRangeStart(), other.getRangeEnd()))) {
        return other.getTaskId();
      }
    }
    return null;
  }

  private static String epochKey(String clusterId, long epoch) {
    return epoch + "/" + clusterId;
  }
}
