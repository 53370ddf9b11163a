package io.ringshift.cli.internal.worker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.ringshift.cli.internal.Cli;
import io.ringshift.cli.internal.Fixtures;
import io.ringshift.devkit.junit.EmbeddedKafkaExtension;
import io.ringshift.orchestrator.Orchestrator;
import io.ringshift.orchestrator.OrchestratorConfig;
import io.ringshift.protocol.Topics;
import io.ringshift.ring.Member;
import io.ringshift.ring.RingSnapshot;
import io.ringshift.schemas.avro.EpochRecord;
import io.ringshift.schemas.avro.EpochState;
import io.ringshift.schemas.avro.TaskState;
import io.ringshift.schemas.avro.TaskStatus;
import io.ringshift.storage.NodeServer;
import io.ringshift.storage.RocksStore;
import io.ringshift.storage.Store;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.awaitility.core.ConditionTimeoutException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * {@code ringshift worker} end to end with the real orchestrator: five storage nodes (RocksDB stores served over
 * HTTP in this JVM), a cluster of four initialised with {@code ringshift init} and filled by the ring's
 * placement, then {@code ringshift join} of the fifth. The worker copies every range the new node gains, the
 * orchestrator requests the fence once all are caught up, the worker verifies them, the epoch becomes READY,
 * and the cleanup tasks it emits wait for the epoch to be published. Stopping the command closes the worker.
 */
class WorkerCommandIT {
  @RegisterExtension static final EmbeddedKafkaExtension KAFKA = new EmbeddedKafkaExtension();

  private static final Duration TIMEOUT = Duration.ofSeconds(90);
  private static final int KEYS = 4000;

  @TempDir Path dir;

  private final ExecutorService executor = Executors.newSingleThreadExecutor();
  private final List<AutoCloseable> closing = new ArrayList<>();

  @AfterEach
  void tearDown() throws Exception {
    executor.shutdownNow();
    assertThat(executor.awaitTermination(30, TimeUnit.SECONDS)).as("worker command stopped").isTrue();
    for (int i = closing.size() - 1; i >= 0; i--) {
      closing.get(i).close();
    }
  }

  @Test
  void shouldCarryOutAJoinWithTheRealOrchestrator() throws Exception {
    Topics topics = Topics.withPrefix(KAFKA.topicPrefix());
    OrchestratorConfig orchestratorConfig = OrchestratorConfig.local(KAFKA.bootstrapServers(), dir.resolve("state"))
        .withApplicationId(KAFKA.applicationId())
        .withTopics(topics);
    closing.add(new Orchestrator(orchestratorConfig).start(TIMEOUT));
    Map<String, Store> stores = new LinkedHashMap<>();
    List<String> nodeOptions = new ArrayList<>();
    Path secretFile = dir.resolve("admin.secret");
    io.ringshift.storage.AdminSecret secret = io.ringshift.storage.AdminSecret.readOrCreate(secretFile);
    nodeOptions.add("--node-secret-file");
    nodeOptions.add(secretFile.toString());
    for (int i = 1; i <= 5; i++) {
      String id = String.format(Locale.ROOT, "node-%03d", i);
      Store store = RocksStore.open(dir.resolve(id), id, "az-" + (1 + (i - 1) % 2));
      closing.add(store);
      NodeServer server = NodeServer.start(store, new InetSocketAddress("127.0.0.1", 0),
          new InetSocketAddress("127.0.0.1", 0), secret, NodeServer.DEFAULT_THREADS);
      closing.add(server);
      stores.put(id, store);
      nodeOptions.add("--node");
      nodeOptions.add(id + "=" + server.adminHostPort());
    }
    Path members = Fixtures.write(dir.resolve("members.json"), Fixtures.membersJson(4, 2));
    // No publisher runs here: without --wait the command waits for the orchestrator's answer only.
    Cli.Result init = cli("init", "--members", members.toString(), "--vnodes", "16", "--replicas", "2");
    assertThat(init.exitCode()).as(init.toString()).isZero();
    // The data of epoch 1: every key on the replicas the ring gives it.
    RingSnapshot before = ring(4);
    Map<String, byte[]> values = new HashMap<>();
    for (int k = 0; k < KEYS; k++) {
      String key = "user:" + k;
      byte[] value = ("value-" + k + "-" + "x".repeat(k % 50)).getBytes(StandardCharsets.UTF_8);
      values.put(key, value);
      for (Member m : before.replicasOf(key).members()) {
        stores.get(m.id()).put(key.getBytes(StandardCharsets.UTF_8), value, 1);
      }
    }

    CountDownLatch stop = new CountDownLatch(1);
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    CommandLine command = new CommandLine(new WorkerCommand(stop, false));
    command.setOut(new PrintWriter(out, true));
    command.setErr(new PrintWriter(err, true));
    List<String> args = new ArrayList<>(List.of("--bootstrap", KAFKA.bootstrapServers(), "--topic-prefix",
        KAFKA.topicPrefix(), "--group-id", KAFKA.applicationId() + "-workers", "--worker-id", "worker-it",
        "--per-source-bytes-per-second", "0", "--max-tasks-per-source", "4", "--max-tasks-per-target", "8"));
    args.addAll(nodeOptions);
    Future<Integer> exit = executor.submit(() -> command.execute(args.toArray(String[]::new)));
    await("the worker prints that it runs").atMost(TIMEOUT).until(() -> out.toString().contains("Ctrl-C stops it.")
        || exit.isDone());
    assertThat(exit.isDone()).as("worker ended early: %s %s", out, err).isFalse();
    assertThat(out.toString()).startsWith("ringshift worker: worker-it running in group " + KAFKA.applicationId()
        + "-workers on " + KAFKA.bootstrapServers() + ", 5 nodes; 100 MiB/s per worker, unlimited per source, 8 tasks "
        + "(4 per source, 8 per target); cleanup grace PT10M.");

    Cli.Result join = cli("join", "node-005", "--zone", "az-1");
    assertThat(join.exitCode()).as(join.toString()).isZero();

    try (KafkaConsumer<String, EpochRecord> epochs = consumer(topics.epochs().name(),
        topics.epochs().valueSerde().deserializer());
        KafkaConsumer<String, TaskStatus> statuses = consumer(topics.taskStatus().name(),
            topics.taskStatus().valueSerde().deserializer())) {
      List<EpochRecord> seen = new ArrayList<>();
      Map<String, TaskStatus> latest = new LinkedHashMap<>();
      try {
        await("epoch 2 READY: every copy verified").atMost(TIMEOUT).until(() -> {
          epochs.poll(Duration.ofMillis(100)).forEach(r -> seen.add(r.value()));
          statuses.poll(Duration.ofMillis(10)).forEach(r -> latest.put(r.key(), r.value()));
          return seen.stream().anyMatch(e -> e.getEpoch() == 2 && e.getState() == EpochState.READY);
        });
      } catch (ConditionTimeoutException e) {
        throw new AssertionError(e.getMessage() + "; latest statuses: " + latest.values() + "; worker output: "
            + out + err, e);
      }
    }
    RingSnapshot after = ring(5);
    int moved = 0;
    for (Map.Entry<String, byte[]> e : values.entrySet()) {
      if (after.replicasOf(e.getKey()).contains("node-005")) {
        moved++;
        assertThat(stores.get("node-005").get(e.getKey().getBytes(StandardCharsets.UTF_8)))
            .as("key %s on node-005", e.getKey()).hasValueSatisfying(v -> assertThat(v).isEqualTo(e.getValue()));
      }
    }
    assertThat(moved).isGreaterThan(KEYS / 10);
    try (KafkaConsumer<String, TaskStatus> statuses = consumer(topics.taskStatus().name(),
        topics.taskStatus().valueSerde().deserializer())) {
      Map<String, TaskStatus> latest = new HashMap<>();
      await("the cleanup tasks wait for epoch 2 to be published").atMost(TIMEOUT).until(() -> {
        statuses.poll(Duration.ofMillis(100)).forEach(r -> latest.put(r.key(), r.value()));
        List<TaskStatus> cleanups = latest.values().stream().filter(s -> s.getTaskId().contains("/cleanup/")).toList();
        return !cleanups.isEmpty() && cleanups.stream().allMatch(s -> s.getState() == TaskState.BLOCKED
            && ("waiting for epoch 2 to be published (no publisher key is trusted, so no PUBLISHED record counts: "
                + "give the worker --trusted-key)").equals(s.getBlockedReason()));
      });
      assertThat(latest.values()).filteredOn(s -> s.getTaskId().contains("/copy/"))
          .isNotEmpty().allMatch(s -> s.getState() == TaskState.VERIFIED && "worker-it".equals(s.getWorkerId()));
    }

    stop.countDown();
    assertThat(exit.get(60, TimeUnit.SECONDS)).isZero();
    assertThat(err.toString()).contains("ringshift worker: worker-it stopped; its tasks' last checkpoints are "
        + "written");
  }

  @Test
  void shouldExitWithAnErrorWhenAnotherKindOfApplicationOwnsItsGroup() throws Exception {
    Topics topics = Topics.withPrefix(KAFKA.topicPrefix());
    closing.add(new Orchestrator(OrchestratorConfig.local(KAFKA.bootstrapServers(), dir.resolve("state"))
        .withApplicationId(KAFKA.applicationId()).withTopics(topics)).start(TIMEOUT));
    StringWriter err = new StringWriter();
    CommandLine command = new CommandLine(new WorkerCommand(new CountDownLatch(1), false));
    command.setOut(new PrintWriter(new StringWriter(), true));
    command.setErr(new PrintWriter(err, true));

    // The orchestrator's Streams application already uses this group id: the worker's consumer cannot join.
    Future<Integer> exit = executor.submit(() -> command.execute("--bootstrap", KAFKA.bootstrapServers(),
        "--topic-prefix", KAFKA.topicPrefix(), "--group-id", KAFKA.applicationId(), "--worker-id", "worker-it",
        "--node", "node-1=127.0.0.1:1", "--node-secret-file",
        Fixtures.write(dir.resolve("admin.secret"), "0123456789abcdef0123456789abcdef\n").toString()));

    assertThat(exit.get(60, TimeUnit.SECONDS)).as("exit code; stderr: %s", err).isEqualTo(1);
    assertThat(err.toString()).contains("ringshift worker: worker-it was stopped by an error: ")
        .contains("InconsistentGroupProtocolException");
  }

  private static Cli.Result cli(String... args) {
    List<String> all = new ArrayList<>(Arrays.asList(args));
    all.addAll(List.of("--bootstrap", KAFKA.bootstrapServers(), "--topic-prefix", KAFKA.topicPrefix()));
    return Cli.run(all.toArray(String[]::new));
  }

  /** The ring of node-001..node-00n in two zones, as init and join build it. */
  private static RingSnapshot ring(int nodes) {
    var builder = RingSnapshot.builder().clusterId("default").epoch(nodes - 3).vnodes(16).replicas(2);
    for (int i = 1; i <= nodes; i++) {
      builder.addMember(String.format(Locale.ROOT, "node-%03d", i), "az-" + (1 + (i - 1) % 2));
    }
    return builder.build();
  }

  private static <V> KafkaConsumer<String, V> consumer(String topic,
      org.apache.kafka.common.serialization.Deserializer<V> values) {
    Properties p = new Properties();
    p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, KAFKA.bootstrapServers());
    p.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
    KafkaConsumer<String, V> consumer = new KafkaConsumer<>(p, new StringDeserializer(), values);
    List<TopicPartition> partitions = consumer.partitionsFor(topic).stream()
        .map(i -> new TopicPartition(topic, i.partition())).toList();
    consumer.assign(partitions);
    consumer.seekToBeginning(partitions);
    return consumer;
  }
}
