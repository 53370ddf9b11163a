package io.ringshift.systemtests;

import static io.ringshift.systemtests.ClusterDriver.ringOf;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.ringshift.localplane.LocalNodes;
import io.ringshift.worker.FakeTime;
import io.ringshift.worker.MigrationWorker;
import io.ringshift.devkit.junit.EmbeddedKafkaExtension;
import io.ringshift.orchestrator.EpochPlanner;
import io.ringshift.orchestrator.Orchestrator;
import io.ringshift.orchestrator.PlannedTask;
import io.ringshift.protocol.Topics;
import io.ringshift.ring.RingRange;
import io.ringshift.ring.RingSnapshot;
import io.ringshift.schemas.avro.EpochRecord;
import io.ringshift.schemas.avro.EpochState;
import io.ringshift.schemas.avro.MembershipAction;
import io.ringshift.schemas.avro.RangeCopyTask;
import io.ringshift.schemas.avro.TaskKind;
import io.ringshift.schemas.avro.TaskState;
import io.ringshift.schemas.avro.TaskStatus;
import io.ringshift.systemtests.ControlPlaneTail.Seen;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * The whole migration protocol with real parts, as in production but in one JVM: the {@link Orchestrator}
 * (Kafka Streams, exactly-once) on an embedded broker, a {@link MigrationWorker}, and twelve or thirteen storage
 * nodes, each a {@code NodeServer} over its own {@code RocksStore} on 127.0.0.1, reached by everybody (the test's
 * client, its checks and the worker) only through {@code RemoteStore} over HTTP.
 *
 * <h2>Design</h2>
 * A test declares a 12-node cluster in 3 zones (V = 16, R = 3), loads 20,000 keys into every replica that the
 * epoch-1 ring names, then changes the membership and watches the control plane ({@link ControlPlaneTail}) and the
 * nodes. A {@link RingWriter} plays the clients: it writes to every replica of a key at the ring's epoch, is refused
 * by fenced ranges, waits for the next epoch's READY and writes again on the new ring. Its acknowledged writes are
 * what invariant 1 (docs/architecture.md) says must be on every new replica. Each test prints what it measured. The
 * publisher does not exist yet (issue 5): the cleanup test writes the PUBLISHED record the way it will.
 *
 * <p>The random data and the writer's mix come from one seed, printed; {@code -Dringshift.seed=N} replays it
 * (the timing of the writer against the fence is not replayable).
 */
class MigrationPipelineIT {
  @RegisterExtension static final EmbeddedKafkaExtension KAFKA = new EmbeddedKafkaExtension();

  private static final Duration TIMEOUT = ControlPlaneTail.TIMEOUT;
  private static final String CLUSTER = "c1";
  private static final int NODES = 12;
  private static final int VNODES = 16;
  private static final int REPLICAS = 3;
  private static final int KEYS = 20_000;
  /**
   * The clients' rate cap. On the 2-core development machine they reach 300-500 writes/s, about 1,000-1,500 HTTP
   * writes/s to the nodes, CPU-bound next to the broker, the orchestrator, the worker and 13 nodes in one JVM.
   */
  private static final int WRITES_PER_SECOND = 2_000;
  /** Clients writing at once: a write is three sequential HTTP calls, so one client alone reaches about 120/s. */
  private static final int CLIENTS = 16;
  /** Writes the client has acknowledged on each ring before the change and after the swap: real traffic on both. */
  private static final int WRITES_PER_PHASE = 500;
  private static final String WORKER_ID = "worker-1";
  private static final Duration GRACE = Duration.ofMinutes(10);

  @TempDir Path dir;

  private final FakeTime clock = FakeTime.offsetFromSystem();
  private long seed;
  private ClusterDriver cluster;
  private Topics topics;
  private LocalNodes nodes;
  private ControlPlaneTail tail;

  @BeforeEach
  void startControlPlane(TestInfo test) {
    seed = Long.getLong("ringshift.seed", new Random().nextLong());
    System.out.printf("%n%s: seed %d (replay with -Dringshift.seed=%d)%n", test.getDisplayName(), seed, seed);
    cluster = new ClusterDriver(KAFKA, dir, CLUSTER, "MigrationPipelineIT", "pipeline-it-");
    topics = cluster.topics();
    tail = cluster.tail();
    nodes = cluster.nodes();
  }

  @AfterEach
  void closeEverything() throws Exception {
    if (cluster != null) {
      cluster.close();
    }
  }

  @Test
  void shouldMoveEveryAcknowledgedWriteToTheJoiningNodeUnderConcurrentWrites() {
    Random random = new Random(seed);
    RingSnapshot ring1 = initCluster();
    Map<String, byte[]> loaded = LoadedData.load(nodes, ring1, KEYS, random);
    nodes.start("node-13", "az-1");
    startWorker();
    RingWriter writer = push(new RingWriter(nodes, tail, ring1, loaded, ClusterDriver::ringOf, random.nextLong(),
        CLIENTS)).start(WRITES_PER_SECOND);
    awaitWrites(writer, 1, WRITES_PER_PHASE);

    long joined = cluster.change(MembershipAction.JOIN, "node-13", "az-1");
    RingSnapshot ring2 = ringOf(tail.awaitEpoch(2, EpochState.PLANNED).value());
    Seen<EpochRecord> ready = tail.awaitEpoch(2, EpochState.READY);
    awaitWrites(writer, 2, WRITES_PER_PHASE);
    RingWriter.Report writes = writer.stop();

    EpochPlanner.Plan plan = EpochPlanner.plan(ring1, ring2.members(), 2, 1, Set.of(), 0);
    Map<String, RangeCopyTask> copies = tail.latestTasks(2, TaskKind.COPY, TaskKind.REPAIR);
    assertThat(copies.keySet()).as("the copy tasks on ring.tasks are the planner's")
        .containsExactlyInAnyOrderElementsOf(ids(plan.tasks()));
    assertThat(copies.values()).as("a join moves keys only to the joining node")
        .allSatisfy(t -> assertThat(t.getTarget()).isEqualTo("node-13"));
    Map<String, TaskStatus> verified = assertFencedAndVerified(copies);
    assertThat(writes.refusals()).as("writes to the moving ranges were refused at the fence").isPositive();
    assertReplicasHold(ring2, writer.acknowledged(), "epoch 2");

    long movedBytes = verified.values().stream().mapToLong(TaskStatus::getCopiedBytes).sum();
    printTimeline("JOIN node-13", joined, ready, copies.keySet());
    System.out.printf("  %d copy tasks moved %,d bytes (copied + caught up); %,d keys x %d replicas loaded (%,d "
        + "bytes per replica set)%n", copies.size(), movedBytes, KEYS, REPLICAS, LoadedData.bytes(loaded));
    System.out.printf("  client: %s%n", writes);
  }

  @Test
  void shouldKeepTheOldReplicasUntilTheEpochIsPublishedAndItsGracePeriodIsOver() {
    Random random = new Random(seed);
    RingSnapshot ring1 = initCluster();
    Map<String, byte[]> loaded = LoadedData.load(nodes, ring1, KEYS, random);
    nodes.start("node-13", "az-1");
    startWorker();
    long joined = cluster.change(MembershipAction.JOIN, "node-13", "az-1");
    RingSnapshot ring2 = ringOf(tail.awaitEpoch(2, EpochState.PLANNED).value());
    Seen<EpochRecord> readySeen = tail.awaitEpoch(2, EpochState.READY);
    EpochRecord ready = readySeen.value();

    List<String> planned = ids(EpochPlanner.plan(ring1, ring2.members(), 2, 1, Set.of(), 0).cleanupTasks());
    Map<String, RangeCopyTask> cleanups = await("epoch 2's " + planned.size() + " cleanup tasks on ring.tasks")
        .atMost(TIMEOUT).until(() -> tail.latestTasks(2, TaskKind.CLEANUP), found -> found.size() >= planned.size());
    assertThat(cleanups.keySet()).as("the cleanup tasks on ring.tasks are the planner's")
        .containsExactlyInAnyOrderElementsOf(planned);
    assertThat(cleanups.values()).as("each deletes from an old replica, once the new replicas are verified")
        .allSatisfy(c -> assertThat(c.getSources()).doesNotContain(c.getTarget()).contains("node-13"));
    Map<String, Set<String>> movedAway = movedAway(ring1, ring2, loaded.keySet());
    assertThat(movedAway).as("the join moves keys away from old replicas").isNotEmpty();

    awaitEvery(cleanups, "BLOCKED until epoch 2 is published", s -> s.getState() == TaskState.BLOCKED
        && "waiting for epoch 2 to be published".equals(s.getBlockedReason()));
    assertOldReplicasHold(movedAway, loaded, "before the publish");

    long publishedAt = clock.millis();
    publish(ready, publishedAt);
    awaitEvery(cleanups, "BLOCKED in the grace period", s -> s.getState() == TaskState.BLOCKED
        && s.getBlockedReason() != null && s.getBlockedReason().startsWith("grace period ends in"));
    assertOldReplicasHold(movedAway, loaded, "in the grace period");

    clock.advance(GRACE);
    long graceOver = System.nanoTime();
    awaitEvery(cleanups, "VERIFIED (deleted) after the grace period", s -> s.getState() == TaskState.VERIFIED);
    long allDeleted = System.nanoTime();

    for (RangeCopyTask cleanup : cleanups.values()) {
      List<TaskStatus> history = tail.statuses(cleanup.getTaskId());
      assertThat(history).as("statuses of %s", cleanup.getTaskId())
          .filteredOn(s -> s.getState() == TaskState.VERIFIED)
          .allSatisfy(s -> assertThat(s.getTimestampMillis()).as("deleted at, by the worker's clock")
              .isGreaterThanOrEqualTo(publishedAt + GRACE.toMillis()));
      assertThat(history).as("statuses of %s before the grace period ended", cleanup.getTaskId())
          .filteredOn(s -> s.getTimestampMillis() < publishedAt + GRACE.toMillis())
          .allSatisfy(s -> assertThat(s.getState()).isIn(TaskState.PENDING, TaskState.BLOCKED));
      RingRange range = RingRange.of(cleanup.getRangeStart(), cleanup.getRangeEnd());
      assertThat(NodeContents.keysIn(nodes, cleanup.getTarget(), range)).as("keys left on %s in %s", cleanup.getTarget(), range)
          .isZero();
    }
    Map<String, Map<String, byte[]>> contents = assertReplicasHold(ring2, loaded, "epoch 2 after cleanup");
    for (String node : ring2.memberIds()) {
      Set<String> owned = new HashSet<>();
      loaded.keySet().forEach(k -> {
        if (ring2.replicasOf(k.getBytes(StandardCharsets.UTF_8)).contains(node)) {
          owned.add(k);
        }
      });
      assertThat(contents.get(node).keySet()).as("%s holds exactly the keys epoch 2 gives it", node)
          .isEqualTo(owned);
    }

    long deletedKeys = movedAway.values().stream().mapToLong(Set::size).sum();
    printTimeline("JOIN node-13 (no client writing)", joined, readySeen,
        tail.latestTasks(2, TaskKind.COPY, TaskKind.REPAIR).keySet());
    System.out.printf("  %d cleanup tasks BLOCKED until the publish and through the %s grace period; after it, all "
        + "VERIFIED in %,d ms; %,d moved replicas deleted from %d old replicas%n", cleanups.size(), GRACE,
        millis(graceOver, allDeleted), deletedKeys, movedAway.size());
  }

  @Test
  void shouldMoveADrainedNodesRangesToTheOtherNodesUnderConcurrentWrites() {
    Random random = new Random(seed);
    RingSnapshot ring1 = initCluster();
    Map<String, byte[]> loaded = LoadedData.load(nodes, ring1, KEYS, random);
    startWorker();
    RingWriter writer = push(new RingWriter(nodes, tail, ring1, loaded, ClusterDriver::ringOf, random.nextLong(),
        CLIENTS)).start(WRITES_PER_SECOND);
    awaitWrites(writer, 1, WRITES_PER_PHASE);

    long drained = cluster.change(MembershipAction.DRAIN, "node-05", null);
    RingSnapshot ring2 = ringOf(tail.awaitEpoch(2, EpochState.PLANNED).value());
    assertThat(ring2.memberIds()).doesNotContain("node-05").hasSize(NODES - 1);
    Seen<EpochRecord> ready = tail.awaitEpoch(2, EpochState.READY);
    awaitWrites(writer, 2, WRITES_PER_PHASE);
    RingWriter.Report writes = writer.stop();

    Map<String, RangeCopyTask> copies = tail.latestTasks(2, TaskKind.COPY, TaskKind.REPAIR);
    assertThat(copies.keySet()).as("the copy tasks on ring.tasks are the planner's")
        .containsExactlyInAnyOrderElementsOf(ids(EpochPlanner.plan(ring1, ring2.members(), 2, 1, Set.of(), 0)
            .tasks()));
    assertThat(copies.values()).allSatisfy(t -> assertThat(t.getTarget()).isNotEqualTo("node-05"));
    assertFencedAndVerified(copies);
    assertReplicasHold(ring2, writer.acknowledged(), "epoch 2");
    long heldByDrained = loaded.keySet().stream()
        .filter(k -> ring1.replicasOf(k.getBytes(StandardCharsets.UTF_8)).contains("node-05")).count();

    printTimeline("DRAIN node-05", drained, ready, copies.keySet());
    System.out.printf("  %d copy tasks; the %,d loaded keys node-05 held are on 3 other nodes each%n",
        copies.size(), heldByDrained);
    System.out.printf("  client: %s%n", writes);
  }

  // ---- the cluster ----

  /** Starts the twelve nodes, declares the cluster and returns its epoch-1 ring, rebuilt from its READY record. */
  private RingSnapshot initCluster() {
    return cluster.initCluster(NODES, VNODES, REPLICAS);
  }

  /** Writes the PUBLISHED record the publisher (issue 5) will write: the READY record, re-stated and re-timed. */
  private void publish(EpochRecord ready, long timestampMillis) {
    EpochRecord published = cluster.signed(EpochRecord.newBuilder(ready)
        .setState(EpochState.PUBLISHED)
        .setTimestampMillis(timestampMillis)
        .build());
    String topic = topics.epochs().name();
    cluster.write(topic, CLUSTER, topics.epochs().valueSerde().serializer().serialize(topic, published));
  }

  private void startWorker() {
    cluster.startWorker(cluster.workerConfig(WORKER_ID).withGrace(GRACE), clock);
  }

  // ---- assertions ----

  /**
   * Every task had its fence requested, went COPYING, CAUGHT_UP, FENCED, VERIFIED in that order, and its latest
   * status is VERIFIED by this worker, drained to the fence position, with the source's digest at the fence set (a
   * mismatch would have set targetDigest and BLOCKED the task).
   */
  private Map<String, TaskStatus> assertFencedAndVerified(Map<String, RangeCopyTask> copies) {
    Set<String> fenceRequested = new HashSet<>();
    tail.taskRecords().forEach(s -> {
      if (s.value() != null && s.value().getEpoch() == 2 && s.value().getFenceRequested()) {
        fenceRequested.add(s.key());
      }
    });
    assertThat(fenceRequested).as("tasks re-emitted with fenceRequested").containsAll(copies.keySet());
    Map<String, TaskStatus> verified = awaitEvery(copies, "VERIFIED", s -> s.getState() == TaskState.VERIFIED);
    assertThat(verified.values()).allSatisfy(s -> {
      assertThat(s.getDigest()).as("%s: the source's digest at the fence", s.getTaskId()).isNotNull();
      assertThat(s.getTargetDigest()).as("%s: a target digest is reported only on a mismatch", s.getTaskId())
          .isNull();
      assertThat(s.getFencePosition()).as("%s: fence position", s.getTaskId()).isNotNull();
      assertThat(s.getCaughtUpPosition()).as("%s: drained to the fence position", s.getTaskId())
          .isGreaterThanOrEqualTo(s.getFencePosition());
      assertThat(s.getWorkerId()).isEqualTo(WORKER_ID);
      // One task's statuses share a partition, so their order on the topic is the order the worker wrote them.
      List<TaskState> states = tail.statuses(s.getTaskId()).stream().map(TaskStatus::getState).toList();
      assertThat(states).as("%s: states in the order written", s.getTaskId())
          .containsSubsequence(TaskState.COPYING, TaskState.CAUGHT_UP, TaskState.FENCED, TaskState.VERIFIED);
    });
    return verified;
  }

  /**
   * Invariant 1: every replica {@code ring} names for a key holds the key's last acknowledged value, and no
   * replica holds a key whose last acknowledged write deleted it. Returns every node's contents.
   */
  private Map<String, Map<String, byte[]>> assertReplicasHold(RingSnapshot ring, Map<String, byte[]> expected,
      String what) {
    Map<String, Map<String, byte[]>> contents = new TreeMap<>();
    for (String node : ring.memberIds()) {
      contents.put(node, NodeContents.of(nodes, node));
    }
    List<String> wrong = new ArrayList<>();
    long wrongCount = 0;
    long deleted = 0;
    for (Map.Entry<String, byte[]> e : expected.entrySet()) {
      boolean isDeleted = e.getValue() == RingWriter.DELETED;
      deleted += isDeleted ? 1 : 0;
      for (String node : ring.replicasOf(e.getKey().getBytes(StandardCharsets.UTF_8)).ids()) {
        byte[] held = contents.get(node).get(e.getKey());
        boolean ok = isDeleted ? held == null : Arrays.equals(held, e.getValue());
        if (!ok) {
          wrongCount++;
          if (wrong.size() < 10) {
            wrong.add(e.getKey() + " on " + node + ": holds " + describe(held) + ", last acknowledged "
                + (isDeleted ? "a delete" : describe(e.getValue())));
          }
        }
      }
    }
    assertThat(wrong).as("%s: %d of %d replicas of %d keys (%d deleted) differ from the last acknowledged write "
        + "(first 10 shown)", what, wrongCount, expected.size() * (long) REPLICAS, expected.size(), deleted).isEmpty();
    return contents;
  }

  /** Each old replica that loses keys in the change still holds them, with their loaded values. */
  private void assertOldReplicasHold(Map<String, Set<String>> movedAway, Map<String, byte[]> loaded, String when) {
    movedAway.forEach((node, keys) -> {
      Map<String, byte[]> held = NodeContents.of(nodes, node);
      List<String> missing = keys.stream().filter(k -> !Arrays.equals(held.get(k), loaded.get(k))).limit(10)
          .toList();
      assertThat(missing).as("%s: keys %s moves away but must keep until cleanup (first 10 shown)", when, node)
          .isEmpty();
    });
  }

  /** The keys each old replica loses from {@code from} to {@code to}. */
  private static Map<String, Set<String>> movedAway(RingSnapshot from, RingSnapshot to, Set<String> keys) {
    Map<String, Set<String>> moved = new TreeMap<>();
    for (String key : keys) {
      byte[] k = key.getBytes(StandardCharsets.UTF_8);
      for (String node : from.replicasOf(k).ids()) {
        if (!to.replicasOf(k).contains(node)) {
          moved.computeIfAbsent(node, n -> new HashSet<>()).add(key);
        }
      }
    }
    return moved;
  }

  /** Waits until the latest status of every task matches; returns those statuses. */
  private Map<String, TaskStatus> awaitEvery(Map<String, RangeCopyTask> tasks, String what,
      Predicate<TaskStatus> condition) {
    Map<String, TaskStatus> latest = new HashMap<>();
    await(tasks.size() + " tasks " + what).atMost(TIMEOUT).pollInterval(Duration.ofMillis(50)).untilAsserted(() -> {
      latest.clear();
      List<String> notYet = new ArrayList<>();
      for (String id : tasks.keySet()) {
        TaskStatus s = tail.latestStatus(id).orElse(null);
        if (s != null && condition.test(s)) {
          latest.put(id, s);
        } else if (notYet.size() < 3) {
          notYet.add(id + " is " + (s == null ? "without status" : s.getState() + " (" + s.getBlockedReason() + ")"));
        }
      }
      assertThat(notYet).as("tasks not %s yet (first 3)", what).isEmpty();
    });
    return latest;
  }

  private void awaitWrites(RingWriter writer, long epoch, long count) {
    await(count + " writes acknowledged at epoch " + epoch).atMost(TIMEOUT).pollInterval(Duration.ofMillis(20))
        .until(() -> {
          if (writer.failure() != null) {
            throw new AssertionError("the writer failed: " + writer.failure(), writer.failure());
          }
          return writer.acknowledgedAt(epoch) >= count;
        });
  }

  // ---- reporting ----

  /** Prints when each phase of the epoch was seen on the topics, from the membership event. */
  private void printTimeline(String change, long sentNanos, Seen<EpochRecord> ready, Set<String> taskIds) {
    long planned = tail.epoch(2, EpochState.PLANNED).orElseThrow().readNanos();
    long allCaughtUp = Long.MIN_VALUE;
    for (String id : taskIds) {
      long caughtUp = tail.firstStatus(s -> s.getTaskId().equals(id) && s.getState() == TaskState.CAUGHT_UP)
          .map(Seen::readNanos).orElse(Long.MIN_VALUE);
      allCaughtUp = Math.max(allCaughtUp, caughtUp);
    }
    long fenceRequested = tail.taskRecords().stream()
        .filter(s -> s.value() != null && s.value().getEpoch() == 2 && s.value().getFenceRequested())
        .mapToLong(Seen::readNanos).min().orElseThrow();
    System.out.printf("  %s -> PLANNED %,d ms -> every task CAUGHT_UP %,d ms -> fence requested %,d ms -> READY "
        + "%,d ms%n", change, millis(sentNanos, planned), millis(sentNanos, allCaughtUp),
        millis(sentNanos, fenceRequested), millis(sentNanos, ready.readNanos()));
    System.out.printf("  %s to READY: %,d ms; fence request to READY: %,d ms%n", change,
        millis(sentNanos, ready.readNanos()), millis(fenceRequested, ready.readNanos()));
  }

  private static long millis(long fromNanos, long toNanos) {
    return TimeUnit.NANOSECONDS.toMillis(toNanos - fromNanos);
  }

  private static List<String> ids(List<PlannedTask> tasks) {
    return tasks.stream().map(PlannedTask::taskId).toList();
  }

  private static String describe(byte[] value) {
    return value == null ? "nothing" : value.length + " bytes (hash " + Arrays.hashCode(value) + ")";
  }

  private <T extends AutoCloseable> T push(T resource) {
    return cluster.own(resource);
  }
}
