package io.ringshift.cli.internal.orchestrator;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.ringshift.cli.internal.Cli;
import io.ringshift.cli.internal.Fixtures;
import io.ringshift.devkit.junit.EmbeddedKafkaExtension;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * {@code ringshift orchestrator} as a process would run it: it creates the topics, plans what {@code init} asks
 * for, stops cleanly when asked, and passes {@code --kafka-config} to its Kafka clients.
 */
class OrchestratorCommandIT {
  @RegisterExtension static final EmbeddedKafkaExtension KAFKA = new EmbeddedKafkaExtension();

  private static final Duration TIMEOUT = Duration.ofSeconds(90);

  @TempDir Path dir;

  private final ExecutorService executor = Executors.newSingleThreadExecutor();

  @AfterEach
  void tearDown() throws InterruptedException {
    executor.shutdownNow();
    assertThat(executor.awaitTermination(60, TimeUnit.SECONDS)).as("orchestrator command stopped").isTrue();
  }

  @Test
  void shouldCreateTheTopicsAndPlanTheEpochsInitAsksFor() throws Exception {
    CountDownLatch stop = new CountDownLatch(1);
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    CommandLine command = new CommandLine(new OrchestratorCommand(stop, false));
    command.setOut(new PrintWriter(out, true));
    command.setErr(new PrintWriter(err, true));
    Future<Integer> exit = executor.submit(() -> command.execute("--bootstrap", KAFKA.bootstrapServers(),
        "--topic-prefix", KAFKA.topicPrefix(), "--application-id", KAFKA.applicationId(), "--state-dir",
        dir.resolve("state").toString()));
    await("the orchestrator prints that it runs").atMost(TIMEOUT)
        .until(() -> out.toString().contains("Ctrl-C stops it.") || exit.isDone());
    assertThat(exit.isDone()).as("orchestrator ended early: %s %s", out, err).isFalse();
    assertThat(out.toString()).startsWith("ringshift orchestrator: application " + KAFKA.applicationId()
        + " running on " + KAFKA.bootstrapServers()).contains("replication chosen from the brokers");

    Cli.Result check = cli("topics", "check");
    assertThat(check.exitCode()).as(check.toString()).isZero();
    assertThat(check.stdout()).contains("The 9 topics at " + KAFKA.bootstrapServers() + " are as the roles need them "
        + "(replication factor 1 or more, min.insync.replicas 1 or more).");

    Path members = Fixtures.write(dir.resolve("members.json"), Fixtures.membersJson(6, 3));
    Cli.Result init = cli("init", "--members", members.toString(), "--vnodes", "16");
    assertThat(init.exitCode()).as(init.toString()).isZero();
    Cli.Result epochs = cli("epochs");
    assertThat(epochs.stdout()).as(epochs.toString()).contains("READY");

    stop.countDown();
    assertThat(exit.get(60, TimeUnit.SECONDS)).isZero();
    assertThat(err.toString()).contains("ringshift orchestrator: stopped; it left the group "
        + KAFKA.applicationId());
  }

  @Test
  void shouldHandTheKafkaConfigToItsClients() {
    // TLS against the broker's plaintext listener: no client of the orchestrator can talk to it, which shows that
    // the file reached them (a plaintext client would start).
    Path config = Fixtures.write(dir.resolve("client.properties"), "security.protocol=SSL\n");
    long started = System.nanoTime();
    Cli.Result r = Cli.run("orchestrator", "--bootstrap", KAFKA.bootstrapServers(), "--topic-prefix",
        KAFKA.topicPrefix(), "--application-id", KAFKA.applicationId(), "--state-dir", dir.resolve("tls").toString(),
        "--kafka-config", config.toString(), "--timeout", "3", "--start-timeout", "10s");
    assertThat(r.exitCode()).as(r.toString()).isEqualTo(2);
    assertThat(r.stderr()).startsWith("ringshift: the orchestrator could not start against Kafka at "
        + KAFKA.bootstrapServers());
    assertThat(Duration.ofNanos(System.nanoTime() - started)).as("gave up within its timeouts")
        .isLessThan(Duration.ofSeconds(60));
  }

  private static Cli.Result cli(String... args) {
    List<String> all = new ArrayList<>(Arrays.asList(args));
    all.addAll(List.of("--bootstrap", KAFKA.bootstrapServers(), "--topic-prefix", KAFKA.topicPrefix()));
    return Cli.run(all.toArray(String[]::new));
  }
}
