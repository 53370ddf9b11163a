package io.ringshift.cli.internal.node;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.ringshift.cli.internal.Cli;
import io.ringshift.cli.internal.Fixtures;
import io.ringshift.ring.RingRange;
import io.ringshift.storage.AdminSecret;
import io.ringshift.storage.RemoteStore;
import io.ringshift.storage.RocksStore;
import io.ringshift.storage.Store;
import io.ringshift.storage.StoreException;
import io.ringshift.storage.WriteResult;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.InetAddress;
import java.net.ServerSocket;
import io.ringshift.client.RingClient;
import io.ringshift.ring.RingSnapshot;
import io.ringshift.protocol.PublishedSnapshot;
import io.ringshift.protocol.SigningKey;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * {@code ringshift node} in this JVM: the real command on a free port, used through {@code RemoteStore} and stopped
 * through the same path a signal takes (the stop request), without signalling the test JVM.
 */
class NodeCommandTest {
  private static final Pattern SERVING = Pattern.compile(
      "ringshift node: node-1 \\(zone az-1\\) serves (\\S+) on (127\\.0\\.0\\.1:\\d+) \\(latest sequence (\\d+)\\); "
          + "([^;]+); Ctrl-C stops it\\.");

  private static final Pattern ADMIN = Pattern.compile("ringshift node: node-1 admin listener \\(migration and admin "
      + "endpoints\\) on (127\\.0\\.0\\.1:\\d+); admin secret in (\\S+)");

  @TempDir Path dir;

  private final ExecutorService executor = Executors.newSingleThreadExecutor();

  @AfterEach
  void shutdown() throws InterruptedException {
    executor.shutdownNow();
    assertThat(executor.awaitTermination(30, TimeUnit.SECONDS)).as("node stopped").isTrue();
  }

  /** A running node: its output so far, its stop request and its exit code to come. */
  private record Node(StringWriter out, StringWriter err, CountDownLatch stop, Future<Integer> exit) {
    Matcher serving() {
      Matcher m = SERVING.matcher(out.toString());
      assertThat(m.find()).as(out.toString()).isTrue();
      return m;
    }

    /** The admin listener's address and the store of it, with the secret the node printed the file of. */
    Store admin() {
      Matcher m = ADMIN.matcher(out.toString());
      assertThat(m.find()).as(out.toString()).isTrue();
      return RemoteStore.connectAdmin(m.group(1), AdminSecret.read(Path.of(m.group(2))), Duration.ofSeconds(5));
    }

    int stopAndWait() throws Exception {
      stop.countDown();
      return exit.get(30, TimeUnit.SECONDS);
    }
  }

  private Node start(String... args) {
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    CountDownLatch stop = new CountDownLatch(1);
    CommandLine cli = new CommandLine(new NodeCommand(stop, false));
    cli.setOut(new PrintWriter(out, true));
    cli.setErr(new PrintWriter(err, true));
    Future<Integer> exit = executor.submit(() -> cli.execute(args));
    await("the node prints where it serves").atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(20))
        .until(() -> out.toString().contains("Ctrl-C stops it.") || exit.isDone());
    assertThat(exit.isDone()).as("the node ended early: %s %s", out, err).isFalse();
    return new Node(out, err, stop, exit);
  }

  @Test
  void shouldServeTheStoreUntilStoppedAndKeepItAcrossARestart() throws Exception {
    Path data = dir.resolve("node-1");
    Node first = start("--id", "node-1", "--zone", "az-1", "--data-dir", data.toString(), "--port", "0");
    Matcher serving = first.serving();
    assertThat(serving.group(1)).isEqualTo(data.toAbsolutePath().toString());
    String address = serving.group(2);

    Store remote = RemoteStore.connect(address, Duration.ofSeconds(5));
    assertThat(remote.info().nodeId()).isEqualTo("node-1");
    assertThat(remote.put("user:42".getBytes(UTF_8), "hello".getBytes(UTF_8), 1))
        .isInstanceOf(WriteResult.Applied.class);
    long latest = remote.latestSequence();

    assertThat(first.stopAndWait()).isZero();
    assertThat(first.err().toString()).isEqualTo("ringshift node: node-1 stopped\n");
    assertThatThrownBy(remote::info).as("the port is closed").isInstanceOf(StoreException.Unavailable.class)
        .hasMessageContaining(address);

    Node second = start("--id", "node-1", "--zone", "az-1", "--data-dir", data.toString(), "--port", "0",
        "--wal-retention", "2d", "--threads", "4");
    Matcher again = second.serving();
    assertThat(Long.parseLong(again.group(3))).isEqualTo(latest);
    Store restarted = RemoteStore.connect(again.group(2), Duration.ofSeconds(5));
    assertThat(restarted.get("user:42".getBytes(UTF_8))).hasValueSatisfying(
        v -> assertThat(new String(v, UTF_8)).isEqualTo("hello"));
    assertThatThrownBy(() -> restarted.digest(RingRange.whole())).as("the client port serves keys only")
        .isInstanceOf(StoreException.Unauthorized.class);
    assertThat(second.admin().digest(RingRange.whole()).keys()).isEqualTo(1);
    assertThat(second.stopAndWait()).isZero();
  }

  @Test
  void shouldRefuseAPortInUseInOneLine() throws IOException {
    try (ServerSocket taken = new ServerSocket(0, 1, InetAddress.getByName("127.0.0.1"))) {
      Cli.Result result = Cli.run("node", "--id", "node-1", "--zone", "az-1", "--data-dir",
          dir.resolve("data").toString(), "--port", String.valueOf(taken.getLocalPort()));

      assertThat(result.exitCode()).as(result.toString()).isEqualTo(2);
      assertThat(result.stdout()).isEmpty();
      assertThat(result.stderr().lines()).singleElement().asString().isEqualTo("ringshift: port "
          + taken.getLocalPort() + " on 127.0.0.1 is already in use; stop what uses it or give another --port");
    }
    try (Store reopened = RocksStore.open(dir.resolve("data"), "node-1", "az-1")) {
      assertThat(reopened.info().nodeId()).as("the store was closed again").isEqualTo("node-1");
    }
  }

  /**
   * The admin listener: by default with a secret the node makes in admin.secret of its data dir (owner only) and keeps
   * across restarts; or the fleet's, from --admin-secret-file. Calls without it are refused.
   */
  @Test
  void shouldServeTheAdminListenerWithTheSecretOfItsDataDirOrOfTheGivenFile() throws Exception {
    Path data = dir.resolve("node-1");
    Node node = start("--id", "node-1", "--zone", "az-1", "--data-dir", data.toString(), "--port", "0");
    Matcher admin = ADMIN.matcher(node.out().toString());
    assertThat(admin.find()).isTrue();
    Path secretFile = data.resolve("admin.secret").toAbsolutePath();
    assertThat(admin.group(2)).isEqualTo(secretFile.toString());
    assertThat(java.nio.file.attribute.PosixFilePermissions.toString(java.nio.file.Files.getPosixFilePermissions(
        secretFile))).isEqualTo("rw-------");
    AdminSecret made = AdminSecret.read(secretFile);
    assertThat(node.admin().fence(RingRange.whole(), 1).epoch()).isEqualTo(1);
    Store noSecret = RemoteStore.connect(admin.group(1), Duration.ofSeconds(5));
    assertThatThrownBy(() -> noSecret.deleteRange(RingRange.whole(), 0)).isInstanceOf(StoreException.Unauthorized.class)
        .hasMessageContaining("carried no admin secret");
    assertThat(node.stopAndWait()).isZero();

    Path fleet = Fixtures.write(dir.resolve("fleet.secret"), "the-fleet-secret-0123456789\n");
    Node again = start("--id", "node-1", "--zone", "az-1", "--data-dir", data.toString(), "--port", "0",
        "--admin-port", "0", "--admin-secret-file", fleet.toString());
    Store withFleet = RemoteStore.connectAdmin(adminOf(again), AdminSecret.read(fleet), Duration.ofSeconds(5));
    assertThat(withFleet.fences()).hasSize(1);
    Store withOld = RemoteStore.connectAdmin(adminOf(again), made, Duration.ofSeconds(5));
    assertThatThrownBy(withOld::fences).isInstanceOf(StoreException.Unauthorized.class)
        .hasMessageContaining("carried a wrong admin secret");
    assertThat(again.stopAndWait()).isZero();
  }

  private static String adminOf(Node node) {
    Matcher m = ADMIN.matcher(node.out().toString());
    assertThat(m.find()).isTrue();
    return m.group(1);
  }

  @Test
  void shouldRefuseBadAdminListenerOptionsInOneLine() {
    String data = dir.resolve("data").toString();

    assertThat(Cli.run("node", "--id", "n", "--zone", "z", "--data-dir", data, "--port", "7070", "--admin-port",
        "7070").stderr()).isEqualTo("ringshift: --admin-port was 7070, the same as --port; the client port and the "
        + "admin listener must be different ports\n");
    assertThat(Cli.run("node", "--id", "n", "--zone", "z", "--data-dir", data, "--port", "65000").stderr())
        .isEqualTo("ringshift: --admin-port defaults to --port + 1000 = 66000; it must be 0 (any free port) or "
            + "1..65535\n");
    assertThat(Cli.run("node", "--id", "n", "--zone", "z", "--data-dir", data, "--port", "0",
        "--admin-secret-file", dir.resolve("none").toString()).stderr()).isEqualTo("ringshift: --admin-secret-file "
        + dir.resolve("none") + " is not a file; give the file holding the fleet's admin secret, or leave the option "
        + "out to use admin.secret in --data-dir\n");
    Path weak = Fixtures.write(dir.resolve("weak.secret"), "secret\n");
    Cli.Result weakSecret = Cli.run("node", "--id", "n", "--zone", "z", "--data-dir", data, "--port", "0",
        "--admin-secret-file", weak.toString());
    assertThat(weakSecret.exitCode()).isEqualTo(2);
    assertThat(weakSecret.stderr()).isEqualTo("ringshift: admin secret file " + weak + ": the admin secret has 6 "
        + "characters; it must have 16 to 512 (a node writes one of 32 random bytes in base64url when none is "
        + "given)\n");
  }

  @Test
  void shouldRefuseTheDataDirOfAnotherNodeInOneLine() {
    Path data = dir.resolve("data");
    RocksStore.open(data, "node-2", "az-3").close();

    Cli.Result result = Cli.run("node", "--id", "node-1", "--zone", "az-1", "--data-dir", data.toString(),
        "--port", "0");

    assertThat(result.exitCode()).as(result.toString()).isEqualTo(2);
    assertThat(result.stderr().lines()).singleElement().asString().isEqualTo("ringshift: data dir "
        + data.toAbsolutePath() + " belongs to node 'node-2' in zone 'az-3', not to node 'node-1' in zone 'az-1'; "
        + "give each node its own data dir");
  }

  @Test
  void shouldRefuseBadOptionsInOneLine() {
    String data = dir.resolve("data").toString();

    assertThat(Cli.run("node", "--id", "n", "--zone", "z", "--data-dir", data, "--port", "70000").stderr())
        .isEqualTo("ringshift: --port was 70000; it must be 0 (any free port) or 1..65535\n");
    assertThat(Cli.run("node", "--id", "n", "--zone", "z", "--data-dir", data, "--port", "0", "--wal-retention",
        "soon").stderr()).startsWith("ringshift: Invalid value for option '--wal-retention': 'soon' is not a "
        + "duration; write for example 90s, 30m, 6h or 2d");
    Cli.Result missing = Cli.run("node", "--id", "n", "--data-dir", data, "--port", "0");
    assertThat(missing.exitCode()).isEqualTo(2);
    assertThat(missing.stderr()).startsWith("ringshift: Missing required option: '--zone=ZONE'");
    Cli.Result blank = Cli.run("node", "--id", " ", "--zone", "z", "--data-dir", data, "--port", "0");
    assertThat(blank.exitCode()).isEqualTo(2);
    assertThat(blank.stderr()).isEqualTo("ringshift: node id is missing or blank; give a name of 1 to 255 "
        + "characters\n");
  }

  @Test
  void shouldRefuseRingOptionsThatDoNotGoTogether() {
    String data = dir.resolve("data").toString();

    Cli.Result noKey = Cli.run("node", "--id", "n", "--zone", "z", "--data-dir", data, "--port", "0",
        "--bootstrap", "127.0.0.1:1");
    assertThat(noKey.exitCode()).isEqualTo(2);
    assertThat(noKey.stderr()).startsWith("ringshift: --bootstrap needs at least one --trusted-key");
    Cli.Result noBootstrap = Cli.run("node", "--id", "n", "--zone", "z", "--data-dir", data, "--port", "0",
        "--trusted-key", data);
    assertThat(noBootstrap.exitCode()).isEqualTo(2);
    assertThat(noBootstrap.stderr()).startsWith("ringshift: --trusted-key needs --bootstrap");
  }

  /**
   * A node that follows the ring refuses a write tagged with an older epoch for a key it no longer replicates,
   * answering with the ring's epoch, and applies one for a key it still replicates. Its ring comes from the ring
   * file here, with Kafka unreachable: the cold start a restarted node makes.
   */
  @Test
  void shouldRefuseAStaleWriteForAKeyTheNodeNoLongerReplicatesByItsRingFile() throws Exception {
    SigningKey key = SigningKey.generate();
    Path keyFile = dir.resolve("publisher.key");
    Path publicKey = dir.resolve("publisher.pub");
    key.write(keyFile, publicKey);
    RingSnapshot ring = RingSnapshot.builder().clusterId("c1").epoch(7).vnodes(16).replicas(1)
        .addMember("node-1", "az-1").addMember("node-2", "az-2").build();
    Path ringFile = dir.resolve("ring.bin");
    RingClient.writePersistFile(ringFile, PublishedSnapshot.unsigned(ring, new byte[32], java.util.List.of())
        .signedBy(key), java.time.Instant.now());

    Node node = start("--id", "node-1", "--zone", "az-1", "--data-dir", dir.resolve("node-1").toString(),
        "--port", "0", "--bootstrap", "127.0.0.1:1", "--cluster", "c1", "--trusted-key", publicKey.toString(),
        "--ring-file", ringFile.toString());

    assertThat(node.serving().group(4)).isEqualTo("following the ring of cluster c1 at epoch 7");
    Store remote = RemoteStore.connect(node.serving().group(2), Duration.ofSeconds(5));
    String elsewhere = keyOwnedBy(ring, "node-2");
    String here = keyOwnedBy(ring, "node-1");
    assertThat(remote.put(elsewhere.getBytes(UTF_8), "v".getBytes(UTF_8), 6))
        .isInstanceOfSatisfying(WriteResult.RetryWithEpoch.class, r -> assertThat(r.epoch()).isEqualTo(7));
    assertThat(remote.get(elsewhere.getBytes(UTF_8))).isEmpty();
    assertThat(remote.put(here.getBytes(UTF_8), "v".getBytes(UTF_8), 6)).isInstanceOf(WriteResult.Applied.class);
    assertThat(remote.put(elsewhere.getBytes(UTF_8), "v".getBytes(UTF_8), 7)).as("tagged with the ring's epoch")
        .isInstanceOf(WriteResult.Applied.class);
    assertThat(node.stopAndWait()).isZero();
  }

  private static String keyOwnedBy(RingSnapshot ring, String node) {
    for (int i = 0; ; i++) {
      if (ring.ownerOf("key-" + i).id().equals(node)) {
        return "key-" + i;
      }
    }
  }
}
