package io.ringshift.publisher.internal;

import io.ringshift.protocol.AvroBytes;
import io.ringshift.protocol.CodecException;
import io.ringshift.protocol.Cutover;
import io.ringshift.protocol.EpochRecords;
import io.ringshift.protocol.Participants;
import io.ringshift.protocol.PublishedSnapshot;
import io.ringshift.protocol.RingSnapshotCodec;
import io.ringshift.protocol.SigningKey;
import io.ringshift.protocol.TransitionStage;
import io.ringshift.ring.RingSnapshot;
import io.ringshift.schemas.avro.EpochRecord;
import io.ringshift.schemas.avro.EpochState;
import io.ringshift.schemas.avro.MembershipAction;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The changes the publisher publishes in transition stages (docs/protocol.md, "Transition stages"), one per cluster at
 * a time, rebuilt from {@code ring.epochs} like the rest of the publisher's state. Pure: no Kafka, the time and the
 * participants are passed in; not thread-safe.
 *
 * <p>The life of a staged epoch E of ring C after the published epoch L of ring P:
 * <ol>
 *   <li>PLANNED E: published at once as {@code WRITE_BOTH_READ_OLD} (STAGED, stage 1), unless a reason keeps the
 *       change at the fence (FENCE_CUTOVER, {@link #stageDecision});
 *   <li>every live participant routes by stage 1: CONVERGED 1; the workers fence the sources, which now refuses only
 *       stragglers, and verify while dual writes go on;
 *   <li>READY E, its checks passed: {@code WRITE_BOTH_READ_NEW} (STAGED, stage 2); from here E can no longer be
 *       abandoned (every copy is verified and the orchestrator holds E active);
 *   <li>every live participant routes by stage 2: FINAL (PUBLISHED, as an epoch without stages);
 *   <li>every live participant routes by FINAL: CONVERGED 3; the workers may delete old copies after their grace.
 * </ol>
 * A plan abandoned in stage 1 (CANCELLED, SUPERSEDED, another plan or another ring under E, or REJECTED) is
 * <em>reverted</em>: L's snapshot is published again (REVERTED), which stage-1 readers take, and E is never used again.
 * No barrier is needed: stage 1 reads P and writes P as well, so a participant still in it and one back on L are safe
 * together, as are a participant still in it and any later change planned from P.
 */
public final class Transitions {
  private static final Logger LOG = LoggerFactory.getLogger(Transitions.class);

  /** One cluster's staged epoch. */
  static final class Transition {
    final EpochRecord staged; // the STAGED record of stage 1: the plan, its ring and the previous one
    final byte[] checksum;
    int stage; // the last stage published: 1, 2, or 3 once FINAL is published
    boolean converged1;
    String abandoned; // why it is reverted, while the revert is not written yet
    long stagedAtMillis;
    long stage2AtMillis;
    long finalAtMillis;

    Transition(EpochRecord staged) {
      this.staged = staged;
      this.checksum = AvroBytes.toArray(staged.getTargetChecksum());
      this.stage = 1;
    }

    long epoch() {
      return staged.getEpoch();
    }

    int planVersion() {
      return staged.getPlanVersion() == null ? 0 : staged.getPlanVersion();
    }
  }

  /** A record to write that answers no queued record: CONVERGED, or REVERTED with the snapshot published again. */
  public record Housekeeping(EpochRecord record, PublishedSnapshot snapshot) {
    public Housekeeping {
      Objects.requireNonNull(record, "record");
    }
  }

  private final Map<String, Transition> byCluster = new HashMap<>();
  /** Epochs published FINAL after stages whose participants have not all reached FINAL yet. */
  private final Map<String, List<Transition>> finals = new HashMap<>();
  /** Reverted epochs that a live participant may still route by (its first stage). */
  private final Map<String, List<Long>> reverted = new HashMap<>();
  private final Map<String, Participants> participants = new HashMap<>();
  /** Per cluster, the latest plan read that is still live (not cancelled, superseded or rejected). */
  private final Map<String, EpochRecord> latestPlan = new HashMap<>();
  private final java.util.Set<String> reported = new java.util.HashSet<>();
  private final boolean enabled;

  /** @param enabled whether changes are published in stages at all (false: every change takes the fence) */
  public Transitions(boolean enabled) {
    this.enabled = enabled;
  }

  // ---- Participants --------------------------------------------------------------------------------------------

  /** A record of {@code ring.participants} (null: a tombstone), read at {@code nowMillis}. */
  public void onParticipant(String key, io.ringshift.schemas.avro.ParticipantReport report, long nowMillis) {
    if (key == null) {
      return;
    }
    if (report == null) {
      // A tombstone names no cluster but through its key, whose cluster part may itself hold a '/'.
      participants.replaceAll((cluster, ps) -> ps.with(key, null, nowMillis));
      return;
    }
    String cluster = report.getClusterId();
    participants.put(cluster, participants.getOrDefault(cluster, Participants.none(cluster))
        .with(key, report, nowMillis));
  }

  /** The participants of a cluster as read so far. */
  public Participants participants(String clusterId) {
    return participants.getOrDefault(clusterId, Participants.none(clusterId));
  }

  // ---- The log -------------------------------------------------------------------------------------------------

  /** Takes in one record of {@code ring.epochs}, in log order (after the publisher's history has). */
  public void onRecord(EpochRecord r) {
    String cluster = r.getClusterId();
    Transition t = byCluster.get(cluster);
    long epoch = r.getEpoch();
    trackPlans(r);
    switch (r.getState()) {
      case STAGED -> {
        if (r.getStage() != null && r.getStage() == 1) {
          if (t != null && t.epoch() == epoch) {
            return; // read back after it was applied
          }
          Transition fresh = new Transition(r);
          fresh.stagedAtMillis = r.getTimestampMillis();
          byCluster.put(cluster, fresh);
        } else if (t != null && t.epoch() == epoch && r.getStage() != null && r.getStage() > t.stage) {
          t.stage = r.getStage();
          t.stage2AtMillis = r.getTimestampMillis();
        }
      }
      case CONVERGED -> {
        if (r.getStage() == null) {
          return;
        }
        if (t != null && t.epoch() == epoch) {
          t.converged1 = true;
        }
        if (r.getStage() >= TransitionStage.FINAL.order()) {
          List<Transition> waiting = finals.get(cluster);
          if (waiting != null) {
            waiting.removeIf(f -> f.epoch() == epoch);
            if (waiting.isEmpty()) {
              finals.remove(cluster);
            }
          }
        }
      }
      case PUBLISHED -> {
        if (t != null && t.epoch() == epoch && Arrays.equals(t.checksum, AvroBytes.toArray(r.getTargetChecksum()))) {
          t.stage = TransitionStage.FINAL.order();
          t.finalAtMillis = r.getTimestampMillis();
          byCluster.remove(cluster);
          finals.computeIfAbsent(cluster, c -> new ArrayList<>()).add(t);
        }
      }
      case REVERTED -> {
        if (t != null && t.epoch() == epoch) {
          byCluster.remove(cluster);
        }
        reverted.computeIfAbsent(cluster, c -> new ArrayList<>()).add(epoch);
      }
      case CANCELLED -> abandon(t, epoch, "its plan was cancelled (" + reasonOf(r) + ")");
      case SUPERSEDED -> abandon(t, epoch, "its plan was superseded (" + reasonOf(r) + ")");
      case REJECTED -> abandon(t, epoch, "it was rejected (" + reasonOf(r) + ")");
      case PLANNED -> {
        if (t != null && t.epoch() == epoch && (r.getPlanVersion() == null ? 0 : r.getPlanVersion())
            != t.planVersion()) {
          abandon(t, epoch, "plan " + r.getPlanVersion() + " of the epoch replaced the staged plan "
              + t.planVersion());
        }
      }
      case READY -> {
        if (t != null && t.epoch() == epoch
            && !Arrays.equals(t.checksum, AvroBytes.toArray(r.getTargetChecksum()))) {
          abandon(t, epoch, "a READY record of another ring (checksum " + AvroBytes.hex(r.getTargetChecksum())
              + ") came under the staged epoch's number");
        }
      }
      default -> {
        // FENCE_CUTOVER and states of newer writers.
      }
    }
  }

  private void trackPlans(EpochRecord r) {
    String cluster = r.getClusterId();
    EpochRecord latest = latestPlan.get(cluster);
    switch (r.getState()) {
      case PLANNED -> latestPlan.put(cluster, r);
      case CANCELLED, SUPERSEDED, REJECTED, REVERTED -> {
        if (latest != null && latest.getEpoch() == r.getEpoch()
            && (r.getState() != EpochState.SUPERSEDED || samePlan(latest, r))) {
          latestPlan.remove(cluster);
        }
      }
      default -> {
        // READY, PUBLISHED and the publisher's own records leave the plan as it is.
      }
    }
  }

  private static boolean samePlan(EpochRecord a, EpochRecord b) {
    return a.getEpoch() == b.getEpoch() && Objects.equals(a.getPlanVersion(), b.getPlanVersion());
  }

  private static String reasonOf(EpochRecord r) {
    return r.getReason() == null ? "no reason given" : r.getReason();
  }

  private static void abandon(Transition t, long epoch, String why) {
    if (t == null || t.epoch() != epoch || t.abandoned != null) {
      return;
    }
    if (t.stage >= TransitionStage.WRITE_BOTH_READ_NEW.order()) {
      // Never written by a correct orchestrator: after READY it holds the epoch active. Reverting now would let readers
      // of the second stage, who read the new ring, miss the writes of participants back on the old one.
      LOG.error("epoch {} of cluster {} is in stage {}, where it can no longer be reverted, but {}; it is carried on "
          + "to FINAL", epoch, t.staged.getClusterId(), t.stage, why);
      return;
    }
    t.abandoned = why;
  }

  // ---- Decisions -----------------------------------------------------------------------------------------------

  /** The cluster's staged epoch, if it has one. */
  Optional<Transition> of(String clusterId) {
    return Optional.ofNullable(byCluster.get(clusterId));
  }

  /** Whether {@code epoch} of the cluster is in stage 2 (see {@code PublisherCore.inSecondStage}). */
  public boolean inSecondStage(String clusterId, long epoch) {
    Transition t = byCluster.get(clusterId);
    return t != null && t.epoch() == epoch && t.stage == TransitionStage.WRITE_BOTH_READ_NEW.order();
  }

  /** Whether a staged epoch waits for participants to reach a stage: the publisher should look again soon. */
  public boolean waiting() {
    return !byCluster.isEmpty() || !finals.isEmpty() || !reverted.isEmpty();
  }

  /**
   * The answer to a PLANNED record: its first stage ({@link Verdict.Stage}), or FENCE_CUTOVER with the reason
   * ({@link Verdict.Note}), also when stages are turned off: the workers wait for one of the two before they fence;
   * {@link Verdict.Ignore} for a plan already abandoned or that moves nothing.
   */
  Verdict stageDecision(EpochRecord planned, EpochCheck.History history, SigningKey key, long nowMillis) {
    if (planned.getDiffSummary() == null || planned.getDiffSummary().getTasks() == 0) {
      return new Verdict.Ignore("it moves no range: nothing to fence or to stage");
    }
    EpochRecord latest = latestPlan.get(planned.getClusterId());
    if (latest == null || !samePlan(latest, planned)) {
      return new Verdict.Ignore("plan " + planned.getPlanVersion() + " of epoch " + planned.getEpoch()
          + " was replaced, cancelled or rejected before it was decided");
    }
    if (history.any() && (planned.getEpoch() <= history.lastEpoch()
        || planned.getEpoch() <= history.highestRejected())) {
      return new Verdict.Ignore("epoch " + planned.getEpoch() + " was decided already");
    }
    String reason = noStagesReason(planned, history, nowMillis);
    if (reason == null) {
      EpochCheck.RingCheck checked = EpochCheck.checkRing(planned, history, nowMillis);
      if (checked.verdict() instanceof Verdict.Reject reject) {
        // Its READY record will be rejected for it, or the orchestrator re-plans first.
        reason = "its ring fails a check the publisher makes on it: " + reject.record().getReason();
      } else if (checked.verdict() != null) {
        reason = "its epoch is already published";
      } else {
        RingSnapshot previous = history.lastPublishedRing().get();
        PublishedSnapshot first = PublishedSnapshot.transition(checked.ring(), previous,
            TransitionStage.WRITE_BOTH_READ_OLD).signedBy(key);
        return new Verdict.Stage(first, stagedRecord(planned, first, history.lastPublished(), nowMillis), true);
      }
    }
    boolean inPlace = history.any() && Cutover.repairsInPlace(planned, history.lastPublished());
    EpochRecord note = EpochRecord.newBuilder(planned).setState(EpochState.FENCE_CUTOVER)
        .setReason((inPlace ? Cutover.IN_PLACE_NOTE : Cutover.FENCE_NOTE) + reason).setSignature(null)
        .setSigningKeyId(null).setTimestampMillis(nowMillis).build();
    return new Verdict.Note(note);
  }

  /** Why a planned change is not published in stages, or null when it is. */
  private String noStagesReason(EpochRecord planned, EpochCheck.History history, long nowMillis) {
    if (!enabled) {
      return "transition stages are turned off in this publisher";
    }
    Transition t = byCluster.get(planned.getClusterId());
    if (t != null) {
      return t.epoch() == planned.getEpoch() ? "an earlier plan of epoch " + t.epoch() + " was staged and is reverted"
          : "epoch " + t.epoch() + " is still in transition";
    }
    return Cutover.fenceReason(planned, planned.getCause() == null ? null : planned.getCause().getAction(),
        planned.getDiffSummary() == null ? 0 : planned.getDiffSummary().getTasks(),
        history.any() ? history.lastPublished() : null, participants(planned.getClusterId()), nowMillis)
        .orElse(null);
  }

  private static EpochRecord stagedRecord(EpochRecord plan, PublishedSnapshot snapshot, EpochRecord previous,
      long nowMillis) {
    return EpochRecord.newBuilder(plan).setState(EpochState.STAGED).setStage(snapshot.stage().order())
        .setSignature(ByteBuffer.wrap(snapshot.signature())).setSigningKeyId(snapshot.signingKeyId())
        .setPreviousEpoch(previous.getEpoch()).setPreviousMembers(previous.getMembers()).setReason(null)
        .setTimestampMillis(nowMillis).build();
  }

  /**
   * The decision on a READY record of a staged epoch, given {@code checked}, what the checks say of it as for an
   * epoch without stages: in stage 1, the second stage once every live participant has reached the first; in stage
   * 2, {@code checked} itself (FINAL) once every live participant has reached the second, else {@link Verdict.Hold}.
   * A READY of an epoch that is not staged gets {@code checked} unchanged.
   */
  Verdict onReady(EpochRecord ready, Verdict checked, SigningKey key, long nowMillis) {
    Transition t = byCluster.get(ready.getClusterId());
    Verdict behind = behindAFinalBarrier(ready, checked, nowMillis);
    if (behind != null) {
      return behind;
    }
    if (t == null || t.epoch() != ready.getEpoch() || t.abandoned != null
        || !Arrays.equals(t.checksum, AvroBytes.toArray(ready.getTargetChecksum()))) {
      return checked;
    }
    Participants ps = participants(ready.getClusterId());
    if (t.stage == TransitionStage.WRITE_BOTH_READ_OLD.order()) {
      if (!(checked instanceof Verdict.Publish publish)) {
        return checked; // not yet, or rejected: a rejection reverts the stage
      }
      if (!t.converged1) {
        // The workers fence and verify only after CONVERGED 1, so a READY before it comes from a plan whose tasks
        // were verified some other way (a fence asked for before the stage was published). Wait for the barrier all
        // the same: the second stage must not meet a participant still routing by the previous epoch.
        return new Verdict.NotYet(new Verdict.Reject(Check.TASKS, EpochRecord.newBuilder(ready)
            .setState(EpochState.REJECTED).setReason("TASKS: the participants did not all reach the first stage of "
                + "epoch " + t.epoch() + ": " + stragglers(ps, t.epoch(), TransitionStage.WRITE_BOTH_READ_OLD,
                    nowMillis)).setTimestampMillis(nowMillis).build()));
      }
      PublishedSnapshot second = PublishedSnapshot.transition(publish.snapshot().ring(),
          previousRing(t), TransitionStage.WRITE_BOTH_READ_NEW).signedBy(key);
      EpochRecord record = EpochRecord.newBuilder(t.staged).setStage(second.stage().order())
          .setSignature(ByteBuffer.wrap(second.signature())).setSigningKeyId(second.signingKeyId())
          .setDiffSummary(ready.getDiffSummary()).setTimestampMillis(nowMillis).build();
      return new Verdict.Stage(second, record, false);
    }
    if (t.stage == TransitionStage.WRITE_BOTH_READ_NEW.order()) {
      if (!ps.allReached(t.epoch(), TransitionStage.WRITE_BOTH_READ_NEW, nowMillis)) {
        return new Verdict.Hold("waits for every live participant to reach stage WRITE_BOTH_READ_NEW of epoch "
            + t.epoch() + ": " + stragglers(ps, t.epoch(), TransitionStage.WRITE_BOTH_READ_NEW, nowMillis));
      }
      if (checked instanceof Verdict.Publish) {
        return checked;
      }
      LOG.error("epoch {} of cluster {} is in stage WRITE_BOTH_READ_NEW, but its READY record no longer passes: {}; "
          + "it holds there until it does", t.epoch(), ready.getClusterId(), checked);
      return new Verdict.Hold("in stage WRITE_BOTH_READ_NEW, its READY record no longer passes: " + checked);
    }
    return checked;
  }

  /**
   * A later epoch published FINAL without stages (at its fence, or a failure at once) must wait until every live
   * participant routes by the FINAL ring of a staged epoch before it: a participant still in that epoch's second stage
   * reads its new ring, which the later epoch's writers may no longer write. That includes a failure epoch: a node
   * declared failed may still answer reads. The wait is short (the participants swap to FINAL as they read it) and
   * bounded by the lease of one that stops reporting. Null when it need not wait.
   */
  private Verdict behindAFinalBarrier(EpochRecord ready, Verdict checked, long nowMillis) {
    if (!(checked instanceof Verdict.Publish)) {
      return null;
    }
    Participants ps = participants(ready.getClusterId());
    List<Long> revertedEpochs = reverted.get(ready.getClusterId());
    if (revertedEpochs != null) {
      for (long e : List.copyOf(revertedEpochs)) {
        List<Participants.Participant> still = inRevertedEpoch(ps, e, nowMillis);
        if (!still.isEmpty()) {
          return new Verdict.Hold("waits for every live participant to leave the first stage of the reverted epoch "
              + e + " before a change published without stages: " + still.size() + " still in it: "
              + still.stream().limit(EpochCheck.NAMED).map(Object::toString).toList());
        }
        revertedEpochs.remove(e);
      }
      if (revertedEpochs.isEmpty()) {
        reverted.remove(ready.getClusterId());
      }
    }
    List<Transition> waiting = finals.get(ready.getClusterId());
    if (waiting == null) {
      return null;
    }
    for (Transition f : waiting) {
      if (f.epoch() < ready.getEpoch()) {
        if (!ps.allReached(f.epoch(), TransitionStage.FINAL, nowMillis)) {
          return new Verdict.Hold("waits for every live participant to reach FINAL of the staged epoch " + f.epoch()
              + " before a change cut over at its fence: " + stragglers(ps, f.epoch(), TransitionStage.FINAL,
                  nowMillis));
        }
      }
    }
    return null;
  }

  /** The live participants that still route by a stage of the reverted epoch {@code epoch}. */
  private static List<Participants.Participant> inRevertedEpoch(Participants ps, long epoch, long nowMillis) {
    return ps.live(nowMillis).stream().filter(p -> p.epoch() == epoch).toList();
  }

  private static RingSnapshot previousRing(Transition t) {
    return EpochRecords.rebuildPrevious(t.staged);
  }

  /** The records to write that answer no queued record, in order: reverts first, then barriers reached. */
  List<Housekeeping> housekeeping(Function<String, EpochCheck.History> histories, long nowMillis) {
    List<Housekeeping> out = new ArrayList<>();
    for (Transition t : List.copyOf(byCluster.values())) {
      String cluster = t.staged.getClusterId();
      Participants ps = participants(cluster);
      if (t.abandoned != null) {
        EpochCheck.History history = histories.apply(cluster);
        EpochRecord last = history.lastPublished();
        if (last == null || last.getEpoch() != t.staged.getPreviousEpoch()) {
          LOG.error("cannot revert epoch {} of cluster {}: the last published epoch is {}, not {}", t.epoch(), cluster,
              last == null ? "none" : last.getEpoch(), t.staged.getPreviousEpoch());
          continue;
        }
        PublishedSnapshot again = republished(last, history.lastPublishedRing().get());
        EpochRecord reverted = EpochRecord.newBuilder(t.staged).setState(EpochState.REVERTED)
            .setStage(null).setSignature(null).setSigningKeyId(null).setPreviousMembers(List.of())
            .setReason("the staged plan of epoch " + t.epoch() + " is reverted because " + t.abandoned
                + "; the snapshot of epoch " + last.getEpoch() + " is published again and epoch " + t.epoch()
                + " is never used again")
            .setTimestampMillis(nowMillis).build();
        out.add(new Housekeeping(reverted, again));
        continue;
      }
      if (t.stage == 1 && !t.converged1
          && ps.allReached(t.epoch(), TransitionStage.WRITE_BOTH_READ_OLD, nowMillis)) {
        out.add(new Housekeeping(converged(t, TransitionStage.WRITE_BOTH_READ_OLD, ps, nowMillis), null));
      }
    }
    for (List<Transition> waiting : finals.values()) {
      for (Transition t : waiting) {
        Participants ps = participants(t.staged.getClusterId());
        if (ps.allReached(t.epoch(), TransitionStage.FINAL, nowMillis)) {
          out.add(new Housekeeping(converged(t, TransitionStage.FINAL, ps, nowMillis), null));
        }
      }
    }
    return out;
  }

  private static EpochRecord converged(Transition t, TransitionStage stage, Participants ps, long nowMillis) {
    long since = stage == TransitionStage.FINAL ? t.finalAtMillis : t.stagedAtMillis;
    return EpochRecord.newBuilder(t.staged).setState(EpochState.CONVERGED).setStage(stage.order())
        .setSignature(null).setSigningKeyId(null).setPreviousMembers(List.of())
        .setReason(String.format("every live participant (%d of %d with a report) routes by stage %s of epoch %d, "
            + "%d ms after it was published", ps.live(nowMillis).size(), ps.all().size(), stage, t.epoch(),
            Math.max(0, nowMillis - since)))
        .setTimestampMillis(nowMillis).build();
  }

  /** The last published snapshot again, byte for byte (Ed25519 signatures are deterministic; it keeps its own). */
  private static PublishedSnapshot republished(EpochRecord last, RingSnapshot ring) {
    try {
      return PublishedSnapshot.unsigned(ring, AvroBytes.toArray(last.getPreviousChecksum()),
          RingSnapshotCodec.fromAvro(last.getFilling()))
          .withSignature(AvroBytes.toArray(last.getSignature()), last.getSigningKeyId());
    } catch (CodecException e) {
      throw new IllegalStateException("the last published epoch " + last.getEpoch() + " does not rebuild", e);
    }
  }

  /**
   * Per cluster with a staged epoch (or one published FINAL whose participants have not all reached it), how many live
   * participants the next barrier waits for; clusters whose last transition ended are reported once more with 0.
   */
  public Map<String, Integer> stragglerCounts(long nowMillis) {
    Map<String, Integer> out = new HashMap<>();
    for (String cluster : reported) {
      out.put(cluster, 0);
    }
    reported.clear();
    for (Transition t : byCluster.values()) {
      TransitionStage next = t.stage == 1 && !t.converged1 ? TransitionStage.WRITE_BOTH_READ_OLD
          : TransitionStage.WRITE_BOTH_READ_NEW;
      count(out, t, next, nowMillis);
    }
    for (List<Transition> waiting : finals.values()) {
      waiting.forEach(t -> count(out, t, TransitionStage.FINAL, nowMillis));
    }
    reverted.forEach((cluster, epochs) -> {
      for (long e : epochs) {
        out.merge(cluster, inRevertedEpoch(participants(cluster), e, nowMillis).size(), Math::max);
        reported.add(cluster);
      }
    });
    return out;
  }

  private void count(Map<String, Integer> out, Transition t, TransitionStage stage, long nowMillis) {
    String cluster = t.staged.getClusterId();
    int n = participants(cluster).stragglers(t.epoch(), stage, nowMillis).size();
    out.merge(cluster, n, Math::max);
    reported.add(cluster);
  }

  /** Who a barrier waits for, named. */
  static String stragglers(Participants ps, long epoch, TransitionStage stage, long nowMillis) {
    List<Participants.Participant> behind = ps.stragglers(epoch, stage, nowMillis);
    if (behind.isEmpty()) {
      return "none";
    }
    return behind.size() + " behind: " + behind.stream().limit(EpochCheck.NAMED).map(Object::toString).toList()
        + (behind.size() > EpochCheck.NAMED ? " and " + (behind.size() - EpochCheck.NAMED) + " more" : "");
  }
}
