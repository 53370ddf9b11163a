package io.ringshift.orchestrator.internal;

import io.ringshift.schemas.avro.EpochRecord;
import io.ringshift.schemas.avro.RangeCopyTask;
import io.ringshift.schemas.avro.RejectedEvent;

/** What the per-cluster processor emits; the topology routes each kind to its topic. */
public sealed interface Output permits Output.Epoch, Output.Task, Output.Reject {
  /** An epoch record for ring.epochs, keyed by cluster id. */
  record Epoch(EpochRecord record) implements Output {}

  /** A task for ring.tasks, keyed by task id; a null record cancels the task (a tombstone). */
  record Task(RangeCopyTask record) implements Output {}

  /** A refused input for ring.rejected, keyed by the input's original key. */
  record Reject(RejectedEvent record) implements Output {}
}
