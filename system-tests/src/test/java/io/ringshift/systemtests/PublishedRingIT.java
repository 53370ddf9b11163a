package io.ringshift.systemtests;

import static io.ringshift.systemtests.ClusterDriver.ringOf;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.ringshift.cli.Ringshift;
import io.ringshift.client.Placement;
import io.ringshift.client.RefusalReason;
import io.ringshift.client.RingClient;
import io.ringshift.client.RingClientConfig;
import io.ringshift.devkit.junit.EmbeddedKafkaExtension;
import io.ringshift.protocol.Topics;
import io.ringshift.ring.Member;
import io.ringshift.ring.MemberState;
import io.ringshift.ring.RingSnapshot;
import io.ringshift.protocol.FillingRange;
import io.ringshift.protocol.PublishedSnapshot;
import io.ringshift.protocol.RingSnapshotCodec;
import io.ringshift.protocol.SigningKey;
import io.ringshift.schemas.avro.EpochRecord;
import io.ringshift.schemas.avro.EpochState;
import io.ringshift.schemas.avro.MembershipAction;
import io.ringshift.schemas.avro.RangeCopyTask;
import io.ringshift.schemas.avro.TaskKind;
import io.ringshift.schemas.avro.TaskState;
import io.ringshift.systemtests.ControlPlaneTail.Seen;
import io.ringshift.localplane.LocalNodes;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * Issue 5 end to end, with every role real and in one JVM: the orchestrator (Kafka Streams, exactly-once), a
 * migration worker, twelve or thirteen storage nodes (RocksDB behind HTTP), the snapshot publisher signing with
 * a key of its own, three {@link RingClient}s tailing {@code ring.snapshots}, and {@code ringshift audit} over the
 * history they produce.
 *
 * <h2>Design</h2>
 * A test declares a 12-node cluster in 3 zones (V = 16, R = 3), loads keys into every replica that epoch 1 names,
 * then changes the membership. Clients learn of epochs only through the publisher; the test rebuilds each epoch's
 * ring from its PLANNED record with the ring library and checks the clients route exactly by it. The data is
 * random from one printed seed ({@code -Dringshift.seed=N} replays it); timings are printed, never asserted.
 */
class PublishedRingIT {
  @RegisterExtension static final EmbeddedKafkaExtension KAFKA = new EmbeddedKafkaExtension();

  private static final Duration TIMEOUT = ControlPlaneTail.TIMEOUT;
  private static final String CLUSTER = "c1";
  private static final int NODES = 12;
  private static final int VNODES = 16;
  private static final int REPLICAS = 3;
  private static final int KEYS = 5_000;
  private static final int CLIENTS = 3;

  @TempDir Path dir;

  private final SigningKey publisherKey = SigningKey.generate();
  private final List<RingClient> clients = new ArrayList<>();
  private final List<SimpleMeterRegistry> registries = new ArrayList<>();
  /** When each client swapped to each epoch, by {@link System#nanoTime()}: client index -> epoch -> nanos. */
  private final Map<Integer, Map<Long, Long>> swapNanos = new ConcurrentHashMap<>();
  private long seed;
  private ClusterDriver cluster;
  private Topics topics;
  private LocalNodes nodes;
  private ControlPlaneTail tail;
  private Path publicKeyFile;

  @BeforeEach
  void startControlPlane(TestInfo test) throws Exception {
    seed = Long.getLong("ringshift.seed", new Random().nextLong());
    System.out.printf("%n%s: seed %d (replay with -Dringshift.seed=%d)%n", test.getDisplayName(), seed, seed);
    cluster = new ClusterDriver(KAFKA, dir, CLUSTER, "PublishedRingIT", "system-it-", publisherKey);
    topics = cluster.topics();
    tail = cluster.tail();
    nodes = cluster.nodes();
    publicKeyFile = cluster.plane().publicKeyFile();
    for (int i = 0; i < CLIENTS; i++) {
      SimpleMeterRegistry registry = new SimpleMeterRegistry();
      RingClient client = new RingClient(RingClientConfig.builder()
          .bootstrapServers(KAFKA.bootstrapServers())
          .clusterId(CLUSTER)
          .topic(topics.snapshots().name())
          .epochsTopic(topics.epochs().name())
          .trustedKeyFiles(publicKeyFile)
          .meterRegistry(registry)
          .build());
      int index = i;
      client.addSwapListener(swap -> swapNanos.computeIfAbsent(index, k -> new ConcurrentHashMap<>())
          .put(swap.epoch(), System.nanoTime()));
      clients.add(push(client.start()));
      registries.add(registry);
    }
  }

  @AfterEach
  void closeEverything() throws Exception {
    if (cluster != null) {
      cluster.close();
    }
  }

  @Test
  void shouldRouteEveryClientByTheVerifiedSignedRingAfterAJoinAndRefuseForgeries() throws Exception {
    Random random = new Random(seed);
    RingSnapshot ring1 = initCluster();
    Map<String, byte[]> loaded = LoadedData.load(nodes, ring1, KEYS, random);
    nodes.start("node-13", "az-1");
    startWorker();

    cluster.change(MembershipAction.JOIN, "node-13", "az-1");
    RingSnapshot ring2 = ringOf(tail.awaitEpoch(2, EpochState.PLANNED).value());
    awaitClientsAt(2);

    // Every client routes every loaded key exactly as a local rebuild of epoch 2 does.
    for (RingClient client : clients) {
      assertThat(client.epoch()).isEqualTo(2);
      assertThat(client.current().orElseThrow().previousChecksum()).as("chained to epoch 1")
          .isEqualTo(ring1.checksum());
      for (String key : loaded.keySet()) {
        Placement placement = client.placement(key);
        List<String> expected = ring2.replicasOf(key).ids();
        assertThat(ids(placement.owners())).as("owners of %s", key).isEqualTo(expected);
        assertThat(ids(placement.readable())).as("nothing is filling after a join").isEqualTo(expected);
        assertThat(placement.epoch()).isEqualTo(2);
      }
    }
    Map<String, RangeCopyTask> copies = tail.latestTasks(2, TaskKind.COPY, TaskKind.REPAIR);
    assertThat(copies).isNotEmpty();
    long lastVerified = lastVerifiedNanos(copies.keySet());
    Seen<EpochRecord> published = tail.awaitEpoch(2, EpochState.PUBLISHED);
    System.out.printf("  JOIN node-13: %d copy tasks; last task VERIFIED -> PUBLISHED read: %.0f ms; -> client "
        + "swaps: %s ms%n", copies.size(), millis(published.readNanos() - lastVerified),
        swapDelays(2, lastVerified));
    assertThat(published.value().getSigningKeyId()).isEqualTo(publisherKey.id());
    assertThat(epochStates()).as("each epoch published once, in order")
        .containsSubsequence("1 PUBLISHED", "2 PUBLISHED").doesNotContain("REJECTED")
        .filteredOn(s -> s.endsWith("PUBLISHED")).containsExactly("1 PUBLISHED", "2 PUBLISHED");

    // Audit proves the history the roles produced.
    Audit passed = audit();
    assertThat(passed.exit()).as(passed.toString()).isZero();
    assertThat(passed.out()).containsPattern("(?m)^1\\s+ok\\s").containsPattern("(?m)^2\\s+ok\\s")
        .contains("audit passed");

    // A snapshot of epoch 2 altered after publication (another weight for one node, the genuine signature): every
    // client refuses it and keeps epoch 2; audit fails, naming epoch 2.
    PublishedSnapshot genuine = clients.get(0).current().orElseThrow();
    List<Member> altered = new ArrayList<>(ring2.members());
    Member victim = altered.get(0);
    altered.set(0, new Member(victim.id(), victim.zone(), victim.weight() * 2, MemberState.ACTIVE));
    RingSnapshot tamperedRing = ring2.toBuilder().members(altered).build();
    byte[] tampered = signedLike(tamperedRing, genuine);
    writeSnapshot(tampered);
    awaitRefusals(RefusalReason.BAD_SIGNATURE, 1);
    Audit failed = audit();
    assertThat(failed.exit()).as(failed.toString()).isNotZero();
    assertThat(failed.err() + failed.out()).contains("epoch 2");

    // A forged epoch 3 from another producer, signed by a key nobody trusts and chained correctly: refused too.
    RingSnapshot forgedRing = ring2.toBuilder().epoch(3).members(ring1.members()).build();
    writeSnapshot(new RingSnapshotCodec().encode(PublishedSnapshot.unsigned(forgedRing, ring2.checksum(), List.of())
        .signedBy(SigningKey.generate())));
    awaitRefusals(RefusalReason.UNKNOWN_KEY, 1);
    for (RingClient client : clients) {
      assertThat(client.epoch()).as("the last good snapshot is kept").isEqualTo(2);
      assertThat(client.current().orElseThrow()).isEqualTo(genuine);
    }
  }

  @Test
  void shouldPublishAFailureAtOnceWithItsNewReplicasMarkedFillingAndClearThemAfterTheRepair() {
    Random random = new Random(seed);
    RingSnapshot ring1 = initCluster();
    Map<String, byte[]> loaded = LoadedData.load(nodes, ring1, KEYS, random);

    // No worker yet, so that the repair cannot complete (and epoch 3 be published) while epoch 2 is checked.
    long failed = cluster.change(MembershipAction.FAIL, "node-05", null);
    awaitClientsAt(2);
    RingSnapshot ring2 = ringOf(tail.awaitEpoch(2, EpochState.READY).value());
    System.out.printf("  FAIL node-05: FAIL written -> failure epoch 2 swapped by the clients: %s ms%n",
        swapDelays(2, failed));

    PublishedSnapshot failure = clients.get(0).current().orElseThrow();
    assertThat(failure.epoch()).isEqualTo(2);
    assertThat(failure.ring().member("node-05")).as("the dead node is out at once").isNull();
    assertThat(failure.filling()).isNotEmpty().isEqualTo(FillingRange.between(ring1, ring2));
    int filling = 0;
    for (String key : loaded.keySet()) {
      Placement placement = clients.get(0).placement(key);
      assertThat(ids(placement.owners())).isEqualTo(ring2.replicasOf(key).ids());
      List<String> complete = ring1.replicasOf(key).ids();
      assertThat(ids(placement.readable())).as("%s: read only from replicas that held it in epoch 1", key)
          .isNotEmpty().allSatisfy(id -> assertThat(complete).contains(id));
      filling += placement.readableCount() < placement.ownerCount() ? 1 : 0;
    }
    assertThat(filling).as("keys with a replica being filled").isPositive();
    for (RingClient client : clients) {
      assertThat(client.epoch()).as("nothing repairs without a worker").isEqualTo(2);
    }
    startWorker();

    // The repair epoch: the REPAIR tasks of epoch 3 verified, published with the marks cleared.
    awaitClientsAt(3);
    Map<String, RangeCopyTask> repairs = tail.latestTasks(3, TaskKind.COPY, TaskKind.REPAIR);
    assertThat(repairs.values()).isNotEmpty().allSatisfy(t -> assertThat(t.getKind()).isEqualTo(TaskKind.REPAIR));
    long lastVerified = lastVerifiedNanos(repairs.keySet());
    System.out.printf("  repair: %d REPAIR tasks; last task VERIFIED -> epoch 3 swapped by the clients: %s ms; "
        + "%d of %d keys had a replica filling in epoch 2%n", repairs.size(), swapDelays(3, lastVerified),
        filling, KEYS);
    PublishedSnapshot repaired = clients.get(0).current().orElseThrow();
    assertThat(repaired.filling()).isEmpty();
    assertThat(repaired.previousChecksum()).isEqualTo(failure.checksum());
    Map<String, Map<String, byte[]>> contents = new java.util.HashMap<>();
    for (String key : loaded.keySet()) {
      Placement placement = clients.get(0).placement(key);
      assertThat(ids(placement.readable())).isEqualTo(ids(placement.owners()));
      for (Member replica : placement.owners()) {
        byte[] held = contents.computeIfAbsent(replica.id(), id -> NodeContents.of(nodes, id)).get(key);
        assertThat(held).as("%s on %s after the repair", key, replica.id()).isEqualTo(loaded.get(key));
      }
    }
    assertThat(epochStates()).filteredOn(s -> s.endsWith("PUBLISHED"))
        .containsExactly("1 PUBLISHED", "2 PUBLISHED", "3 PUBLISHED");
    Audit audit = audit();
    assertThat(audit.exit()).as(audit.toString()).isZero();
  }

  // ---- the cluster ----

  private RingSnapshot initCluster() {
    RingSnapshot ring1 = cluster.initCluster(NODES, VNODES, REPLICAS);
    awaitClientsAt(1);
    return ring1;
  }

  private void writeSnapshot(byte[] bytes) {
    cluster.write(topics.snapshots().name(), CLUSTER, bytes);
  }

  private void startWorker() {
    cluster.startWorker(cluster.workerConfig("worker-1"), Clock.systemUTC());
  }

  // ---- what the clients and the log say ----

  /** Every client routes by {@code epoch}'s FINAL ring, or a later epoch (a join goes through transition stages). */
  private void awaitClientsAt(long epoch) {
    for (RingClient client : clients) {
      await("a client at epoch " + epoch).atMost(TIMEOUT).pollInterval(Duration.ofMillis(20))
          .until(() -> client.epoch() > epoch || (client.epoch() == epoch && client.current()
              .map(s -> s.stage() == io.ringshift.protocol.TransitionStage.FINAL).orElse(false)));
    }
  }

  private void awaitRefusals(RefusalReason reason, long count) {
    for (SimpleMeterRegistry registry : registries) {
      await("every client counts a " + reason + " refusal").atMost(TIMEOUT).pollInterval(Duration.ofMillis(20))
          .until(() -> {
            Counter c = registry.find("ringshift.client.refusals").tag("reason", reason.name()).counter();
            return c != null && c.count() >= count;
          });
    }
  }

  /** The delay from {@code fromNanos} to each client's swap to {@code epoch}, in ms. */
  private List<Long> swapDelays(long epoch, long fromNanos) {
    List<Long> delays = new ArrayList<>();
    for (int i = 0; i < CLIENTS; i++) {
      Long at = swapNanos.getOrDefault(i, Map.of()).get(epoch);
      delays.add(at == null ? null : Math.round(millis(at - fromNanos)));
    }
    return delays;
  }

  /** When this test's tail read the last of the tasks' first VERIFIED status. */
  private long lastVerifiedNanos(Set<String> taskIds) {
    long last = Long.MIN_VALUE;
    for (String id : taskIds) {
      Seen<io.ringshift.schemas.avro.TaskStatus> seen = tail.firstStatus(
          s -> s.getTaskId().equals(id) && s.getState() == TaskState.VERIFIED).orElseThrow();
      last = Math.max(last, seen.readNanos());
    }
    return last;
  }

  /** Every epoch record as "epoch STATE", in the order read. */
  private List<String> epochStates() {
    return tail.epochSummary().stream().map(s -> {
      String[] stateAtEpoch = s.split("@");
      return stateAtEpoch[1] + " " + stateAtEpoch[0];
    }).toList();
  }

  /** {@code ring} presented as published, with the chain and the signature of {@code genuine}. */
  private static byte[] signedLike(RingSnapshot ring, PublishedSnapshot genuine) {
    return new RingSnapshotCodec().encode(PublishedSnapshot.unsigned(ring, genuine.previousChecksum(),
        genuine.filling()).withSignature(genuine.signature(), genuine.signingKeyId()));
  }

  private record Audit(int exit, String out, String err) {}

  private Audit audit() {
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    CommandLine cli = Ringshift.newCommandLine();
    cli.setOut(new PrintWriter(out, true));
    cli.setErr(new PrintWriter(err, true));
    int exit = cli.execute("audit", "--bootstrap", KAFKA.bootstrapServers(), "--topic-prefix", KAFKA.topicPrefix(),
        "--cluster", CLUSTER, "--trusted-key", publicKeyFile.toString());
    System.out.printf("  ringshift audit: exit %d%n%s%s", exit, indent(out.toString()), indent(err.toString()));
    return new Audit(exit, out.toString(), err.toString());
  }

  private static String indent(String text) {
    return text.isEmpty() ? "" : text.lines().map(l -> "    " + l + "\n").reduce("", String::concat);
  }

  private static List<String> ids(List<Member> members) {
    return members.stream().map(Member::id).toList();
  }

  private static double millis(long nanos) {
    return nanos / 1e6;
  }

  private <T extends AutoCloseable> T push(T resource) {
    return cluster.own(resource);
  }
}
