package io.ringshift.orchestrator;

import io.ringshift.protocol.Topics;
import static org.assertj.core.api.Assertions.assertThat;

import io.ringshift.ring.Member;
import io.ringshift.ring.RingSnapshot;
import io.ringshift.protocol.RecordSerdes;
import io.ringshift.schemas.avro.ClusterState;
import io.ringshift.schemas.avro.EpochRecord;
import io.ringshift.schemas.avro.MembershipAction;
import io.ringshift.schemas.avro.MembershipEvent;
import io.ringshift.schemas.avro.RangeCopyTask;
import io.ringshift.schemas.avro.TaskKind;
import io.ringshift.schemas.avro.TaskState;
import io.ringshift.schemas.avro.TaskStatus;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Properties;
import java.util.Set;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.TestInputTopic;
import org.apache.kafka.streams.TestOutputTopic;
import org.apache.kafka.streams.TopologyTestDriver;
import org.apache.kafka.streams.state.KeyValueStore;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The fence step and the cleanup tasks through the whole topology ({@link TopologyTestDriver}): statuses in on
 * ring.task-status, fence requests and cleanup tasks out on ring.tasks, epochs on ring.epochs.
 */
class FenceAndCleanupTopologyTest {
  private static final String CLUSTER = "c1";
  private static final String APPLICATION_ID = "orchestrator-test";
  private static final long CLUSTER_BYTES = 1L << 40;
  private static final Topics TOPICS = Topics.defaults();
  private static final String CHANGELOG = APPLICATION_ID + "-" + OrchestratorTopology.STORE + "-changelog";

  @TempDir Path stateDir;
  @TempDir Path otherStateDir;

  private TopologyTestDriver driver;
  private TestInputTopic<byte[], byte[]> membership;
  private TestInputTopic<String, TaskStatus> statuses;
  private TestOutputTopic<String, EpochRecord> epochs;
  private TestOutputTopic<String, RangeCopyTask> tasks;
  private TestOutputTopic<String, ClusterState> changelog;

  @BeforeEach
  void startDriver() {
    start(stateDir);
  }

  private void start(Path dir) {
    Properties props = new Properties();
    props.put(StreamsConfig.APPLICATION_ID_CONFIG, APPLICATION_ID);
    props.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, "unused:9092");
    props.put(StreamsConfig.STATE_DIR_CONFIG, dir.toString());
    driver = new TopologyTestDriver(OrchestratorTopology.build(TOPICS, CLUSTER_BYTES, 3), props);
    membership = driver.createInputTopic(TOPICS.membership().name(), new ByteArraySerializer(),
        new ByteArraySerializer());
    statuses = driver.createInputTopic(TOPICS.taskStatus().name(), new StringSerializer(),
        TOPICS.taskStatus().valueSerde().serializer());
    epochs = driver.createOutputTopic(TOPICS.epochs().name(), new StringDeserializer(),
        TOPICS.epochs().valueSerde().deserializer());
    tasks = driver.createOutputTopic(TOPICS.tasks().name(), new StringDeserializer(),
        TOPICS.tasks().valueSerde().deserializer());
    changelog = driver.createOutputTopic(CHANGELOG, new StringDeserializer(),
        (topic, bytes) -> bytes == null ? null : RecordSerdes.clusterState().deserialize(bytes));
  }

  @AfterEach
  void closeDriver() {
    driver.close();
  }

  private void send(MembershipEvent e) {
    membership.pipeInput(Events.key(e), Events.bytes(e));
  }

  private void report(List<RangeCopyTask> of, TaskState state) {
    for (RangeCopyTask t : of) {
      report(t, state);
    }
  }

  private void report(RangeCopyTask t, TaskState state) {
    statuses.pipeInput(t.getTaskId(), status(t, state));
  }

  private static TaskStatus status(RangeCopyTask t, TaskState state) {
    TaskStatus status = Events.verified(CLUSTER, t.getEpoch(), t.getTaskId());
    status.setState(state);
    return status;
  }

  /** A 12-node cluster and a join of node-12; returns the join's tasks as first emitted. */
  private List<RangeCopyTask> join() {
    send(Events.init(CLUSTER, 12, 32));
    send(Events.change(CLUSTER, MembershipAction.JOIN, "node-12", "az-2", null));
    assertThat(epochs.readValuesToList()).extracting(r -> r.getState() + "@" + r.getEpoch())
        .containsExactly("PLANNED@1", "READY@1", "PLANNED@2");
    List<RangeCopyTask> planned = tasks.readValuesToList();
    assertThat(planned).isNotEmpty().noneMatch(RangeCopyTask::getFenceRequested);
    return planned;
  }

  private static List<RangeCopyTask> allButLast(List<RangeCopyTask> list) {
    return list.subList(0, list.size() - 1);
  }

  private static RangeCopyTask last(List<RangeCopyTask> list) {
    return list.get(list.size() - 1);
  }

  /** {@code t} with fenceRequested set and the emission time of {@code like}: everything else as first emitted. */
  private static RangeCopyTask fenced(RangeCopyTask t, RangeCopyTask like) {
    return RangeCopyTask.newBuilder(t).setFenceRequested(true).setTimestampMillis(like.getTimestampMillis()).build();
  }

  /** The cleanup tasks the planner gives for the join, as RangeCopyTask ids. */
  private static List<String> expectedCleanupIds() {
    var builder = RingSnapshot.builder().clusterId(CLUSTER).epoch(1).vnodes(32).replicas(3);
    Events.members(12).forEach(m -> builder.addMember(m.getId(), m.getZone(), m.getWeight()));
    RingSnapshot active = builder.build();
    List<Member> joined = new ArrayList<>(active.members());
    joined.add(Member.of("node-12", "az-2"));
    return EpochPlanner.plan(active, joined, 2, 0, Set.of(), CLUSTER_BYTES).cleanupTasks().stream()
        .map(PlannedTask::taskId).toList();
  }

  @Test
  void shouldRequestTheFenceExactlyOnceWhenTheLastTaskIsCaughtUp() {
    List<RangeCopyTask> planned = join();
    RangeCopyTask verifiedEarly = planned.get(0);
    List<RangeCopyTask> rest = planned.subList(1, planned.size());

    report(verifiedEarly, TaskState.VERIFIED);
    report(allButLast(rest), TaskState.CAUGHT_UP);
    report(rest.get(0), TaskState.FENCED);
    assertThat(tasks.isEmpty()).as("no fence before the last task has caught up").isTrue();
    report(last(rest), TaskState.CAUGHT_UP);

    List<KeyValue<String, RangeCopyTask>> requests = tasks.readKeyValuesToList();
    assertThat(requests).extracting(kv -> kv.key).containsExactlyElementsOf(
        rest.stream().map(RangeCopyTask::getTaskId).toList());
    // Same record as first emitted, but for the flag (and the time of this emission).
    for (int i = 0; i < rest.size(); i++) {
      RangeCopyTask request = requests.get(i).value;
      assertThat(request.getFenceRequested()).isTrue();
      assertThat(request).isEqualTo(fenced(rest.get(i), request));
    }
    assertThat(epochs.isEmpty()).isTrue();

    // Duplicates and late reports of the same plan ask nothing more.
    report(rest, TaskState.CAUGHT_UP);
    report(rest, TaskState.FENCED);
    report(rest.get(1), TaskState.COPYING);
    report(rest.get(1), TaskState.CAUGHT_UP);
    assertThat(tasks.isEmpty()).as("the fence is requested once per plan").isTrue();
  }

  @Test
  void shouldBeReadyAndEmitTheCleanupTasksWhenEveryTaskIsVerifiedAfterTheFence() {
    List<RangeCopyTask> planned = join();
    report(planned, TaskState.CAUGHT_UP);
    assertThat(tasks.readValuesToList()).hasSameSizeAs(planned).allMatch(RangeCopyTask::getFenceRequested);

    report(planned, TaskState.FENCED);
    report(allButLast(planned), TaskState.VERIFIED);
    assertThat(epochs.isEmpty()).as("not READY before the last VERIFIED").isTrue();
    assertThat(tasks.isEmpty()).as("no cleanup before READY").isTrue();
    report(last(planned), TaskState.VERIFIED);

    List<EpochRecord> ready = epochs.readValuesToList();
    assertThat(ready).extracting(r -> r.getState() + "@" + r.getEpoch()).containsExactly("READY@2");
    assertThat(ready.get(0).getDiffSummary().getTasks()).as("DiffSummary.tasks counts COPY/REPAIR only")
        .isEqualTo(planned.size());
    List<RangeCopyTask> cleanups = tasks.readValuesToList();
    assertThat(cleanups).extracting(RangeCopyTask::getTaskId).containsExactlyElementsOf(expectedCleanupIds());
    assertThat(cleanups).isNotEmpty().allSatisfy(t -> {
      assertThat(t.getKind()).isEqualTo(TaskKind.CLEANUP);
      assertThat(t.getEpoch()).isEqualTo(2);
      assertThat(t.getFenceRequested()).isFalse();
      assertThat(t.getTarget()).isNotEqualTo("node-12");
      assertThat(t.getSources()).hasSize(3).contains("node-12").doesNotContain(t.getTarget());
      assertThat(t.getEstimatedBytes()).isPositive();
    });

    // Statuses of the cleanup tasks (epoch 2, now active) change nothing.
    report(cleanups, TaskState.VERIFIED);
    assertThat(epochs.isEmpty()).isTrue();
    assertThat(tasks.isEmpty()).isTrue();
  }

  @Test
  void shouldNotRequestTheFenceWhileATaskThatFellBehindIsCatchingUpAgain() {
    List<RangeCopyTask> planned = join();
    report(allButLast(planned), TaskState.CAUGHT_UP);
    // Out of order: a worker restarted one copy from another source, then the last task caught up.
    report(planned.get(0), TaskState.COPYING);
    report(last(planned), TaskState.CAUGHT_UP);
    assertThat(tasks.isEmpty()).as("one task is behind again").isTrue();

    report(planned.get(0), TaskState.CAUGHT_UP);

    assertThat(tasks.readValuesToList()).hasSameSizeAs(planned).allMatch(RangeCopyTask::getFenceRequested);
  }

  @Test
  void shouldBlockTheEpochOnADigestMismatchUntilAnOperatorActs() {
    List<RangeCopyTask> planned = join();
    report(planned, TaskState.CAUGHT_UP);
    tasks.readValuesToList();
    report(allButLast(planned), TaskState.VERIFIED);
    TaskStatus mismatch = status(last(planned), TaskState.BLOCKED);
    mismatch.setDigest(ByteBuffer.wrap(new byte[] {1, 2, 3}));
    mismatch.setTargetDigest(ByteBuffer.wrap(new byte[] {4, 5, 6}));
    mismatch.setBlockedReason("digest mismatch at fence position 9121: source node-03, target node-12");

    statuses.pipeInput(last(planned).getTaskId(), mismatch);
    report(last(planned), TaskState.FAILED);

    assertThat(epochs.isEmpty()).as("a blocked or failed task keeps the epoch from READY").isTrue();
    assertThat(tasks.isEmpty()).isTrue();
    report(last(planned), TaskState.VERIFIED);
    assertThat(epochs.readValuesToList()).extracting(r -> r.getState().toString())
        .containsExactly("READY");
  }

  @Test
  void shouldAskForTheFenceAgainForThePlanAfterAFailureEpochAndCleanUpOnlyForIt() {
    List<RangeCopyTask> planned = join();
    report(planned, TaskState.CAUGHT_UP);
    assertThat(tasks.readValuesToList()).hasSameSizeAs(planned);
    String failed = expectedCleanupIds().get(0).substring(expectedCleanupIds().get(0).lastIndexOf('/') + 1);

    send(Events.change(CLUSTER, MembershipAction.FAIL, failed, null, null));

    assertThat(epochs.readValuesToList()).extracting(r -> r.getState() + "@" + r.getEpoch() + "/p" + r.getPlanVersion())
        .containsExactly("SUPERSEDED@2/p0", "PLANNED@2/p1", "READY@2/p1", "PLANNED@3/p0");
    List<KeyValue<String, RangeCopyTask>> replanned = tasks.readKeyValuesToList();
    List<RangeCopyTask> current = replanned.stream().map(kv -> kv.value).filter(Objects::nonNull).toList();
    assertThat(current).isNotEmpty().allMatch(t -> t.getEpoch() == 3).noneMatch(RangeCopyTask::getFenceRequested)
        .noneMatch(t -> t.getKind() == TaskKind.CLEANUP);

    // The new plan's tasks catch up; the fence is asked for them only when all have caught up.
    report(allButLast(current), TaskState.CAUGHT_UP);
    assertThat(tasks.isEmpty()).isTrue();
    report(last(current), TaskState.CAUGHT_UP);
    assertThat(tasks.readValuesToList()).extracting(RangeCopyTask::getTaskId)
        .containsExactlyElementsOf(current.stream().map(RangeCopyTask::getTaskId).toList());

    report(current, TaskState.VERIFIED);
    assertThat(epochs.readValuesToList()).extracting(r -> r.getState() + "@" + r.getEpoch() + "/p" + r.getPlanVersion())
        .containsExactly("READY@3/p0");
    List<RangeCopyTask> cleanups = tasks.readValuesToList();
    assertThat(cleanups).isNotEmpty().allSatisfy(t -> {
      assertThat(t.getKind()).isEqualTo(TaskKind.CLEANUP);
      assertThat(t.getTarget()).as("no cleanup on the dead node").isNotEqualTo(failed);
      assertThat(t.getSources()).doesNotContain(failed);
    });
  }

  /**
   * A restart between the fence request and VERIFIED: a new instance whose store is restored from the
   * changelog (as Kafka Streams restores it) neither repeats nor loses the fence request, and completes the
   * epoch with its cleanup tasks.
   */
  @Test
  void shouldKeepTheFenceRequestAcrossARestartBetweenCaughtUpAndVerified() {
    List<RangeCopyTask> planned = join();
    report(planned, TaskState.CAUGHT_UP);
    assertThat(tasks.readValuesToList()).hasSameSizeAs(planned);
    report(planned.subList(0, 2), TaskState.VERIFIED);
    List<KeyValue<String, ClusterState>> logged = changelog.readKeyValuesToList();
    ClusterState stored = logged.get(logged.size() - 1).value;
    assertThat(stored.getInFlight().getFenceRequested()).isTrue();

    driver.close();
    start(otherStateDir);
    KeyValueStore<String, ClusterState> store = driver.getKeyValueStore(OrchestratorTopology.STORE);
    assertThat(store.get(CLUSTER)).as("a fresh state directory").isNull();
    store.put(CLUSTER, stored);

    report(planned, TaskState.CAUGHT_UP);
    assertThat(tasks.isEmpty()).as("the fence is not requested again after the restart").isTrue();
    report(planned, TaskState.VERIFIED);

    assertThat(epochs.readValuesToList()).extracting(r -> r.getState() + "@" + r.getEpoch())
        .containsExactly("READY@2");
    assertThat(tasks.readValuesToList()).extracting(RangeCopyTask::getTaskId)
        .containsExactlyElementsOf(expectedCleanupIds());
  }
}
