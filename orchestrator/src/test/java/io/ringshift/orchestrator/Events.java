package io.ringshift.orchestrator;

import io.ringshift.protocol.RecordKeys;
import io.ringshift.protocol.RecordSerdes;
import io.ringshift.schemas.avro.MemberSpec;
import io.ringshift.schemas.avro.MemberSpecState;
import io.ringshift.schemas.avro.MembershipAction;
import io.ringshift.schemas.avro.MembershipEvent;
import io.ringshift.schemas.avro.TaskState;
import io.ringshift.schemas.avro.TaskStatus;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

/** Builds the records the tests feed the orchestrator. */
final class Events {
  private static final AtomicLong REQUESTS = new AtomicLong();

  private Events() {}

  static List<MemberSpec> members(int count) {
    List<MemberSpec> members = new ArrayList<>();
    for (int i = 0; i < count; i++) {
      members.add(new MemberSpec(String.format("node-%02d", i), "az-" + (i % 3 + 1), 1.0, MemberSpecState.ACTIVE, java.util.List.of()));
    }
    return members;
  }

  static MembershipEvent init(String cluster, int nodes, int vnodes) {
    return MembershipEvent.newBuilder()
        .setClusterId(cluster)
        .setNodeId("")
        .setAction(MembershipAction.INIT)
        .setRequestId("req-" + REQUESTS.incrementAndGet())
        .setRequestedBy("test")
        .setTimestampMillis(0)
        .setInitialMembers(members(nodes))
        .setVnodes(vnodes)
        .setReplicas(3)
        .build();
  }

  static MembershipEvent change(String cluster, MembershipAction action, String node, String zone, Double weight) {
    return MembershipEvent.newBuilder()
        .setClusterId(cluster)
        .setNodeId(node)
        .setAction(action)
        .setZone(zone)
        .setWeight(weight)
        .setRequestId("req-" + REQUESTS.incrementAndGet())
        .setRequestedBy("test")
        .setTimestampMillis(0)
        .build();
  }

  static MembershipEvent cancel(String cluster, String node, long epoch) {
    MembershipEvent e = change(cluster, MembershipAction.CANCEL, node, null, null);
    e.setEpoch(epoch);
    return e;
  }

  static byte[] key(MembershipEvent e) {
    return RecordKeys.membershipKey(e).getBytes(StandardCharsets.UTF_8);
  }

  static byte[] bytes(MembershipEvent e) {
    return RecordSerdes.membershipEvent().serialize(e);
  }

  static TaskStatus verified(String cluster, long epoch, String taskId) {
    return TaskStatus.newBuilder()
        .setTaskId(taskId)
        .setClusterId(cluster)
        .setEpoch(epoch)
        .setState(TaskState.VERIFIED)
        .setCopiedBytes(0)
        .setTimestampMillis(0)
        .build();
  }
}
