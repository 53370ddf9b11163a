package io.ringshift.dashboard.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.ringshift.protocol.Participants;
import io.ringshift.schemas.avro.ParticipantKind;
import io.ringshift.schemas.avro.ParticipantReport;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class StateModelParticipantsTest {
  private static final long NOW = 1_767_225_600_000L;

  private static Participants.Participant participant(String id, ParticipantKind kind, long epoch, int stage,
      long seenAt) {
    return new Participants.Participant("c1/" + id, ParticipantReport.newBuilder().setClusterId("c1")
        .setParticipantId(id).setKind(kind).setEpoch(epoch).setStage(stage).setChecksum(null)
        .setStagesSupported(true).setLeaseMillis(10_000).setReportedAtMillis(seenAt)
        .setUnversionedWritesAtMillis(null).build(), seenAt);
  }

  @Test
  @SuppressWarnings("unchecked")
  void shouldListEachParticipantWithItsRouteLeaseAndWhetherItIsBehind() {
    Map<String, Object> model = StateModel.participants("c1", List.of(
        participant("app-1", ParticipantKind.CLIENT, 5, 1, NOW - 1_000),
        participant("node/n1", ParticipantKind.NODE, 5, 2, NOW - 1_000),
        participant("app-2", ParticipantKind.CLIENT, 4, 3, NOW - 60_000)), NOW);

    List<Map<String, Object>> rows = (List<Map<String, Object>>) model.get("list");
    assertThat(rows).extracting(r -> r.get("id") + " " + r.get("kind") + " " + r.get("epoch") + " "
        + r.get("stage") + " " + r.get("live") + " " + r.get("behind")).containsExactly(
        "app-1 client 5 WRITE_BOTH_READ_OLD true true",
        "app-2 client 4 FINAL false false",
        "node/n1 node 5 WRITE_BOTH_READ_NEW true false");
    assertThat(model.get("behind")).isEqualTo(1);
    assertThat(model.get("fenceOnly")).isNull();
  }
}
