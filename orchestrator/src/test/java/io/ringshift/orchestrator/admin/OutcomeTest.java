package io.ringshift.orchestrator.admin;

import static org.assertj.core.api.Assertions.assertThat;

import io.ringshift.orchestrator.MembershipChange;
import io.ringshift.orchestrator.internal.ClusterAggregate;
import io.ringshift.protocol.RecordSerdes;
import io.ringshift.ring.RingSnapshot;
import io.ringshift.schemas.avro.RejectedEvent;
import java.nio.ByteBuffer;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.junit.jupiter.api.Test;

/**
 * What {@code --wait} reports for a request. A FAIL of a node whose JOIN was still queued withdraws the JOIN and
 * plans nothing: it used to get no outcome at all (the wait ran out), though the JOIN's rejection names it.
 */
class OutcomeTest {
  @Test
  void shouldReportTheJoinAFailWithdrewAsTheFailsOutcome() {
    var builder = RingSnapshot.builder().clusterId("c1").epoch(1).vnodes(16).replicas(3);
    for (int i = 0; i < 6; i++) {
      builder.addMember("node-0" + i, "az-" + (i % 3 + 1));
    }
    ClusterAggregate state = ClusterAggregate.uninitialised().init(builder.build(), null).next();
    state = state.onChange(new MembershipChange(MembershipChange.Action.JOIN, "node-06", "az-1", null, "join-1"),
        1L << 30).next();
    state = state.onChange(new MembershipChange(MembershipChange.Action.JOIN, "node-07", "az-2", null, "join-2"),
        1L << 30).next(); // queued behind epoch 2
    var withdraw = state.onChange(new MembershipChange(MembershipChange.Action.FAIL, "node-07", null, null, "fail-1"),
        1L << 30);
    String reason = ((ClusterAggregate.Rejection) withdraw.effects().get(0)).reason();

    RejectedEvent rejected = RejectedEvent.newBuilder().setSourceTopic("ring.membership").setSourcePartition(-1)
        .setSourceOffset(-1).setKey("c1/node-07").setValue(ByteBuffer.wrap(new byte[0])).setReason(reason)
        .setClusterId("c1").setRequestId("join-2").setTimestampMillis(0).build();
    ConsumerRecord<byte[], byte[]> record = new ConsumerRecord<>("ring.rejected", 0, 0L, new byte[0],
        RecordSerdes.rejectedEvent().serialize(rejected));

    assertThat(ControlPlaneAdmin.outcomeOf(record, "fail-1", "ring.epochs"))
        .isInstanceOfSatisfying(ControlPlaneAdmin.Withdrew.class, w -> assertThat(w.join().getRequestId())
            .isEqualTo("join-2"));
    assertThat(ControlPlaneAdmin.outcomeOf(record, "join-2", "ring.epochs"))
        .isInstanceOf(ControlPlaneAdmin.Rejected.class);
    assertThat(ControlPlaneAdmin.outcomeOf(record, "fail-11", "ring.epochs")).as("another request").isNull();
  }
}
