package io.ringshift.publisher;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.ringshift.protocol.AvroBytes;
import io.ringshift.devkit.junit.EmbeddedKafkaExtension;
import io.ringshift.protocol.Topics;
import io.ringshift.publisher.ClusterScript.Step;
import io.ringshift.protocol.FillingRange;
import io.ringshift.protocol.PublishedSnapshot;
import io.ringshift.protocol.RingSnapshotCodec;
import io.ringshift.protocol.SigningKey;
import io.ringshift.protocol.TransitionStage;
import io.ringshift.protocol.TrustedKeys;
import io.ringshift.schemas.avro.EpochRecord;
import io.ringshift.schemas.avro.EpochState;
import io.ringshift.schemas.avro.TaskState;
import io.ringshift.schemas.avro.TaskStatus;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.config.TopicConfig;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The publisher against a real broker, fed the records the orchestrator and the workers would write (no
 * orchestrator runs): what it publishes, what it rejects, and that restarting or replacing it publishes nothing
 * twice.
 */
class SnapshotPublisherIT {
  @RegisterExtension static final EmbeddedKafkaExtension KAFKA = new EmbeddedKafkaExtension();

  private static final Duration WAIT = Duration.ofSeconds(30);
  private static final SigningKey KEY = SigningKey.generate();
  private static final RingSnapshotCodec CODEC = new RingSnapshotCodec();

  private final List<SnapshotPublisher> publishers = new ArrayList<>();
  private ItKafka kafka;
  private ClusterScript script;

  @BeforeEach
  void setUp() {
    kafka = new ItKafka(KAFKA.bootstrapServers(), Topics.withPrefix(KAFKA.topicPrefix()));
    script = new ClusterScript("cache");
  }

  @AfterEach
  void tearDown() {
    publishers.forEach(SnapshotPublisher::close);
    kafka.close();
  }

  /**
   * A join in transition stages on a real broker: its first stage at once, the second stage only once the one
   * participant (a client reporting on ring.participants) routes by the first, FINAL once it routes by the second,
   * CONVERGED 3 once by FINAL; every record and snapshot signed and chained.
   */
  @Test
  void shouldPublishAJoinInTransitionStagesAsTheParticipantFollows() throws Exception {
    kafka.createTopics(true);
    start(PublisherListener.NONE, PublisherConfig.of(KAFKA.bootstrapServers(), KEY).timeout(),
        PublisherConfig.DEFAULT_LEASE_TIMEOUT, true);
    Step init = script.init(6);
    kafka.write(init);
    awaitPublished(1);
    kafka.participant(report(1, TransitionStage.FINAL));
    Step join = script.join("node-07", "az-2");

    // As the orchestrator and the workers write them: the plan first, the copies' statuses and READY seconds later. (A
    // publisher that reads the plan and its READY together publishes it at the fence: it is READY already.)
    kafka.epoch(join.planned());
    await("the first stage").atMost(WAIT).pollInterval(Duration.ofMillis(50))
        .until(() -> kafka.epochs(EpochState.STAGED).size() == 1);
    kafka.tasks(join.tasks());
    join.verified().forEach(s -> kafka.status(s));
    kafka.epoch(join.ready());
    // The publisher goes on reading, and reaches no barrier: the participant still routes by epoch 1.
    await("no barrier while the participant routes by epoch 1").during(Duration.ofSeconds(1))
        .atMost(Duration.ofSeconds(5)).pollInterval(Duration.ofMillis(100))
        .until(() -> kafka.epochs(EpochState.CONVERGED).isEmpty());
    assertThat(kafka.epochs(EpochState.PUBLISHED)).extracting(EpochRecord::getEpoch).containsExactly(1L);

    kafka.participant(report(2, TransitionStage.WRITE_BOTH_READ_OLD));
    await("the second stage").atMost(WAIT).pollInterval(Duration.ofMillis(50))
        .until(() -> kafka.epochs(EpochState.STAGED).size() == 2);
    assertThat(kafka.epochs(EpochState.PUBLISHED)).extracting(EpochRecord::getEpoch).containsExactly(1L);
    kafka.participant(report(2, TransitionStage.WRITE_BOTH_READ_NEW));
    awaitPublished(2);
    kafka.participant(report(2, TransitionStage.FINAL));
    await("every participant at FINAL").atMost(WAIT).pollInterval(Duration.ofMillis(50))
        .until(() -> kafka.epochs(EpochState.CONVERGED).size() == 2);

    List<PublishedSnapshot> snapshots = snapshots();
    assertThat(snapshots).extracting(PublishedSnapshot::stage).containsExactly(TransitionStage.FINAL,
        TransitionStage.WRITE_BOTH_READ_OLD, TransitionStage.WRITE_BOTH_READ_NEW, TransitionStage.FINAL);
    TrustedKeys trusted = TrustedKeys.of(KEY.publicKey());
    snapshots.forEach(trusted::verify);
    for (int i = 1; i < snapshots.size(); i++) {
      assertThat(snapshots.get(i).isAfter(snapshots.get(i - 1))).as("snapshot %d after %d", i, i - 1).isTrue();
    }
    assertThat(kafka.epochs(EpochState.CONVERGED)).extracting(EpochRecord::getStage).containsExactly(1, 3);
  }

  private io.ringshift.schemas.avro.ParticipantReport report(long epoch, TransitionStage stage) {
    return io.ringshift.schemas.avro.ParticipantReport.newBuilder().setClusterId("cache").setParticipantId("app-1")
        .setKind(io.ringshift.schemas.avro.ParticipantKind.CLIENT).setEpoch(epoch).setStage(stage.order())
        .setChecksum(null).setStagesSupported(true).setLeaseMillis(60_000)
        .setReportedAtMillis(System.currentTimeMillis()).setUnversionedWritesAtMillis(null).build();
  }

  @Test
  void shouldPublishEachReadyEpochSignedAndChainedWithItsPublishedRecord() throws Exception {
    kafka.createTopics(false);
    Map<Long, Long> publishedAt = new ConcurrentHashMap<>();
    SnapshotPublisher publisher = start(new PublisherListener() {
      @Override
      public void published(EpochRecord record) {
        publishedAt.put(record.getEpoch(), System.nanoTime());
      }
    });
    // The broker may not describe a topic created a moment ago yet.
    await("ring.snapshots created by the publisher, compacted").atMost(WAIT).ignoreExceptions()
        .until(() -> cleanupPolicy(kafka.topics().snapshots().name()), TopicConfig.CLEANUP_POLICY_COMPACT::equals);

    Step init = script.init(6);
    kafka.write(init);
    Step join = script.join("node-07", "az-2");
    long written = System.nanoTime();
    kafka.write(join);
    awaitPublished(2);
    System.out.printf("SnapshotPublisherIT: epoch 2 written (PLANNED, %d tasks and statuses, READY; %d members) "
        + "to its snapshot and PUBLISHED record committed: %d ms%n", join.tasks().size(), join.ring().memberCount(),
        (publishedAt.get(2L) - written) / 1_000_000);

    List<PublishedSnapshot> snapshots = snapshots();
    assertThat(snapshots).extracting(PublishedSnapshot::epoch).containsExactly(1L, 2L);
    TrustedKeys trusted = TrustedKeys.of(KEY.publicKey());
    snapshots.forEach(trusted::verify);
    assertThat(snapshots.get(0).previousChecksum()).isNull();
    assertThat(snapshots.get(1).follows(snapshots.get(0))).isTrue();
    assertThat(snapshots.get(1).ring()).isEqualTo(join.ring());
    assertThat(kafka.snapshots()).extracting(ConsumerRecord::key).containsOnly("cache");

    List<EpochRecord> published = kafka.epochs(EpochState.PUBLISHED);
    assertThat(published).extracting(EpochRecord::getEpoch).containsExactly(1L, 2L);
    EpochRecord second = published.get(1);
    assertThat(second.getSigningKeyId()).isEqualTo(KEY.id());
    assertThat(AvroBytes.toArray(second.getSignature())).isEqualTo(snapshots.get(1).signature());
    assertThat(second.getTargetChecksum()).isEqualTo(join.ready().getTargetChecksum());
    assertThat(second.getPreviousChecksum()).isEqualTo(join.ready().getPreviousChecksum());
    assertThat(publisher.publishedCount()).isEqualTo(2);
    assertThat(publisher.rejectedCount()).isZero();
  }

  @Test
  void shouldRejectAnEpochWithAnUnverifiedTaskOnlyAfterWaitingAndPublishNothingForIt() {
    kafka.createTopics(true);
    List<String> waiting = new CopyOnWriteArrayList<>();
    // A short timeout: the patience with an epoch whose tasks do not add up is 3 x the timeout.
    SnapshotPublisher publisher = start(new PublisherListener() {
      @Override
      public void waiting(EpochRecord ready, String reason, Duration patience) {
        waiting.add("epoch " + ready.getEpoch() + " for up to " + patience + ": " + reason);
      }
    }, Duration.ofSeconds(2));
    kafka.write(script.init(6));
    awaitPublished(1);

    Step join = script.join("node-07", "az-1");
    List<TaskStatus> statuses = new ArrayList<>(join.verified());
    statuses.set(0, Step.status(join.tasks().get(0), TaskState.FENCED));
    kafka.write(join, statuses, join.ready());
    await("the REJECTED record").atMost(WAIT).until(() -> !kafka.epochs(EpochState.REJECTED).isEmpty());

    assertThat(waiting).singleElement().asString().startsWith("epoch 2 for up to PT6S: TASKS: 1 of the ");
    EpochRecord rejected = kafka.epochs(EpochState.REJECTED).get(0);
    assertThat(rejected.getEpoch()).isEqualTo(2);
    assertThat(rejected.getReason()).startsWith("TASKS: 1 of the " + join.tasks().size() + " COPY/REPAIR tasks of "
        + "epoch 2 are not VERIFIED on ring.task-status: " + join.tasks().get(0).getTaskId() + " (FENCED)");
    assertThat(rejected.getSignature()).isNull();
    assertThat(snapshots()).extracting(PublishedSnapshot::epoch).containsExactly(1L);
    assertThat(kafka.epochs(EpochState.PUBLISHED)).extracting(EpochRecord::getEpoch).containsExactly(1L);
    assertThat(publisher.rejectedCount()).isEqualTo(1);
  }

  @Test
  void shouldPublishAFailureEpochWithItsFillingAtOnceAndTheRepairEpochWithout() {
    kafka.createTopics(true);
    start();
    kafka.write(script.init(6));
    Step join = script.join("node-07", "az-1");
    kafka.write(join);
    Step failure = script.fail("node-05");
    kafka.write(failure);
    awaitPublished(3);
    Step repair = script.repair();
    kafka.write(repair);
    awaitPublished(4);

    List<PublishedSnapshot> snapshots = snapshots();
    assertThat(snapshots).extracting(PublishedSnapshot::epoch).containsExactly(1L, 2L, 3L, 4L);
    assertThat(snapshots.get(2).filling()).isNotEmpty()
        .isEqualTo(FillingRange.between(join.ring(), failure.ring()));
    assertThat(snapshots.get(3).filling()).isEmpty();
    for (int i = 1; i < snapshots.size(); i++) {
      assertThat(snapshots.get(i).follows(snapshots.get(i - 1))).as("epoch %d chains", i + 1).isTrue();
    }
  }

  @Test
  void shouldWaitForTheTombstonesOfASupersededPlanInsteadOfRejectingTheFailureEpoch() {
    kafka.createTopics(true);
    List<EpochRecord> waiting = new CopyOnWriteArrayList<>();
    start(new PublisherListener() {
      @Override
      public void waiting(EpochRecord ready, String reason, Duration patience) {
        waiting.add(ready);
      }
    });
    Step init = script.init(6);
    kafka.write(init);
    awaitPublished(1);
    // A join planned as epoch 2, its tasks written and not done, when node-05 fails: the failure epoch, also 2,
    // supersedes the plan. The orchestrator writes the tombstones of the plan's tasks in the transaction of the
    // failure's READY record, and a reader can see the READY record before them (Kafka commits partition by
    // partition); here they simply come later.
    ClusterScript superseded = new ClusterScript("cache");
    superseded.init(6);
    Step plan = superseded.join("node-07", "az-1");
    kafka.epoch(plan.planned());
    kafka.tasks(plan.tasks());
    Step failure = script.fail("node-05");
    kafka.write(failure);
    await("the publisher waits for the tasks of epoch 2").atMost(WAIT).until(() -> !waiting.isEmpty());

    kafka.tombstones(plan.tasks());
    awaitPublished(2);

    assertThat(waiting).extracting(EpochRecord::getEpoch).containsExactly(2L);
    assertThat(kafka.epochs(EpochState.REJECTED)).isEmpty();
    assertThat(snapshots().get(1).filling()).isNotEmpty().isEqualTo(FillingRange.between(init.ring(),
        failure.ring()));
  }

  @Test
  void shouldCompleteTerminatedExceptionallyWhenAnErrorStopsItsThread() {
    kafka.createTopics(true);
    Error bug = new Error("a listener's bug");
    SnapshotPublisher publisher = start(new PublisherListener() {
      @Override
      public void published(EpochRecord record) {
        throw bug;
      }
    });
    kafka.write(script.init(6));

    CompletableFuture<Void> terminated = publisher.terminated().toCompletableFuture();
    await("the publisher stops").atMost(WAIT).until(terminated::isDone);
    assertThat(terminated).isCompletedExceptionally();
    assertThat(terminated.handle((ok, error) -> error).join()).isSameAs(bug);
    assertThat(kafka.epochs(EpochState.PUBLISHED)).extracting(EpochRecord::getEpoch).containsExactly(1L);
  }

  @Test
  void shouldPublishNothingTwiceWhenRestartedOrReplacedUnderTheSameTransactionalId() throws Exception {
    kafka.createTopics(true);
    SnapshotPublisher first = start();
    kafka.write(script.init(6));
    kafka.write(script.join("node-07", "az-1"));
    awaitPublished(2);
    first.close();

    // Written while no publisher runs; the restarted one publishes it, and nothing it published before.
    kafka.write(script.join("node-08", "az-2"));
    SnapshotPublisher second = start(PublisherListener.NONE, PublisherConfig.of(KAFKA.bootstrapServers(), KEY)
        .timeout(), Duration.ZERO, false);
    awaitPublished(3);
    assertThat(second.publishedCount()).isEqualTo(1);

    // Without the election (lease timeout 0), a third instance fences the second, which learns it when it next
    // tries to commit, and stops. (It does not try if it reads the READY record together with the third's PUBLISHED
    // record; another epoch is then written.) This is what still protects the log when a publisher that lost the
    // lease without noticing (a long pause) tries to publish.
    SnapshotPublisher third = start(PublisherListener.NONE, PublisherConfig.of(KAFKA.bootstrapServers(), KEY).timeout(),
        Duration.ZERO, false);
    CompletableFuture<Void> fenced = second.terminated().toCompletableFuture();
    long epoch = 3;
    while (!fenced.isDone() && epoch < 8) {
      epoch++;
      kafka.write(script.join(String.format("node-%02d", epoch + 5), "az-" + (epoch % 3 + 1)));
      awaitPublished(epoch);
      // Up to 2 s for the second to fail its commit (it reads the READY record at the same time as the third).
      fenced.handle((ok, error) -> null).completeOnTimeout(null, 2, TimeUnit.SECONDS).join();
    }
    await("the fenced publisher stops").atMost(WAIT).until(fenced::isDone);
    assertThat(fenced).isCompletedExceptionally();
    assertThat(third.publishedCount()).isEqualTo(epoch - 3);

    List<Long> all = new ArrayList<>();
    for (long e = 1; e <= epoch; e++) {
      all.add(e);
    }
    assertThat(snapshots()).extracting(PublishedSnapshot::epoch).containsExactlyElementsOf(all);
    assertThat(kafka.epochs(EpochState.PUBLISHED)).extracting(EpochRecord::getEpoch).containsExactlyElementsOf(all);
    assertThat(kafka.epochs(EpochState.REJECTED)).isEmpty();
  }

  @Test
  void shouldLetAStandbyTakeOverWhenTheActivePublisherStops() {
    kafka.createTopics(true);
    List<Boolean> secondActive = new java.util.concurrent.CopyOnWriteArrayList<>();
    SnapshotPublisher first = start();
    kafka.write(script.init(6));
    awaitPublished(1);
    SnapshotPublisher second = start(new PublisherListener() {
      @Override
      public void activeChanged(boolean active) {
        secondActive.add(active);
      }
    });
    assertThat(first.active()).isTrue();
    assertThat(second.active()).as("a second publisher with the same id stands by").isFalse();
    kafka.write(script.join("node-07", "az-1"));
    awaitPublished(2);
    assertThat(second.publishedCount()).isZero();

    long stopped = System.nanoTime();
    first.close();
    await("the standby takes over").atMost(WAIT).until(second::active);
    Duration takeOver = Duration.ofNanos(System.nanoTime() - stopped);
    kafka.write(script.join("node-08", "az-2"));
    awaitPublished(3);
    assertThat(second.publishedCount()).isEqualTo(1);
    assertThat(secondActive).containsExactly(true);
    assertThat(takeOver).as("a clean stop hands the lease over at once, not after the lease timeout")
        .isLessThan(PublisherConfig.DEFAULT_LEASE_TIMEOUT);
    assertThat(snapshots()).extracting(PublishedSnapshot::epoch).containsExactly(1L, 2L, 3L);
    assertThat(kafka.epochs(EpochState.PUBLISHED)).extracting(EpochRecord::getEpoch).containsExactly(1L, 2L, 3L);
  }

  private SnapshotPublisher start() {
    return start(PublisherListener.NONE);
  }

  private SnapshotPublisher start(PublisherListener listener) {
    return start(listener, PublisherConfig.of(KAFKA.bootstrapServers(), KEY).timeout());
  }

  private SnapshotPublisher start(PublisherListener listener, Duration timeout) {
    return start(listener, timeout, PublisherConfig.DEFAULT_LEASE_TIMEOUT, false);
  }

  /**
   * A publisher of this test's Kafka. {@code stages}: whether it publishes changes in transition stages; the tests of
   * the checks, the waiting and the crash safety count one snapshot per epoch, and take the fence.
   */
  private SnapshotPublisher start(PublisherListener listener, Duration timeout, Duration leaseTimeout,
      boolean stages) {
    PublisherConfig config = PublisherConfig.of(KAFKA.bootstrapServers(), KEY)
        .withTopics(kafka.topics())
        .withTransactionalId(KAFKA.applicationId())
        .withTimeout(timeout)
        .withLeaseTimeout(leaseTimeout)
        .withTransitionStages(stages);
    SnapshotPublisher publisher = new SnapshotPublisher(config, listener);
    publishers.add(publisher);
    return publisher.start();
  }

  private void awaitPublished(long epoch) {
    await("epoch " + epoch + " PUBLISHED").atMost(WAIT).pollInterval(Duration.ofMillis(50))
        .until(() -> kafka.epochs(EpochState.PUBLISHED).stream().anyMatch(e -> e.getEpoch() == epoch));
  }

  private List<PublishedSnapshot> snapshots() {
    return kafka.snapshots().stream().map(r -> CODEC.decodePublished(r.value())).toList();
  }

  private static String cleanupPolicy(String topic) throws Exception {
    try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, KAFKA.bootstrapServers()))) {
      ConfigResource resource = new ConfigResource(ConfigResource.Type.TOPIC, topic);
      Config config = admin.describeConfigs(List.of(resource)).all().get(30, TimeUnit.SECONDS).get(resource);
      return config.get(TopicConfig.CLEANUP_POLICY_CONFIG).value();
    }
  }

}
