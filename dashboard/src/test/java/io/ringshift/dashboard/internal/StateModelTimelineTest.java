package io.ringshift.dashboard.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.ringshift.protocol.RecordSerdes;
import io.ringshift.schemas.avro.EpochRecord;
import io.ringshift.schemas.avro.EpochState;
import io.ringshift.schemas.avro.MembershipAction;
import io.ringshift.schemas.avro.MembershipEvent;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class StateModelTimelineTest {
  /** As the dashboard reads them: decoded from ring.epochs (the serde also installs Avro's trust in our classes). */
  private static EpochRecord record(long epoch, EpochState state, Integer stage, long millis) {
    var serde = RecordSerdes.epochRecord();
    return serde.deserialize(serde.serialize(EpochRecord.newBuilder()
        .setClusterId("c1").setEpoch(epoch).setState(state).setStage(stage)
        .setCause(MembershipEvent.newBuilder().setClusterId("c1").setNodeId("node-4")
            .setAction(MembershipAction.JOIN).setZone("az-1").setRequestId("r").setRequestedBy("test")
            .setTimestampMillis(0).build())
        .setMembers(List.of()).setVnodes(1).setReplicas(1).setHashId("h").setPolicyId("p")
        .setMembershipDigest(ByteBuffer.allocate(32)).setTargetChecksum(ByteBuffer.allocate(32))
        .setTimestampMillis(millis)
        .build()));
  }

  @Test
  void shouldKeepAStagedEpochsOutcomeWhenItsLastBarrierComesAfterItsPublication() {
    List<EpochRecord> history = new ArrayList<>();
    history.add(record(2, EpochState.PLANNED, null, 1_000));
    history.add(record(2, EpochState.STAGED, 1, 1_100));
    history.add(record(2, EpochState.CONVERGED, 1, 1_500));
    Map<String, Object> inStageOne = StateModel.timeline(history).get(0);
    assertThat(inStageOne.get("last")).isEqualTo("STAGED");

    history.add(record(2, EpochState.READY, null, 5_000));
    history.add(record(2, EpochState.STAGED, 2, 5_100));
    history.add(record(2, EpochState.CONVERGED, 2, 5_400));
    history.add(record(2, EpochState.PUBLISHED, null, 5_500));
    history.add(record(2, EpochState.CONVERGED, 3, 5_900));
    history.add(record(3, EpochState.PLANNED, null, 6_000));
    history.add(record(3, EpochState.FENCE_CUTOVER, null, 6_010));
    List<Map<String, Object>> rows = StateModel.timeline(history);

    assertThat(rows).extracting(r -> r.get("epoch") + " " + r.get("last")).containsExactly("2 PUBLISHED",
        "3 PLANNED");
    @SuppressWarnings("unchecked")
    List<Map<String, Object>> states = (List<Map<String, Object>>) rows.get(0).get("states");
    assertThat(states).extracting(s -> s.get("state")).containsExactly("PLANNED", "STAGED", "CONVERGED", "READY",
        "STAGED", "CONVERGED", "PUBLISHED", "CONVERGED");
  }
}
