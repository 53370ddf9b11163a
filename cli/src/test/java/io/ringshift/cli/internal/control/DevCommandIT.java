package io.ringshift.cli.internal.control;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.ringshift.cli.internal.Cli;
import io.ringshift.cli.internal.Fixtures;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.InetAddress;
import java.net.ServerSocket;
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
 * {@code ringshift dev} in this JVM: the real command, started on a free port and stopped through the same path
 * that Ctrl-C takes (the stop request), without sending signals to the test JVM.
 */
class DevCommandIT {
  private static final Pattern BOOTSTRAP = Pattern.compile("Kafka at (127\\.0\\.0\\.1:\\d+) and the orchestrator");

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
        "  ringshift status --bootstrap " + bootstrap);
    Cli.Result init = Cli.run("init", "--members", members.toString(), "--vnodes", "16", "--bootstrap", bootstrap,
        "--wait");
    assertThat(init.stdout()).as(init.toString()).contains("epoch 1 READY");

    assertThat(first.stopAndWait()).isZero();
    assertThat(first.err().toString()).matches("ringshift dev: stopped \\(orchestrator \\d+ ms, broker \\d+ ms\\)\n");
    assertThat(portIsFree(bootstrap)).as("the broker let go of its port").isTrue();

    long restarting = System.nanoTime();
    Dev second = start("--port", "0", "--data-dir", data.toString());
    long restartMillis = (System.nanoTime() - restarting) / 1_000_000;
    String again = second.bootstrap();
    Cli.Result status = Cli.run("status", "--bootstrap", again);
    assertThat(status.stdout()).as(status.toString()).contains("active     epoch 1 READY: 6 members in 3 zones");
    // The orchestrator's state came back too: a join is planned from epoch 1, and a duplicate one is refused.
    Cli.Result join = Cli.run("join", "node-007", "--zone", "az-1", "--bootstrap", again, "--wait");
    assertThat(join.stdout()).as(join.toString()).contains("epoch 2 PLANNED");
    assertThat(Cli.run("init", "--members", members.toString(), "--bootstrap", again).exitCode()).isEqualTo(2);
    assertThat(second.stopAndWait()).isZero();
    System.out.printf("dev restart on kept data: serving again after %d ms%n", restartMillis);
    assertThat(restartMillis).as("a restart does not wait for the old group member's session to expire")
        .isLessThan(30_000);
  }

  @Test
  void shouldDeleteTemporaryDataWhenItStops() {
    Path brokerData;
    Path state;
    try (DevControlPlane plane = DevControlPlane.start(DevControlPlane.Settings.of(0, null, 0))) {
      brokerData = plane.brokerDataDir();
      state = plane.stateDir();
      assertThat(DevCommand.banner(plane)).contains("  data:   temporary, deleted on exit (--data-dir DIR keeps it)");
      assertThat(brokerData).isDirectory();
      assertThat(state).isDirectory();
    }
    assertThat(brokerData).doesNotExist();
    assertThat(state).doesNotExist();
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
