package io.ringshift.publisher.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;

import io.ringshift.protocol.AvroBytes;
import io.ringshift.publisher.ClusterScript;
import io.ringshift.publisher.ClusterScript.Step;
import io.ringshift.ring.Member;
import io.ringshift.ring.RingRange;
import io.ringshift.protocol.FillingRange;
import io.ringshift.protocol.PublishedSnapshot;
import io.ringshift.protocol.RingSnapshotCodec;
import io.ringshift.protocol.SigningKey;
import io.ringshift.protocol.TrustedKeys;
import io.ringshift.schemas.avro.EpochRecord;
import io.ringshift.schemas.avro.EpochState;
import io.ringshift.schemas.avro.MemberSpec;
import io.ringshift.schemas.avro.MembershipAction;
import io.ringshift.schemas.avro.RangeCopyTask;
import io.ringshift.schemas.avro.TaskKind;
import io.ringshift.schemas.avro.TaskState;
import io.ringshift.schemas.avro.TaskStatus;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * The publisher's decisions, without Kafka: {@link PublisherState} fed the records a cluster's orchestrator and
 * workers write ({@link ClusterScript}), one test per failed check, the three kinds of epoch that pass, and replay.
 * A check on the tasks does not reject at first sight ({@link Verdict.NotYet}); its tests take the rejection it
 * carries, as the publisher writes it once its patience is spent ({@link DecisionQueueTest}).
 */
class PublisherStateTest {
  private static final SigningKey KEY = SigningKey.generate();
  private static final long NOW = 1_700_000_000_000L;
  private static final RingSnapshotCodec CODEC = new RingSnapshotCodec();

  private final PublisherState state = new PublisherState(TrustedKeys.of(KEY.publicKey()));
  private final TaskBook tasks = new TaskBook();
  private final ClusterScript script = new ClusterScript("eu-west/cache");
  /** Every record written to ring.epochs, in order, as a replaying publisher would read it. */
  private final List<EpochRecord> log = new ArrayList<>();

  // ---- epochs that pass ----

  @Test
  void shouldPublishTheFirstEpochUnchainedAndSignedByTheKey() {
    Step init = script.init(6);

    Verdict.Publish p = publish(init);

    PublishedSnapshot snapshot = p.snapshot();
    assertThat(snapshot.epoch()).isEqualTo(1);
    assertThat(snapshot.previousChecksum()).isNull();
    assertThat(snapshot.checksum()).isEqualTo(init.ring().checksum());
    assertThat(snapshot.filling()).isEmpty();
    assertThatCode(() -> TrustedKeys.of(KEY.publicKey()).verify(snapshot)).doesNotThrowAnyException();
    EpochRecord record = p.record();
    assertThat(record.getState()).isEqualTo(EpochState.PUBLISHED);
    assertThat(record.getSigningKeyId()).isEqualTo(KEY.id());
    assertThat(AvroBytes.toArray(record.getSignature())).isEqualTo(snapshot.signature());
    assertThat(record.getTimestampMillis()).isEqualTo(NOW);
    assertThat(withoutPublication(record)).isEqualTo(withoutPublication(init.ready()));
    assertThat(CODEC.decodePublished(CODEC.encode(snapshot))).isEqualTo(snapshot);
  }

  @Test
  void shouldPublishAJoinWhoseTasksAreVerifiedChainedToTheEpochBefore() {
    Verdict.Publish first = publish(script.init(6));
    Step join = script.join("node-07", "az-1");
    assertThat(join.tasks()).isNotEmpty();

    Verdict.Publish second = publish(join);

    assertThat(second.snapshot().follows(first.snapshot())).isTrue();
    assertThat(second.snapshot().epoch()).isEqualTo(2);
    assertThat(second.snapshot().filling()).isEmpty();
  }

  @Test
  void shouldPublishAFailureEpochAtOnceWithTheReplicasItAddsMarkedFilling() {
    publish(script.init(6));
    Step join = script.join("node-07", "az-1");
    publish(join);
    Step failure = script.fail("node-03");
    assertThat(failure.tasks()).isEmpty();

    Verdict.Publish p = publish(failure);

    assertThat(p.snapshot().filling()).isNotEmpty()
        .isEqualTo(FillingRange.between(join.ring(), failure.ring()));
    assertThat(p.snapshot().filling()).extracting(FillingRange::node).doesNotContain("node-03");
  }

  @Test
  void shouldPublishTheRepairEpochThatFillsTheMarkedReplicas() {
    publish(script.init(6));
    publish(script.fail("node-02"));
    Step repair = script.repair();
    assertThat(repair.tasks()).isNotEmpty().extracting(RangeCopyTask::getKind).contains(TaskKind.REPAIR);

    Verdict.Publish p = publish(repair);

    assertThat(p.snapshot().filling()).isEmpty();
    assertThat(state.lastPublished(script.cluster())).isEqualTo(3);
  }

  @Test
  void shouldPublishEveryEpochOfARandomHistoryOfJoinsDrainsFailuresAndRepairs() {
    long seed = Long.getLong("ringshift.seed", System.nanoTime());
    System.out.printf("PublisherStateTest: seed %d (replay: -Dringshift.seed=%d)%n", seed, seed);
    Random random = new Random(seed);
    Verdict.Publish previous = publish(script.init(9));
    List<String> nodes = new ArrayList<>();
    for (int i = 1; i <= 9; i++) {
      nodes.add(String.format("node-%02d", i));
    }
    int next = 10;
    for (int step = 0; step < 20; step++) {
      Step s;
      int choice = random.nextInt(3);
      if (choice == 0 || nodes.size() <= 5) {
        String node = String.format("node-%02d", next++);
        nodes.add(node);
        s = script.join(node, "az-" + (1 + random.nextInt(3)));
      } else if (choice == 1) {
        s = script.drain(nodes.remove(random.nextInt(nodes.size())));
      } else {
        Verdict.Publish failure = publish(script.fail(nodes.remove(random.nextInt(nodes.size()))));
        assertThat(failure.snapshot().follows(previous.snapshot())).as("seed %d step %d", seed, step).isTrue();
        previous = failure;
        if (failure.snapshot().filling().isEmpty()) {
          continue; // fewer than R zones left: repaired before it was published, no repair epoch
        }
        s = script.repair();
      }
      Verdict.Publish p = publish(s);
      assertThat(p.snapshot().follows(previous.snapshot())).as("seed %d step %d", seed, step).isTrue();
      assertThat(p.snapshot().filling()).as("seed %d step %d", seed, step).isEmpty();
      previous = p;
    }
  }

  @Test
  void shouldDecideAJoinAndAFailureAtTheReferenceScale() {
    ClusterScript reference = new ClusterScript("reference", 256); // 120 nodes x 256 tokens, R = 3
    PublisherState s = new PublisherState(TrustedKeys.of(KEY.publicKey()));
    TaskBook book = new TaskBook();
    Step init = reference.init(120);
    s.onRecord(init.ready());
    s.onRecord(((Verdict.Publish) s.decide(s.takePending().get(0), book, KEY, NOW)).record());
    for (Step step : List.of(reference.join("node-121", "az-1"), reference.fail("node-07"))) {
      step.tasks().forEach(t -> book.onTask(t.getTaskId(), t));
      step.verified().forEach(v -> book.onStatus(v.getTaskId(), v));
      s.onRecord(step.ready());
      EpochRecord ready = s.takePending().get(0);
      long t0 = System.nanoTime();
      Verdict v = s.decide(ready, book, KEY, NOW);
      long micros = (System.nanoTime() - t0) / 1_000;
      assertThat(v).isInstanceOf(Verdict.Publish.class);
      s.onRecord(((Verdict.Publish) v).record());
      System.out.printf("PublisherStateTest: %s epoch %d at 120 x 256, R = 3 (%d tasks, %d filling marks): "
          + "decided in %d ms%n", ready.getCause().getAction(), ready.getEpoch(), step.tasks().size(),
          ready.getFilling().size(), micros / 1_000);
    }
  }

  // ---- one test per failed check ----

  @Test
  void rejectsAnEpochWhoseMembershipDoesNotRebuildToItsChecksum() {
    publish(script.init(6));
    Step join = script.join("node-07", "az-1");
    EpochRecord tampered = copy(join.ready());
    MemberSpec heavier = tampered.getMembers().get(0);
    heavier.setWeight(2.0);

    Verdict.Reject r = reject(join, tampered, Check.CHECKSUM);

    assertThat(r.record().getReason()).startsWith("CHECKSUM: the membership and parameters of epoch 2 rebuild to "
        + "checksum ").contains("but the record's targetChecksum is " + hex(join.ring().checksum()));
  }

  @Test
  void rejectsAnEpochNamingAPlacementPolicyThisPublisherDoesNotImplement() {
    Step init = script.init(6);
    EpochRecord tampered = copy(init.ready());
    tampered.setPolicyId("vnode-ring/zone-aware-walk/v2");

    Verdict.Reject r = reject(init, tampered, Check.REBUILD);

    assertThat(r.record().getReason()).contains("vnode-ring/zone-aware-walk/v2");
  }

  @Test
  void rejectsARangeWhoseReplicasNameANodeTwice() {
    List<Member> replicas = List.of(Member.of("a", "az-1"), Member.of("b", "az-2"), Member.of("a", "az-1"));

    String violation = EpochCheck.placementViolation(1, r -> RingRange.of(10, 20), r -> replicas, 3, true);

    assertThat(violation).isEqualTo("range (10, 20] names a node twice among its replicas [a, b, a]; replicas must "
        + "be distinct nodes");
  }

  @Test
  void rejectsARangeWithTwoReplicasInOneZoneWhenTheRingHasAtLeastRZones() {
    List<Member> replicas = List.of(Member.of("a", "az-1"), Member.of("b", "az-2"), Member.of("c", "az-1"));

    assertThat(EpochCheck.placementViolation(1, r -> RingRange.of(10, 20), r -> replicas, 3, true))
        .isEqualTo("range (10, 20] places two of its replicas [a, b, c] in zone az-1; the ring has at least R "
            + "zones, so replicas must be in distinct zones");
    assertThat(EpochCheck.placementViolation(1, r -> RingRange.of(10, 20), r -> replicas, 3, false))
        .as("fewer zones than R: sharing a zone is the best placement").isNull();
  }

  @Test
  void rejectsARangeWithFewerReplicasThanMinOfRAndNodes() {
    List<Member> replicas = List.of(Member.of("a", "az-1"), Member.of("b", "az-2"));

    assertThat(EpochCheck.placementViolation(1, r -> RingRange.of(10, 20), r -> replicas, 3, true))
        .isEqualTo("range (10, 20] has 2 replicas [a, b]; it must have min(R, nodes) = 3");
  }

  @Test
  void shouldFindNoPlacementViolationInARingBuiltByTheRingLibrary() {
    Step init = script.init(12);

    assertThat(EpochCheck.placementViolation(init.ring())).isNull();
  }

  @Test
  void rejectsAnEpochThatSkipsOneNamingBothNumbers() {
    publish(script.init(6));
    script.join("node-07", "az-1"); // epoch 2, never offered
    Step skipping = script.join("node-08", "az-2");

    Verdict.Reject r = reject(skipping, skipping.ready(), Check.SEQUENCE);

    assertThat(r.record().getReason()).isEqualTo("SEQUENCE: epoch 3 does not follow the last published epoch 1 of "
        + "cluster eu-west/cache; published epochs are consecutive (numbers of rejected and cancelled epochs aside), "
        + "so only epoch 2 can be published next");
  }

  @Test
  void shouldPublishAnEpochAboveARejectedOneChainedToTheLastPublishedAfterTheOrchestratorRolledBack() {
    Step init = script.init(6);
    publish(init);
    Step join = script.join("node-07", "az-1");
    EpochRecord broken = copy(join.ready());
    broken.setPreviousChecksum(java.nio.ByteBuffer.wrap(new byte[32]));
    reject(join, broken, Check.CHAIN); // epoch 2 rejected
    script.rollBackTo(init, 3); // epochs 2 and 3 (its successor in flight) rolled back

    Step again = script.join("node-07", "az-1");

    assertThat(again.epoch()).isEqualTo(4);
    publish(again);
    assertThat(state.lastPublished("eu-west/cache")).isEqualTo(4);
  }

  @Test
  void rejectsAGapBelowTheHighestRejectedEpoch() {
    Step init = script.init(6);
    publish(init);
    Step join = script.join("node-07", "az-1");
    EpochRecord broken = copy(join.ready());
    broken.setEpoch(5);
    broken.setPreviousChecksum(java.nio.ByteBuffer.wrap(new byte[32]));
    reject(join, broken, Check.SEQUENCE); // epoch 5 rejected
    script.rollBackTo(init, 2);

    Step below = script.join("node-08", "az-2"); // epoch 3: a gap, but not above the rejected epoch

    Verdict.Reject r = reject(below, below.ready(), Check.SEQUENCE);
    assertThat(r.record().getReason()).endsWith("only epoch 2 can be published next, or an epoch above the rejected "
        + "or cancelled epoch 5");
  }

  /** Found by DataCommandsIT: the join after a cancelled one (epoch 2) is epoch 3, and used to be rejected. */
  @Test
  void shouldPublishTheEpochAfterACancelledOne() {
    Step init = script.init(6);
    publish(init);
    Step join = script.join("node-07", "az-1"); // epoch 2, cancelled before it was READY
    state.onRecord(EpochRecord.newBuilder(join.ready()).setState(EpochState.CANCELLED)
        .setReason("cancelled by test").build());
    script.rollBackTo(init, 2);

    Step next = script.join("node-08", "az-2");

    assertThat(next.epoch()).isEqualTo(3);
    publish(next);
    assertThat(state.lastPublished("eu-west/cache")).isEqualTo(3);
  }

  @Test
  void rejectsAnEpochOlderThanTheLastPublishedWithAnotherRing() {
    publish(script.init(6));
    Step join = script.join("node-07", "az-1");
    publish(join);
    EpochRecord older = copy(join.ready());
    older.setEpoch(1);

    Verdict.Reject r = reject(join, older, Check.SEQUENCE);

    assertThat(r.record().getReason()).startsWith("SEQUENCE: epoch 1 is older than the last published epoch 2 of "
        + "cluster eu-west/cache, and was published with checksum ").endsWith("only epoch 3 can be published next");
  }

  @Test
  void rejectsAPreviousChecksumThatIsNotTheLastPublishedOne() {
    Verdict.Publish first = publish(script.init(6));
    Step join = script.join("node-07", "az-1");
    EpochRecord broken = copy(join.ready());
    broken.setPreviousChecksum(ByteBuffer.wrap(new byte[32]));

    Verdict.Reject r = reject(join, broken, Check.CHAIN);

    assertThat(r.record().getReason()).isEqualTo("CHAIN: epoch 2 names previousChecksum " + "00".repeat(32)
        + ", but the last published epoch 1 of cluster eu-west/cache has checksum "
        + hex(first.snapshot().checksum()));
  }

  @Test
  void rejectsAFirstEpochThatNamesAPreviousChecksum() {
    Step init = script.init(6);
    EpochRecord broken = copy(init.ready());
    broken.setPreviousChecksum(ByteBuffer.wrap(new byte[32]));

    Verdict.Reject r = reject(init, broken, Check.CHAIN);

    assertThat(r.record().getReason()).startsWith("CHAIN: epoch 1 would be the first published epoch of cluster "
        + "eu-west/cache, so its previousChecksum must be null");
  }

  @Test
  void shouldWaitForTasksThatAreNotVerifiedAndWouldRejectNamingThemAndTheirStates() {
    publish(script.init(6));
    Step join = script.join("node-07", "az-1");
    List<TaskStatus> statuses = new ArrayList<>(join.verified());
    String copying = join.tasks().get(0).getTaskId();
    String silent = join.tasks().get(1).getTaskId();
    statuses.set(0, Step.status(join.tasks().get(0), TaskState.COPYING));
    statuses.remove(1);

    Verdict.Reject r = rejectAfterWaiting(join.tasks(), statuses, join.ready(), Check.TASKS);

    assertThat(r.record().getReason()).startsWith("TASKS: 2 of the " + join.tasks().size() + " COPY/REPAIR tasks of "
        + "epoch 2 are not VERIFIED on ring.task-status: ")
        .contains(copying + " (COPYING)", silent + " (no status)");
  }

  @Test
  void shouldWaitForAnEpochWithFewerLiveTasksThanItsDiffSummaryCounts() {
    publish(script.init(6));
    Step join = script.join("node-07", "az-1");
    List<RangeCopyTask> live = join.tasks().subList(1, join.tasks().size());

    Verdict.Reject r = rejectAfterWaiting(live, join.verified(), join.ready(), Check.TASKS);

    assertThat(r.record().getReason()).isEqualTo("TASKS: ring.tasks holds " + live.size() + " live COPY/REPAIR "
        + "tasks of epoch 2, but its diffSummary.tasks is " + join.tasks().size());
  }

  @Test
  void shouldWaitForAnAddedReplicaThatNoVerifiedTaskFilledAndNoMarkCovers() {
    publish(script.init(6));
    Step join = script.join("node-07", "az-1");
    RangeCopyTask dropped = join.tasks().get(0);
    List<RangeCopyTask> live = join.tasks().subList(1, join.tasks().size());
    EpochRecord ready = copy(join.ready());
    ready.getDiffSummary().setTasks(live.size());

    Verdict.Reject r = rejectAfterWaiting(live, join.verified(), ready, Check.ADDITIONS);

    // The dropped task may have filled several ranges of the diff (adjacent ones coalesce into one task).
    assertThat(r.record().getReason()).startsWith("ADDITIONS: epoch 2 gives ")
        .contains(" replica range(s) that are not complete (no complete replica in the published epoch 1, and no "
            + "VERIFIED COPY/REPAIR task of epoch 2 filled them) and that no filling mark covers: node-07 on ("
            + Long.toUnsignedString(dropped.getRangeStart()) + ", ")
        .contains("(first uncovered position " + Long.toUnsignedString(dropped.getRangeStart() + 1) + ")");
  }

  @Test
  void shouldWaitForAFailureEpochThatDoesNotMarkTheReplicasItAdds() {
    publish(script.init(6));
    Step failure = script.fail("node-04");
    EpochRecord unmarked = copy(failure.ready());
    unmarked.setFilling(List.of());

    Verdict.Reject r = rejectAfterWaiting(failure.tasks(), failure.verified(), unmarked, Check.ADDITIONS);

    assertThat(r.record().getReason()).startsWith("ADDITIONS: epoch 2 gives ");
  }

  @Test
  void shouldWaitForFillingMarksOnReplicasThatAVerifiedTaskFilled() {
    Step init = script.init(6);
    publish(init);
    Step join = script.join("node-07", "az-1");
    EpochRecord marked = copy(join.ready());
    marked.setFilling(RingSnapshotCodec.toAvro(FillingRange.between(init.ring(), join.ring())));

    Verdict.Reject r = rejectAfterWaiting(join.tasks(), join.verified(), marked, Check.FILLING);

    assertThat(r.record().getReason()).contains("cover replicas that a VERIFIED task of the epoch filled")
        .contains("VERIFIED task " + script.cluster().replace("/", "%2F") + "/2/copy/");
  }

  /**
   * Epoch 2 fails node-03 (marked); epoch 3, also marked, drains node-04 and brings node-03 back. Against the last
   * complete ring (epoch 1) node-03's ranges are no additions, so the old check published epoch 3 with no marks on
   * them, and clients read node-03 as complete although it missed every write of epoch 2. Tracked epoch by epoch,
   * node-03 is no complete replica of anything after epoch 2, so every range epoch 3 gives it must be filled by a
   * task or marked.
   */
  @Test
  void shouldWaitForAMarkedEpochThatBringsBackANodeAnEarlierFailureEpochRemoved() {
    Step init = script.init(6);
    publish(init);
    Member dead = init.ring().members().stream().filter(m -> m.id().equals("node-03")).findFirst().orElseThrow();
    Verdict.Publish failure = publish(script.fail("node-03"));
    assertThat(failure.snapshot().filling()).isNotEmpty();
    List<Member> next = new ArrayList<>(script.members());
    next.removeIf(m -> m.id().equals("node-04"));
    next.add(dead);
    Step back = script.markedAgainstLastComplete(next, MembershipAction.DRAIN, "node-04");
    assertThat(back.ready().getFilling()).as("marks for what node-04 leaves").isNotEmpty()
        .noneMatch(f -> f.getNode().equals("node-03"));

    Verdict.Reject r = rejectAfterWaiting(back.tasks(), back.verified(), back.ready(), Check.ADDITIONS);

    assertThat(r.record().getReason()).startsWith("ADDITIONS: epoch 3 gives ")
        .contains("that are not complete (no complete replica in the published epoch 2, and no VERIFIED COPY/REPAIR "
            + "task of epoch 3 filled them) and that no filling mark covers: node-03 on (");
  }

  /** A repair task that names as its source the replica the failure epoch marked filling: it would copy the gaps. */
  @Test
  void shouldWaitForATaskWhoseSourceWasNoCompleteReplicaInThePreviousEpoch() {
    publish(script.init(6));
    publish(script.fail("node-02"));
    Step repair = script.repair();
    RangeCopyTask task = repair.tasks().get(0);
    RangeCopyTask fromFilling = RangeCopyTask.newBuilder(task).setSources(List.of(task.getTarget())).build();
    List<RangeCopyTask> live = new ArrayList<>(repair.tasks());
    live.set(0, fromFilling);

    Verdict.Reject r = rejectAfterWaiting(live, repair.verified(), repair.ready(), Check.SOURCES);

    assertThat(r.record().getReason()).isEqualTo("SOURCES: 1 task source(s) of epoch 3 were no complete replica of "
        + "their task's range in the published epoch 2; a task may copy only from a complete replica, or it copies "
        + "the gaps of one still filling: " + task.getTarget() + " for task " + task.getTaskId()
        + " (first incomplete position " + Long.toUnsignedString(task.getRangeStart() + 1) + ")");
  }

  @Test
  void rejectsFillingMarksOnReplicasTheRingDoesNotAdd() {
    publish(script.init(6));
    Step join = script.join("node-07", "az-1");
    EpochRecord marked = copy(join.ready());
    marked.setFilling(RingSnapshotCodec.toAvro(List.of(new FillingRange(0, 0, "node-01"))));

    Verdict.Reject r = reject(join, marked, Check.FILLING);

    assertThat(r.record().getReason()).isEqualTo("FILLING: 1 filling mark(s) of epoch 2 name pairs that are no "
        + "replica of its ring or were complete replicas in the published epoch 1; only a replica that is not "
        + "complete can be marked: (0, 0] node-01 (position 1)");
  }

  @Test
  void rejectsAFillingMarkNamingANodeThatIsNotAMember() {
    Step init = script.init(6);
    EpochRecord marked = copy(init.ready());
    marked.setFilling(RingSnapshotCodec.toAvro(List.of(new FillingRange(0, 0, "node-99"))));

    Verdict.Reject r = reject(init, marked, Check.FILLING);

    assertThat(r.record().getReason()).contains("node-99");
  }

  @Test
  void rejectsFillingMarksOnARingWithFewerZonesThanReplicasNamingBoth() {
    ClusterScript twoZones = new ClusterScript("two-zones");
    Step init = twoZones.init(6, 2);
    publish(init);
    // What an orchestrator that published every failure at once would write: no tasks, the additions marked.
    Step failure = twoZones.fail("node-03");
    EpochRecord atOnce = copy(failure.ready());
    atOnce.setFilling(RingSnapshotCodec.toAvro(FillingRange.between(init.ring(), failure.ring())));
    atOnce.getDiffSummary().setTasks(0);
    assertThat(atOnce.getFilling()).as("a removal in a ring of 2 zones adds replicas").isNotEmpty();

    Verdict.Reject r = reject(List.of(), List.of(), atOnce, Check.FILLING);

    assertThat(r.record().getReason()).isEqualTo("FILLING: epoch 2 carries " + atOnce.getFilling().size()
        + " filling mark(s), but its ring has 2 zone(s) [az-1, az-2] for R = 3 replicas; marks need at least R "
        + "zones, because with fewer a removal can move surviving replicas out of a range, which would miss the "
        + "epoch's writes and later be read as complete");
  }

  @Test
  void shouldWaitForTheTombstonesOfASupersededPlanThenPublishesTheFailureEpoch() {
    publish(script.init(6));
    // The plan of epoch 2 that a failure superseded: its tasks are live on ring.tasks until the tombstones the
    // orchestrator writes with the failure epoch's READY record are read; none was verified.
    ClusterScript superseded = new ClusterScript(script.cluster());
    superseded.init(6);
    List<RangeCopyTask> oldTasks = superseded.join("node-07", "az-1").tasks();
    feed(oldTasks, List.of());
    Step failure = script.fail("node-04");

    Verdict first = offer(null, failure.ready());

    assertThat(first).isInstanceOf(Verdict.NotYet.class);
    assertThat(((Verdict.NotYet) first).reason()).startsWith("TASKS: " + oldTasks.size() + " of the "
        + oldTasks.size() + " COPY/REPAIR tasks of epoch 2 are not VERIFIED");
    oldTasks.forEach(t -> tasks.onTask(t.getTaskId(), null));
    Verdict second = state.decide(failure.ready(), tasks, KEY, NOW);
    assertThat(second).isInstanceOf(Verdict.Publish.class);
    assertThat(((Verdict.Publish) second).snapshot().filling()).isNotEmpty();
  }

  @Test
  void shouldWriteARejectedRecordAsTheReadyRecordWithTheReasonAndNoSignature() {
    Step init = script.init(6);
    EpochRecord broken = copy(init.ready());
    broken.setPreviousChecksum(ByteBuffer.wrap(new byte[32]));

    EpochRecord rejected = reject(init, broken, Check.CHAIN).record();

    assertThat(rejected.getState()).isEqualTo(EpochState.REJECTED);
    assertThat(rejected.getSignature()).isNull();
    assertThat(rejected.getTimestampMillis()).isEqualTo(NOW);
    EpochRecord same = copy(rejected);
    same.setState(EpochState.READY);
    same.setReason(null);
    same.setTimestampMillis(broken.getTimestampMillis());
    assertThat(same).isEqualTo(broken);
  }

  // ---- replay ----

  @Test
  void shouldIgnoreAReadyRecordOfAnEpochAlreadyPublishedWithTheSameRing() {
    publish(script.init(6));
    Step join = script.join("node-07", "az-1");
    publish(join);

    state.onRecord(join.ready());
    Verdict again = state.decide(single(), tasks, KEY, NOW);

    assertThat(again).isInstanceOf(Verdict.Ignore.class);
    assertThat(((Verdict.Ignore) again).why()).isEqualTo("epoch 2 of cluster eu-west/cache is already published "
        + "with this ring (checksum " + hex(join.ring().checksum()) + ")");
  }

  @Test
  void shouldLeaveNothingToDecideAfterReplayingTheWholeLog() {
    publish(script.init(6));
    publish(script.join("node-07", "az-1"));
    Step failure = script.fail("node-02");
    EpochRecord broken = copy(failure.ready());
    broken.setFilling(List.of());
    rejectAfterWaiting(failure.tasks(), failure.verified(), broken, Check.ADDITIONS); // a READY that was rejected
    publish(failure);
    publish(script.repair());

    PublisherState replayed = new PublisherState(TrustedKeys.of(KEY.publicKey()));
    log.forEach(replayed::onRecord);

    assertThat(replayed.pendingCount()).isZero();
    assertThat(replayed.lastPublished(script.cluster())).isEqualTo(4);
    // Its own records read back once more change nothing.
    log.stream().filter(r -> r.getState() == EpochState.PUBLISHED).forEach(replayed::onRecord);
    assertThat(replayed.lastPublished(script.cluster())).isEqualTo(4);
    assertThat(replayed.pendingCount()).isZero();
  }

  @Test
  void shouldPublishTheSameBytesAfterReplayWhenThePublisherDiedBeforeCommitting() {
    publish(script.init(6));
    Step join = script.join("node-07", "az-1");
    feed(join.tasks(), join.verified());
    // The publisher decides, then dies before its transaction commits: the log ends with the READY record.
    Verdict.Publish lost = (Verdict.Publish) offer(join.planned(), join.ready());

    PublisherState replayed = new PublisherState(TrustedKeys.of(KEY.publicKey()));
    log.forEach(replayed::onRecord);
    List<EpochRecord> pending = replayed.takePending();

    assertThat(pending).containsExactly(join.ready());
    Verdict.Publish again = (Verdict.Publish) replayed.decide(pending.get(0), tasks, KEY, NOW);
    assertThat(CODEC.encode(again.snapshot())).as("Ed25519 signatures are deterministic")
        .isEqualTo(CODEC.encode(lost.snapshot()));
  }

  @Test
  void shouldNotDecideARejectedReadyRecordAgainAfterReplayButDecideAnotherPlanOfTheEpoch() {
    publish(script.init(6));
    Step join = script.join("node-07", "az-1");
    EpochRecord unverified = copy(join.ready());
    rejectAfterWaiting(join.tasks(), List.of(), unverified, Check.TASKS);
    EpochRecord replan = copy(join.ready());
    replan.setPlanVersion(1);
    log.add(replan);

    PublisherState replayed = new PublisherState(TrustedKeys.of(KEY.publicKey()));
    log.forEach(replayed::onRecord);

    assertThat(replayed.takePending()).containsExactly(replan);
  }

  @Test
  void shouldIgnoreAPublishedRecordItDidNotSignAndPublishesTheEpochItself() {
    Step init = script.init(6);
    publish(init);
    Step join = script.join("node-07", "az-1");
    feed(join.tasks(), join.verified());
    log.add(join.planned());
    log.add(join.ready());
    // Another writer of ring.epochs claims epoch 2 with its own key, and with ours over another checksum.
    SigningKey intruder = SigningKey.generate();
    PublishedSnapshot forged = PublishedSnapshot.unsigned(join.ring(), init.ring().checksum(), List.of())
        .signedBy(intruder);
    EpochRecord byIntruder = copy(join.ready());
    byIntruder.setState(EpochState.PUBLISHED);
    byIntruder.setSignature(ByteBuffer.wrap(forged.signature()));
    byIntruder.setSigningKeyId(intruder.id());
    log.add(byIntruder);
    Verdict.Publish genuine = (Verdict.Publish) state.decide(join.ready(), tasks, KEY, NOW);
    EpochRecord altered = copy(genuine.record());
    altered.setTargetChecksum(ByteBuffer.wrap(new byte[32]));
    log.add(altered);

    PublisherState replayed = new PublisherState(TrustedKeys.of(KEY.publicKey()));
    log.forEach(replayed::onRecord);

    assertThat(replayed.ignoredPublished()).isEqualTo(2);
    assertThat(replayed.lastPublished(join.ready().getClusterId())).isEqualTo(1);
    List<EpochRecord> pending = replayed.takePending();
    assertThat(pending).containsExactly(join.ready());
    assertThat(replayed.decide(pending.get(0), tasks, KEY, NOW)).isInstanceOf(Verdict.Publish.class);
  }

  @Test
  void shouldAcceptTheHistoryOfAnEarlierKeyItIsToldToTrust() {
    SigningKey earlier = SigningKey.generate();
    PublisherState before = new PublisherState(TrustedKeys.of(earlier.publicKey()));
    Step init = script.init(6);
    before.onRecord(init.ready());
    EpochRecord byEarlier = ((Verdict.Publish) before.decide(before.takePending().get(0), tasks, earlier, NOW))
        .record();

    PublisherState rotated = new PublisherState(TrustedKeys.of(earlier.publicKey(), KEY.publicKey()));
    rotated.onRecord(init.ready());
    rotated.onRecord(byEarlier);
    PublisherState notTold = new PublisherState(TrustedKeys.of(KEY.publicKey()));
    notTold.onRecord(init.ready());
    notTold.onRecord(byEarlier);

    assertThat(rotated.lastPublished(init.ready().getClusterId())).isEqualTo(1);
    assertThat(rotated.takePending()).isEmpty();
    assertThat(notTold.lastPublished(init.ready().getClusterId())).isEqualTo(-1);
    assertThat(notTold.ignoredPublished()).isEqualTo(1);
  }

  private Verdict.Publish publish(Step step) {
    feed(step.tasks(), step.verified());
    Verdict v = offer(step.planned(), step.ready());
    assertThat(v).as("epoch %d", step.epoch()).isInstanceOf(Verdict.Publish.class);
    Verdict.Publish p = (Verdict.Publish) v;
    state.onRecord(p.record());
    log.add(p.record());
    assertThat(state.lastPublished(step.ready().getClusterId())).isEqualTo(step.epoch());
    return p;
  }

  private Verdict.Reject reject(Step step, EpochRecord ready, Check check) {
    return reject(step.tasks(), step.verified(), ready, check);
  }

  private Verdict.Reject reject(List<RangeCopyTask> live, List<TaskStatus> statuses, EpochRecord ready,
      Check check) {
    feed(live, statuses);
    Verdict v = offer(null, ready);
    assertThat(v).isInstanceOf(Verdict.Reject.class);
    return rejected((Verdict.Reject) v, check);
  }

  /** A check on the tasks fails: not final yet; the rejection it carries, written as if the patience were spent. */
  private Verdict.Reject rejectAfterWaiting(List<RangeCopyTask> live, List<TaskStatus> statuses, EpochRecord ready,
      Check check) {
    feed(live, statuses);
    Verdict v = offer(null, ready);
    assertThat(v).isInstanceOf(Verdict.NotYet.class);
    return rejected(((Verdict.NotYet) v).rejection(), check);
  }

  private Verdict.Reject rejected(Verdict.Reject r, Check check) {
    assertThat(r.check()).as(r.record().getReason()).isEqualTo(check);
    assertThat(r.record().getReason()).startsWith(check.name() + ": ");
    state.onRecord(r.record());
    log.add(r.record());
    assertThat(state.pendingCount()).isZero();
    return r;
  }

  private void feed(List<RangeCopyTask> live, List<TaskStatus> statuses) {
    live.forEach(t -> tasks.onTask(t.getTaskId(), t));
    statuses.forEach(s -> tasks.onStatus(s.getTaskId(), s));
  }

  private Verdict offer(EpochRecord planned, EpochRecord ready) {
    if (planned != null) {
      state.onRecord(planned);
      log.add(planned);
    }
    state.onRecord(ready);
    log.add(ready);
    return state.decide(single(), tasks, KEY, NOW);
  }

  private EpochRecord single() {
    List<EpochRecord> pending = state.takePending();
    assertThat(pending).hasSize(1);
    return pending.get(0);
  }

  private static EpochRecord copy(EpochRecord r) {
    return EpochRecord.newBuilder(r).build();
  }

  private static EpochRecord withoutPublication(EpochRecord r) {
    EpochRecord c = copy(r);
    c.setState(EpochState.READY);
    c.setSignature(null);
    c.setSigningKeyId(null);
    c.setTimestampMillis(0);
    return c;
  }


  private static String hex(byte[] b) {
    return HexFormat.of().formatHex(b);
  }
}
