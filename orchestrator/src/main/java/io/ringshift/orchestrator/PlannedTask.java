package io.ringshift.orchestrator;

import io.ringshift.schemas.RecordKeys;
import io.ringshift.schemas.avro.TaskKind;
import java.util.List;

/**
 * One range-copy task of a plan: copy ring range {@code (rangeStart, rangeEnd]} (unsigned, wrapping) to
 * {@code target} from the first reachable of {@code sources}.
 *
 * @param taskId deterministic id ({@link RecordKeys#taskId}), so that planning the same change twice gives the
 *     same ids and a re-emitted task is recognised
 * @param sources candidate sources in preference order: old replicas that are still alive, same zone as the
 *     target first; empty when no replica survives (the task cannot run and says so)
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

  /** COPY moves a range from a live replica; REPAIR rebuilds a replica lost with a failed node. */
  public enum Kind {
    COPY,
    REPAIR
  }

  public PlannedTask {
    sources = List.copyOf(sources);
    if (sources.contains(target)) {
      throw new IllegalArgumentException("task " + taskId + " copies from its own target " + target);
    }
  }

  static String idOf(String clusterId, long epoch, Kind kind, long start, long end, String target) {
    return RecordKeys.taskId(clusterId, epoch, TaskKind.valueOf(kind.name()), start, end, target);
  }
}
