package io.ringshift.protocol;

import static org.assertj.core.api.Assertions.assertThat;

import io.ringshift.schemas.avro.ParticipantKind;
import io.ringshift.schemas.avro.ParticipantReport;
import java.time.Duration;
import org.junit.jupiter.api.Test;

class ParticipantsTest {
  private static final long T0 = 1_767_225_600_000L;

  private static ParticipantReport report(String id, ParticipantKind kind, long epoch, TransitionStage stage,
      long reportedAt) {
    return ParticipantReport.newBuilder().setClusterId("c1").setParticipantId(id).setKind(kind).setEpoch(epoch)
        .setStage(stage.order()).setChecksum(null).setStagesSupported(true).setLeaseMillis(10_000)
        .setReportedAtMillis(reportedAt).setUnversionedWritesAtMillis(null).build();
  }

  @Test
  void shouldWaitForEveryLiveParticipantAndNoLapsedOne() {
    Participants p = Participants.none("c1")
        .with("c1/web-1", report("web-1", ParticipantKind.CLIENT, 7, TransitionStage.WRITE_BOTH_READ_OLD, 5), T0)
        .with("c1/web-2", report("web-2", ParticipantKind.CLIENT, 6, TransitionStage.FINAL, 5), T0)
        .with("c1/node-1", report("node-1", ParticipantKind.NODE, 7, TransitionStage.WRITE_BOTH_READ_NEW, 5), T0);

    assertThat(p.stragglers(7, TransitionStage.WRITE_BOTH_READ_OLD, T0 + 1_000))
        .extracting(Participants.Participant::id).containsExactly("web-2");
    assertThat(p.stragglers(7, TransitionStage.WRITE_BOTH_READ_NEW, T0 + 1_000))
        .extracting(Participants.Participant::id).as("furthest behind first").containsExactly("web-2", "web-1");
    assertThat(p.allReached(6, TransitionStage.FINAL, T0)).isTrue();

    long lapse = T0 + 10_000 + Participants.LAPSE_MARGIN.toMillis() + 100;
    assertThat(p.live(lapse - 1)).hasSize(3);
    assertThat(p.live(lapse)).as("leases timed on the reader's clock from when it saw them").isEmpty();
    assertThat(p.lapsed(lapse)).hasSize(3);
    assertThat(p.allReached(9, TransitionStage.FINAL, lapse)).as("a lapsed participant is not waited for").isTrue();

    Participants renewed = p.with("c1/web-2", report("web-2", ParticipantKind.CLIENT, 7,
        TransitionStage.WRITE_BOTH_READ_OLD, 99), lapse);
    assertThat(renewed.stragglers(7, TransitionStage.WRITE_BOTH_READ_OLD, lapse)).isEmpty();
    assertThat(renewed.with("c1/web-2", null, lapse).all()).as("a tombstone: it closed").hasSize(2);
  }

  @Test
  void shouldIgnoreRecordsOfAnotherClusterOrUnderAnotherKey() {
    Participants p = Participants.none("c1")
        .with("c2/web-1", report("web-1", ParticipantKind.CLIENT, 7, TransitionStage.FINAL, 5), T0)
        .with("c1/web-9", report("web-1", ParticipantKind.CLIENT, 7, TransitionStage.FINAL, 5), T0)
        .with(null, report("web-1", ParticipantKind.CLIENT, 7, TransitionStage.FINAL, 5), T0);

    assertThat(p.all()).isEmpty();
  }

  @Test
  void shouldHoldTheClusterToTheFenceForAParticipantWithoutStagesOrALegacyWriter() {
    ParticipantReport old = report("web-1", ParticipantKind.CLIENT, 7, TransitionStage.FINAL, T0);
    old.setStagesSupported(false);
    ParticipantReport node = report("node-1", ParticipantKind.NODE, 7, TransitionStage.FINAL, T0);
    node.setUnversionedWritesAtMillis(T0 - 30_000);
    Duration window = Duration.ofMinutes(10);

    assertThat(Participants.none("c1").with("c1/web-1", old, T0).fenceOnlyReason(T0, window))
        .hasValue("participant web-1 does not route by transition stages");
    assertThat(Participants.none("c1").with("c1/node-1", node, T0).fenceOnlyReason(T0, window)).get()
        .asString().contains("node node-1 took writes without a version 30 s before its last report");
    node.setUnversionedWritesAtMillis(T0 - window.toMillis());
    assertThat(Participants.none("c1").with("c1/node-1", node, T0).fenceOnlyReason(T0, window)).isEmpty();
    assertThat(Participants.none("c1").with("c1/web-1", old, T0).fenceOnlyReason(T0 + 60_000, window))
        .as("only live participants count").isEmpty();
  }
}
