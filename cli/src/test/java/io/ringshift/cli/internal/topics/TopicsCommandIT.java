package io.ringshift.cli.internal.topics;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.ringshift.cli.internal.Cli;
import io.ringshift.devkit.junit.EmbeddedKafkaExtension;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.common.config.ConfigResource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** {@code ringshift topics check} and {@code create} against a real broker. */
class TopicsCommandIT {
  @RegisterExtension static final EmbeddedKafkaExtension KAFKA = new EmbeddedKafkaExtension();

  @Test
  void shouldReportMissingTopicsCreateThemAndReportAConfigurationThatDiffers() throws Exception {
    Cli.Result missing = cli("topics", "check");
    assertThat(missing.exitCode()).as(missing.toString()).isEqualTo(3);
    assertThat(missing.stdout().lines().filter(l -> l.endsWith(": does not exist (the orchestrator creates it at "
        + "start)"))).hasSize(9);

    Cli.Result create = cli("topics", "create");
    assertThat(create.exitCode()).as(create.toString()).isZero();
    assertThat(create.stdout()).contains("(created with 3 partitions, replication factor 1, min.insync.replicas 1 "
        + "where they were missing)");
    Cli.Result fine = cli("topics", "check");
    assertThat(fine.exitCode()).as(fine.toString()).isZero();

    String epochs = KAFKA.topic("ring.epochs");
    try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, KAFKA.bootstrapServers()))) {
      admin.incrementalAlterConfigs(Map.of(new ConfigResource(ConfigResource.Type.TOPIC, epochs), List.of(
          new AlterConfigOp(new ConfigEntry("retention.ms", "86400000"), AlterConfigOp.OpType.SET))))
          .all().get(30, TimeUnit.SECONDS);
    }
    // The alter returns once the controller committed it; the broker that answers describeConfigs applies it a
    // moment later (a fresh-clone run saw the old value), so the check is asked again until it sees the change.
    Cli.Result differs = await("topics check sees the altered retention").atMost(Duration.ofSeconds(30))
        .pollInterval(Duration.ofMillis(200)).until(() -> cli("topics", "check"), r -> r.exitCode() != 0);
    assertThat(differs.exitCode()).as(differs.toString()).isEqualTo(3);
    assertThat(differs.stdout()).startsWith(epochs + ": retention.ms is 86400000, the roles need -1\n")
        .contains("1 difference(s)");
  }

  @Test
  void shouldRefuseAReplicationFactorTheClusterCannotHave() {
    Cli.Result r = cli("topics", "create", "--replication-factor", "3");
    assertThat(r.exitCode()).as(r.toString()).isEqualTo(2);
    assertThat(r.stderr()).startsWith("ringshift: could not create topic ").contains("replication factor");
  }

  private static Cli.Result cli(String... args) {
    List<String> all = new ArrayList<>(Arrays.asList(args));
    all.addAll(List.of("--bootstrap", KAFKA.bootstrapServers(), "--topic-prefix", KAFKA.topicPrefix(), "--timeout",
        "10"));
    return Cli.run(all.toArray(String[]::new));
  }
}
