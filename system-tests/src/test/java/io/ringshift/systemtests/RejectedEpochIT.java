package io.ringshift.systemtests;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.ringshift.cli.Ringshift;
import io.ringshift.devkit.junit.EmbeddedKafkaExtension;
import io.ringshift.localplane.LocalNodes;
import io.ringshift.protocol.RecordKeys;
import io.ringshift.protocol.SigningKey;
import io.ringshift.protocol.Topics;
import io.ringshift.publisher.PublisherConfig;
import io.ringshift.publisher.SnapshotPublisher;
import io.ringshift.ring.RingSnapshot;
import io.ringshift.schemas.avro.EpochRecord;
import io.ringshift.schemas.avro.EpochState;
import io.ringshift.schemas.avro.MembershipAction;
import io.ringshift.schemas.avro.RangeCopyTask;
import io.ringshift.schemas.avro.TaskKind;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * Issue 11, defect 8: one REJECTED epoch used to wedge the cluster for good (every later epoch, failure epochs
 * included, followed the rejected one and was rejected by SEQUENCE in turn). Every role real: the orchestrator,
 * a worker, the publisher (its own, with a 2 s timeout, so that it gives up on an epoch after 6 s), twelve or
 * thirteen nodes, and {@code ringshift audit} over the history.
 *
 * <p>A stray task of epoch 2 on {@code ring.tasks}, whose target is in no node directory, stays BLOCKED: the
 * publisher waits for it and rejects the JOIN's epoch 2. The orchestrator reads the REJECTED record, rolls back to
 * epoch 1 and plans the JOIN again under a new number; a FAIL that follows is published at once as a failure epoch
 * chained to epoch 1, and the JOIN with the repair is published after it, with every loaded key on every replica.
 */
class RejectedEpochIT {
  @RegisterExtension static final EmbeddedKafkaExtension KAFKA = new EmbeddedKafkaExtension();

  private static final Duration TIMEOUT = ControlPlaneTail.TIMEOUT;
  private static final String CLUSTER = "c1";

  @TempDir Path dir;

  private ClusterDriver cluster;

  @AfterEach
  void closeEverything() throws Exception {
    if (cluster != null) {
      cluster.close();
    }
  }

  @Test
  void shouldPublishAFailureEpochAfterARejectedEpochAndTheRejectedJoinPlannedAgain() throws Exception {
    long seed = Long.getLong("ringshift.seed", new Random().nextLong());
    System.out.printf("%nRejectedEpochIT: seed %d (replay with -Dringshift.seed=%d)%n", seed, seed);
    cluster = new ClusterDriver(KAFKA, dir, CLUSTER, "RejectedEpochIT", "rejected-it-", null);
    Topics topics = cluster.topics();
    ControlPlaneTail tail = cluster.tail();
    LocalNodes nodes = cluster.nodes();
    SigningKey key = cluster.publisherKey();
    Path publicKey = dir.resolve("publisher.pub");
    key.write(dir.resolve("publisher.key"), publicKey);
    SnapshotPublisher publisher = cluster.own(new SnapshotPublisher(
        PublisherConfig.of(KAFKA.bootstrapServers(), key).withTopics(topics).withTimeout(Duration.ofSeconds(2))
            .withTransactionalId(KAFKA.applicationId() + "-publisher")));
    publisher.start();

    RingSnapshot ring1 = cluster.initCluster(12, 16, 3);
    tail.awaitEpoch(1, EpochState.PUBLISHED);
    Map<String, byte[]> loaded = LoadedData.load(nodes, ring1, 2_000, new Random(seed));
    nodes.start("node-13", "az-1");
    cluster.startWorker(cluster.workerConfig("worker-1"), Clock.systemUTC()); // knows every node started so far

    RangeCopyTask stray = RangeCopyTask.newBuilder()
        .setTaskId(RecordKeys.taskId(CLUSTER, 2, TaskKind.COPY, 0, 1L << 40, "node-99"))
        .setClusterId(CLUSTER).setEpoch(2).setKind(TaskKind.COPY).setRangeStart(0).setRangeEnd(1L << 40)
        .setSources(List.of("node-01")).setTarget("node-99").setTargetZone("az-1").setEstimatedBytes(0)
        .setTimestampMillis(System.currentTimeMillis()).setFenceRequested(false)
        .build();
    cluster.write(topics.tasks().name(), stray.getTaskId(),
        topics.tasks().valueSerde().serializer().serialize(topics.tasks().name(), stray));
    cluster.change(MembershipAction.JOIN, "node-13", "az-1");
    EpochRecord rejected;
    try {
      rejected = tail.awaitEpoch(2, EpochState.REJECTED).value();
    } catch (AssertionError e) {
      for (String task : tail.latestTasks(2, TaskKind.COPY).keySet()) {
        System.out.printf("  task %s: %s%n", task, tail.latestStatus(task)
            .map(x -> x.getState() + " " + x.getBlockedReason() + " " + x.getError()).orElse("no status"));
      }
      throw e;
    }
    System.out.printf("  epoch 2 rejected: %s%n", rejected.getReason());
    assertThat(rejected.getReason()).startsWith("TASKS");
    cluster.write(topics.tasks().name(), stray.getTaskId(), null);

    cluster.change(MembershipAction.FAIL, "node-05", null);

    // The failure epoch is published, chained to epoch 1, without node-05.
    EpochRecord failure = await("a published failure epoch").atMost(TIMEOUT).pollInterval(Duration.ofMillis(50))
        .until(() -> published(tail).stream().filter(r -> r.getCause() != null
            && r.getCause().getAction() == MembershipAction.FAIL && !r.getFilling().isEmpty()).findFirst()
            .orElse(null), r -> r != null);
    assertThat(failure.getEpoch()).isGreaterThan(2);
    assertThat(failure.getPreviousChecksum()).isEqualTo(java.nio.ByteBuffer.wrap(ring1.checksum()));
    assertThat(failure.getMembers()).extracting(m -> m.getId()).doesNotContain("node-05");

    // Then the JOIN, planned again, and the repair: an epoch with node-13, without node-05, nothing filling.
    EpochRecord last;
    try {
      last = await("the join and the repair published").atMost(TIMEOUT.multipliedBy(2))
          .pollInterval(Duration.ofMillis(100))
          .until(() -> published(tail).stream().filter(r -> r.getFilling().isEmpty()
              && r.getMembers().stream().anyMatch(m -> m.getId().equals("node-13"))
              && r.getMembers().stream().noneMatch(m -> m.getId().equals("node-05"))).findFirst().orElse(null),
              r -> r != null);
    } catch (org.awaitility.core.ConditionTimeoutException e) {
      for (EpochRecord r : tail.epochRecords()) {
        System.out.printf("  %s@%d stage %s prev %s cause %s filling %d members %d reason %s%n", r.getState(),
            r.getEpoch(), r.getStage(), r.getPreviousEpoch(),
            r.getCause() == null ? null : r.getCause().getAction() + " " + r.getCause().getNodeId(),
            r.getFilling().size(), r.getMembers().size(), r.getReason());
      }
      throw e;
    }
    List<Long> publishedEpochs = published(tail).stream().map(EpochRecord::getEpoch).toList();
    System.out.printf("  epochs: %s%n  published: %s%n", tail.epochSummary(), publishedEpochs);
    assertThat(publishedEpochs).doesNotContain(2L).isSorted().doesNotHaveDuplicates().contains(last.getEpoch());
    RingSnapshot finalRing = ClusterDriver.ringOf(last);
    Map<String, Map<String, byte[]>> contents = new java.util.HashMap<>();
    for (Map.Entry<String, byte[]> e : loaded.entrySet()) {
      for (String replica : finalRing.replicasOf(e.getKey()).ids()) {
        byte[] held = contents.computeIfAbsent(replica, id -> NodeContents.of(nodes, id)).get(e.getKey());
        assertThat(held).as("%s on %s", e.getKey(), replica).isEqualTo(e.getValue());
      }
    }

    StringWriter out = new StringWriter();
    CommandLine cli = Ringshift.newCommandLine();
    cli.setOut(new PrintWriter(out, true));
    cli.setErr(new PrintWriter(out, true));
    int exit = cli.execute("audit", "--bootstrap", KAFKA.bootstrapServers(), "--topic-prefix", KAFKA.topicPrefix(),
        "--cluster", CLUSTER, "--trusted-key", publicKey.toString());
    System.out.printf("  ringshift audit: exit %d%n%s", exit, out);
    assertThat(exit).as(out.toString()).isZero();
  }

  private static List<EpochRecord> published(ControlPlaneTail tail) {
    return tail.epochRecords().stream().filter(r -> r.getState() == EpochState.PUBLISHED).toList();
  }
}
