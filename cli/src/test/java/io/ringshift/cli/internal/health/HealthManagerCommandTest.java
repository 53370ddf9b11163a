package io.ringshift.cli.internal.health;

import static org.assertj.core.api.Assertions.assertThat;

import io.ringshift.cli.internal.Cli;
import io.ringshift.cli.internal.Durations;
import io.ringshift.health.HealthManagerConfig;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/** {@code ringshift health-manager} input checks: each refused with exit code 2 and a message naming the option. */
class HealthManagerCommandTest {
  private static final String[] KAFKA = {"--bootstrap", "127.0.0.1:9", "--timeout", "1"};

  private static Cli.Result run(String... args) {
    List<String> all = new ArrayList<>(List.of("health-manager"));
    all.addAll(List.of(args));
    all.addAll(List.of(KAFKA));
    return Cli.run(all.toArray(String[]::new));
  }

  @Test
  void shouldRefuseToRunWithoutNodes() {
    Cli.Result r = run();
    assertThat(r.exitCode()).as(r.toString()).isEqualTo(2);
    assertThat(r.stderr()).isEqualTo("ringshift: no storage node given; list their client ports with --nodes FILE "
        + "or --node ID=HOST:PORT\n");
  }

  @Test
  void shouldRefuseADebounceThatWouldFailOnOneTimeoutOrNever() {
    assertThat(run("--node", "n=h:1", "--misses", "0").stderr())
        .isEqualTo("ringshift: --misses was 0; a FAIL needs at least 1 missed probe\n");
    assertThat(run("--node", "n=h:1", "--probe-interval", "0s").stderr())
        .isEqualTo("ringshift: --probe-interval was 0s; it must be positive\n");
    assertThat(run("--node", "n=h:1", "--probe-timeout", "soon").stderr())
        .isEqualTo("ringshift: --probe-timeout was \"soon\"; write a duration such as 500ms, 30s, 10min or 2h\n");
    assertThat(run("--node", "n=h:1", "--lease-timeout", "500ms").stderr())
        .isEqualTo("ringshift: --lease-timeout was 500ms; it must be at least 1s (and at least the brokers' "
            + "group.min.session.timeout.ms, 6s by default)\n");
    assertThat(run("--node", "n=h:1", "--transactional-id", " ").stderr())
        .isEqualTo("ringshift: --transactional-id was empty; give the id every health manager of the deployment "
            + "shares\n");
  }

  @Test
  void shouldTakeTheDefaultsTheDocumentationGives() {
    HealthManagerCommand command = new HealthManagerCommand();
    new CommandLine(command).parseArgs("--node", "node-1=127.0.0.1:7101", "--node", "node-2=127.0.0.1:7102",
        "--bootstrap", "127.0.0.1:9092", "--manager-id", "hm-a");
    HealthManagerConfig config = command.config();

    assertThat(config.nodes()).isEqualTo(Map.of("node-1", "127.0.0.1:7101", "node-2", "127.0.0.1:7102"));
    assertThat(config.clusterId()).isEqualTo("default");
    assertThat(config.managerId()).isEqualTo("hm-a");
    assertThat(config.transactionalId()).isEqualTo("ringshift-health-manager");
    assertThat(config.probeInterval()).isEqualTo(Duration.ofSeconds(1));
    assertThat(config.probeTimeout()).isEqualTo(Duration.ofSeconds(1));
    assertThat(config.misses()).isEqualTo(3);
    assertThat(config.minDown()).isEqualTo(Duration.ofSeconds(10));
    assertThat(config.leaseTimeout()).isEqualTo(Duration.ofSeconds(10));
    assertThat(Durations.format(config.minDown())).isEqualTo("10s");
  }

  @Test
  void shouldNameAManagerIdAfterTheHost() {
    assertThat(HealthManagerCommand.defaultManagerId()).startsWith("health-manager-").matches("[A-Za-z0-9._-]+");
  }
}
