package io.ringshift.cli.internal.control;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;
import static org.awaitility.Awaitility.await;

import io.ringshift.localplane.LocalControlPlane;
import io.ringshift.cli.internal.Cli;
import io.ringshift.cli.internal.Fixtures;
import io.ringshift.orchestrator.admin.MembersFile;
import io.ringshift.ring.Member;
import io.ringshift.ring.RingBuilder;
import io.ringshift.ring.RingSnapshot;
import io.ringshift.protocol.SigningKey;
import io.ringshift.storage.AdminSecret;
import io.ringshift.storage.RemoteStore;
import io.ringshift.storage.Store;
import io.ringshift.storage.WriteResult;
import io.ringshift.worker.NodeDirectory;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.awaitility.core.ConditionTimeoutException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * {@code ringshift dev} in this JVM: the real command, started on a free port and stopped through the same path
 * that Ctrl-C takes (the stop request), without sending signals to the test JVM.
 */
class DevCommandIT {
  private static final int KEYS = 500;
  private static final Pattern BOOTSTRAP = Pattern.compile("Kafka at (127\\.0\\.0\\.1:\\d+), the orchestrator");

  @TempDir Path dir;

  private final ExecutorService executor = Executors.newSingleThreadExecutor();

  @AfterEach
  void shutdown() throws InterruptedException {
    executor.shutdownNow();
    assertThat(executor.awaitTermination(30, TimeUnit.SECONDS)).as("dev stopped").isTrue();
  }

  /** A running {@code dev}: its output so far, its stop request and its exit code to come. */
  private record Dev(StringWriter out, StringWriter err, CountDownLatch stop, Future<Integer> exit) {
    String bootstrap() {
      Matcher m = BOOTSTRAP.matcher(out.toString());
      assertThat(m.find()).as(out.toString()).isTrue();
      return m.group(1);
    }

    int stopAndWait() throws Exception {
      stop.countDown();
      return exit.get(30, TimeUnit.SECONDS);
    }
  }

  private Dev start(String... args) {
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    CountDownLatch stop = new CountDownLatch(1);
    CommandLine cli = new CommandLine(new DevCommand(stop, false));
    cli.setOut(new PrintWriter(out, true));
    cli.setErr(new PrintWriter(err, true));
    Future<Integer> exit = executor.submit(() -> cli.execute(args));
    await("dev prints its banner").atMost(Duration.ofSeconds(90)).pollInterval(Duration.ofMillis(50))
        .until(() -> out.toString().contains("Ctrl-C stops it.") || exit.isDone());
    assertThat(exit.isDone()).as("dev ended early: %s %s", out, err).isFalse();
    return new Dev(out, err, stop, exit);
  }

  @Test
  void shouldRunBrokerAndOrchestratorAndKeepTheirStateAcrossARestart() throws Exception {
    Path data = dir.resolve("data");
    Path members = Fixtures.write(dir.resolve("members.json"), Fixtures.membersJson(6, 3));

    Dev first = start("--port", "0", "--data-dir", data.toString());
    String bootstrap = first.bootstrap();
    assertThat(first.out().toString()).contains("  data:   " + data.resolve("kafka").toAbsolutePath() + " (broker), "
        + data.resolve("streams").toAbsolutePath() + " (orchestrator): kept",
        "  " + DevCommand.launcher() + " status --bootstrap " + bootstrap);
    String keyId = SigningKey.read(data.resolve("publisher.key")).id();
    assertThat(first.out().toString()).contains("  publisher: signs with key " + keyId + " ("
        + data.resolve("publisher.key").toAbsolutePath() + "); clients trust "
        + data.resolve("publisher.pub").toAbsolutePath());
    Cli.Result init = Cli.run("init", "--members", members.toString(), "--vnodes", "16", "--bootstrap", bootstrap,
        "--wait");
    assertThat(init.stdout()).as(init.toString()).contains("epoch 1 READY");
    await("epoch 1 published by the publisher dev runs").atMost(Duration.ofSeconds(30))
        .pollInterval(Duration.ofMillis(100))
        .until(() -> Cli.run("status", "--bootstrap", bootstrap).stdout().contains("active     epoch 1 PUBLISHED"));

    assertThat(first.stopAndWait()).isZero();
    assertThat(first.err().toString())
        .matches("ringshift dev: stopped \\(publisher \\d+ ms, orchestrator \\d+ ms, broker \\d+ ms\\)\n");
    assertThat(portIsFree(bootstrap)).as("the broker let go of its port").isTrue();

    long restarting = System.nanoTime();
    Dev second = start("--port", "0", "--data-dir", data.toString());
    long restartMillis = (System.nanoTime() - restarting) / 1_000_000;
    String again = second.bootstrap();
    Cli.Result status = Cli.run("status", "--bootstrap", again);
    assertThat(status.stdout()).as(status.toString()).contains("active     epoch 1 PUBLISHED: 6 members in 3 zones");
    assertThat(second.out().toString()).as("the key kept in the data dir").contains("signs with key " + keyId);
    // The orchestrator's state came back too: a join is planned from epoch 1, and a duplicate one is refused.
    // No storage nodes nor worker here: the join is planned and stays in flight, so no --wait (to PUBLISHED).
    Cli.Result join = Cli.run("join", "node-007", "--zone", "az-1", "--bootstrap", again);
    assertThat(join.stdout()).as(join.toString()).contains("epoch 2 PLANNED");
    assertThat(Cli.run("init", "--members", members.toString(), "--bootstrap", again).exitCode()).isEqualTo(2);
    assertThat(second.stopAndWait()).isZero();
    System.out.printf("dev restart on kept data: serving again after %d ms%n", restartMillis);
    assertThat(restartMillis).as("a restart does not wait for the old group member's session to expire")
        .isLessThan(30_000);
  }

  /**
   * {@code dev --nodes 5}: a cluster of node-01..node-04 (from a members file written here, the first four of the
   * one {@code dev} writes) holds a few hundred keys on its epoch-1 replicas; {@code join node-05} makes epoch 2,
   * whose tasks the in-process worker copies, has fenced and verifies, so epoch 2 becomes READY and node-05 holds
   * exactly the keys epoch 2 gives it.
   */
  @Test
  void shouldRunStorageNodesAndAWorkerThatCarryOutAJoin() throws Exception {
    long begin = System.nanoTime();
    Path data = dir.resolve("data");
    Dev dev = start("--port", "0", "--nodes", "5", "--node-port", "0", "--grace", "1h", "--data-dir",
        data.toString());
    long startMillis = (System.nanoTime() - begin) / 1_000_000;
    String bootstrap = dev.bootstrap();
    NodeDirectory directory = NodeDirectory.read(data.resolve("nodes.txt"));
    assertThat(directory.nodes().keySet()).containsExactly("node-01", "node-02", "node-03", "node-04", "node-05");
    List<Member> written = MembersFile.parse("members.json", java.nio.file.Files.readAllBytes(data.resolve("members.json")));
    assertThat(written).extracting(Member::id, Member::zone).containsExactly(tuple("node-01", "az-1"),
        tuple("node-02", "az-2"), tuple("node-03", "az-3"), tuple("node-04", "az-1"), tuple("node-05", "az-2"));
    assertThat(dev.out().toString()).contains(
        "Kafka at " + bootstrap + ", the orchestrator and the snapshot publisher are running, with 5 storage nodes "
            + "and a migration worker.",
        "  node:   node-05 (az-2) at ",
        ", admin listener " + directory.address("node-05").orElseThrow() + "\n",
        "  worker: dev-worker, unlimited copy rates, cleanup grace 1h, nodes file "
            + data.resolve("nodes.txt").toAbsolutePath() + ", admin secret "
            + data.resolve("admin.secret").toAbsolutePath(),
        "  " + DevCommand.launcher() + " init --members " + data.resolve("members.json").toAbsolutePath() + " --bootstrap " + bootstrap
            + " --wait",
        "  " + DevCommand.launcher() + " drain node-05 --bootstrap " + bootstrap + " --wait");
    for (String id : directory.nodes().keySet()) {
      assertThat(data.resolve("nodes").resolve(id)).as("%s keeps its store under the data dir", id).isDirectory();
    }

    Path firstFour = Fixtures.write(dir.resolve("four.json"), "[\n" + written.subList(0, 4).stream()
        .map(m -> "{\"id\": \"" + m.id() + "\", \"zone\": \"" + m.zone() + "\"}")
        .collect(Collectors.joining(",\n")) + "\n]\n");
    Cli.Result init = Cli.run("init", "--members", firstFour.toString(), "--vnodes", "16", "--bootstrap", bootstrap,
        "--wait", "30");
    assertThat(init.stdout()).as(init.toString()).contains("epoch 1 READY");
    Map<String, Store> nodes = new LinkedHashMap<>();
    AdminSecret secret = AdminSecret.read(data.resolve("admin.secret"));
    directory.nodes().forEach((id, address) -> nodes.put(id, RemoteStore.connectAdmin(address.toString(), secret,
        Duration.ofSeconds(10))));
    Map<String, byte[]> values = new LinkedHashMap<>();
    try {
      RingSnapshot epoch1 = ring(written.subList(0, 4), 1);
      for (int k = 0; k < KEYS; k++) {
        String key = "user:" + k;
        byte[] value = ("value-" + k).getBytes(StandardCharsets.UTF_8);
        values.put(key, value);
        for (Member m : epoch1.replicasOf(key).members()) {
          nodes.get(m.id()).put(key.getBytes(StandardCharsets.UTF_8), value, 1);
        }
      }

      Cli.Result join = Cli.run("join", "node-05", "--zone", "az-2", "--bootstrap", bootstrap, "--wait", "60");
      // --wait follows the epoch to PUBLISHED, printing each stage once.
      assertThat(join.exitCode()).as(join.toString()).isZero();
      assertThat(join.stdout()).as(join.toString()).contains("epoch 2 PLANNED", "epoch 2 copying ",
          "epoch 2 READY: every task verified; waiting for the publisher\n", "epoch 2 PUBLISHED at ");
      AtomicReference<String> status = new AtomicReference<>("");
      try {
        await("epoch 2 PUBLISHED: the worker copied, fenced and verified every range node-05 gains, and the "
            + "publisher checked and published the epoch")
            .atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(250))
            .until(() -> {
              status.set(Cli.run("status", "--bootstrap", bootstrap).stdout());
              return status.get().contains("active     epoch 2 PUBLISHED") || dev.exit().isDone();
            });
      } catch (ConditionTimeoutException e) {
        throw new AssertionError(e.getMessage() + "; last status:\n" + status.get() + "dev: " + dev.err(), e);
      }
      assertThat(dev.exit().isDone()).as("dev ended early: %s", dev.err()).isFalse();

      RingSnapshot epoch2 = ring(written, 2);
      int gained = 0;
      for (Map.Entry<String, byte[]> e : values.entrySet()) {
        Optional<byte[]> onNode05 = nodes.get("node-05").get(e.getKey().getBytes(StandardCharsets.UTF_8));
        if (epoch2.replicasOf(e.getKey()).contains("node-05")) {
          gained++;
          assertThat(onNode05).as("key %s, which epoch 2 gives node-05", e.getKey())
              .hasValueSatisfying(v -> assertThat(v).isEqualTo(e.getValue()));
        } else {
          assertThat(onNode05).as("key %s, which epoch 2 does not give node-05", e.getKey()).isEmpty();
        }
      }
      assertThat(gained).as("keys node-05 gained").isGreaterThan(KEYS / 10);
      // The nodes follow the published ring: an old replica that lost a key to node-05 answers a write tagged with
      // epoch 1 with retry-with-epoch 2, before its fence is even consulted.
      String moved = values.keySet().stream().filter(k -> epoch2.replicasOf(k).contains("node-05")).findFirst()
          .orElseThrow();
      String oldReplica = epoch1.replicasOf(moved).ids().stream().filter(id -> !epoch2.replicasOf(moved).contains(id))
          .findFirst().orElseThrow();
      await("node " + oldReplica + " follows epoch 2").atMost(Duration.ofSeconds(30))
          .pollInterval(Duration.ofMillis(100)).untilAsserted(() ->
              assertThat(nodes.get(oldReplica).put(moved.getBytes(StandardCharsets.UTF_8), new byte[] {1}, 1))
                  .isInstanceOfSatisfying(WriteResult.RetryWithEpoch.class, r -> {
                    assertThat(r.epoch()).isEqualTo(2);
                    assertThat(r.reason()).isEqualTo(WriteResult.Reason.NOT_A_REPLICA);
                  }));
      System.out.printf("dev --nodes 5: serving after %d ms; node-05 gained %d of %d keys; join PUBLISHED after %d ms "
          + "in all%n", startMillis, gained, KEYS, (System.nanoTime() - begin) / 1_000_000);
    } finally {
      nodes.values().forEach(Store::close);
    }

    assertThat(dev.stopAndWait()).isZero();
    assertThat(dev.err().toString())
        .matches("ringshift dev: stopped \\(worker \\d+ ms, publisher \\d+ ms, orchestrator \\d+ ms, nodes \\d+ ms, "
            + "broker \\d+ ms\\)\n");
    for (NodeDirectory.Address address : directory.nodes().values()) {
      assertThat(portIsFree(address.toString())).as("%s is free again", address).isTrue();
    }
    System.out.printf("dev --nodes 5 test: %d ms%n", (System.nanoTime() - begin) / 1_000_000);
  }

  @Test
  void shouldRefuseANodePortThatIsInUseInOneLine() throws IOException {
    try (ServerSocket taken = new ServerSocket(0, 1, InetAddress.getByName("127.0.0.1"))) {
      Cli.Result result = Cli.run("dev", "--port", "0", "--nodes", "1", "--node-port",
          String.valueOf(taken.getLocalPort()));

      assertThat(result.exitCode()).as(result.toString()).isEqualTo(2);
      assertThat(result.stdout()).isEmpty();
      assertThat(result.stderr().lines()).singleElement().asString()
          .startsWith("ringshift: port " + taken.getLocalPort() + " on 127.0.0.1 is already in use, so storage node "
              + "node-01 cannot listen there");
    }
  }

  /** The ring that init (epoch 1) and the join (epoch 2) build: vnodes 16, replicas 3. */
  private static RingSnapshot ring(List<Member> members, long epoch) {
    RingBuilder builder = RingSnapshot.builder().clusterId("default").epoch(epoch).vnodes(16).replicas(3);
    members.forEach(m -> builder.addMember(m.id(), m.zone()));
    return builder.build();
  }

  @Test
  void shouldDeleteTemporaryDataWhenItStops() {
    Path brokerData;
    Path state;
    Path nodes;
    Path key;
    try (LocalControlPlane plane = LocalControlPlane.builder().nodes(2, 0).worker(Duration.ofMinutes(10)).start()) {
      brokerData = plane.brokerDataDir().orElseThrow();
      state = plane.stateDir();
      nodes = plane.nodes().orElseThrow().dir();
      key = plane.keyFile();
      assertThat(key).isRegularFile();
      assertThat(plane.publicKeyFile()).isRegularFile();
      assertThat(DevCommand.banner(plane)).contains("  data:   temporary, deleted on exit (--data-dir DIR keeps it)",
          "  " + DevCommand.launcher() + " init --members " + nodes.resolve("members.json") + " --replicas 2 --bootstrap "
              + plane.bootstrapServers() + " --wait")
          .noneMatch(line -> line.contains("drain"));
      assertThat(brokerData).isDirectory();
      assertThat(state).isDirectory();
      assertThat(nodes.resolve("nodes").resolve("node-02")).isDirectory();
    }
    assertThat(brokerData).doesNotExist();
    assertThat(state).doesNotExist();
    assertThat(nodes).doesNotExist();
    assertThat(key).doesNotExist();
  }

  @Test
  void shouldRefuseAPortThatIsInUseInOneLine() throws IOException {
    try (ServerSocket taken = new ServerSocket(0, 1, InetAddress.getByName("127.0.0.1"))) {
      Cli.Result result = Cli.run("dev", "--port", String.valueOf(taken.getLocalPort()), "--data-dir",
          dir.resolve("data").toString());

      assertThat(result.exitCode()).as(result.toString()).isEqualTo(2);
      assertThat(result.stdout()).isEmpty();
      assertThat(result.stderr().lines()).singleElement().asString()
          .startsWith("ringshift: port " + taken.getLocalPort() + " on 127.0.0.1 is already in use");
    }
  }

  private static boolean portIsFree(String bootstrap) throws IOException {
    int port = Integer.parseInt(bootstrap.substring(bootstrap.indexOf(':') + 1));
    try (ServerSocket probe = new ServerSocket(port, 1, InetAddress.getByName("127.0.0.1"))) {
      return probe.getLocalPort() == port;
    }
  }
}
