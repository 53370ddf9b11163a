package io.ringshift.worker.internal;

import io.ringshift.schemas.avro.TaskStatus;

/**
 * Where a task's statuses go: {@code ring.task-status} through an idempotent producer, or a list in tests.
 * Statuses of one task are published in order and never block on the broker's acknowledgement.
 */
@FunctionalInterface
public interface StatusSink {
  void publish(TaskStatus status);
}
