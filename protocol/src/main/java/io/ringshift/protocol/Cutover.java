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
    return fenceReason(null, action, tasks, lastPublished, participants, nowMillis);
  }

  /**
   * As {@link #fenceReason(MembershipAction, int, EpochRecord, Participants, long)}, for the plan {@code plan} (null:
   * not known, as in a forecast): a plan that {@linkplain #repairsInPlace repairs in place} says so in its reason.
   */
  public static Optional<String> fenceReason(EpochRecord plan, MembershipAction action, int tasks,
      EpochRecord lastPublished, Participants participants, long nowMillis) {
    if (tasks > 0 && plan != null && repairsInPlace(plan, lastPublished)) {
      return Optional.of(inPlaceReason(lastPublished.getEpoch()));
    }
    if (tasks == 0) {
      return Optional.of("it moves no range");
    }
    if (lastPublished == null) {
      return Optional.of("the cluster has published no epoch yet");
    }
    if (action == MembershipAction.FAIL) {
      return Optional.of(plan == null
          ? "it repairs a failure: in place, without a write pause, when a failure epoch is published first (the "
              + "survivors keep a replica in every zone); otherwise at the fence, as the dead node is still a replica "
              + "of the ring it starts from"
          : "it repairs a failure, whose dead node is still a replica of the ring it starts from");
    }
    if (!lastPublished.getFilling().isEmpty()) {
      return Optional.of("the epoch it starts from (" + lastPublished.getEpoch() + ") has filling marks");
    }
    return participants.fenceOnlyReason(nowMillis, LEGACY_WINDOW);
  }

  /** How the reason of the publisher's FENCE_CUTOVER record starts for a plan cut over at the fence. */
  public static final String FENCE_NOTE = "published at the fence, without transition stages: ";
  /** How the reason of the publisher's FENCE_CUTOVER record starts for a plan that {@link #repairsInPlace}. */
  public static final String IN_PLACE_NOTE = "published in place, without transition stages: ";

  /** Whether {@code note}, a FENCE_CUTOVER record, says its plan repairs in place (no write pause). */
  public static boolean isInPlaceNote(EpochRecord note) {
    return note.getReason() != null && note.getReason().startsWith(IN_PLACE_NOTE);
  }

  /** The reason a plan that repairs failure epoch {@code failureEpoch} in place gives (see {@link #repairsInPlace}). */
  public static String inPlaceReason(long failureEpoch) {
    return "it repairs in place the filling replicas of failure epoch " + failureEpoch + ", which that epoch's "
        + "clients already write: its copies are fenced at epoch " + failureEpoch + " (only writers of older rings are "
        + "refused) and verify while writes go on, so there is no write pause";
  }

  /**
   * Whether {@code plan} repairs the failure epoch {@code lastPublished} in place: {@code lastPublished} has filling
   * marks, and {@code plan} is a later epoch chained to it ({@code previousChecksum}) that builds the same ring (the
   * same members, zones, weights and tokens, {@code vnodes}, {@code replicas}, {@code hashId} and {@code policyId}).
   * Every replica such a plan fills is then a filling replica of {@code lastPublished}, written by its clients
   * already, and the plan changes only where reads go: its copies need neither transition stages nor a fence at the
   * plan's epoch. They are fenced at {@code lastPublished}'s epoch instead (refusing writers of older rings, which
   * do not write the filling replicas) and verified by dominance while its clients write (docs/protocol.md,
   * "Repairs in place"). Pure.
   */
  public static boolean repairsInPlace(EpochRecord plan, EpochRecord lastPublished) {
    return plan != null && lastPublished != null && lastPublished.getFilling() != null
        && !lastPublished.getFilling().isEmpty() && plan.getEpoch() > lastPublished.getEpoch()
        && plan.getPreviousChecksum() != null && lastPublished.getTargetChecksum() != null
        && java.util.Arrays.equals(AvroBytes.toArray(plan.getPreviousChecksum()),
            AvroBytes.toArray(lastPublished.getTargetChecksum()))
        && plan.getMembers().equals(lastPublished.getMembers()) && plan.getVnodes() == lastPublished.getVnodes()
        && plan.getReplicas() == lastPublished.getReplicas()
        && java.util.Objects.equals(plan.getHashId(), lastPublished.getHashId())
        && java.util.Objects.equals(plan.getPolicyId(), lastPublished.getPolicyId());
  }
}
