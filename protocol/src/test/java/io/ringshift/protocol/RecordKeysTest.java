package io.ringshift.protocol;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.ringshift.protocol.CodecException.Reason;
import io.ringshift.schemas.avro.MembershipAction;
import io.ringshift.schemas.avro.MembershipEvent;
import io.ringshift.schemas.avro.TaskKind;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

class RecordKeysTest {
  @Test
  void shouldKeyMembershipEventsByClusterAndNode() {
    assertThat(RecordKeys.membershipKey("cache-eu", "node-0007")).isEqualTo("cache-eu/node-0007");
    assertThat(RecordKeys.initKey("cache-eu")).isEqualTo("cache-eu/");
    assertThat(RecordKeys.membershipKey(event("eu-west/cache", "node-0003", MembershipAction.DRAIN)))
        .isEqualTo("eu-west%2Fcache/node-0003");
    assertThat(RecordKeys.membershipKey(event("eu-west/cache", "", MembershipAction.INIT)))
        .as("an INIT event has the empty node id").isEqualTo(RecordKeys.initKey("eu-west/cache"));
  }

  /** Without escaping, cluster "a/b" with node "c" and cluster "a" with node "b/c" would compact each other. */
  @Test
  void shouldNeverGiveTwoClustersNodesTheSameKey() {
    List<String> clusters = List.of("a", "a/b", "a%2Fb", "a%", "a/", "%", "/");
    List<String> nodes = List.of("", "b", "c", "b/c", "/c", "%2Fc", "2Fb/c");
    Set<String> keys = new HashSet<>();
    for (String cluster : clusters) {
      for (String node : nodes) {
        assertThat(keys.add(RecordKeys.membershipKey(cluster, node)))
            .as("key of cluster \"%s\" node \"%s\" is unique", cluster, node).isTrue();
      }
    }
    assertThat(RecordKeys.membershipKey("a/b", "c")).isEqualTo("a%2Fb/c");
    assertThat(RecordKeys.membershipKey("a", "b/c")).isEqualTo("a/b/c");
    assertThat(RecordKeys.membershipKey("a%2Fb", "c")).isEqualTo("a%252Fb/c");
  }

  @Test
  void shouldBuildDeterministicTaskIdsWithUnsignedHexRanges() {
    String id = RecordKeys.taskId("eu-west/cache", 43, TaskKind.COPY, 0xF000_0000_0000_0000L, 0xFFL, "node-0007");

    assertThat(id).isEqualTo("eu-west%2Fcache/43/copy/f000000000000000-00000000000000ff/node-0007");
    assertThat(RecordKeys.taskId("eu-west/cache", 43, TaskKind.COPY, 0xF000_0000_0000_0000L, 0xFFL, "node-0007"))
        .isEqualTo(id);
    assertThat(RecordKeys.taskId("c", 0, TaskKind.REPAIR, -1L, 0L, "n/1"))
        .isEqualTo("c/0/repair/ffffffffffffffff-0000000000000000/n/1");
    assertThat(RecordKeys.taskId("c", 1, TaskKind.CLEANUP, 1, 2, "n"))
        .isNotEqualTo(RecordKeys.taskId("c", 1, TaskKind.COPY, 1, 2, "n"));
    assertThat(RecordKeys.taskId("c", 2, TaskKind.COPY, 1, 2, "n"))
        .as("the next epoch's task").isNotEqualTo(RecordKeys.taskId("c", 1, TaskKind.COPY, 1, 2, "n"));
  }

  @Test
  void shouldReadATaskIdBackIntoItsParts() {
    String id = RecordKeys.taskId("eu-west/cache", 43, TaskKind.REPAIR, 0xF000_0000_0000_0000L, 0xFFL, "rack/n-7");

    assertThat(RecordKeys.parseTaskId(id)).isEqualTo(
        new RecordKeys.TaskIdParts(43, TaskKind.REPAIR, 0xF000_0000_0000_0000L, 0xFFL, "rack/n-7"));
    assertInvalid(() -> RecordKeys.parseTaskId("c/1/copy/0-1/n"), "range \"0-1\" out of rule");
    assertInvalid(() -> RecordKeys.parseTaskId("c/x/copy/0000000000000000-0000000000000001/n"),
        "epoch \"x\" is not a number");
    assertInvalid(() -> RecordKeys.parseTaskId("c/1/move/0000000000000000-0000000000000001/n"),
        "kind \"move\" is not a task kind");
    assertInvalid(() -> RecordKeys.parseTaskId("c/1/copy"), "is not <cluster>/<epoch>/<kind>/<start>-<end>/<target>");
    assertInvalid(() -> RecordKeys.parseTaskId("c/1/copy/000000000000000g-0000000000000001/n"),
        "is not two hex tokens");
  }

  @Test
  void shouldGiveTheCleanupsOfACancelIdsOfTheirOwn() {
    String cancel = RecordKeys.cancelCleanupTaskId("eu-west/cache", 2, 3, 1, 2, "rack/n-5");

    assertThat(cancel).isEqualTo("eu-west%2Fcache/2/cleanup-cancel-3/0000000000000001-0000000000000002/rack/n-5");
    assertThat(cancel).as("the READY cleanup of epoch 2 for the same range and target")
        .isNotEqualTo(RecordKeys.taskId("eu-west/cache", 2, TaskKind.CLEANUP, 1, 2, "rack/n-5"));
    assertThat(RecordKeys.parseTaskId(cancel))
        .isEqualTo(new RecordKeys.TaskIdParts(2, TaskKind.CLEANUP, 1, 2, "rack/n-5", 3L));
    assertInvalid(() -> RecordKeys.cancelCleanupTaskId("c", 3, 3, 1, 2, "n"),
        "cancelled epoch was 3; a cancel's cleanup of epoch 3 names a later epoch, the one it cancelled");
    assertInvalid(() -> RecordKeys.parseTaskId("c/1/cleanup-cancel-x/0000000000000000-0000000000000001/n"),
        "kind \"cleanup-cancel-x\" is not a task kind");
  }

  @Test
  void rejectsValuesThatCannotFormAKey() {
    assertInvalid(() -> RecordKeys.membershipKey(" ", "n"), "clusterId was \" \"; clusterId must not be blank");
    assertInvalid(() -> RecordKeys.initKey(""), "clusterId was \"\"; clusterId must not be blank");
    assertInvalid(() -> RecordKeys.taskId("c", -1, TaskKind.COPY, 0, 1, "n"),
        "epoch was -1; a task's epoch must be >= 0");
    assertInvalid(() -> RecordKeys.taskId("c", 1, TaskKind.UNKNOWN, 0, 1, "n"), "task kind was UNKNOWN");
    assertInvalid(() -> RecordKeys.taskId("c", 1, TaskKind.COPY, 0, 1, ""),
        "target was \"\"; a task's target must not be blank");
    assertThatThrownBy(() -> RecordKeys.membershipKey(null, "n")).isInstanceOf(NullPointerException.class)
        .hasMessage("clusterId");
  }

  private static MembershipEvent event(String clusterId, String nodeId, MembershipAction action) {
    return MembershipEvent.newBuilder().setClusterId(clusterId).setNodeId(nodeId).setAction(action)
        .setRequestId("r").setRequestedBy("t").setTimestampMillis(0).build();
  }

  private static void assertInvalid(org.assertj.core.api.ThrowableAssert.ThrowingCallable call, String message) {
    assertThatThrownBy(call)
        .isInstanceOfSatisfying(CodecException.class, e -> assertThat(e.reason()).isEqualTo(Reason.INVALID_CONTENT))
        .hasMessageContaining(message);
  }
}
