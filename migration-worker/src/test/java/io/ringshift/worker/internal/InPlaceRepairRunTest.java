package io.ringshift.worker.internal;

import static io.ringshift.worker.internal.CopyRunTest.HALF;
import static io.ringshift.worker.internal.CopyRunTest.keysIn;
import static io.ringshift.worker.internal.Harness.epochRecord;
import static io.ringshift.worker.internal.Harness.fenceRequested;
import static io.ringshift.worker.internal.StoreFixture.bytes;
import static org.assertj.core.api.Assertions.assertThat;

import io.ringshift.protocol.EpochRecords;
import io.ringshift.schemas.avro.EpochRecord;
import io.ringshift.schemas.avro.EpochState;
import io.ringshift.schemas.avro.FillingRange;
import io.ringshift.schemas.avro.MemberSpec;
import io.ringshift.schemas.avro.MemberSpecState;
import io.ringshift.schemas.avro.RangeCopyTask;
import io.ringshift.schemas.avro.TaskKind;
import io.ringshift.schemas.avro.TaskState;
import io.ringshift.storage.Version;
import io.ringshift.storage.WriteResult;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A REPAIR of an epoch that repairs in place (docs/worker.md, "Repairs in place"): its plan builds the ring of the
 * published failure epoch it chains to, whose clients already write the repair's target (a filling replica). The run
 * fences at the failure epoch, not its own, so those clients write on through the fence (only writers of older rings
 * are refused), and verifies by dominance while they do. Real RocksDB stores.
 */
class InPlaceRepairRunTest {
  static final long FAILURE = 4;
  static final long REPAIR = 5;

  @TempDir Path dir;
  StoreFixture nodes;
  StoreFixture.Node a;
  StoreFixture.Node t;
  Harness h;
  RangeCopyTask task;
  String id;

  @BeforeEach
  void openNodes() {
    nodes = new StoreFixture(dir);
    a = nodes.node("node-a");
    t = nodes.node("node-t");
    a.fill("k", 2000, 100);
    task = Harness.task(TaskKind.REPAIR, REPAIR, HALF, List.of("node-a"), "node-t");
    id = task.getTaskId();
    h = new Harness(nodes.stores());
  }

  @AfterEach
  void closeNodes() throws Exception {
    h.close();
    nodes.close();
  }

  private static List<MemberSpec> members(String... ids) {
    return java.util.Arrays.stream(ids)
        .map(m -> new MemberSpec(m, "az-1", 1.0, MemberSpecState.ACTIVE, List.<Long>of())).toList();
  }

  /** The published failure epoch: node-a and node-t, node-t filling HALF; checksum 7s. */
  private void failureEpochPublished() {
    EpochRecord failure = EpochRecord.newBuilder(epochRecord(FAILURE, EpochState.PUBLISHED, null))
        .setMembers(members("node-a", "node-t")).setTargetChecksum(checksum(7))
        .setFilling(List.of(new FillingRange(HALF.start(), HALF.end(), "node-t"))).build();
    h.control.onEpoch(EpochRecords.signedBy(failure, Harness.PUBLISHER));
  }

  private void planned(String... memberIds) {
    h.control.onEpoch(EpochRecord.newBuilder(epochRecord(REPAIR, EpochState.PLANNED, null))
        .setMembers(members(memberIds)).setPreviousChecksum(checksum(7)).setTargetChecksum(checksum(8)).build());
  }

  private static ByteBuffer checksum(int fill) {
    byte[] b = new byte[32];
    java.util.Arrays.fill(b, (byte) fill);
    return ByteBuffer.wrap(b);
  }

  private static Version version(int logical) {
    return Version.of(System.currentTimeMillis() + 60_000, logical, 7);
  }

  @Test
  void shouldFenceAtTheFailureEpochAndVerifyWhileItsClientsWrite() {
    failureEpochPublished();
    planned("node-a", "node-t");
    assertThat(h.control.inPlaceFenceEpoch(Harness.CLUSTER, REPAIR)).hasValue(FAILURE);
    TaskRun run = h.run(task);
    h.awaitState(id, TaskState.CAUGHT_UP);
    List<byte[]> keys = keysIn(HALF, "client", 3);
    // A client of the failure epoch writes both replicas; one write reaches the source before its digest and the
    // target only after (in flight), so the digests differ and the run checks dominance.
    AtomicBoolean once = new AtomicBoolean();
    a.beforeCall(call -> {
      if (call.equals("digest") && once.compareAndSet(false, true)) {
        assertThat(a.put(keys.get(0), bytes("in flight"), FAILURE, version(1))).isInstanceOf(WriteResult.Applied.class);
      }
    });

    run.update(fenceRequested(task));
    h.awaitState(id, TaskState.VERIFIED);
    h.awaitFinished(run);
    a.beforeCall(c -> { });

    assertThat(a.fences()).extracting(f -> f.epoch()).containsExactly(FAILURE);
    assertThat(t.fences()).extracting(f -> f.epoch()).containsExactly(FAILURE);
    assertThat(h.statuses(id)).noneMatch(s -> s.getState() == TaskState.BLOCKED);
    assertThat(t.contents(HALF)).as("the in-flight write re-applied to the target")
        .containsKey(new String(keys.get(0), StandardCharsets.UTF_8));
    // The failure epoch's clients write on through the fence; a writer of an older ring is refused.
    assertThat(a.put(keys.get(1), bytes("after"), FAILURE, version(2))).isInstanceOf(WriteResult.Applied.class);
    assertThat(t.put(keys.get(1), bytes("after"), FAILURE, version(2))).isInstanceOf(WriteResult.Applied.class);
    assertThat(a.put(keys.get(2), bytes("old ring"), FAILURE - 1)).isInstanceOf(WriteResult.RetryWithEpoch.class);
    assertThat(t.contents(HALF)).isEqualTo(a.contents(HALF));
  }

  @Test
  void shouldFenceAtItsOwnEpochWhenThePlanChangesTheRingOrIsNotKnown() {
    failureEpochPublished();
    assertThat(h.control.inPlaceFenceEpoch(Harness.CLUSTER, REPAIR)).as("no plan read").isEmpty();
    planned("node-a", "node-t", "node-j");
    assertThat(h.control.inPlaceFenceEpoch(Harness.CLUSTER, REPAIR)).as("a JOIN besides").isEmpty();
    TaskRun run = h.run(task);
    h.awaitState(id, TaskState.CAUGHT_UP);

    run.update(fenceRequested(task));
    h.awaitState(id, TaskState.VERIFIED);
    h.awaitFinished(run);

    assertThat(a.fences()).extracting(f -> f.epoch()).containsExactly(REPAIR);
    assertThat(a.put(keysIn(HALF, "x", 1).get(0), bytes("v"), FAILURE)).isInstanceOf(WriteResult.RetryWithEpoch.class);
  }

  @Test
  void shouldFenceACopyAtItsOwnEpochEvenInARingTheFailureEpochHas() {
    failureEpochPublished();
    planned("node-a", "node-t");
    RangeCopyTask copy = Harness.copyTask(REPAIR, HALF, List.of("node-a"), "node-t");
    TaskRun run = h.run(copy);
    h.awaitState(copy.getTaskId(), TaskState.CAUGHT_UP);

    run.update(fenceRequested(copy));
    h.awaitState(copy.getTaskId(), TaskState.VERIFIED);
    h.awaitFinished(run);

    assertThat(a.fences()).extracting(f -> f.epoch()).containsExactly(REPAIR);
  }
}
