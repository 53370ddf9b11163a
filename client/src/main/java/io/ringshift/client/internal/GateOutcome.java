package io.ringshift.client.internal;

import io.ringshift.client.RefusalReason;
import io.ringshift.protocol.PublishedSnapshot;
import java.util.Objects;

/** What {@link SnapshotGate#check} decided about one snapshot's bytes. */
public sealed interface GateOutcome {
  /**
   * Verified: route by it.
   *
   * @param gap true when the epoch skips past the next one (normal on a compacted topic); the chain could not
   *     be checked, the signature was
   */
  record Accepted(PublishedSnapshot snapshot, boolean gap) implements GateOutcome {
    public Accepted {
      Objects.requireNonNull(snapshot, "snapshot");
    }
  }

  /** The bytes of the current snapshot again (a producer retry, a re-read after a restart): nothing to do. */
  record Duplicate(long epoch) implements GateOutcome {}

  /**
   * Refused: keep the current snapshot.
   *
   * @param epoch the epoch the bytes claim, or -1 when they could not be read that far
   * @param message what was wrong, naming the values
   */
  record Refused(RefusalReason reason, long epoch, String message) implements GateOutcome {
    public Refused {
      Objects.requireNonNull(reason, "reason");
      Objects.requireNonNull(message, "message");
    }
  }
}
