package io.ringshift.orchestrator.internal;

import io.ringshift.schemas.avro.RejectedEvent;

/** A decoded input: valid (on its way to its cluster's processor) or rejected at once. */
public sealed interface Routed permits Routed.Valid, Routed.Reject {
  record Valid(Command command) implements Routed {}

  record Reject(RejectedEvent record) implements Routed {}
}
