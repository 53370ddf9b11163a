package io.ringshift.worker.internal;

import static io.ringshift.worker.internal.Harness.copyTask;
import static io.ringshift.worker.internal.Harness.fenceRequested;
import static io.ringshift.worker.internal.StoreFixture.bytes;
import static org.assertj.core.api.Assertions.assertThat;

import io.ringshift.ring.RingRange;
import io.ringshift.schemas.avro.RangeCopyTask;
import io.ringshift.schemas.avro.TaskState;
import io.ringshift.schemas.avro.TaskStatus;
import io.ringshift.storage.Entry;
import io.ringshift.storage.RangeScan;
import io.ringshift.storage.Version;
import io.ringshift.storage.WriteResult;
import io.ringshift.worker.Limits;
import io.ringshift.worker.TaskTuning;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The COPY/REPAIR state machine driven directly against real RocksDB stores, with statuses going to a list:
 * copy, checkpoints and resume, a new source, catch-up, fence, verification and its failure, and the
 * blockedReason of each kind of wait.
 */
class CopyRunTest {
  /** The lower half of the ring: (0, 2^63 - 1]. */
  static final RingRange HALF = RingRange.of(0, Long.MAX_VALUE);
  static final RingRange OTHER_HALF = RingRange.of(Long.MAX_VALUE, 0);

  @TempDir Path dir;
  StoreFixture nodes;
  StoreFixture.Node a;
  StoreFixture.Node b;
  StoreFixture.Node t;
  Harness h;

  @BeforeEach
  void openNodes() {
    nodes = new StoreFixture(dir);
    a = nodes.node("node-a");
    b = nodes.node("node-b");
    t = nodes.node("node-t");
  }

  @AfterEach
  void closeNodes() throws Exception {
    if (h != null) {
      h.close();
    }
    nodes.close();
  }

  private Harness harness(Limits limits) {
    h = new Harness(nodes.stores(), limits, Harness.FAST, Clock.systemUTC(), Duration.ZERO);
    return h;
  }

  @Test
  void shouldCopyCatchUpFenceAndVerify() {
    harness(Limits.unlimited());
    a.fill("k", 3000, 100);
    long rangeBytes = a.digest(HALF).bytes();
    RangeCopyTask task = copyTask(2, HALF, List.of("node-a"), "node-t");
    TaskRun run = h.run(task);
    String id = task.getTaskId();

    h.awaitState(id, TaskState.CAUGHT_UP);
    // The range's size on the source, measured when the copy started: what progress displays estimate with.
    assertThat(h.statuses(id)).filteredOn(st -> st.getState() == TaskState.COPYING).first()
        .extracting(TaskStatus::getRangeBytes).isEqualTo(rangeBytes);
    // Written while the task tails the feed, waiting for the fence.
    List<byte[]> late = keysIn(HALF, "late", 20);
    late.forEach(k -> assertThat(a.put(k, bytes("v"), 1)).isInstanceOf(WriteResult.Applied.class));
    a.delete(bytes("k-1"), 1);
    run.update(fenceRequested(task));
    TaskStatus verified = h.awaitState(id, TaskState.VERIFIED);

    assertThat(t.contents(HALF)).isEqualTo(a.contents(HALF))
        .containsKey(new String(late.get(0), java.nio.charset.StandardCharsets.UTF_8)).doesNotContainKey("k-1");
    assertThat(t.contents(OTHER_HALF)).as("nothing outside the range").isEmpty();
    assertThat(verified.getDigest()).isEqualTo(ByteBuffer.wrap(a.digest(HALF).digest()));
    assertThat(h.statuses(id)).extracting(TaskStatus::getState).first().isEqualTo(TaskState.PENDING);
    assertThat(h.statuses(id).stream().map(TaskStatus::getState).distinct().toList())
        .containsExactly(TaskState.PENDING, TaskState.COPYING, TaskState.CAUGHT_UP, TaskState.FENCED,
            TaskState.VERIFIED);
    TaskStatus fenced = h.awaitState(id, TaskState.FENCED);
    assertThat(fenced.getFencePosition()).isNotNull();
    assertThat(verified.getCaughtUpPosition()).isGreaterThanOrEqualTo(fenced.getFencePosition());
    assertThat(verified.getSource()).isEqualTo("node-a");
    assertThat(verified.getWorkerId()).isEqualTo("worker-test");
    // The source now refuses writes of the old epoch to the range, and takes the new epoch's.
    assertThat(a.put(late.get(0), bytes("after"), 1)).isInstanceOf(WriteResult.RetryWithEpoch.class);
    assertThat(a.put(late.get(0), bytes("after"), 2)).isInstanceOf(WriteResult.Applied.class);
    h.awaitFinished(run);
  }

  /**
   * Found by the protocol simulation (seed 20261381): a worker cut off from Kafka sent its held CAUGHT_UP after
   * another worker's VERIFIED; the task's new owner ran it again after its epoch was published, and the
   * verification's re-copy cleared the target, by then a published replica with writes of its own. A copy whose
   * epoch the view shows published writes nothing and publishes nothing.
   */
  @Test
  void shouldWriteNothingToItsTargetOnceItsEpochIsPublished() {
    harness(Limits.unlimited());
    a.fill("k", 200, 100);
    RangeCopyTask task = fenceRequested(copyTask(2, HALF, List.of("node-a"), "node-t"));
    String id = task.getTaskId();
    TaskRun first = h.run(task);
    TaskStatus verified = h.awaitState(id, TaskState.VERIFIED);
    h.awaitFinished(first);
    // Epoch 2 is published; clients write to the target, a replica now; a cut-off worker's late status arrives.
    h.control.onEpoch(CleanupRunTest.signedPublished(Harness.CLUSTER, 2));
    List<byte[]> written = keysIn(HALF, "client", 5);
    written.forEach(k -> t.put(k, bytes("v"), 2));
    java.util.Map<String, String> before = t.contents(HALF);
    h.control.onStatus(id, TaskStatus.newBuilder(verified).setState(TaskState.CAUGHT_UP).setWorkerId("worker-cut-off")
        .build());
    int published = h.statuses(id).size();

    TaskRun again = h.run(task);
    h.awaitFinished(again);

    assertThat(t.contents(HALF)).as("the target, a published replica, is untouched").isEqualTo(before);
    assertThat(h.statuses(id)).as("no status after the epoch was published").hasSize(published);
    assertThat(h.control.verifiedStatus(id)).as("the VERIFIED status read before the late one").contains(verified);
  }

  /** A worker whose view of the control plane is over 15 s old (cut off from Kafka) writes nothing to a target. */
  @Test
  void shouldHoldTargetWritesWhileTheViewIsStale() {
    harness(Limits.unlimited());
    a.fill("k", 200, 100);
    h.control.viewCaughtUpAt(System.currentTimeMillis() - 20_000);
    RangeCopyTask task = copyTask(2, HALF, List.of("node-a"), "node-t");
    String id = task.getTaskId();
    TaskRun run = h.run(task);

    TaskStatus blocked = h.awaitStatus(id, "BLOCKED", st -> st.getState() == TaskState.BLOCKED);
    assertThat(blocked.getBlockedReason()).contains("old (is it cut off from Kafka?); a copy writes to its target "
        + "only on a view at most 15 s old");
    assertThat(t.contents(HALF)).isEmpty();

    h.control.viewCaughtUpAt(System.currentTimeMillis());
    h.awaitState(id, TaskState.CAUGHT_UP);
    assertThat(t.contents(HALF)).isEqualTo(a.contents(HALF));
    run.update(fenceRequested(task));
    h.awaitState(id, TaskState.VERIFIED);
    h.awaitFinished(run);
  }

  /** 256 KiB batches and bulk-load chunks of 4 MiB, the smallest a copy loads. */
  private static final TaskTuning LOADS = Harness.FAST.withBatch(256 * 1024, 1000)
      .withLoadBytes(TaskTuning.MIN_LOAD_BYTES);

  @Test
  void shouldBulkLoadARangeInChunksThatTheTargetIngestsAndVerify() throws Exception {
    h = new Harness(nodes.stores(), Limits.unlimited(), LOADS, Clock.systemUTC(), Duration.ZERO);
    a.fill("big", 2200, 8 * 1024);
    long keys = a.digest(HALF).keys();
    long targetSequence = t.latestSequence();
    RangeCopyTask task = copyTask(2, HALF, List.of("node-a"), "node-t");
    String id = task.getTaskId();
    TaskRun run = h.run(task);

    h.awaitState(id, TaskState.CAUGHT_UP);
    assertThat(t.loads()).as("loads of 4 MiB chunks for %d bytes", a.digest(HALF).bytes()).isEqualTo(3);
    assertThat(t.latestSequence() - targetSequence).as("sequence numbers the target took for %d keys: the full "
        + "chunks were ingested, only the last, short one written", keys).isLessThan(keys / 4);
    List<byte[]> late = keysIn(HALF, "late", 20);
    late.forEach(k -> assertThat(a.put(k, bytes("v"), 1)).isInstanceOf(WriteResult.Applied.class));
    run.update(fenceRequested(task));
    h.awaitState(id, TaskState.VERIFIED);
    assertThat(t.contents(HALF)).isEqualTo(a.contents(HALF));
    h.awaitFinished(run);
    try (java.util.stream.Stream<Path> left = java.nio.file.Files.list(dir.resolve("node-t").resolve("bulk-load"))) {
      assertThat(left).as("table files left behind").isEmpty();
    }
  }

  @Test
  void shouldLoadNothingOfAChunkWhoseTargetFailsAndResumeFromTheCheckpoint() throws Exception {
    h = new Harness(nodes.stores(), Limits.unlimited().withRates(4L << 20, 0), LOADS, Clock.systemUTC(),
        Duration.ZERO);
    a.fill("big", 2200, 8 * 1024);
    RangeCopyTask task = copyTask(2, HALF, List.of("node-a"), "node-t");
    String id = task.getTaskId();
    TaskRun run = h.run(task);
    TaskStatus firstChunk = h.awaitStatus(id, "the first chunk loaded", s -> s.getCopiedBytes() > 0);
    t.down();

    TaskStatus blocked = h.awaitState(id, TaskState.BLOCKED);
    assertThat(blocked.getBlockedReason()).startsWith("target node-t unreachable: node-t: connection refused");
    // Keys of 5 to 8 bytes with 8 KiB values: a batch is 32 entries, a chunk 16 batches, 512 entries.
    List<String> held = new ArrayList<>(t.contents(HALF).keySet());
    List<String> inOrder = new ArrayList<>(a.contents(HALF).keySet());
    assertThat(held).as("the target holds whole chunks").isNotEmpty();
    assertThat(held.size() % 512).as("keys past the last whole chunk of 512 (%d held)", held.size()).isZero();
    assertThat(held).as("the first chunks of the range, in scan order").isEqualTo(inOrder.subList(0, held.size()));
    t.up();
    h.awaitState(id, TaskState.CAUGHT_UP);
    run.update(fenceRequested(task));
    TaskStatus verified = h.awaitState(id, TaskState.VERIFIED);
    assertThat(verified.getWatermark()).as("resumed, same watermark").isEqualTo(firstChunk.getWatermark());
    assertThat(t.contents(HALF)).isEqualTo(a.contents(HALF));
    try (java.util.stream.Stream<Path> left = java.nio.file.Files.list(dir.resolve("node-t").resolve("bulk-load"))) {
      assertThat(left).as("table files left behind").isEmpty();
    }
  }

  @Test
  void shouldResumeAfterItsLastCheckpointAndKeepTheOriginalWatermark() {
    harness(Limits.unlimited().withRates(0, 64 * 1024));
    a.fill("k", 3000, 100);
    long rangeBytes = bytesIn(a, HALF);
    RangeCopyTask task = copyTask(2, HALF, List.of("node-a"), "node-t");
    String id = task.getTaskId();
    TaskRun first = h.run(task);
    h.awaitStatus(id, "a checkpoint past 64 KiB", s -> s.getLastCopiedToken() != null
        && s.getCopiedBytes() >= 64 * 1024);
    first.stop(TaskControl.Stop.CHECKPOINT);
    h.awaitFinished(first);
    TaskStatus checkpoint = h.statuses(id).get(h.statuses(id).size() - 1);
    assertThat(checkpoint.getState()).isEqualTo(TaskState.COPYING);
    assertThat(checkpoint.getCaughtUpPosition()).as("snapshot not finished").isNull();
    int before = h.statuses(id).size();

    TaskRun second = h.run(task);
    TaskStatus resumed = h.awaitStatus(id, "the resumed run's first status", s -> h.statuses(id).indexOf(s) >= before);
    TaskStatus snapshotDone = h.awaitStatus(id, "snapshot copied",
        s -> s.getCaughtUpPosition() != null && s.getCaughtUpPosition().equals(s.getWatermark()));
    second.update(fenceRequested(task));
    h.awaitState(id, TaskState.VERIFIED);

    assertThat(resumed.getState()).isEqualTo(TaskState.COPYING);
    assertThat(resumed.getWatermark()).as("W kept").isEqualTo(checkpoint.getWatermark());
    assertThat(resumed.getLastCopiedToken()).isEqualTo(checkpoint.getLastCopiedToken());
    assertThat(resumed.getCopiedBytes()).as("copiedBytes carried over").isEqualTo(checkpoint.getCopiedBytes());
    assertThat(resumed.getStartedMillis()).isEqualTo(checkpoint.getStartedMillis());
    // Resumed after the checkpoint: the range's bytes once, plus the key at the cursor's position again.
    assertThat(snapshotDone.getCopiedBytes()).isBetween(rangeBytes, rangeBytes + 200);
    assertThat(t.contents(HALF)).isEqualTo(a.contents(HALF));
  }

  @Test
  void shouldReplayWritesMadeWhileStoppedWhenItResumes() {
    harness(Limits.unlimited().withRates(0, 64 * 1024));
    a.fill("k", 3000, 100);
    RangeCopyTask task = copyTask(2, HALF, List.of("node-a"), "node-t");
    String id = task.getTaskId();
    TaskRun first = h.run(task);
    h.awaitStatus(id, "a checkpoint", s -> s.getLastCopiedToken() != null);
    first.stop(TaskControl.Stop.CHECKPOINT);
    h.awaitFinished(first);
    // Overwrites, deletes and new keys on both sides of the cursor, between W and the resumed scan's W2.
    for (int i = 0; i < 3000; i += 7) {
      a.put(bytes("k-" + i), bytes("new-" + i), 1);
    }
    for (int i = 1; i < 3000; i += 11) {
      a.delete(bytes("k-" + i), 1);
    }
    keysIn(HALF, "extra", 50).forEach(k -> a.put(k, bytes("x"), 1));

    TaskRun second = h.run(task);
    h.awaitState(id, TaskState.CAUGHT_UP);
    second.update(fenceRequested(task));
    h.awaitState(id, TaskState.VERIFIED);

    assertThat(t.contents(HALF)).isEqualTo(a.contents(HALF));
  }

  @Test
  void shouldStartOverWhenTheCheckpointCameFromAnotherSource() {
    harness(Limits.unlimited());
    a.fill("k", 500, 100);
    RangeCopyTask task = copyTask(2, HALF, List.of("node-a"), "node-t");
    String id = task.getTaskId();
    // A checkpoint of node-x, which the re-planned task no longer lists, and a leftover key on the target.
    h.control.onStatus(id, TaskStatus.newBuilder(checkpointOf(task, "node-x")).build());
    byte[] stale = keysIn(HALF, "stale", 1).get(0);
    t.delegate.apply(List.of(Entry.of(stale, bytes("left over"))));

    TaskRun run = h.run(task);
    TaskStatus restarted = h.awaitStatus(id, "copying from node-a", s -> "node-a".equals(s.getSource()));
    h.awaitState(id, TaskState.CAUGHT_UP);
    run.update(fenceRequested(task));
    h.awaitState(id, TaskState.VERIFIED);

    assertThat(restarted.getState()).isEqualTo(TaskState.COPYING);
    assertThat(restarted.getCopiedBytes()).isZero();
    assertThat(restarted.getLastCopiedToken()).isNull();
    assertThat(restarted.getWatermark()).isNotEqualTo(777_777L);
    assertThat(t.contents(HALF)).isEqualTo(a.contents(HALF)).doesNotContainKey("stale-0");
  }

  @Test
  void shouldCopyFromTheNextSourceWhenTheFirstStopsAnswering() {
    harness(Limits.unlimited().withRates(0, 300 * 1024));
    a.fill("k", 2000, 100);
    b.fill("k", 2000, 100);
    RangeCopyTask task = copyTask(2, HALF, List.of("node-a", "node-b"), "node-t");
    String id = task.getTaskId();
    TaskRun run = h.run(task);
    h.awaitStatus(id, "a checkpoint from node-a", s -> "node-a".equals(s.getSource()) && s.getLastCopiedToken() != null);
    a.down();

    TaskStatus switched = h.awaitStatus(id, "copying from node-b", s -> "node-b".equals(s.getSource()));
    h.awaitState(id, TaskState.CAUGHT_UP);
    run.update(fenceRequested(task));
    TaskStatus verified = h.awaitState(id, TaskState.VERIFIED);

    assertThat(switched.getCopiedBytes()).as("from scratch").isZero();
    assertThat(verified.getSource()).isEqualTo("node-b");
    assertThat(t.contents(HALF)).isEqualTo(b.contents(HALF));
  }

  @Test
  void shouldBlockWhenNoSourceAnswersAndGoOnWhenOneComesBack() {
    harness(Limits.unlimited());
    a.fill("k", 300, 100);
    b.fill("k", 300, 100);
    a.down();
    b.down();
    RangeCopyTask task = copyTask(2, HALF, List.of("node-a", "node-b"), "node-t");
    String id = task.getTaskId();
    TaskRun run = h.run(task);

    TaskStatus blocked = h.awaitState(id, TaskState.BLOCKED);
    assertThat(blocked.getBlockedReason()).isEqualTo(
        "no source reachable: node-a (node-a: connection refused), node-b (node-b: connection refused)");
    b.up();
    h.awaitState(id, TaskState.CAUGHT_UP);
    run.update(fenceRequested(task));
    assertThat(h.awaitState(id, TaskState.VERIFIED).getSource()).isEqualTo("node-b");
  }

  @Test
  void shouldBlockATaskThatNamesNoSource() {
    harness(Limits.unlimited());
    RangeCopyTask task = copyTask(2, HALF, List.of(), "node-t");

    TaskRun run = h.run(task);

    assertThat(h.awaitState(task.getTaskId(), TaskState.BLOCKED).getBlockedReason())
        .isEqualTo("the task names no source: no replica of the range survives");
    run.stop(TaskControl.Stop.CANCEL);
    h.awaitFinished(run);
  }

  @Test
  void shouldBlockWhileTheTargetIsDownAndResume() {
    harness(Limits.unlimited().withRates(0, 300 * 1024));
    a.fill("k", 2000, 100);
    RangeCopyTask task = copyTask(2, HALF, List.of("node-a"), "node-t");
    String id = task.getTaskId();
    TaskRun run = h.run(task);
    TaskStatus before = h.awaitStatus(id, "a checkpoint", s -> s.getLastCopiedToken() != null);
    t.down();

    TaskStatus blocked = h.awaitState(id, TaskState.BLOCKED);
    assertThat(blocked.getBlockedReason()).startsWith("target node-t unreachable: node-t: connection refused");
    assertThat(blocked.getWatermark()).as("the checkpoint is kept").isEqualTo(before.getWatermark());
    t.up();
    h.awaitState(id, TaskState.CAUGHT_UP);
    run.update(fenceRequested(task));
    TaskStatus verified = h.awaitState(id, TaskState.VERIFIED);
    assertThat(verified.getWatermark()).as("resumed, same watermark").isEqualTo(before.getWatermark());
    assertThat(t.contents(HALF)).isEqualTo(a.contents(HALF));
  }

  /**
   * The target differs from the source at the fence (a key the source never had, a value it no longer has, a key
   * it deleted): the run re-copies the differing pieces from the source and verifies, without ever blocking. It
   * used to end BLOCKED on the digest mismatch, holding its fences for good.
   */
  @Test
  void shouldReCopyWhatDiffersAtTheFenceAndVerify() {
    harness(Limits.unlimited());
    a.fill("k", 5000, 100);
    RangeCopyTask task = copyTask(2, HALF, List.of("node-a"), "node-t");
    String id = task.getTaskId();
    TaskRun run = h.run(task);
    h.awaitState(id, TaskState.CAUGHT_UP);
    // Corrupt the target behind the worker's back.
    List<byte[]> inHalf = keysIn(HALF, "k", 2);
    // Above every version a writer stamps today, so that the corruption wins over what the copy wrote.
    Version corrupt = Version.of(4_000_000_000_000L, 0, 1);
    t.delegate.apply(List.of(Entry.of(keysIn(HALF, "corrupt", 1).get(0), bytes("junk"), corrupt),
        Entry.of(inHalf.get(0), bytes("stale"), corrupt), Entry.of(inHalf.get(1), null, corrupt)));

    run.update(fenceRequested(task));
    TaskStatus verified = h.awaitState(id, TaskState.VERIFIED);
    h.awaitFinished(run);

    assertThat(t.contents(HALF)).isEqualTo(a.contents(HALF));
    assertThat(verified.getDigest()).isEqualTo(ByteBuffer.wrap(a.digest(HALF).digest()));
    assertThat(h.statuses(id)).noneMatch(s -> s.getState() == TaskState.BLOCKED);
    assertThat(t.fences()).as("the target is fenced too").extracting(f -> f.epoch()).containsExactly(2L);
  }

  /**
   * A target that keeps losing writes differs after every re-copy: BLOCKED with both digests, and verified again
   * after a wait that doubles; once the target is mended, the next attempt verifies.
   */
  @Test
  void shouldBlockWithBothDigestsAndRetryWithBackoffWhileTheTargetKeepsDiffering() {
    harness(Limits.unlimited());
    a.fill("k", 5000, 100);
    RangeCopyTask task = copyTask(2, HALF, List.of("node-a"), "node-t");
    String id = task.getTaskId();
    TaskRun run = h.run(task);
    h.awaitState(id, TaskState.CAUGHT_UP);
    byte[] lostKey = keysIn(HALF, "k", 1).get(0);
    t.delegate.apply(List.of(Entry.of(lostKey, null, Version.of(4_000_000_000_000L, 0, 1))));
    t.loseApplied(new String(lostKey, java.nio.charset.StandardCharsets.UTF_8)::equals);

    run.update(fenceRequested(task));
    TaskStatus first = h.awaitStatus(id, "the first failed verification",
        s -> s.getState() == TaskState.BLOCKED && s.getBlockedReason().endsWith("(attempt 1)"));
    TaskStatus second = h.awaitStatus(id, "the second failed verification",
        s -> s.getState() == TaskState.BLOCKED && s.getBlockedReason().endsWith("(attempt 2)"));

    // The digests' contents (the sequence numbers they were taken at move with each re-copy).
    String sourceDigest = a.digest(HALF).toString().replaceAll(", at \\d+\\)", "");
    String targetDigest = t.digest(HALF).toString().replaceAll(", at \\d+\\)", "");
    assertThat(first.getBlockedReason().replaceAll(", at \\d+\\)", "")).startsWith(
        "range digests differ after draining to fence position " + first.getFencePosition() + " and re-copying ")
        .endsWith(" in 1 piece from the source: source node-a has " + sourceDigest + ", target node-t has "
            + targetDigest + "; verifying again in 50 ms (attempt 1)");
    assertThat(second.getBlockedReason()).contains("verifying again in 100 ms (attempt 2)");
    assertThat(first.getDigest()).isEqualTo(ByteBuffer.wrap(a.digest(HALF).digest()));
    assertThat(first.getTargetDigest()).isEqualTo(ByteBuffer.wrap(t.digest(HALF).digest()));
    assertThat(run.finished()).as("a blocked verification keeps trying").isFalse();

    t.loseApplied(k -> false);
    h.awaitState(id, TaskState.VERIFIED);
    h.awaitFinished(run);
    assertThat(t.contents(HALF)).isEqualTo(a.contents(HALF));
  }

  @Test
  void shouldKeepCopyingStateAndSayThrottledWhenABatchWaitsOverASecond() {
    harness(Limits.unlimited().withRates(0, 2048));
    a.fill("k", 40, 1000);
    RangeCopyTask task = copyTask(2, HALF, List.of("node-a"), "node-t");
    String id = task.getTaskId();
    TaskRun run = h.run(task);

    TaskStatus throttled = h.awaitStatus(id, "throttled", s -> s.getBlockedReason() != null
        && s.getBlockedReason().startsWith("throttled"));
    assertThat(throttled.getState()).isEqualTo(TaskState.COPYING);
    assertThat(throttled.getBlockedReason()).isEqualTo("throttled: source node-a at 2.00 KiB/s");
    // Lifting the limit lets the waiting task go.
    h.throttles.setLimits(Limits.unlimited());
    TaskStatus caughtUp = h.awaitState(id, TaskState.CAUGHT_UP);
    assertThat(caughtUp.getBlockedReason()).isNull();
    run.update(fenceRequested(task));
    h.awaitState(id, TaskState.VERIFIED);
  }

  @Test
  void shouldWaitForACopySlotSayingWhichCapHoldsIt() {
    harness(Limits.unlimited().withCaps(8, 1, 2));
    a.fill("k", 100, 100);
    assertThat(h.slots.tryAcquire("node-a", "node-other")).isNull();
    RangeCopyTask task = copyTask(2, HALF, List.of("node-a"), "node-t");
    String id = task.getTaskId();
    TaskRun run = h.run(task);

    TaskStatus waiting = h.awaitStatus(id, "waiting for a slot", s -> s.getBlockedReason() != null);
    assertThat(waiting.getState()).isEqualTo(TaskState.PENDING);
    assertThat(waiting.getBlockedReason())
        .isEqualTo("waiting for a copy slot: 1 tasks copying from source node-a (max 1 per source)");
    h.slots.release("node-a", "node-other");
    h.awaitState(id, TaskState.CAUGHT_UP);
    assertThat(h.slots.running()).as("CAUGHT_UP gives the slot back").isZero();
    run.update(fenceRequested(task));
    h.awaitState(id, TaskState.VERIFIED);
  }

  @Test
  void shouldRestartFromANewSourceWhenARePlanDropsItsSource() {
    harness(Limits.unlimited().withRates(0, 200 * 1024));
    a.fill("k", 2000, 100);
    b.fill("k", 2000, 100);
    RangeCopyTask task = copyTask(2, HALF, List.of("node-a"), "node-t");
    String id = task.getTaskId();
    TaskRun run = h.run(task);
    h.awaitStatus(id, "copying from node-a", s -> "node-a".equals(s.getSource()) && s.getLastCopiedToken() != null);

    RangeCopyTask replanned = RangeCopyTask.newBuilder(task).setSources(List.of("node-b")).build();
    run.update(replanned);
    h.awaitStatus(id, "copying from node-b", s -> "node-b".equals(s.getSource()));
    h.throttles.setLimits(Limits.unlimited());
    h.awaitState(id, TaskState.CAUGHT_UP);
    run.update(fenceRequested(replanned));
    assertThat(h.awaitState(id, TaskState.VERIFIED).getSource()).isEqualTo("node-b");
  }

  @Test
  void shouldKeepItsSourceWhenARePlanStillListsIt() {
    harness(Limits.unlimited().withRates(0, 200 * 1024));
    a.fill("k", 1000, 100);
    RangeCopyTask task = copyTask(2, HALF, List.of("node-a"), "node-t");
    String id = task.getTaskId();
    TaskRun run = h.run(task);
    TaskStatus first = h.awaitStatus(id, "a checkpoint", s -> s.getLastCopiedToken() != null);

    run.update(RangeCopyTask.newBuilder(task).setSources(List.of("node-b", "node-a")).build());
    h.throttles.setLimits(Limits.unlimited());
    TaskStatus caughtUp = h.awaitState(id, TaskState.CAUGHT_UP);

    assertThat(caughtUp.getSource()).isEqualTo("node-a");
    assertThat(caughtUp.getWatermark()).isEqualTo(first.getWatermark());
    run.stop(TaskControl.Stop.CANCEL);
  }

  @Test
  void shouldCopyAgainWhenTheSourcesLogNoLongerReachesTheCheckpoint() {
    harness(Limits.unlimited());
    a.fill("k", 300, 100);
    RangeCopyTask task = copyTask(2, HALF, List.of("node-a"), "node-t");
    String id = task.getTaskId();
    // A CAUGHT_UP checkpoint at a position the source's log does not have (its log was lost or truncated).
    TaskStatus lost = TaskStatus.newBuilder(checkpointOf(task, "node-a")).setState(TaskState.CAUGHT_UP)
        .setCaughtUpPosition(777_777L).build();
    h.control.onStatus(id, lost);

    TaskRun run = h.run(task);
    TaskStatus again = h.awaitStatus(id, "a new watermark", s -> s.getWatermark() != null && s.getWatermark() < 777_777L);
    h.awaitState(id, TaskState.CAUGHT_UP);
    run.update(fenceRequested(task));
    h.awaitState(id, TaskState.VERIFIED);
    assertThat(again.getSource()).isEqualTo("node-a");
    assertThat(t.contents(HALF)).isEqualTo(a.contents(HALF));
  }

  @Test
  void shouldSayWhyAndBackOffWhenTheSourcesLogKeepsFallingShortOfTheWatermark() {
    harness(Limits.unlimited());
    a.fill("k", 300, 100);
    a.loseLog(3);
    RangeCopyTask task = copyTask(2, HALF, List.of("node-a"), "node-t");
    String id = task.getTaskId();

    TaskRun run = h.run(task);
    h.awaitState(id, TaskState.CAUGHT_UP);
    run.update(fenceRequested(task));
    h.awaitState(id, TaskState.VERIFIED);

    List<TaskStatus> statuses = h.statuses(id);
    List<TaskStatus> copyStarts = statuses.stream()
        .filter(s -> s.getState() == TaskState.COPYING && s.getLastCopiedToken() == null).toList();
    assertThat(copyStarts).as("one copy, then three more after each lost log").hasSize(4);
    // Nothing is written meanwhile, so every copy has the same watermark.
    long watermark = copyStarts.get(0).getWatermark();
    List<TaskStatus> blocked = statuses.stream().filter(s -> s.getState() == TaskState.BLOCKED).toList();
    assertThat(blocked).as("BLOCKED from the second loss in a row, not the first").hasSize(2);
    assertThat(blocked.get(0).getBlockedReason()).isEqualTo("source node-a's change log (WAL retention) does not"
        + " reach back to the watermark " + watermark + " for as long as the copy takes: copied the range 2"
        + " times in a row; copying it again in 50 ms");
    assertThat(blocked.get(1).getBlockedReason()).contains("watermark " + watermark, "3 times in a row");
    // The reason stays while the copy runs again, and goes with the catch-up that gets through.
    TaskStatus copyingAgain = statuses.get(statuses.indexOf(blocked.get(1)) + 1);
    assertThat(copyingAgain.getState()).isIn(TaskState.PENDING, TaskState.COPYING);
    assertThat(copyingAgain.getBlockedReason()).isEqualTo(blocked.get(1).getBlockedReason());
    assertThat(h.awaitState(id, TaskState.CAUGHT_UP).getBlockedReason()).isNull();
    // The back-off: the status after each BLOCKED is at least retryInterval later.
    for (TaskStatus b : blocked) {
      TaskStatus after = statuses.get(statuses.indexOf(b) + 1);
      assertThat(after.getTimestampMillis() - b.getTimestampMillis())
          .isGreaterThanOrEqualTo(Harness.FAST.retryInterval().toMillis());
    }
    assertThat(t.contents(HALF)).isEqualTo(a.contents(HALF));
  }

  private static TaskStatus checkpointOf(RangeCopyTask task, String source) {
    return TaskStatus.newBuilder()
        .setTaskId(task.getTaskId()).setClusterId(task.getClusterId()).setEpoch(task.getEpoch())
        .setState(TaskState.COPYING).setCopiedBytes(999).setLastCopiedToken(123L).setWatermark(777_777L)
        .setSource(source).setWorkerId("worker-old").setTimestampMillis(1).setStartedMillis(1L)
        .build();
  }

  /** {@code n} keys {@code prefix-i} whose positions lie in {@code range}. */
  static List<byte[]> keysIn(RingRange range, String prefix, int n) {
    List<byte[]> keys = new ArrayList<>();
    for (int i = 0; keys.size() < n; i++) {
      byte[] k = bytes(prefix + "-" + i);
      if (range.contains(Entry.positionOf(k))) {
        keys.add(k);
      }
    }
    return keys;
  }

  static long bytesIn(StoreFixture.Node node, RingRange range) {
    long sum = 0;
    try (RangeScan scan = node.delegate.scan(range, null)) {
      while (scan.hasNext()) {
        sum += scan.next().size();
      }
    }
    return sum;
  }
}
