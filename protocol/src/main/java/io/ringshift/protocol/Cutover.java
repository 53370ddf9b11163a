package io.ringshift.protocol;

import io.ringshift.schemas.avro.EpochRecord;
import io.ringshift.schemas.avro.MembershipAction;
import java.time.Duration;
import java.util.Optional;

/**
 * How a planned change is cut over (docs/protocol.md, "Fallback"): in transition stages, with no write pause, or at
 * the fence, and why. The publisher decides by this rule when it reads the plan; {@code ringshift plan} and
 * {@code status} forecast with it. Pure.
 */
public final class Cutover {
  /** A node that took a write without a version this recently holds changes to the fence. */
  public static final Duration LEGACY_WINDOW = Duration.ofMinutes(10);

  private Cutover() {}

  /**
   * Why a change must take the fence instead of transition stages, or empty when it is published in stages.
   *
   * @param action the change's action (its cause)
   * @param tasks how many COPY/REPAIR tasks it has (0: it moves nothing, and has no cutover to speak of)
   * @param lastPublished the last published epoch's record (null: the cluster published nothing yet)
   * @param participants the cluster's participants as read
   * @param nowMillis the reader's clock, on which the participants' leases run
   */
  public static Optional<String> fenceReason(MembershipAction action, int tasks, EpochRecord lastPublished,
      Participants participants, long nowMillis) {
    if (tasks == 0) {
      return Optional.of("it moves no range");
    }
    if (lastPublished == null) {
      return Optional.of("the cluster has published no epoch yet");
    }
    if (action == MembershipAction.FAIL) {
      return Optional.of("it repairs a failure, whose dead node is still a replica of the ring it starts from");
    }
    if (!lastPublished.getFilling().isEmpty()) {
      return Optional.of("the epoch it starts from (" + lastPublished.getEpoch() + ") has filling marks");
    }
    return participants.fenceOnlyReason(nowMillis, LEGACY_WINDOW);
  }
}
