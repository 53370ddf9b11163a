package io.ringshift.worker.internal;

import io.ringshift.schemas.avro.RangeCopyTask;
import io.ringshift.schemas.avro.TaskState;
import io.ringshift.schemas.avro.TaskStatus;
import java.time.Duration;

/**
 * A task of a kind this worker version cannot read ({@code UNKNOWN}: a newer orchestrator added it). Reported
 * BLOCKED instead of guessing; a worker that knows the kind will run it.
 */
final class UnknownKindRun extends TaskRun {
  static final String REASON = "task kind unknown to this worker version";

  UnknownKindRun(RangeCopyTask task, TaskStatus previous, TaskContext ctx) {
    super(task, previous, ctx);
  }

  @Override
  protected Duration execute() {
    progress.state = TaskState.BLOCKED;
    progress.blockedReason = REASON;
    publish();
    return null;
  }
}
