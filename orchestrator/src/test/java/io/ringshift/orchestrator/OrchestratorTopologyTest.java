package io.ringshift.orchestrator;

import io.ringshift.protocol.AvroBytes;
import io.ringshift.protocol.EpochRecords;
import io.ringshift.ring.PlacementPolicy;
import io.ringshift.ring.RingSnapshot;
import io.ringshift.protocol.Topics;
import static org.assertj.core.api.Assertions.assertThat;

import io.ringshift.schemas.avro.EpochRecord;
import io.ringshift.schemas.avro.EpochState;
import io.ringshift.schemas.avro.MembershipAction;
import io.ringshift.schemas.avro.MembershipEvent;
import io.ringshift.schemas.avro.RangeCopyTask;
import io.ringshift.schemas.avro.RejectedEvent;
import io.ringshift.schemas.avro.TaskKind;
import io.ringshift.schemas.avro.TaskStatus;
import java.nio.file.Path;
import java.util.List;
import java.util.Properties;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.TestInputTopic;
import org.apache.kafka.streams.TestOutputTopic;
import org.apache.kafka.streams.TopologyTestDriver;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Every path of the orchestrator topology, through {@link TopologyTestDriver}. */
class OrchestratorTopologyTest {
  private static final String CLUSTER = "c1";
  private static final Topics TOPICS = Topics.defaults();

  @TempDir Path stateDir;

  private TopologyTestDriver driver;
  private TestInputTopic<byte[], byte[]> membership;
  private TestInputTopic<String, TaskStatus> statuses;
  private TestInputTopic<String, byte[]> answers;
  private TestOutputTopic<String, EpochRecord> epochs;
  private TestOutputTopic<String, RangeCopyTask> tasks;
  private TestOutputTopic<String, RejectedEvent> rejected;

  @BeforeEach
  void startDriver() {
    Properties props = new Properties();
    props.put(StreamsConfig.APPLICATION_ID_CONFIG, "orchestrator-test");
    props.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, "unused:9092");
    props.put(StreamsConfig.STATE_DIR_CONFIG, stateDir.toString());
    driver = new TopologyTestDriver(OrchestratorTopology.build(TOPICS, 1L << 40, 3), props);
    membership = driver.createInputTopic(TOPICS.membership().name(), new ByteArraySerializer(),
        new ByteArraySerializer());
    statuses = driver.createInputTopic(TOPICS.taskStatus().name(), new StringSerializer(),
        TOPICS.taskStatus().valueSerde().serializer());
    answers = driver.createInputTopic(TOPICS.epochs().name(), new StringSerializer(), new ByteArraySerializer());
    epochs = driver.createOutputTopic(TOPICS.epochs().name(), new StringDeserializer(),
        TOPICS.epochs().valueSerde().deserializer());
    tasks = driver.createOutputTopic(TOPICS.tasks().name(), new StringDeserializer(),
        TOPICS.tasks().valueSerde().deserializer());
    rejected = driver.createOutputTopic(TOPICS.rejected().name(), new StringDeserializer(),
        TOPICS.rejected().valueSerde().deserializer());
  }

  @AfterEach
  void closeDriver() {
    driver.close();
  }

  private void send(MembershipEvent e) {
    membership.pipeInput(Events.key(e), Events.bytes(e));
  }

  private void initTwelveNodes() {
    send(Events.init(CLUSTER, 12, 32));
    assertThat(epochs.readValuesToList()).extracting(r -> r.getState() + "@" + r.getEpoch())
        .containsExactly("PLANNED@1", "READY@1");
  }

  private void verifyAll(List<RangeCopyTask> planned) {
    for (RangeCopyTask t : planned) {
      statuses.pipeInput(t.getTaskId(), Events.verified(CLUSTER, t.getEpoch(), t.getTaskId()));
    }
  }

  @Test
  void shouldDeclareANewClusterAsEpochOneWithoutTasks() {
    initTwelveNodes();

    assertThat(tasks.isEmpty()).isTrue();
    assertThat(rejected.isEmpty()).isTrue();
  }

  @Test
  void shouldPlanAJoinWithOneTaskPerChangedRangeAndNewReplica() {
    initTwelveNodes();

    send(Events.change(CLUSTER, MembershipAction.JOIN, "node-12", "az-2", null));

    List<EpochRecord> planned = epochs.readValuesToList();
    assertThat(planned).singleElement().satisfies(e -> {
      assertThat(e.getState()).isEqualTo(EpochState.PLANNED);
      assertThat(e.getEpoch()).isEqualTo(2);
      assertThat(e.getMembers()).hasSize(13);
      assertThat(e.getCause().getAction()).isEqualTo(MembershipAction.JOIN);
      assertThat(e.getDiffSummary().getTasks()).isPositive();
      assertThat(e.getTargetChecksum().remaining()).isEqualTo(32);
    });
    List<RangeCopyTask> copies = tasks.readValuesToList();
    assertThat(copies).hasSize(planned.get(0).getDiffSummary().getTasks()).allSatisfy(t -> {
      assertThat(t.getTarget()).isEqualTo("node-12");
      assertThat(t.getKind()).isEqualTo(TaskKind.COPY);
      assertThat(t.getEpoch()).isEqualTo(2);
      assertThat(t.getSources()).isNotEmpty().doesNotContain("node-12");
      assertThat(t.getEstimatedBytes()).isPositive();
    });
  }

  @Test
  void shouldRunABalancedClusterWithItsTokensInEveryEpochRecord() {
    MembershipEvent init = Events.init(CLUSTER, 12, 8);
    init.setPolicyId(PlacementPolicy.BALANCED.id());
    send(init);
    List<EpochRecord> first = epochs.readValuesToList();
    assertThat(first).extracting(r -> r.getState() + "@" + r.getEpoch()).containsExactly("PLANNED@1", "READY@1");
    RingSnapshot one = EpochRecords.ring(first.get(1));
    assertThat(one.policy()).isEqualTo(PlacementPolicy.BALANCED);
    assertThat(first.get(1).getMembers()).allSatisfy(m -> assertThat(m.getTokens()).hasSize(8));

    send(Events.change(CLUSTER, MembershipAction.JOIN, "node-12", "az-2", null));
    EpochRecord planned = epochs.readValuesToList().get(0);
    RingSnapshot two = EpochRecords.ring(planned);
    assertThat(two.policyId()).isEqualTo(PlacementPolicy.BALANCED.id());
    for (int m = 0; m < one.memberCount(); m++) {
      String id = one.members().get(m).id();
      assertThat(two.tokensOf(two.memberIndex(id))).as("%s keeps its tokens", id).isEqualTo(one.tokensOf(m));
    }
    List<RangeCopyTask> copies = tasks.readValuesToList();
    assertThat(copies).isNotEmpty().allSatisfy(t -> assertThat(t.getTarget()).isEqualTo("node-12"));
    // The joiner is the fifth member of az-2: it takes exactly a fifth of that zone's replicas, 1/15 of all.
    assertThat(planned.getDiffSummary().getMovedReplicaFraction())
        .isCloseTo(1.0 / 15, org.assertj.core.api.Assertions.within(1e-4));
    verifyAll(copies);
    assertThat(epochs.readValuesToList()).extracting(r -> r.getState() + "@" + r.getEpoch()).contains("READY@2");

    send(Events.change(CLUSTER, MembershipAction.DRAIN, "node-04", null, null));
    RingSnapshot three = EpochRecords.ring(epochs.readValuesToList().get(0));
    assertThat(tasks.readValuesToList()).filteredOn(t -> t.getEpoch() == 3 && t.getKind() == TaskKind.COPY)
        .isNotEmpty().allSatisfy(t -> assertThat(t.getSources()).contains("node-04"));
    assertThat(three.member("node-04")).isNull();
  }

  @Test
  void shouldRejectAnInitWhoseMembersListTokens() {
    MembershipEvent init = Events.init(CLUSTER, 3, 8);
    init.setPolicyId(PlacementPolicy.BALANCED.id());
    init.getInitialMembers().get(1).setTokens(List.of(1L, 2L, 3L, 4L, 5L, 6L, 7L, 8L));
    send(init);
    assertThat(epochs.isEmpty()).isTrue();
    assertThat(rejected.readValuesToList()).singleElement().extracting(RejectedEvent::getReason).asString()
        .contains("initialMembers[1] (\"node-01\") lists tokens");
  }

  @Test
  void shouldRejectAnInitWithAnUnknownPolicy() {
    MembershipEvent init = Events.init(CLUSTER, 3, 8);
    init.setPolicyId("greedy/v0");
    send(init);
    assertThat(epochs.isEmpty()).isTrue();
    assertThat(rejected.readValuesToList()).singleElement().extracting(RejectedEvent::getReason).asString()
        .contains("\"greedy/v0\"").contains(PlacementPolicy.BALANCED.id());
  }

  @Test
  void shouldCancelAPlanInFlightTombstoneItsTasksCleanUpAndRefuseBadCancels() {
    initTwelveNodes();
    send(Events.change(CLUSTER, MembershipAction.JOIN, "node-12", "az-2", null));
    epochs.readValuesToList();
    List<RangeCopyTask> copies = tasks.readValuesToList();

    MembershipEvent noEpoch = Events.change(CLUSTER, MembershipAction.CANCEL, "node-12", null, null);
    send(noEpoch);
    assertThat(rejected.readValuesToList()).singleElement().satisfies(r -> {
      assertThat(r.getReason()).isEqualTo("CANCEL: epoch was null; a cancel names the epoch to cancel, >= 1");
      assertThat(r.getRequestId()).isEqualTo(noEpoch.getRequestId());
    });
    send(Events.cancel(CLUSTER, "node-12", 1));
    assertThat(rejected.readValuesToList()).singleElement().extracting(RejectedEvent::getReason).asString()
        .startsWith("CANCEL of epoch 1: it is READY or published");
    assertThat(epochs.isEmpty()).isTrue();

    MembershipEvent cancel = Events.cancel(CLUSTER, "node-12", 2);
    send(cancel);

    assertThat(epochs.readValuesToList()).singleElement().satisfies(e -> {
      assertThat(e.getState()).isEqualTo(EpochState.CANCELLED);
      assertThat(e.getEpoch()).isEqualTo(2);
      assertThat(e.getCause().getAction()).isEqualTo(MembershipAction.CANCEL);
      assertThat(e.getCause().getRequestId()).isEqualTo(cancel.getRequestId());
      assertThat(e.getCause().getEpoch()).isEqualTo(2L);
      assertThat(e.getMembers()).hasSize(13);
      assertThat(e.getReason()).contains("JOIN of node node-12 abandoned", "stays on epoch 1");
    });
    var out = tasks.readRecordsToList();
    assertThat(out).filteredOn(r -> r.value() == null).extracting(r -> r.key())
        .containsExactlyInAnyOrderElementsOf(copies.stream().map(RangeCopyTask::getTaskId).toList());
    assertThat(out).filteredOn(r -> r.value() != null).isNotEmpty().allSatisfy(r -> {
      assertThat(r.value().getKind()).isEqualTo(TaskKind.CLEANUP);
      assertThat(r.value().getEpoch()).isEqualTo(1);
      assertThat(r.value().getTarget()).isEqualTo("node-12");
    });
    assertThat(rejected.isEmpty()).isTrue();

    send(Events.change(CLUSTER, MembershipAction.JOIN, "node-13", "az-3", null));
    assertThat(epochs.readValuesToList()).extracting(r -> r.getState() + "@" + r.getEpoch())
        .containsExactly("PLANNED@3");
  }

  @Test
  void shouldBeReadyWhenEveryTaskIsVerified() {
    initTwelveNodes();
    send(Events.change(CLUSTER, MembershipAction.JOIN, "node-12", "az-2", null));
    epochs.readValuesToList();
    List<RangeCopyTask> copies = tasks.readValuesToList();

    verifyAll(copies.subList(0, copies.size() - 1));
    assertThat(epochs.isEmpty()).as("not ready before the last task").isTrue();
    verifyAll(copies.subList(copies.size() - 1, copies.size()));

    assertThat(epochs.readValuesToList()).extracting(r -> r.getState() + "@" + r.getEpoch())
        .containsExactly("READY@2");
  }

  @Test
  void shouldPlanADrainAsCopiesAndAFailureAsRepairsFromSurvivors() {
    initTwelveNodes();
    send(Events.change(CLUSTER, MembershipAction.DRAIN, "node-04", null, null));
    assertThat(tasks.readValuesToList()).isNotEmpty()
        .allSatisfy(t -> assertThat(t.getKind()).isEqualTo(TaskKind.COPY))
        .anySatisfy(t -> assertThat(t.getSources()).contains("node-04"));
    List<EpochRecord> drainEpoch = epochs.readValuesToList();
    assertThat(drainEpoch).hasSize(1);
  }

  @Test
  void shouldPlanAFailureAsRepairsFromSurvivingReplicas() {
    initTwelveNodes();

    send(Events.change(CLUSTER, MembershipAction.FAIL, "node-07", null, null));

    assertThat(tasks.readValuesToList()).isNotEmpty().allSatisfy(t -> {
      assertThat(t.getKind()).isEqualTo(TaskKind.REPAIR);
      assertThat(t.getSources()).isNotEmpty().doesNotContain("node-07");
    });
  }

  @Test
  void shouldPlanAWeightChange() {
    initTwelveNodes();

    send(Events.change(CLUSTER, MembershipAction.SET_WEIGHT, "node-01", null, 2.0));

    assertThat(epochs.readValuesToList()).singleElement()
        .satisfies(e -> assertThat(e.getMembers().get(1).getWeight()).isEqualTo(2.0));
    assertThat(tasks.readValuesToList()).isNotEmpty().allSatisfy(t -> assertThat(t.getTarget()).isEqualTo("node-01"));
  }

  @Test
  void rejectsADuplicateJoinAndChangesNothing() {
    initTwelveNodes();
    MembershipEvent duplicate = Events.change(CLUSTER, MembershipAction.JOIN, "node-03", "az-1", null);

    send(duplicate);

    RejectedEvent reject = rejected.readValue();
    assertThat(reject.getReason()).contains("node-03").contains("already a member");
    assertThat(reject.getRequestId()).isEqualTo(duplicate.getRequestId());
    assertThat(AvroBytes.toArray(reject.getValue())).isEqualTo(Events.bytes(duplicate));
    assertThat(epochs.isEmpty()).isTrue();
    assertThat(tasks.isEmpty()).isTrue();
    // State unchanged: a valid join afterwards is epoch 2, as if the duplicate never happened.
    send(Events.change(CLUSTER, MembershipAction.JOIN, "node-12", "az-2", null));
    assertThat(epochs.readValue().getEpoch()).isEqualTo(2);
  }

  @Test
  void rejectsMalformedBytesWithTheOriginalBytes() {
    initTwelveNodes();
    byte[] garbage = {(byte) 0xC3, 0x01, 1, 2, 3};

    membership.pipeInput("c1/node-99".getBytes(), garbage);

    RejectedEvent reject = rejected.readValue();
    assertThat(reject.getReason()).startsWith("malformed membership event");
    assertThat(reject.getKey()).isEqualTo("c1/node-99");
    assertThat(AvroBytes.toArray(reject.getValue())).isEqualTo(garbage);
    assertThat(reject.getSourceTopic()).isEqualTo(TOPICS.membership().name());
    assertThat(epochs.isEmpty()).isTrue();
  }

  @Test
  void rejectsEventsThatBreakStatelessRules() {
    initTwelveNodes();

    send(Events.change(CLUSTER, MembershipAction.JOIN, " ", "az-1", null));
    send(Events.change(CLUSTER, MembershipAction.SET_WEIGHT, "node-01", null, -1.0));
    send(Events.change(CLUSTER, MembershipAction.DRAIN, "node-77", null, null));
    send(Events.change("nowhere", MembershipAction.JOIN, "node-01", "az-1", null));
    send(Events.change(CLUSTER, MembershipAction.UNKNOWN, "node-01", null, null));

    assertThat(rejected.readValuesToList()).extracting(RejectedEvent::getReason).satisfiesExactlyInAnyOrder(
        r -> assertThat(r).contains("nodeId was \" \""),
        r -> assertThat(r).contains("weight was -1.0"),
        r -> assertThat(r).contains("node-77").contains("not a member"),
        r -> assertThat(r).contains("unknown"),
        r -> assertThat(r).contains("action was UNKNOWN"));
    assertThat(epochs.isEmpty()).isTrue();
    assertThat(tasks.isEmpty()).isTrue();
  }

  @Test
  void shouldQueueAChangeUntilTheEpochInFlightIsReady() {
    initTwelveNodes();
    send(Events.change(CLUSTER, MembershipAction.JOIN, "node-12", "az-2", null));
    epochs.readValuesToList();
    List<RangeCopyTask> first = tasks.readValuesToList();

    send(Events.change(CLUSTER, MembershipAction.JOIN, "node-13", "az-3", null));
    assertThat(epochs.isEmpty()).as("queued, not planned").isTrue();
    assertThat(tasks.isEmpty()).isTrue();

    verifyAll(first);
    assertThat(epochs.readValuesToList()).extracting(r -> r.getState() + "@" + r.getEpoch())
        .containsExactly("READY@2", "PLANNED@3");
    // Epoch 2's cleanup tasks come with its READY, then the tasks of epoch 3.
    List<RangeCopyTask> emitted = tasks.readValuesToList();
    int firstCopy = (int) emitted.stream().takeWhile(t -> t.getKind() == TaskKind.CLEANUP).count();
    assertThat(emitted.subList(0, firstCopy)).isNotEmpty()
        .allSatisfy(t -> assertThat(t.getEpoch()).isEqualTo(2));
    assertThat(emitted.subList(firstCopy, emitted.size())).isNotEmpty().allSatisfy(t -> {
      assertThat(t.getKind()).isEqualTo(TaskKind.COPY);
      assertThat(t.getEpoch()).isEqualTo(3);
      assertThat(t.getTarget()).isEqualTo("node-13");
    });
  }

  @Test
  void shouldPublishAFailureEpochAndPlanTheRestWhenANodeThePlanCopiesFromFails() {
    initTwelveNodes();
    send(Events.change(CLUSTER, MembershipAction.JOIN, "node-12", "az-2", null));
    epochs.readValuesToList();
    List<RangeCopyTask> first = tasks.readValuesToList();
    String source = first.get(0).getSources().get(0);

    send(Events.change(CLUSTER, MembershipAction.FAIL, source, null, null));

    List<EpochRecord> records = epochs.readValuesToList();
    assertThat(records).extracting(r -> r.getState() + "@" + r.getEpoch() + "/p" + r.getPlanVersion())
        .containsExactly("SUPERSEDED@2/p0", "PLANNED@2/p1", "READY@2/p1", "PLANNED@3/p0");
    assertThat(records.get(0).getReason()).contains(source);
    assertThat(records.get(1).getSupersedes()).isEqualTo(2L);
    assertThat(records.get(1).getCause().getAction()).isEqualTo(MembershipAction.FAIL);
    assertThat(records.get(2).getFilling()).as("the failure epoch marks its new replicas").isNotEmpty();
    assertThat(records.get(2).getDiffSummary().getTasks()).isZero();
    assertThat(records.get(2).getMembers()).noneMatch(m -> m.getId().equals(source) || m.getId().equals("node-12"));
    assertThat(records.get(3).getFilling()).isEmpty();
    assertThat(records.get(3).getPreviousChecksum()).isEqualTo(records.get(2).getTargetChecksum());
    List<org.apache.kafka.streams.KeyValue<String, RangeCopyTask>> emitted = tasks.readKeyValuesToList();
    List<RangeCopyTask> replanned = emitted.stream().map(kv -> kv.value).filter(java.util.Objects::nonNull)
        .toList();
    List<String> cancelled = emitted.stream().filter(kv -> kv.value == null).map(kv -> kv.key).toList();
    assertThat(replanned).isNotEmpty().allSatisfy(t -> assertThat(t.getSources()).doesNotContain(source));
    // Cancelled: exactly the first plan's tasks that the re-plan does not keep (tombstones on ring.tasks).
    List<String> keptOrNew = replanned.stream().map(RangeCopyTask::getTaskId).toList();
    assertThat(cancelled).containsExactlyInAnyOrderElementsOf(first.stream().map(RangeCopyTask::getTaskId)
        .filter(id -> !keptOrNew.contains(id)).toList());
    assertThat(replanned).allSatisfy(t -> assertThat(t.getEpoch()).isEqualTo(3));
    verifyAll(replanned);
    assertThat(epochs.readValuesToList()).extracting(r -> r.getState() + "@" + r.getEpoch())
        .containsExactly("READY@3");
  }

  @Test
  void rejectsAnEventUnderAnotherNodesKey() {
    initTwelveNodes();
    MembershipEvent join = Events.change(CLUSTER, MembershipAction.JOIN, "node-12", "az-2", null);

    membership.pipeInput("c1/node-01".getBytes(), Events.bytes(join));

    assertThat(rejected.readValue().getReason()).contains("key was \"c1/node-01\"").contains("c1/node-12");
    assertThat(epochs.isEmpty()).isTrue();
  }

  @Test
  void shouldChainEveryEpochToTheChecksumOfTheOneBefore() {
    initTwelveNodes();
    send(Events.change(CLUSTER, MembershipAction.JOIN, "node-12", "az-2", null));
    EpochRecord planned = epochs.readValue();
    verifyAll(tasks.readValuesToList());
    EpochRecord ready = epochs.readValue();
    send(Events.change(CLUSTER, MembershipAction.DRAIN, "node-12", null, null));
    EpochRecord next = epochs.readValue();

    assertThat(planned.getPreviousChecksum()).isNotNull();
    assertThat(ready.getPreviousChecksum()).isEqualTo(planned.getPreviousChecksum());
    assertThat(next.getPreviousChecksum()).isEqualTo(ready.getTargetChecksum());
  }

  @Test
  void rejectsASecondInitOfTheSameCluster() {
    initTwelveNodes();

    send(Events.init(CLUSTER, 3, 8));

    assertThat(rejected.readValue().getReason()).contains("already exists");
    assertThat(epochs.isEmpty()).isTrue();
  }


  // ---- the publisher's answers ----

  /** The publisher's answer to {@code ready}: the same record with another state (and a reason). */
  private void answer(EpochRecord ready, EpochState state, String reason) {
    EpochRecord answer = EpochRecord.newBuilder(ready).setState(state).setReason(reason).build();
    answers.pipeInput(CLUSTER, TOPICS.epochs().valueSerde().serializer().serialize(TOPICS.epochs().name(), answer));
  }

  /** Epoch 1 published, a JOIN planned as epoch 2 and made READY: returns the READY record of epoch 2. */
  private EpochRecord joinMadeReady() {
    send(Events.init(CLUSTER, 12, 32));
    List<EpochRecord> first = epochs.readValuesToList();
    answer(first.get(1), EpochState.PUBLISHED, null);
    send(Events.change(CLUSTER, MembershipAction.JOIN, "node-12", "az-2", null));
    verifyAll(tasks.readValuesToList());
    List<EpochRecord> records = epochs.readValuesToList();
    assertThat(records).extracting(r -> r.getState() + "@" + r.getEpoch()).containsExactly("PLANNED@2", "READY@2");
    tasks.readValuesToList(); // the cleanups
    return records.get(1);
  }

  @Test
  void shouldPublishAFailureEpochChainedToThePublishedEpochWhenAFailFollowsARejectedEpoch() {
    send(Events.init(CLUSTER, 12, 32));
    EpochRecord published = epochs.readValuesToList().get(1);
    answer(published, EpochState.PUBLISHED, null);
    send(Events.change(CLUSTER, MembershipAction.JOIN, "node-12", "az-2", null));
    verifyAll(tasks.readValuesToList());
    EpochRecord ready = epochs.readValuesToList().get(1);
    tasks.readValuesToList();

    answer(ready, EpochState.REJECTED, "PLACEMENT: a forged reason for the test");
    epochs.readValuesToList();
    tasks.readValuesToList();
    send(Events.change(CLUSTER, MembershipAction.FAIL, "node-03", null, null));

    // Without reading REJECTED, the failure epoch would follow the rejected epoch 2 and be rejected by SEQUENCE in turn.
    List<EpochRecord> records = epochs.readValuesToList();
    EpochRecord failure = records.stream().filter(r -> r.getState() == EpochState.READY).findFirst().orElseThrow();
    assertThat(failure.getCause().getAction()).isEqualTo(MembershipAction.FAIL);
    assertThat(failure.getEpoch()).isGreaterThan(2);
    assertThat(failure.getPreviousChecksum()).isEqualTo(published.getTargetChecksum());
    assertThat(failure.getFilling()).isNotEmpty();
    assertThat(failure.getMembers()).extracting(m -> m.getId()).doesNotContain("node-03", "node-12");
  }

  @Test
  void shouldRollBackARejectedEpochAndPlanItsChangeAgainFromThePublishedEpochUnderANewNumber() {
    EpochRecord ready = joinMadeReady();

    answer(ready, EpochState.REJECTED, "SOURCES: a forged reason for the test");

    var written = tasks.readKeyValuesToList();
    // Every COPY and CLEANUP task of the rejected epoch is cancelled (tombstones, lifting their fences and dropping
    // the cleanups), then the re-plan's tasks follow under the next unused epoch number.
    List<String> cancelled = written.stream().filter(kv -> kv.value == null).map(kv -> kv.key).toList();
    assertThat(cancelled).hasSizeGreaterThan(ready.getDiffSummary().getTasks())
        .allMatch(id -> id.startsWith("c1/2/"))
        .anyMatch(id -> id.contains("/cleanup/"));
    List<RangeCopyTask> replanned = written.stream().filter(kv -> kv.value != null).map(kv -> kv.value).toList();
    assertThat(replanned).hasSize(ready.getDiffSummary().getTasks()).allSatisfy(t -> {
      assertThat(t.getEpoch()).isEqualTo(3);
      assertThat(t.getTarget()).isEqualTo("node-12");
    });
    List<EpochRecord> records = epochs.readValuesToList();
    assertThat(records).singleElement().satisfies(e -> {
      assertThat(e.getState()).isEqualTo(EpochState.PLANNED);
      assertThat(e.getEpoch()).isEqualTo(3);
      assertThat(e.getSupersedes()).isEqualTo(2L);
      assertThat(e.getReason()).contains("re-planned from published epoch 1", "epoch 2 was rejected by the publisher",
          "SOURCES: a forged reason");
      assertThat(e.getMembers()).isEqualTo(ready.getMembers());
      assertThat(e.getPreviousChecksum()).isEqualTo(ready.getPreviousChecksum()); // epoch 1's
    });
    verifyAll(replanned);
    List<EpochRecord> readyAgain = epochs.readValuesToList();
    assertThat(readyAgain).singleElement().satisfies(e -> {
      assertThat(e.getState()).isEqualTo(EpochState.READY);
      assertThat(e.getEpoch()).isEqualTo(3);
    });
    assertThat(rejected.isEmpty()).isTrue();
  }

  @Test
  void shouldIgnoreARejectionThatAnswersNoEpochItMadeReady() {
    EpochRecord ready = joinMadeReady();
    EpochRecord other = EpochRecord.newBuilder(ready).setTargetChecksum(java.nio.ByteBuffer.wrap(new byte[32])).build();

    answer(other, EpochState.REJECTED, "CHECKSUM: not ours");
    answer(ready, EpochState.PUBLISHED, null);
    answer(ready, EpochState.REJECTED, "SEQUENCE: a late answer to an epoch already published");

    assertThat(epochs.isEmpty()).isTrue();
    assertThat(tasks.isEmpty()).isTrue();
    assertThat(rejected.isEmpty()).isTrue();
  }

  @Test
  void shouldWithdrawTheChangeAfterASecondRejectionAndHoldAfterAThird() {
    EpochRecord ready = joinMadeReady();
    answer(ready, EpochState.REJECTED, "PLACEMENT: first");
    List<RangeCopyTask> replanned = tasks.readValuesToList().stream().filter(t -> t != null).toList();
    epochs.readValuesToList();
    verifyAll(replanned);
    EpochRecord second = epochs.readValuesToList().get(0);
    tasks.readValuesToList();

    answer(second, EpochState.REJECTED, "PLACEMENT: second");

    assertThat(rejected.readValuesToList()).singleElement().satisfies(r -> {
      assertThat(r.getReason()).contains("epoch 3 was rejected by the publisher (PLACEMENT: second)",
          "second rejection in a row", "send this change again");
      assertThat(io.ringshift.protocol.RecordSerdes.membershipEvent().deserialize(AvroBytes.toArray(r.getValue()))
          .getNodeId()).isEqualTo("node-12");
    });
    assertThat(epochs.isEmpty()).isTrue(); // nothing failed: nothing to plan again
    assertThat(tasks.readValuesToList()).allMatch(t -> t == null);

    // The next change is planned from epoch 1 under a number no rejected epoch used.
    send(Events.change(CLUSTER, MembershipAction.JOIN, "node-13", "az-0", null));
    List<EpochRecord> next = epochs.readValuesToList();
    assertThat(next).first().satisfies(e -> {
      assertThat(e.getEpoch()).isEqualTo(4);
      assertThat(e.getMembers()).hasSize(13);
    });
    verifyAll(tasks.readValuesToList());
    EpochRecord third = epochs.readValuesToList().get(0);
    assertThat(third.getState()).isEqualTo(EpochState.READY);
    tasks.readValuesToList();
    answer(third, EpochState.REJECTED, "PLACEMENT: third");
    assertThat(rejected.readValuesToList()).singleElement().satisfies(r ->
        assertThat(r.getReason()).contains("3 rejections in a row", "holds at published epoch 1"));
  }
}
