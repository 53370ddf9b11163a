package io.ringshift.orchestrator;

import io.ringshift.protocol.RecordKeys;
import io.ringshift.schemas.avro.TaskKind;
import java.util.List;

/**
 * One task of a plan. COPY and REPAIR: copy ring range {@code (rangeStart, rangeEnd]} (unsigned, wrapping) to
 * {@code target} from the first reachable of {@code sources}. CLEANUP: delete that range from {@code target},
 * which no longer owns it, once every node of {@code sources} holds a VERIFIED copy and answers as healthy.
 *
 * @param taskId deterministic id ({@link RecordKeys#taskId}), so that planning the same change twice gives the
 *     same ids and a re-emitted task is recognised
 * @param sources COPY and REPAIR: candidate sources in preference order, old replicas that are still alive, same
 *     zone as the target first; empty when no replica survives (the task cannot run and says so). CLEANUP: the
 *     range's new replicas in preference order
 * @param cancelledEpoch a CLEANUP that a CANCEL emitted for what the cancelled tasks may have copied: the cancelled
 *     epoch (RangeCopyTask.cancelledEpoch; its id has the form of {@link RecordKeys#cancelCleanupTaskId}); null for
 *     every other task
 * @throws IllegalArgumentException when {@code sources} contains {@code target}, or a task that is no CLEANUP names a
 *     cancelled epoch
 */
public record PlannedTask(
    String taskId,
    Kind kind,
    long rangeStart,
    long rangeEnd,
    List<String> sources,
    String target,
    String targetZone,
    double keyspaceFraction,
    long estimatedBytes,
    Long cancelledEpoch) {

  /**
   * COPY moves a range from a live replica; REPAIR rebuilds a replica lost with a failed node; CLEANUP deletes a
   * moved range from a live node that no longer owns it.
   */
  public enum Kind {
    COPY,
    REPAIR,
    CLEANUP
  }

  public PlannedTask {
    sources = List.copyOf(sources);
    if (sources.contains(target)) {
      throw new IllegalArgumentException("task " + taskId + " names its target " + target + " among its sources "
          + sources + "; a task copies from or waits for other nodes than its target");
    }
    if (cancelledEpoch != null && kind != Kind.CLEANUP) {
      throw new IllegalArgumentException("task " + taskId + " is a " + kind + " naming cancelled epoch "
          + cancelledEpoch + "; only the cleanups of a cancel name one");
    }
  }

  /** A task of a plan (no cancelled epoch). */
  public PlannedTask(String taskId, Kind kind, long rangeStart, long rangeEnd, List<String> sources, String target,
      String targetZone, double keyspaceFraction, long estimatedBytes) {
    this(taskId, kind, rangeStart, rangeEnd, sources, target, targetZone, keyspaceFraction, estimatedBytes, null);
  }

  /**
   * This CLEANUP task of {@code clusterId}'s epoch {@code epoch} as a cleanup of what the tasks of cancelled epoch
   * {@code cancelled} copied: the same range, target and new replicas, marked with the cancelled epoch and under an id
   * of its own ({@link RecordKeys#cancelCleanupTaskId}), which no cleanup an epoch emits when it becomes READY has.
   */
  public PlannedTask afterCancelOf(String clusterId, long epoch, long cancelled) {
    if (kind != Kind.CLEANUP) {
      throw new IllegalArgumentException("task " + taskId + " is a " + kind + "; only a CLEANUP follows a cancel");
    }
    return new PlannedTask(RecordKeys.cancelCleanupTaskId(clusterId, epoch, cancelled, rangeStart, rangeEnd, target),
        kind, rangeStart, rangeEnd, sources, target, targetZone, keyspaceFraction, estimatedBytes, cancelled);
  }

  static String idOf(String clusterId, long epoch, Kind kind, long start, long end, String target) {
    return RecordKeys.taskId(clusterId, epoch, TaskKind.valueOf(kind.name()), start, end, target);
  }
}
