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
 * @throws IllegalArgumentException when {@code sources} contains {@code target}
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
    long estimatedBytes) {

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
  }

  static String idOf(String clusterId, long epoch, Kind kind, long start, long end, String target) {
    return RecordKeys.taskId(clusterId, epoch, TaskKind.valueOf(kind.name()), start, end, target);
  }
}
