package io.ringshift.cli.internal.control;

import static org.assertj.core.api.Assertions.assertThat;

import io.ringshift.protocol.RecordSerdes;
import io.ringshift.schemas.avro.ParticipantKind;
import io.ringshift.schemas.avro.ParticipantReport;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class ParticipantsSectionTest {
  private static final long NOW = 1_767_225_600_000L;

  private static byte[] report(String id, ParticipantKind kind, long epoch, int stage, long reportedAt,
      boolean stages) {
    return RecordSerdes.participantReport().serialize(ParticipantReport.newBuilder().setClusterId("c1")
        .setParticipantId(id).setKind(kind).setEpoch(epoch).setStage(stage).setChecksum(null)
        .setStagesSupported(stages).setLeaseMillis(10_000).setReportedAtMillis(reportedAt)
        .setUnversionedWritesAtMillis(null).build());
  }

  @Test
  void shouldShowWhoIsLiveWhoIsBehindAndWhyTheClusterKeepsTheFence() {
    Map<String, byte[]> values = new LinkedHashMap<>();
    values.put("c1/web-1", report("web-1", ParticipantKind.CLIENT, 8, 1, NOW - 1_000, true));
    values.put("c1/web-2", report("web-2", ParticipantKind.CLIENT, 7, 3, NOW - 2_000, true));
    values.put("c1/node/n1", report("node/n1", ParticipantKind.NODE, 8, 2, NOW - 1_000, true));
    values.put("c1/web-3", report("web-3", ParticipantKind.CLIENT, 6, 3, NOW - 60_000, true));
    values.put("c2/web-9", report("web-9", ParticipantKind.CLIENT, 9, 3, NOW, true));

    assertThat(ParticipantsSection.lines("c1", values, NOW)).containsExactly(
        "participants 3 live (2 clients, 1 node), 1 lapsed; newest route: epoch 8 in stage WRITE_BOTH_READ_NEW",
        "  behind   2: web-2 at epoch 7 FINAL, web-1 at epoch 8 WRITE_BOTH_READ_OLD");
    ParticipantsSection.ParticipantsJson json = ParticipantsSection.json("c1", values, NOW);
    assertThat(json.live()).isEqualTo(3);
    assertThat(json.lapsed()).isEqualTo(1);
    assertThat(json.newestStage()).isEqualTo("WRITE_BOTH_READ_NEW");
    assertThat(json.behind()).extracting(ParticipantsSection.ParticipantJson::id).containsExactly("web-2", "web-1");
    assertThat(json.fenceOnlyReason()).isNull();

    values.put("c1/old-app", report("old-app", ParticipantKind.CLIENT, 8, 3, NOW, false));
    assertThat(ParticipantsSection.lines("c1", values, NOW)).last()
        .isEqualTo("  fence    changes take the fence at cutover: participant old-app does not route by transition "
            + "stages");
    assertThat(ParticipantsSection.lines("c1", Map.of(), NOW)).isEqualTo(List.of());
  }
}
