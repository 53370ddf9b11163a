package io.ringshift.publisher;

import static org.assertj.core.api.Assertions.assertThat;

import io.ringshift.protocol.PublishedSnapshot;
import io.ringshift.protocol.RingSnapshotCodec;
import io.ringshift.protocol.SigningKey;
import io.ringshift.protocol.TransitionStage;
import io.ringshift.protocol.TrustedKeys;
import io.ringshift.publisher.ClusterScript.Step;
import io.ringshift.schemas.avro.EpochRecord;
import io.ringshift.schemas.avro.EpochState;
import io.ringshift.schemas.avro.ParticipantKind;
import io.ringshift.schemas.avro.ParticipantReport;
import io.ringshift.schemas.avro.RangeCopyTask;
import io.ringshift.schemas.avro.TaskStatus;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Transition stages in the publisher's core (docs/protocol.md, "Transition stages"): the first stage at plan time,
 * the barriers, the second stage at READY, FINAL, the convergence records, the fallback to the fence and the revert of
 * an abandoned first stage, each decision fed back as the session reads its own records.
 */
class PublisherCoreStagesTest {
  private static final SigningKey KEY = SigningKey.generate();
  private static final long LEASE = 10_000;
  private static final RingSnapshotCodec CODEC = new RingSnapshotCodec();

  private final ClusterScript script = new ClusterScript("eu-west/cache");
  private PublisherCore core = new PublisherCore(KEY, TrustedKeys.of(KEY.publicKey()), Duration.ofSeconds(15), true);
  private final List<PublisherCore.Decision> written = new ArrayList<>();
  private long now = 1_700_000_000_000L;

  @Test
  void shouldPublishAJoinInStagesAsTheParticipantsFollow() {
    Step init = script.init(6);
    publishAtOnce(init);
    report("client-1", 1, TransitionStage.FINAL);
    report("node/node-01", 1, TransitionStage.FINAL);
    Step join = script.join("node-07", "az-1");

    read(join.planned());
    decide();
    PublishedSnapshot first = lastSnapshot();
    assertThat(first.stage()).isEqualTo(TransitionStage.WRITE_BOTH_READ_OLD);
    assertThat(first.epoch()).isEqualTo(2);
    assertThat(first.previous().checksum()).isEqualTo(init.ring().checksum());
    TrustedKeys.of(KEY.publicKey()).verify(first);
    assertThat(lastRecord().getState()).isEqualTo(EpochState.STAGED);
    assertThat(lastRecord().getPreviousEpoch()).isEqualTo(1L);

    decide();
    assertThat(written).as("no barrier is reached while the participants route by epoch 1").hasSize(2);

    report("client-1", 2, TransitionStage.WRITE_BOTH_READ_OLD);
    decide();
    assertThat(written).hasSize(2);
    report("node/node-01", 2, TransitionStage.WRITE_BOTH_READ_OLD);
    decide();
    assertThat(lastRecord().getState()).isEqualTo(EpochState.CONVERGED);
    assertThat(lastRecord().getStage()).isEqualTo(1);

    verify(join);
    read(join.ready());
    decide();
    PublishedSnapshot second = lastSnapshot();
    assertThat(second.stage()).isEqualTo(TransitionStage.WRITE_BOTH_READ_NEW);
    assertThat(second.checksum()).isEqualTo(join.ring().checksum());
    int afterSecond = written.size();

    decide();
    assertThat(written).as("FINAL waits for every live participant to reach the second stage").hasSize(afterSecond);
    report("client-1", 2, TransitionStage.WRITE_BOTH_READ_NEW);
    report("node/node-01", 2, TransitionStage.WRITE_BOTH_READ_NEW);
    decide();
    assertThat(written.get(afterSecond)).isInstanceOf(PublisherCore.Publish.class);
    PublishedSnapshot last = lastSnapshot();
    assertThat(last.stage()).isEqualTo(TransitionStage.FINAL);
    assertThat(last.follows(publishedOf(init))).isTrue();
    assertThat(core.lastPublished(script.cluster())).isEqualTo(2);

    report("client-1", 2, TransitionStage.FINAL);
    decide();
    assertThat(lastRecord().getState()).as("one participant is still in the second stage").isNotEqualTo(
        EpochState.CONVERGED);
    report("node/node-01", 2, TransitionStage.FINAL);
    decide();
    assertThat(lastRecord().getState()).isEqualTo(EpochState.CONVERGED);
    assertThat(lastRecord().getStage()).isEqualTo(3);
    assertThat(core.inTransition()).isFalse();
  }

  @Test
  void shouldNotWaitForAParticipantWhoseLeaseLapsed() {
    publishAtOnce(script.init(6));
    report("client-1", 1, TransitionStage.FINAL);
    read(script.join("node-07", "az-1").planned());
    decide();
    decide();
    assertThat(lastRecord().getState()).isEqualTo(EpochState.STAGED);

    now += LEASE + 2_000 + LEASE / 100 + 1;
    decide();

    assertThat(lastRecord().getState()).isEqualTo(EpochState.CONVERGED);
  }

  @Test
  void shouldCutOverAtTheFenceWhenAParticipantDoesNotRouteByStages() {
    publishAtOnce(script.init(6));
    core.onParticipant(script.cluster() + "/old-client", ParticipantReport.newBuilder(report("old-client", 1,
        TransitionStage.FINAL, false)).setStagesSupported(false).build(), now);
    Step join = script.join("node-07", "az-1");

    read(join.planned());
    decide();

    assertThat(written.get(written.size() - 1)).isInstanceOf(PublisherCore.Note.class);
    assertThat(lastRecord().getState()).isEqualTo(EpochState.FENCE_CUTOVER);
    assertThat(lastRecord().getReason()).contains("old-client does not route by transition stages");
    verify(join);
    read(join.ready());
    decide();
    assertThat(written.get(written.size() - 1)).isInstanceOf(PublisherCore.Publish.class);
    assertThat(lastSnapshot().stage()).isEqualTo(TransitionStage.FINAL);
  }

  /**
   * With stages turned off the publisher still answers a plan that moves ranges, with FENCE_CUTOVER and the reason:
   * the workers wait for a decision before they fence (docs/worker.md, "The fence waits for stage 1").
   */
  @Test
  void shouldDecideAtTheFenceWhenStagesAreTurnedOff() {
    core = new PublisherCore(KEY, TrustedKeys.of(KEY.publicKey()), Duration.ofSeconds(15), false);
    publishAtOnce(script.init(6));
    Step join = script.join("node-07", "az-1");

    read(join.planned());
    decide();

    assertThat(written.get(written.size() - 1)).isInstanceOf(PublisherCore.Note.class);
    assertThat(lastRecord().getState()).isEqualTo(EpochState.FENCE_CUTOVER);
    assertThat(lastRecord().getReason()).isEqualTo(
        "published at the fence, without transition stages: transition stages are turned off in this publisher");
    verify(join);
    read(join.ready());
    decide();
    assertThat(written.get(written.size() - 1)).isInstanceOf(PublisherCore.Publish.class);
    assertThat(lastSnapshot().stage()).isEqualTo(TransitionStage.FINAL);
  }

  @Test
  void shouldRevertAFirstStageWhosePlanIsCancelledAndPublishTheNextEpochAfterIt() {
    Step init = script.init(6);
    publishAtOnce(init);
    Step join = script.join("node-07", "az-1");
    read(join.planned());
    decide();
    assertThat(lastSnapshot().stage()).isEqualTo(TransitionStage.WRITE_BOTH_READ_OLD);
    PublishedSnapshot first = lastSnapshot();

    read(EpochRecord.newBuilder(join.planned()).setState(EpochState.CANCELLED).setReason("cancelled by ops")
        .build());
    decide();

    assertThat(lastRecord().getState()).isEqualTo(EpochState.REVERTED);
    assertThat(lastRecord().getReason()).contains("cancelled by ops").contains("never used again");
    byte[] again = ((PublisherCore.Stage) written.get(written.size() - 1)).snapshot();
    assertThat(again).as("the previous epoch's snapshot again, byte for byte").isEqualTo(CODEC.encode(
        publishedOf(init)));
    assertThat(CODEC.decodePublished(again).isRevertOf(first)).isTrue();

    // The orchestrator plans the change again under the next number, chained to epoch 1.
    script.rollBackTo(init, 2);
    Step again3 = script.join("node-07", "az-1");
    assertThat(again3.epoch()).isEqualTo(3);
    read(again3.planned());
    decide();
    assertThat(lastSnapshot().stage()).isEqualTo(TransitionStage.WRITE_BOTH_READ_OLD);
    assertThat(lastSnapshot().epoch()).isEqualTo(3);
    assertThat(lastSnapshot().follows(first)).as("a reader still in stage 1 of epoch 2 follows it").isTrue();
  }

  @Test
  void shouldPublishAStagedEpochWhenALaterPlanChainedToItIsCancelledWhileItWaitsForItsBarrier() {
    // Found by the simulation (seed 70689): epoch 4 is re-planned after epoch 2's rejection (3 was superseded, so
    // not every number before 4 is dead); while its second stage waits for a participant, a later plan under 5 is
    // cancelled. The sequence check then wanted an epoch above 5 and epoch 4 waited in its second stage forever.
    Step init = script.init(6);
    publishAtOnce(init);
    report("client-1", 1, TransitionStage.FINAL);
    Step rejected = script.join("node-07", "az-1");
    read(EpochRecord.newBuilder(rejected.ready()).setState(EpochState.REJECTED).setReason("forced").build());
    script.rollBackTo(init, 3);
    Step join = script.join("node-07", "az-1");
    assertThat(join.epoch()).isEqualTo(4);
    read(join.planned());
    decide();
    report("client-1", 4, TransitionStage.WRITE_BOTH_READ_OLD);
    decide();
    assertThat(lastRecord().getState()).isEqualTo(EpochState.CONVERGED);
    verify(join);
    read(join.ready());
    decide();
    assertThat(lastSnapshot().stage()).isEqualTo(TransitionStage.WRITE_BOTH_READ_NEW);

    Step later = script.drain("node-01");
    assertThat(later.epoch()).isEqualTo(5);
    read(EpochRecord.newBuilder(later.planned()).setState(EpochState.CANCELLED).setReason("cancelled by ops")
        .build());
    report("client-1", 4, TransitionStage.WRITE_BOTH_READ_NEW);
    decide();

    assertThat(lastSnapshot().stage()).isEqualTo(TransitionStage.FINAL);
    assertThat(lastSnapshot().epoch()).isEqualTo(4);
    assertThat(core.lastPublished(script.cluster())).isEqualTo(4);
  }

  @Test
  void shouldRevertAFirstStageWhoseReadyIsRejected() {
    publishAtOnce(script.init(6));
    Step join = script.join("node-07", "az-1");
    read(join.planned());
    decide();
    decide(); // no participants: the barrier is reached at once
    assertThat(lastRecord().getState()).isEqualTo(EpochState.CONVERGED);

    // A READY whose tasks are never verified: rejected once the patience is spent, then reverted.
    for (RangeCopyTask t : join.tasks()) {
      core.onTask(t.getTaskId(), t);
    }
    read(join.ready());
    decide();
    now += 16_000;
    nanos += Duration.ofSeconds(16).toNanos();
    decide();

    List<EpochState> states = written.stream().map(PublisherCoreStagesTest::recordOf).map(EpochRecord::getState)
        .toList();
    assertThat(states).containsSubsequence(EpochState.STAGED, EpochState.CONVERGED, EpochState.REJECTED,
        EpochState.REVERTED);
  }

  @Test
  void shouldRevertAFirstStageThatAFailureSupersedesAndRejectTheFailureUnderItsNumber() {
    Step init = script.init(6);
    publishAtOnce(init);
    Step join = script.join("node-07", "az-1");
    read(join.planned());
    decide();
    report("reader", 2, TransitionStage.WRITE_BOTH_READ_OLD);

    // node-03 fails while the join copies: the orchestrator supersedes the plan and makes the failure READY at once
    // under the same number. Readers saw that number with the join's ring, so it is reverted instead, the failure is
    // rejected, and the orchestrator's rollback publishes it under the next number.
    script.rollBackTo(init, 1);
    Step failure = script.fail("node-03");
    read(EpochRecord.newBuilder(join.planned()).setState(EpochState.SUPERSEDED).setReason("FAIL of node-03")
        .build());
    read(failure.ready());
    decide();

    assertThat(written).extracting(d -> recordOf(d).getState()).containsSubsequence(EpochState.STAGED,
        EpochState.REVERTED, EpochState.REJECTED);
    assertThat(lastRecord().getReason()).startsWith("SEQUENCE: a stage of epoch 2");

    script.rollBackTo(init, 2);
    Step again = script.fail("node-03");
    assertThat(again.epoch()).isEqualTo(3);
    read(again.ready());
    decide();
    assertThat(written).as("it waits while a participant still routes by the reverted first stage").last()
        .isNotInstanceOf(PublisherCore.Publish.class);
    report("reader", 1, TransitionStage.FINAL);
    decide();
    assertThat(lastSnapshot().epoch()).isEqualTo(3);
    assertThat(lastSnapshot().filling()).isNotEmpty();
  }

  @Test
  void shouldRebuildWhereATransitionStandsFromTheLog() {
    publishAtOnce(script.init(6));
    Step join = script.join("node-07", "az-1");
    read(join.planned());
    decide();
    decide();
    verify(join);
    read(join.ready());
    decide();
    assertThat(lastSnapshot().stage()).isEqualTo(TransitionStage.WRITE_BOTH_READ_NEW);

    PublisherCore restarted = new PublisherCore(KEY, TrustedKeys.of(KEY.publicKey()), Duration.ofSeconds(15), true);
    for (EpochRecord r : log) {
      restarted.onEpochRecord(r);
    }
    join.tasks().forEach(t -> restarted.onTask(t.getTaskId(), t));
    join.verified().forEach(s -> restarted.onStatus(s.getTaskId(), s));
    List<PublisherCore.Decision> out = new ArrayList<>();
    restarted.decide(nanos, now, out::add, (r, reason, p) -> { });

    assertThat(out).as("it carries the second stage on to FINAL, without publishing a stage again").isNotEmpty()
        .noneMatch(d -> d instanceof PublisherCore.Stage).first().isInstanceOf(PublisherCore.Publish.class);
    assertThat(recordOf(out.get(out.size() - 1)).getState()).as("no participant: every one reached FINAL")
        .isEqualTo(EpochState.CONVERGED);
  }

  // ---- harness ----

  private final List<EpochRecord> log = new ArrayList<>();
  private long nanos;

  private void read(EpochRecord r) {
    log.add(r);
    core.onEpochRecord(r);
  }

  private void decide() {
    int before = written.size();
    core.decide(nanos, now, written::add, (r, reason, p) -> { });
    for (PublisherCore.Decision d : written.subList(before, written.size())) {
      read(recordOf(d)); // the session reads its own records back
    }
    now += 10;
    nanos += 10_000_000L;
  }

  private void publishAtOnce(Step step) {
    if (step.planned() != null && step.epoch() > 1) {
      read(step.planned());
    }
    verify(step);
    read(step.ready());
    decide();
  }

  private void verify(Step step) {
    for (RangeCopyTask t : step.tasks()) {
      core.onTask(t.getTaskId(), t);
    }
    for (TaskStatus s : step.verified()) {
      core.onStatus(s.getTaskId(), s);
    }
  }

  private PublishedSnapshot publishedOf(Step step) {
    for (PublisherCore.Decision d : written) {
      if (d instanceof PublisherCore.Publish p && p.record().getEpoch() == step.epoch()) {
        return CODEC.decodePublished(p.snapshot());
      }
    }
    throw new AssertionError("epoch " + step.epoch() + " was not published");
  }

  private static EpochRecord recordOf(PublisherCore.Decision d) {
    if (d instanceof PublisherCore.Publish p) {
      return p.record();
    }
    if (d instanceof PublisherCore.Reject r) {
      return r.record();
    }
    if (d instanceof PublisherCore.Stage s) {
      return s.record();
    }
    return ((PublisherCore.Note) d).record();
  }

  private EpochRecord lastRecord() {
    return recordOf(written.get(written.size() - 1));
  }

  private PublishedSnapshot lastSnapshot() {
    for (int i = written.size() - 1; i >= 0; i--) {
      PublisherCore.Decision d = written.get(i);
      if (d instanceof PublisherCore.Publish p) {
        return CODEC.decodePublished(p.snapshot());
      }
      if (d instanceof PublisherCore.Stage s) {
        return CODEC.decodePublished(s.snapshot());
      }
    }
    throw new AssertionError("nothing published");
  }

  private void report(String id, long epoch, TransitionStage stage) {
    core.onParticipant(script.cluster() + "/" + id, report(id, epoch, stage, true), now);
  }

  private ParticipantReport report(String id, long epoch, TransitionStage stage, boolean stages) {
    return ParticipantReport.newBuilder().setClusterId(script.cluster()).setParticipantId(id)
        .setKind(id.startsWith("node/") ? ParticipantKind.NODE : ParticipantKind.CLIENT).setEpoch(epoch)
        .setStage(stage.order()).setChecksum(ByteBuffer.wrap(new byte[32])).setStagesSupported(stages)
        .setLeaseMillis(LEASE).setReportedAtMillis(now).setUnversionedWritesAtMillis(null).build();
  }
}
