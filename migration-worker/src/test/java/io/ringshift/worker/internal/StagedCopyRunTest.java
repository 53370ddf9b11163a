package io.ringshift.worker.internal;

import static io.ringshift.worker.internal.CopyRunTest.HALF;
import static io.ringshift.worker.internal.CopyRunTest.keysIn;
import static io.ringshift.worker.internal.Harness.copyTask;
import static io.ringshift.worker.internal.Harness.epochRecord;
import static io.ringshift.worker.internal.Harness.fenceRequested;
import static io.ringshift.worker.internal.StoreFixture.bytes;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.ringshift.schemas.avro.EpochState;
import io.ringshift.schemas.avro.RangeCopyTask;
import io.ringshift.schemas.avro.TaskState;
import io.ringshift.schemas.avro.TaskStatus;
import io.ringshift.storage.Version;
import io.ringshift.storage.WriteResult;
import io.ringshift.worker.FakeTime;
import io.ringshift.worker.Limits;
import io.ringshift.worker.TaskTuning;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A COPY of a staged epoch (docs/worker.md, "Verification in a transition"): it fences only once every live participant
 * routes by the first stage (CONVERGED 1), and where the digests differ under dual writes it verifies by dominance,
 * re-applying what the check names to the target or to the source, instead of clearing pieces of the target. Real
 * RocksDB stores; dual writes are written to both stores with the epoch's tag and a version, as a client of a stage
 * does, at exact points between the worker's reads ({@link StoreFixture.Node#beforeCall}).
 */
class StagedCopyRunTest {
  static final long EPOCH = 2;

  @TempDir Path dir;
  StoreFixture nodes;
  StoreFixture.Node a;
  StoreFixture.Node t;
  Harness h;
  RangeCopyTask task;
  String id;
  private final AtomicInteger logical = new AtomicInteger();

  @BeforeEach
  void openNodes() {
    nodes = new StoreFixture(dir);
    a = nodes.node("node-a");
    t = nodes.node("node-t");
    a.fill("k", 2000, 100);
    task = copyTask(EPOCH, HALF, List.of("node-a"), "node-t");
    id = task.getTaskId();
  }

  @AfterEach
  void closeNodes() throws Exception {
    if (h != null) {
      h.close();
    }
    nodes.close();
  }

  private Harness harness(TaskTuning tuning) {
    h = new Harness(nodes.stores(), Limits.unlimited(), tuning, Clock.systemUTC(), Duration.ZERO);
    return h;
  }

  private void staged() {
    h.control.onEpoch(epochRecord(EPOCH, EpochState.STAGED, 1));
  }

  private void converged(int stage) {
    h.control.onEpoch(epochRecord(EPOCH, EpochState.CONVERGED, stage));
  }

  /** A version above every one the stores stamped so far (the fill's), and above the last one drawn here. */
  private Version nextVersion() {
    return Version.of(System.currentTimeMillis() + 60_000, logical.incrementAndGet(), 7);
  }

  /** A client's write in a stage: tagged with the epoch, with its version, to the nodes given. */
  private void write(byte[] key, String value, StoreFixture.Node... to) {
    write(key, value, nextVersion(), to);
  }

  private void write(byte[] key, String value, Version v, StoreFixture.Node... to) {
    for (StoreFixture.Node n : to) {
      assertThat(n.put(key, bytes(value), EPOCH, v)).isInstanceOf(WriteResult.Applied.class);
    }
  }

  private double rounds(String outcome) {
    return h.registry.get(WorkerMetrics.DOMINANCE_ROUNDS).tag("outcome", outcome).counter().count();
  }

  private static String text(byte[] key) {
    return new String(key, StandardCharsets.UTF_8);
  }

  /**
   * The fence of a staged epoch waits for CONVERGED 1: before it, clients still on the previous ring write with the
   * older epoch, and the fence would refuse them. The run keeps following its source meanwhile, says what it waits
   * for, and fences as soon as the record arrives: the record wakes it (its poll interval here is 30 s).
   */
  @Test
  void shouldNotFenceAStagedEpochBeforeItsParticipantsConvergeAndFenceAsSoonAsTheyDo() {
    harness(Harness.FAST.withIntervals(Duration.ofMillis(20), Duration.ofSeconds(30)));
    staged();
    TaskRun run = h.run(task);
    h.awaitState(id, TaskState.CAUGHT_UP);

    run.update(fenceRequested(task));
    TaskStatus waiting = h.awaitStatus(id, "waiting for the participants", s -> s.getBlockedReason() != null
        && s.getBlockedReason().startsWith("waiting for every live participant"));
    assertThat(waiting.getState()).as("a wait, not a block").isEqualTo(TaskState.CAUGHT_UP);
    assertThat(waiting.getBlockedReason()).isEqualTo("waiting for every live participant to route by stage 1 of epoch 2"
        + " before fencing (no CONVERGED record yet): the epoch moves by transition stages, and the fence would refuse "
        + "the writes of clients still on the previous ring; following node-a meanwhile");
    assertThat(WorkerMetrics.BlockReason.of(waiting.getBlockedReason()))
        .isEqualTo(WorkerMetrics.BlockReason.WAITING_FOR_CONVERGENCE);
    // A client still on the previous ring writes to the source: taken, and the run carries it to the target.
    byte[] straggler = keysIn(HALF, "straggler", 1).get(0);
    assertThat(a.put(straggler, bytes("old ring"), EPOCH - 1)).isInstanceOf(WriteResult.Applied.class);
    await("the run keeps following its source").atMost(Harness.WAIT)
        .until(() -> t.contents(HALF).containsKey(text(straggler)));
    assertThat(a.fences()).as("the source is not fenced").isEmpty();
    assertThat(t.fences()).as("nor the target").isEmpty();
    assertThat(h.statuses(id)).noneMatch(s -> s.getState() == TaskState.FENCED || s.getState() == TaskState.BLOCKED);

    converged(1);
    TaskStatus verified = h.awaitState(id, TaskState.VERIFIED);

    assertThat(verified.getBlockedReason()).isNull();
    assertThat(a.fences()).extracting(f -> f.epoch()).containsExactly(EPOCH);
    assertThat(t.fences()).extracting(f -> f.epoch()).containsExactly(EPOCH);
    assertThat(a.put(straggler, bytes("too late"), EPOCH - 1)).as("now the fence refuses stragglers")
        .isInstanceOf(WriteResult.RetryWithEpoch.class);
    assertThat(t.contents(HALF)).isEqualTo(a.contents(HALF));
    assertThat(rounds("holds") + rounds("differs")).as("equal digests: no dominance check").isZero();
    h.awaitFinished(run);
  }

  /**
   * The publisher decides every plan; a fence taken before its decision is read would refuse the previous ring's
   * writers should the decision be STAGED (the simulation counted 236 such refusals in 600 scenarios before). Once a
   * decision of the cluster was read (its publisher writes them), the run waits for the one on its epoch: STAGED
   * turns the wait into the wait for stage 1, which CONVERGED ends.
   */
  @Test
  void shouldWaitForThePublishersDecisionBeforeFencingAndThenForTheFirstStage() {
    harness(Harness.FAST.withIntervals(Duration.ofMillis(20), Duration.ofSeconds(30)));
    TaskRun run = runUntilWaitingForTheDecision();

    TaskStatus waiting = awaitDecisionWait();
    assertThat(waiting.getState()).as("a wait, not a block").isEqualTo(TaskState.CAUGHT_UP);
    assertThat(waiting.getBlockedReason()).isEqualTo("waiting for the publisher's cutover decision on epoch 2 before "
        + "fencing (no STAGED or FENCE_CUTOVER record yet): if the epoch moves by transition stages, the fence must "
        + "wait for its first stage; following node-a meanwhile");
    assertThat(WorkerMetrics.BlockReason.of(waiting.getBlockedReason()))
        .isEqualTo(WorkerMetrics.BlockReason.WAITING_FOR_CUTOVER_DECISION);
    byte[] straggler = keysIn(HALF, "straggler", 1).get(0);
    assertThat(a.put(straggler, bytes("old ring"), EPOCH - 1)).isInstanceOf(WriteResult.Applied.class);
    await("the run keeps following its source").atMost(Harness.WAIT)
        .until(() -> t.contents(HALF).containsKey(text(straggler)));
    assertThat(a.fences()).as("the source is not fenced").isEmpty();

    staged(); // wakes the run (its poll interval is 30 s): now it waits for the participants
    h.awaitStatus(id, "waiting for the participants", s -> s.getBlockedReason() != null
        && s.getBlockedReason().startsWith("waiting for every live participant"));
    assertThat(a.fences()).as("still not fenced").isEmpty();

    converged(1);
    h.awaitState(id, TaskState.VERIFIED);
    assertThat(a.fences()).extracting(f -> f.epoch()).containsExactly(EPOCH);
    h.awaitFinished(run);
  }

  /**
   * Runs the task where the cluster's publisher is known to decide plans (a decision on an earlier epoch was read),
   * requests the fence, and returns once the run waits for the decision on its own epoch.
   */
  private TaskRun runUntilWaitingForTheDecision() {
    h.control.onEpoch(epochRecord(EPOCH - 1, EpochState.FENCE_CUTOVER, null));
    TaskRun run = h.run(task);
    h.awaitState(id, TaskState.CAUGHT_UP);
    run.update(fenceRequested(task));
    awaitDecisionWait();
    return run;
  }

  private TaskStatus awaitDecisionWait() {
    return h.awaitStatus(id, "waiting for the decision", s -> s.getBlockedReason() != null
        && s.getBlockedReason().startsWith("waiting for the publisher's cutover decision"));
  }

  /** A FENCE_CUTOVER decision read while the run waits for it fences at once (the record wakes the run). */
  @Test
  void shouldFenceAsSoonAsTheDecisionIsToCutOverAtTheFence() {
    harness(Harness.FAST.withIntervals(Duration.ofMillis(20), Duration.ofSeconds(30)));
    TaskRun run = runUntilWaitingForTheDecision();

    h.control.onEpoch(epochRecord(EPOCH, EpochState.FENCE_CUTOVER, null));
    TaskStatus verified = h.awaitState(id, TaskState.VERIFIED);

    assertThat(verified.getBlockedReason()).isNull();
    assertThat(a.fences()).extracting(f -> f.epoch()).containsExactly(EPOCH);
    h.awaitFinished(run);
  }

  /** No decision within the bound (a publisher that ignored the plan): the run fences anyway, as before stages. */
  @Test
  void shouldFenceAfterTheBoundWhenNoDecisionComes() {
    FakeTime time = FakeTime.offsetFromSystem();
    h = new Harness(nodes.stores(), Limits.unlimited(), Harness.FAST.withIntervals(Duration.ofMillis(20),
        Duration.ofMillis(50)), time, Duration.ZERO);
    TaskRun run = runUntilWaitingForTheDecision();
    assertThat(a.fences()).isEmpty();

    time.advance(CopyRun.DECISION_WAIT.plusSeconds(1));
    h.awaitState(id, TaskState.VERIFIED);

    assertThat(a.fences()).extracting(f -> f.epoch()).containsExactly(EPOCH);
    h.awaitFinished(run);
  }

  /** An epoch that is not staged fences at once, as before stages: cut over at the fence, or not known to be staged. */
  @Test
  void shouldFenceAtOnceWhenTheEpochIsNotStaged() {
    harness(Harness.FAST.withIntervals(Duration.ofMillis(20), Duration.ofSeconds(30)));
    h.control.onEpoch(epochRecord(EPOCH, EpochState.FENCE_CUTOVER, null));
    TaskRun run = h.run(task);
    h.awaitState(id, TaskState.CAUGHT_UP);

    run.update(fenceRequested(task));
    h.awaitState(id, TaskState.VERIFIED);

    assertThat(a.fences()).extracting(f -> f.epoch()).containsExactly(EPOCH);
    assertThat(h.statuses(id)).noneMatch(s -> s.getBlockedReason() != null);
    h.awaitFinished(run);
  }

  /** A staged epoch whose participants converged before the fence was requested fences at once too. */
  @Test
  void shouldFenceAtOnceWhenTheParticipantsConvergedBeforeTheRequest() {
    harness(Harness.FAST.withIntervals(Duration.ofMillis(20), Duration.ofSeconds(30)));
    staged();
    converged(1);
    TaskRun run = h.run(task);
    h.awaitState(id, TaskState.CAUGHT_UP);

    run.update(fenceRequested(task));
    h.awaitState(id, TaskState.VERIFIED);

    assertThat(h.statuses(id)).noneMatch(s -> s.getBlockedReason() != null);
    h.awaitFinished(run);
  }

  /**
   * Dual writes go on while the run verifies: one reaches the source alone before its digest (in flight to the
   * target), so the digests differ; then more land between the three scans of the check, on both stores, and one
   * reaches the target before its scan but the source only later. The first check names the first as missing and the
   * second as unexplained; the run applies each where it is missing, and the second check holds: VERIFIED, never
   * BLOCKED, nothing cleared.
   */
  @Test
  void shouldVerifyAStagedCopyByDominanceWhileDualWritesArriveBetweenTheScans() {
    harness(Harness.FAST);
    staged();
    converged(1);
    TaskRun run = h.run(task);
    h.awaitState(id, TaskState.CAUGHT_UP);
    List<byte[]> keys = keysIn(HALF, "dual", 40);
    byte[] toSourceFirst = keys.get(0);
    byte[] toTargetFirst = keys.get(1);
    Version inFlight = nextVersion();
    AtomicBoolean sourceDigested = new AtomicBoolean();
    AtomicInteger sourceScans = new AtomicInteger();
    AtomicInteger targetScans = new AtomicInteger();
    a.beforeCall(call -> {
      if (call.equals("digest") && sourceDigested.compareAndSet(false, true)) {
        write(toSourceFirst, "reached the source first", a); // the target's copy of it is still on its way
      } else if (call.equals("scan")) {
        int n = sourceScans.incrementAndGet();
        write(keys.get(2 + n), "dual " + n, a, t);
        if (n == 3) {
          write(toTargetFirst, "reached the target first", inFlight, a); // lands on the source at last, after S2
        }
      }
    });
    t.beforeCall(call -> {
      if (call.equals("scan")) {
        int n = targetScans.incrementAndGet();
        write(keys.get(20 + n), "dual to the target first " + n, t, a);
        if (n == 1) {
          write(toTargetFirst, "reached the target first", inFlight, t);
        }
      }
    });

    run.update(fenceRequested(task));
    TaskStatus verified = h.awaitState(id, TaskState.VERIFIED);
    h.awaitFinished(run);
    a.beforeCall(c -> { });
    t.beforeCall(c -> { });

    assertThat(h.statuses(id)).noneMatch(s -> s.getState() == TaskState.BLOCKED);
    assertThat(rounds("differs")).as("the first check").isEqualTo(1);
    assertThat(rounds("holds")).as("the second").isEqualTo(1);
    assertThat(t.contents(HALF)).as("the missing entry re-applied to the target")
        .containsEntry(text(toSourceFirst), hex("reached the source first"));
    assertThat(a.contents(HALF)).containsEntry(text(toTargetFirst), hex("reached the target first"));
    for (byte[] k : keys.subList(3, 6)) {
      assertThat(t.contents(HALF)).as("dual writes between the scans").containsKey(text(k));
    }
    assertThat(t.contents(HALF)).isEqualTo(a.contents(HALF));
    assertThat(verified.getDigest()).as("the source's digest at the drain").isNotNull();
    assertThat(verified.getTargetDigest()).isNull();
    assertThat(verified.getTargetIncarnation()).isEqualTo(t.info().incarnation());
  }

  /**
   * A write that reached the target alone (the client gave up before the source took it, so it was never
   * acknowledged) is not explained by the source: the run writes it to the source, with its version, and verifies.
   * The re-copy of a fenced epoch would have removed it from the target instead.
   */
  @Test
  void shouldApplyToTheSourceATargetEntryTheSourceLacks() {
    harness(Harness.FAST);
    staged();
    converged(1);
    TaskRun run = h.run(task);
    h.awaitState(id, TaskState.CAUGHT_UP);
    byte[] onlyOnTarget = keysIn(HALF, "target-only", 1).get(0);
    write(onlyOnTarget, "never acknowledged", t);

    run.update(fenceRequested(task));
    h.awaitState(id, TaskState.VERIFIED);
    h.awaitFinished(run);

    assertThat(a.get(onlyOnTarget)).as("written to the source").map(v -> new String(v, StandardCharsets.UTF_8))
        .contains("never acknowledged");
    assertThat(t.contents(HALF)).containsKey(text(onlyOnTarget)).isEqualTo(a.contents(HALF));
    assertThat(h.statuses(id)).noneMatch(s -> s.getState() == TaskState.BLOCKED);
    assertThat(rounds("differs")).isEqualTo(1);
    assertThat(rounds("holds")).isEqualTo(1);
  }

  /**
   * 700 dual writes reached the source but not the target (it missed them while it was down, say): a check names 100
   * of each kind, so the run works them off over several rounds, none of which counts towards the limit of 5 while the
   * differences shrink, and verifies.
   */
  @Test
  void shouldWorkOffMoreDifferencesThanOneCheckNames() {
    harness(Harness.FAST);
    staged();
    converged(1);
    TaskRun run = h.run(task);
    h.awaitState(id, TaskState.CAUGHT_UP);
    List<byte[]> missed = keysIn(HALF, "missed", 700);
    AtomicBoolean sourceDigested = new AtomicBoolean();
    a.beforeCall(call -> {
      if (call.equals("digest") && sourceDigested.compareAndSet(false, true)) {
        missed.forEach(k -> write(k, "missed by the target", a));
      }
    });

    run.update(fenceRequested(task));
    h.awaitState(id, TaskState.VERIFIED);
    h.awaitFinished(run);

    assertThat(rounds("differs")).as("700 differences, 100 a round").isEqualTo(7);
    assertThat(rounds("holds")).isEqualTo(1);
    assertThat(t.contents(HALF)).isEqualTo(a.contents(HALF));
    assertThat(h.statuses(id)).noneMatch(s -> s.getState() == TaskState.BLOCKED);
  }

  /**
   * A target that keeps losing a dual write: the entry stays missing through 5 rounds, and the attempt ends BLOCKED with
   * the last check's outcome, the key and both digests of the drain, and verifies again after the backoff; once the
   * target is mended, the next attempt verifies.
   */
  @Test
  void shouldBlockAfterTheRoundsWithTheLastOutcomeAndVerifyOnceTheTargetIsMended() {
    harness(Harness.FAST);
    staged();
    converged(1);
    TaskRun run = h.run(task);
    h.awaitState(id, TaskState.CAUGHT_UP);
    byte[] lost = keysIn(HALF, "lost", 1).get(0);
    t.loseApplied(text(lost)::equals);
    write(lost, "lost by the target", a);

    run.update(fenceRequested(task));
    TaskStatus blocked = h.awaitStatus(id, "the first failed attempt",
        s -> s.getState() == TaskState.BLOCKED && s.getBlockedReason().endsWith("(attempt 1)"));

    String reason = blocked.getBlockedReason();
    assertThat(reason).startsWith("range digests differ after draining to fence position " + blocked.getFencePosition()
        + " of staged epoch 2, and the target does not dominate the source after 5 rounds (re-applied 5 entries to the "
        + "target and 0 to the source): ");
    assertThat(reason).contains(" keys compared at cut ", ": 1 missing or older on the target, 0 on the target that "
        + "the source does not explain; missing or older on the target: \"" + text(lost) + "\"; source node-a had ",
        ", target node-t had ", " at the drain; verifying again in 50 ms (attempt 1)");
    assertThat(WorkerMetrics.BlockReason.of(reason)).isEqualTo(WorkerMetrics.BlockReason.DIGEST_MISMATCH);
    assertThat(blocked.getDigest()).isNotNull();
    assertThat(blocked.getTargetDigest()).isNotNull().isNotEqualTo(blocked.getDigest());
    assertThat(rounds("differs")).isGreaterThanOrEqualTo(5);
    assertThat(run.finished()).as("a blocked verification keeps trying").isFalse();

    t.loseApplied(k -> false);
    h.awaitState(id, TaskState.VERIFIED);
    h.awaitFinished(run);
    assertThat(t.contents(HALF)).isEqualTo(a.contents(HALF));
  }

  /** An epoch that is not staged keeps today's verification: a lasting mismatch is re-copied, then BLOCKED. */
  @Test
  void shouldStillBlockOnADigestMismatchWhenTheEpochIsNotStaged() {
    harness(Harness.FAST);
    h.control.onEpoch(epochRecord(EPOCH, EpochState.FENCE_CUTOVER, null));
    TaskRun run = h.run(task);
    h.awaitState(id, TaskState.CAUGHT_UP);
    byte[] lost = keysIn(HALF, "lost", 1).get(0);
    t.loseApplied(text(lost)::equals);
    assertThat(a.put(lost, bytes("lost by the target"), EPOCH - 1)).isInstanceOf(WriteResult.Applied.class);

    run.update(fenceRequested(task));
    TaskStatus blocked = h.awaitState(id, TaskState.BLOCKED);

    assertThat(blocked.getBlockedReason()).startsWith("range digests differ after draining to fence position "
        + blocked.getFencePosition() + " and re-copying ").endsWith("(attempt 1)");
    assertThat(rounds("holds") + rounds("differs")).as("no dominance check").isZero();
    run.stop(TaskControl.Stop.CANCEL);
    h.awaitFinished(run);
  }

  /**
   * The staged plan is abandoned (REVERTED) while the run waits for its participants: what the orchestrator plans
   * again under the number takes the fence, so the run fences at once (the record wakes it) instead of waiting on.
   */
  @Test
  void shouldFenceAtOnceWhenTheStagedEpochIsReverted() {
    harness(Harness.FAST.withIntervals(Duration.ofMillis(20), Duration.ofSeconds(30)));
    staged();
    TaskRun run = h.run(task);
    h.awaitState(id, TaskState.CAUGHT_UP);
    run.update(fenceRequested(task));
    h.awaitStatus(id, "waiting for the participants", s -> s.getBlockedReason() != null
        && s.getBlockedReason().startsWith("waiting for every live participant"));
    int published = h.statuses(id).size();

    h.control.onEpoch(epochRecord(EPOCH, EpochState.REVERTED, null));
    h.awaitState(id, TaskState.VERIFIED);

    assertThat(h.control.dead(Harness.CLUSTER, EPOCH)).isFalse();
    assertThat(h.statuses(id).size()).as("statuses after the revert").isGreaterThan(published);
    run.stop(TaskControl.Stop.CANCEL);
    h.awaitFinished(run);
  }

  private static String hex(String value) {
    return java.util.HexFormat.of().formatHex(bytes(value));
  }
}
