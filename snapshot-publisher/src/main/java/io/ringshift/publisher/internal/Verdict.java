package io.ringshift.publisher.internal;

import io.ringshift.protocol.PublishedSnapshot;
import io.ringshift.schemas.avro.EpochRecord;
import java.util.Objects;

/** What the publisher does with one READY epoch record. */
public sealed interface Verdict {
  /**
   * Publish: {@code snapshot} to {@code ring.snapshots} and {@code record} (state PUBLISHED) to {@code ring.epochs},
   * in one transaction.
   */
  record Publish(PublishedSnapshot snapshot, EpochRecord record) implements Verdict {
    public Publish {
      Objects.requireNonNull(snapshot, "snapshot");
      Objects.requireNonNull(record, "record");
    }
  }

  /** Write {@code record} (state REJECTED, reason starting with the check's name) and publish nothing. */
  record Reject(Check check, EpochRecord record) implements Verdict {
    public Reject {
      Objects.requireNonNull(check, "check");
      Objects.requireNonNull(record, "record");
    }
  }

  /**
   * Not yet: the epoch fails a check on its tasks ({@link Check#TASKS}, {@link Check#ADDITIONS}, or the
   * {@link Check#FILLING} rule on marks over VERIFIED tasks) as the control topics show them so far, which may lag
   * behind the READY record (docs/publisher.md, "Waiting for the tasks"). Read {@code ring.tasks} and
   * {@code ring.task-status} again and decide again; {@code rejection} is what to write if the check still fails
   * when the publisher's patience is spent.
   */
  record NotYet(Reject rejection) implements Verdict {
    public NotYet {
      Objects.requireNonNull(rejection, "rejection");
    }

    /** The reason the epoch would be rejected with now. */
    public String reason() {
      return rejection.record().getReason();
    }
  }

  /**
   * Publish a transition stage (docs/protocol.md, "Transition stages"): {@code snapshot} to {@code ring.snapshots} and
   * {@code record} (STAGED) to {@code ring.epochs}, in one transaction. {@code answers}: whether the record decided
   * leaves the queue (a PLANNED record, answered by the first stage), or stays to be decided again (a READY record,
   * whose second stage is published and whose FINAL snapshot follows once every live participant has reached it).
   */
  record Stage(PublishedSnapshot snapshot, EpochRecord record, boolean answers) implements Verdict {
    public Stage {
      Objects.requireNonNull(snapshot, "snapshot");
      Objects.requireNonNull(record, "record");
    }
  }

  /** Write {@code record} alone (FENCE_CUTOVER: a PLANNED record answered without stages). */
  record Note(EpochRecord record) implements Verdict {
    public Note {
      Objects.requireNonNull(record, "record");
    }
  }

  /**
   * Not yet, and without a deadline: the record waits for the participants to reach a stage (a barrier), which
   * leases end for those that stop reporting. The cluster's later records wait behind it.
   */
  record Hold(String reason) implements Verdict {
    public Hold {
      Objects.requireNonNull(reason, "reason");
    }
  }

  /** Write nothing: the epoch is already published with this very ring (a replayed or repeated READY). */
  record Ignore(String why) implements Verdict {
    public Ignore {
      Objects.requireNonNull(why, "why");
    }
  }
}
