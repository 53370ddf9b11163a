package io.ringshift.cli.internal.worker;

import static org.assertj.core.api.Assertions.assertThat;

import io.ringshift.cli.internal.Cli;
import io.ringshift.cli.internal.Durations;
import io.ringshift.cli.internal.Fixtures;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code ringshift worker} input checks: each refused with exit code 2 and a message naming the option. */
class WorkerCommandTest {
  private static final String[] KAFKA = {"--bootstrap", "127.0.0.1:9", "--timeout", "1"};

  @TempDir Path dir;

  /** The worker with the given options, the nodes' admin secret and an unreachable Kafka. */
  private Cli.Result worker(String... args) {
    java.util.List<String> all = new java.util.ArrayList<>(java.util.List.of("worker"));
    all.addAll(java.util.List.of(args));
    all.addAll(java.util.List.of("--node-secret-file", secretFile().toString()));
    all.addAll(java.util.List.of(KAFKA));
    return Cli.run(all.toArray(String[]::new));
  }

  private Path secretFile() {
    Path file = dir.resolve("admin.secret");
    if (!java.nio.file.Files.exists(file)) {
      Fixtures.write(file, "0123456789abcdef0123456789abcdef\n");
    }
    return file;
  }

  @Test
  void shouldRefuseToRunWithoutTheNodesAdminSecretOrWithABadOne() {
    Cli.Result none = Cli.run("worker", "--node", "n=h:1", "--bootstrap", "127.0.0.1:9", "--timeout", "1");
    assertThat(none.exitCode()).as(none.toString()).isEqualTo(2);
    assertThat(none.stderr()).isEqualTo("ringshift: no --node-secret-file given: the nodes' admin listeners answer "
        + "only calls that carry their admin secret; give the file the nodes use (their --admin-secret-file; by "
        + "default admin.secret in a node's --data-dir; ringshift dev writes admin.secret in its data dir)\n");
    Path bad = Fixtures.write(dir.resolve("bad.secret"), "short\n");
    Cli.Result badSecret = Cli.run("worker", "--node", "n=h:1", "--node-secret-file", bad.toString(),
        "--bootstrap", "127.0.0.1:9", "--timeout", "1");
    assertThat(badSecret.exitCode()).isEqualTo(2);
    assertThat(badSecret.stderr()).isEqualTo("ringshift: --node-secret-file: admin secret file " + bad + ": the admin "
        + "secret has 5 characters; it must have 16 to 512 (a node writes one of 32 random bytes in base64url when "
        + "none is given)\n");
    Cli.Result missing = Cli.run("worker", "--node", "n=h:1", "--node-secret-file", dir.resolve("none").toString(),
        "--bootstrap", "127.0.0.1:9", "--timeout", "1");
    assertThat(missing.stderr()).startsWith("ringshift: --node-secret-file: cannot read the admin secret file "
        + dir.resolve("none"));
  }

  @Test
  void shouldRefuseToRunWithoutNodes() {
    Cli.Result r = worker();
    assertThat(r.exitCode()).as(r.toString()).isEqualTo(2);
    assertThat(r.stderr()).isEqualTo("ringshift: no storage node given; list them with --nodes FILE or --node "
        + "ID=HOST:PORT\n");
  }

  @Test
  void shouldNameAMalformedNodeOption() {
    assertThat(worker("--node", "node-1").stderr())
        .isEqualTo("ringshift: --node was \"node-1\"; write ID=HOST:PORT, for example node-1=127.0.0.1:7001\n");
    assertThat(worker("--node", "node-1=localhost").stderr()).isEqualTo("ringshift: --node node-1=localhost: "
        + "address was \"localhost\"; write HOST:PORT, for example 127.0.0.1:7001\n");
    assertThat(worker("--node", "n=h:1", "--node", "n=h:2").stderr())
        .contains("node n was listed twice (h:1 and h:2)");
  }

  @Test
  void shouldNameTheNodesFileAndLine() {
    Path file = Fixtures.write(dir.resolve("nodes.txt"), "node-1 h:1\nnode-2\n");
    Cli.Result r = worker("--nodes", file.toString());
    assertThat(r.exitCode()).isEqualTo(2);
    assertThat(r.stderr()).isEqualTo("ringshift: --nodes: " + file + " line 2 was \"node-2\"; each line is NODE-ID "
        + "HOST:PORT, for example: node-1 127.0.0.1:7001\n");
    assertThat(worker("--nodes", dir.resolve("missing.txt").toString()).stderr())
        .startsWith("ringshift: --nodes: cannot read the nodes file " + dir.resolve("missing.txt"));
  }

  @Test
  void shouldRefuseBadLimitsAndDurations() {
    assertThat(worker("--node", "n=h:1", "--max-tasks", "0").stderr())
        .isEqualTo("ringshift: --max-tasks was 0; it must be at least 1\n");
    assertThat(worker("--node", "n=h:1", "--grace", "soon").stderr())
        .isEqualTo("ringshift: --grace was \"soon\"; write a duration such as 500ms, 30s, 10min or 2h\n");
    assertThat(worker("--node", "n=h:1", "--bytes-per-second", "fast").stderr())
        .startsWith("ringshift: Invalid value for option '--bytes-per-second': 'fast' is not a byte size");
    assertThat(worker("--node", "n=h:1", "--worker-id", "a b").stderr())
        .isEqualTo("ringshift: workerId was \"a b\"; it must be 1 to 200 letters, digits, '.', '_' or '-'\n");
  }

  @Test
  void shouldSayWhenKafkaCannotBeReached() {
    Cli.Result r = worker("--node", "n=h:1");
    assertThat(r.exitCode()).as(r.toString()).isEqualTo(2);
    assertThat(r.stderr()).startsWith("ringshift: the worker could not start against Kafka at 127.0.0.1:9: ");
  }

  @Test
  void shouldReadDurationsAsOperatorsWriteThem() {
    assertThat(Durations.parse("--grace", "10min")).isEqualTo(Duration.ofMinutes(10));
    assertThat(Durations.parse("--grace", "10m")).isEqualTo(Duration.ofMinutes(10));
    assertThat(Durations.parse("--grace", "30s")).isEqualTo(Duration.ofSeconds(30));
    assertThat(Durations.parse("--grace", "45")).isEqualTo(Duration.ofSeconds(45));
    assertThat(Durations.parse("--grace", "500ms")).isEqualTo(Duration.ofMillis(500));
    assertThat(Durations.parse("--grace", "2h")).isEqualTo(Duration.ofHours(2));
    assertThat(Durations.parse("--grace", "PT1M30S")).isEqualTo(Duration.ofSeconds(90));
  }

  @Test
  void shouldRefuseToStartWithABadOrMissingLimitsFile() {
    Path bad = Fixtures.write(dir.resolve("bad.properties"), "max-tasks=0\n");
    Cli.Result r = worker("--node", "n=h:1", "--limits-file", bad.toString());
    assertThat(r.exitCode()).as(r.toString()).isEqualTo(2);
    assertThat(r.stderr()).isEqualTo("ringshift: --limits-file " + bad + ": max-tasks was 0; it must be at least 1\n");
    Cli.Result missing = worker("--node", "n=h:1", "--limits-file", dir.resolve("none").toString());
    assertThat(missing.exitCode()).isEqualTo(2);
    assertThat(missing.stderr()).startsWith("ringshift: --limits-file " + dir.resolve("none") + " cannot be read");
  }
}
