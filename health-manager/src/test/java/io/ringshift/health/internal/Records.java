package io.ringshift.health.internal;

import io.ringshift.schemas.avro.EpochRecord;
import io.ringshift.schemas.avro.EpochState;
import io.ringshift.schemas.avro.MemberSpec;
import io.ringshift.schemas.avro.MemberSpecState;
import io.ringshift.schemas.avro.MembershipAction;
import io.ringshift.schemas.avro.MembershipEvent;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.List;

/** Epoch records and membership events as the orchestrator and the CLI write them, for the view's tests. */
final class Records {
  static final String CLUSTER = "c1";

  private Records() {}

  static EpochRecord epoch(long epoch, EpochState state, MembershipAction cause, String causeNode,
      String... members) {
    return EpochRecord.newBuilder()
        .setClusterId(CLUSTER).setEpoch(epoch).setState(state)
        .setCause(event(cause, causeNode, "cause-" + epoch))
        .setMembers(Arrays.stream(members).map(id -> new MemberSpec(id, "az-1", 1.0, MemberSpecState.ACTIVE, java.util.List.of()))
            .toList())
        .setVnodes(16).setReplicas(3).setHashId("xxh3-64/seed=0/utf-8").setPolicyId("vnode-ring/zone-aware-walk/v1")
        .setMembershipDigest(ByteBuffer.wrap(new byte[32])).setTargetChecksum(ByteBuffer.wrap(new byte[32]))
        .setPlanVersion(0).setTimestampMillis(0).setFilling(List.of()).setPreviousMembers(List.of())
        .build();
  }

  static MembershipEvent event(MembershipAction action, String node, String requestId) {
    return MembershipEvent.newBuilder()
        .setClusterId(CLUSTER).setNodeId(node).setAction(action).setZone(action == MembershipAction.JOIN ? "az-1" : null)
        .setRequestId(requestId).setRequestedBy("test").setTimestampMillis(0)
        .build();
  }
}
