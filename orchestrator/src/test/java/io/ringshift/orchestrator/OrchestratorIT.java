package io.ringshift.orchestrator;

import io.ringshift.protocol.Topics;
import static org.assertj.core.api.Assertions.assertThat;

import io.ringshift.devkit.junit.EmbeddedKafkaExtension;
import io.ringshift.ring.Member;
import io.ringshift.ring.RingSnapshot;
import io.ringshift.schemas.avro.EpochRecord;
import io.ringshift.schemas.avro.MembershipAction;
import io.ringshift.schemas.avro.RangeCopyTask;
import io.ringshift.schemas.avro.RejectedEvent;
import io.ringshift.schemas.avro.TaskKind;
import io.ringshift.schemas.avro.TaskState;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Properties;
import java.util.Set;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/** The orchestrator against a real single-node KRaft broker, exactly-once. */
class OrchestratorIT {
  @RegisterExtension static final EmbeddedKafkaExtension KAFKA = new EmbeddedKafkaExtension();

  private static final Duration TIMEOUT = Duration.ofSeconds(60);
  private static final String CLUSTER = "c1";

  @TempDir Path stateDir;

  private OrchestratorConfig config() {
    return OrchestratorConfig.local(KAFKA.bootstrapServers(), stateDir)
        .withApplicationId(KAFKA.applicationId())
        .withTopics(Topics.withPrefix(KAFKA.topicPrefix()));
  }

  private static KafkaProducer<byte[], byte[]> producer() {
    Properties p = new Properties();
    p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, KAFKA.bootstrapServers());
    return new KafkaProducer<>(p, new ByteArraySerializer(), new ByteArraySerializer());
  }






  private static RingSnapshot twelveNodeRing() {
    var builder = RingSnapshot.builder().clusterId(CLUSTER).epoch(1).vnodes(32).replicas(3);
    Events.members(12).forEach(m -> builder.addMember(m.getId(), m.getZone(), m.getWeight()));
    return builder.build();
  }

  @Test
  void shouldPlanAJoinOnATwelveNodeClusterAsOneEpochWithTheRightTasks() {
    OrchestratorConfig config = config();
    try (Orchestrator orchestrator = new Orchestrator(config).start(TIMEOUT)) {
      ItClients.send(KAFKA, config, Events.init(CLUSTER, 12, 32));
      assertThat(ItClients.epochs(KAFKA, config, 2)).extracting(e -> e.getState() + "@" + e.getEpoch())
          .containsExactly("PLANNED@1", "READY@1");

      RingSnapshot active = twelveNodeRing();
      List<Member> joined = new ArrayList<>(active.members());
      joined.add(Member.of("node-12", "az-2"));
      List<String> expectedIds = EpochPlanner.plan(active, joined, 2, 1, Set.of(), 0).tasks().stream()
          .map(t -> t.taskId()).toList();

      long sent = System.nanoTime();
      ItClients.send(KAFKA, config, Events.change(CLUSTER, MembershipAction.JOIN, "node-12", "az-2", null));
      List<RangeCopyTask> tasks = ItClients.tasks(KAFKA, config, expectedIds.size());
      double latencyMs = (System.nanoTime() - sent) / 1e6;
      System.out.printf("membership event -> %d tasks readable (read_committed): %.0f ms%n", tasks.size(),
          latencyMs);

      assertThat(tasks).extracting(RangeCopyTask::getTaskId).containsExactlyInAnyOrderElementsOf(expectedIds);
      assertThat(ItClients.epochs(KAFKA, config, 3)).extracting(e -> e.getState() + "@" + e.getEpoch())
          .containsExactly("PLANNED@1", "READY@1", "PLANNED@2");
    }
  }

  @Test
  void shouldNeitherDuplicateNorLoseAnythingWhenRestartedInTheMiddleOfAnEpoch(@TempDir Path otherStateDir) {
    OrchestratorConfig config = config();
    List<RangeCopyTask> tasks;
    try (Orchestrator orchestrator = new Orchestrator(config).start(TIMEOUT)) {
      ItClients.send(KAFKA, config, Events.init(CLUSTER, 12, 32));
      ItClients.send(KAFKA, config, Events.change(CLUSTER, MembershipAction.JOIN, "node-12", "az-2", null));
      tasks = ItClients.tasks(KAFKA, config, ItClients.epochs(KAFKA, config, 3).get(2).getDiffSummary().getTasks());
      // Half the tasks verified, then the orchestrator stops at once, mid-epoch.
      ItClients.verify(KAFKA, config, tasks.subList(0, tasks.size() / 2));
      ItClients.send(KAFKA, config, Events.change(CLUSTER, MembershipAction.JOIN, "node-13", "az-3", null));
    }
    // A new instance on another machine (empty state dir): its state comes back from the changelog.
    OrchestratorConfig restarted = new OrchestratorConfig(config.bootstrapServers(), config.applicationId(),
        otherStateDir, config.topics(), config.partitions(), config.replicationFactor(), config.clusterBytes());
    try (Orchestrator orchestrator = new Orchestrator(restarted).start(TIMEOUT)) {
      ItClients.verify(KAFKA, restarted, tasks.subList(tasks.size() / 2, tasks.size()));
      List<EpochRecord> epochs = ItClients.epochs(KAFKA, restarted, 5);
      assertThat(epochs).extracting(e -> e.getState() + "@" + e.getEpoch())
          .containsExactly("PLANNED@1", "READY@1", "PLANNED@2", "READY@2", "PLANNED@3");
      int epoch3Tasks = epochs.get(4).getDiffSummary().getTasks();
      List<String> cleanups = ItClients.joinCleanupIds(CLUSTER);
      List<RangeCopyTask> all = ItClients.tasks(KAFKA, restarted, tasks.size() + cleanups.size() + epoch3Tasks);
      Set<String> ids = new HashSet<>();
      all.forEach(t -> assertThat(ids.add(t.getTaskId())).as("task %s emitted twice", t.getTaskId()).isTrue());
      assertThat(all).hasSize(tasks.size() + cleanups.size() + epoch3Tasks);
      assertThat(all).filteredOn(t -> t.getEpoch() == 3).hasSize(epoch3Tasks)
          .allSatisfy(t -> assertThat(t.getTarget()).isEqualTo("node-13"));
      assertThat(all).filteredOn(t -> t.getKind() == TaskKind.CLEANUP).extracting(RangeCopyTask::getTaskId)
          .as("epoch 2's cleanup tasks, emitted with its READY").containsExactlyInAnyOrderElementsOf(cleanups);
    }
  }

  @Test
  void shouldRequestTheFenceOnceAndEmitTheCleanupTasksWhenTheEpochIsReady() {
    OrchestratorConfig config = config();
    try (Orchestrator orchestrator = new Orchestrator(config).start(TIMEOUT)) {
      ItClients.send(KAFKA, config, Events.init(CLUSTER, 12, 32));
      ItClients.send(KAFKA, config, Events.change(CLUSTER, MembershipAction.JOIN, "node-12", "az-2", null));
      List<RangeCopyTask> planned =
          ItClients.tasks(KAFKA, config, ItClients.epochs(KAFKA, config, 3).get(2).getDiffSummary().getTasks());

      long sent = System.nanoTime();
      ItClients.report(KAFKA, config, planned, TaskState.CAUGHT_UP);
      // ring.tasks has several partitions: tell the requests by their flag, not by their position.
      List<RangeCopyTask> requests = ItClients.tasks(KAFKA, config, 2 * planned.size()).stream()
          .filter(RangeCopyTask::getFenceRequested).toList();
      System.out.printf("last CAUGHT_UP -> %d fence requests readable (read_committed): %.0f ms%n",
          requests.size(), (System.nanoTime() - sent) / 1e6);
      assertThat(requests).allMatch(RangeCopyTask::getFenceRequested).extracting(RangeCopyTask::getTaskId)
          .containsExactlyInAnyOrderElementsOf(planned.stream().map(RangeCopyTask::getTaskId).toList());

      ItClients.report(KAFKA, config, planned, TaskState.CAUGHT_UP);
      ItClients.verify(KAFKA, config, planned);
      assertThat(ItClients.epochs(KAFKA, config, 4)).extracting(e -> e.getState() + "@" + e.getEpoch())
          .containsExactly("PLANNED@1", "READY@1", "PLANNED@2", "READY@2");
      List<String> cleanups = ItClients.joinCleanupIds(CLUSTER);
      List<RangeCopyTask> all = ItClients.tasks(KAFKA, config, 2 * planned.size() + cleanups.size());
      assertThat(all).as("each task planned once, its fence requested once, each cleanup task once")
          .hasSize(2 * planned.size() + cleanups.size());
      assertThat(all).filteredOn(t -> t.getKind() == TaskKind.CLEANUP).extracting(RangeCopyTask::getTaskId)
          .containsExactlyInAnyOrderElementsOf(cleanups);
      assertThat(all).filteredOn(RangeCopyTask::getFenceRequested).hasSameSizeAs(planned);
    }
  }

  @Test
  void shouldWriteTheClusterStateToItsChangelogOncePerCommitNotOncePerStatus() {
    OrchestratorConfig config = config();
    String changelog = config.applicationId() + "-" + OrchestratorTopology.STORE + "-changelog";
    try (Orchestrator orchestrator = new Orchestrator(config).start(TIMEOUT)) {
      ItClients.send(KAFKA, config, Events.init(CLUSTER, 12, 32));
      ItClients.send(KAFKA, config, Events.change(CLUSTER, MembershipAction.JOIN, "node-12", "az-2", null));
      List<RangeCopyTask> planned =
          ItClients.tasks(KAFKA, config, ItClients.epochs(KAFKA, config, 3).get(2).getDiffSummary().getTasks());
      long before = committedRecords(changelog, CLUSTER);

      // Every task reports CAUGHT_UP at once, as the workers of a large epoch do: each status changes the state.
      ItClients.report(KAFKA, config, planned, TaskState.CAUGHT_UP);
      assertThat(ItClients.tasks(KAFKA, config, 2 * planned.size())).filteredOn(RangeCopyTask::getFenceRequested)
          .hasSameSizeAs(planned);
      long writes = committedRecords(changelog, CLUSTER) - before;

      // The state of an epoch in flight holds the ids of its caught-up and verified tasks: written once per status,
      // an epoch of n tasks wrote O(n^2) bytes to the changelog (a join at 120 x 256: 752 records, 53 MB).
      System.out.printf("%d CAUGHT_UP statuses in one burst: %d changelog records of the cluster's state%n",
          planned.size(), writes);
      assertThat(writes).as("changelog records for %d statuses", planned.size())
          .isPositive().isLessThan(planned.size() / 4);
    }
  }

  /** How many committed records of {@code key} {@code topic} holds now. */
  private static long committedRecords(String topic, String key) {
    Properties p = new Properties();
    p.put(org.apache.kafka.clients.consumer.ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, KAFKA.bootstrapServers());
    p.put(org.apache.kafka.clients.consumer.ConsumerConfig.ISOLATION_LEVEL_CONFIG,
        IsolationLevel.READ_COMMITTED.toString().toLowerCase(java.util.Locale.ROOT));
    try (var consumer = new org.apache.kafka.clients.consumer.KafkaConsumer<>(p, new StringDeserializer(),
        new org.apache.kafka.common.serialization.ByteArrayDeserializer())) {
      List<org.apache.kafka.common.TopicPartition> partitions = consumer.partitionsFor(topic).stream()
          .map(i -> new org.apache.kafka.common.TopicPartition(topic, i.partition())).toList();
      consumer.assign(partitions);
      consumer.seekToBeginning(partitions);
      var end = consumer.endOffsets(partitions);
      long count = 0;
      while (partitions.stream().anyMatch(tp -> consumer.position(tp) < end.get(tp))) {
        for (var record : consumer.poll(Duration.ofMillis(200))) {
          if (key.equals(record.key())) {
            count++;
          }
        }
      }
      return count;
    }
  }

  @Test
  void shouldRejectBadEventsWithoutChangingAnything() {
    OrchestratorConfig config = config();
    try (Orchestrator orchestrator = new Orchestrator(config).start(TIMEOUT)) {
      ItClients.send(KAFKA, config, Events.init(CLUSTER, 12, 32));
      ItClients.epochs(KAFKA, config, 2);
      try (KafkaProducer<byte[], byte[]> producer = producer()) {
        producer.send(new ProducerRecord<>(config.topics().membership().name(), "c1/x".getBytes(), new byte[] {1, 2}));
      }
      ItClients.send(KAFKA, config,
          Events.change(CLUSTER, MembershipAction.JOIN, "node-01", "az-1", null),
          Events.change(CLUSTER, MembershipAction.DRAIN, "node-99", null, null),
          Events.change(CLUSTER, MembershipAction.SET_WEIGHT, "node-01", null, 0.0));

      List<RejectedEvent> rejects = ItClients.values(KAFKA.consume(config.topics().rejected().name(), 4, TIMEOUT,
          IsolationLevel.READ_COMMITTED, new StringDeserializer(), config.topics().rejected().valueSerde()
              .deserializer()));
      assertThat(rejects).extracting(RejectedEvent::getReason).satisfiesExactlyInAnyOrder(
          r -> assertThat(r).startsWith("malformed membership event"),
          r -> assertThat(r).contains("already a member"),
          r -> assertThat(r).contains("not a member"),
          r -> assertThat(r).contains("weight was 0.0"));

      // Nothing changed: the next valid change is epoch 2.
      ItClients.send(KAFKA, config, Events.change(CLUSTER, MembershipAction.JOIN, "node-12", "az-2", null));
      assertThat(ItClients.epochs(KAFKA, config, 3)).extracting(e -> e.getState() + "@" + e.getEpoch())
          .containsExactly("PLANNED@1", "READY@1", "PLANNED@2");
    }
  }
}
