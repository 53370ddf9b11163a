package io.ringshift.cli.internal.worker;

import static org.assertj.core.api.Assertions.assertThat;

import io.ringshift.cli.internal.Cli;
import io.ringshift.devkit.junit.EmbeddedKafkaExtension;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** {@code ringshift budgets} against a real broker: show, set, change one part, refuse bad input. */
class BudgetsCommandIT {
  @RegisterExtension static final EmbeddedKafkaExtension KAFKA = new EmbeddedKafkaExtension();

  @Test
  void shouldSetShowAndChangeAGroupsBudgetsAndRefuseBadInput() {
    Cli.Result noTopic = cli("budgets");
    assertThat(noTopic.exitCode()).as(noTopic.toString()).isEqualTo(2);
    assertThat(noTopic.stderr()).contains("has no topic " + KAFKA.topic("ring.worker-budgets"))
        .contains("ringshift topics create");
    assertThat(cli("topics", "create").exitCode()).isZero();

    Cli.Result none = cli("budgets", "--group-id", "copiers");
    assertThat(none.exitCode()).as(none.toString()).isZero();
    assertThat(none.stdout()).startsWith("worker group copiers has no budgets: each worker's own limits apply");

    Cli.Result set = cli("budgets", "--group-id", "copiers", "--per-source-bytes-per-second", "30MiB",
        "--zone-link", "az-1>az-2=10MiB", "--source", "node-07=5MiB");
    assertThat(set.exitCode()).as(set.toString()).isZero();
    assertThat(set.stdout()).isEqualTo("set budgets of worker group copiers: per source node 30.0 MiB/s, per zone "
        + "link unlimited; source node-07 5.00 MiB/s; zone link az-1>az-2 10.0 MiB/s\n");

    Cli.Result changed = cli("budgets", "--group-id", "copiers", "--per-zone-link-bytes-per-second", "100MiB",
        "--source", "node-07=0");
    assertThat(changed.exitCode()).as(changed.toString()).isZero();
    assertThat(changed.stdout()).as("what the change did not name is kept").isEqualTo("set budgets of worker group "
        + "copiers: per source node 30.0 MiB/s, per zone link 100 MiB/s; source node-07 unlimited; zone link "
        + "az-1>az-2 10.0 MiB/s\n");
    assertThat(cli("budgets", "--group-id", "copiers").stdout()).isEqualTo(changed.stdout().substring(4));
    assertThat(cli("budgets", "--group-id", "others").stdout()).startsWith("worker group others has no budgets");

    for (String[] bad : List.of(
        new String[] {"--zone-link", "az-1=10MiB"},
        new String[] {"--zone-link", "az 1>az-2=10MiB"},
        new String[] {"--source", "node-07"},
        new String[] {"--source", "node-07=lots"},
        new String[] {"--per-source-bytes-per-second", "-5"},
        new String[] {"--source", "node-07=1MiB", "--source", "node-07=2MiB"})) {
      List<String> args = new ArrayList<>(List.of("budgets", "--group-id", "copiers"));
      args.addAll(Arrays.asList(bad));
      Cli.Result refused = cli(args.toArray(String[]::new));
      assertThat(refused.exitCode()).as(refused.toString()).isEqualTo(2);
      assertThat(refused.stderr()).as(refused.toString()).contains(bad[0])
          .contains(bad.length == 2 ? bad[1] : "node-07 twice");
    }
    Cli.Result badGroup = cli("budgets", "--group-id", "two words", "--per-source-bytes-per-second", "1MiB");
    assertThat(badGroup.exitCode()).as(badGroup.toString()).isEqualTo(2);
    assertThat(badGroup.stderr()).contains("--group-id was \"two words\"").contains("letters, digits");
    Cli.Result removed = cli("budgets", "--group-id", "copiers", "--source", "node-07=default");
    assertThat(removed.stdout()).as("one override removed").isEqualTo("set budgets of worker group copiers: per "
        + "source node 30.0 MiB/s, per zone link 100 MiB/s; zone link az-1>az-2 10.0 MiB/s\n");
    Cli.Result cleared = cli("budgets", "--group-id", "copiers", "--clear-overrides");
    assertThat(cleared.stdout()).as("refused input changed nothing; the overrides are gone")
        .isEqualTo("set budgets of worker group copiers: per source node 30.0 MiB/s, per zone link 100 MiB/s\n");
  }

  private static Cli.Result cli(String... args) {
    List<String> all = new ArrayList<>(Arrays.asList(args));
    all.addAll(List.of("--bootstrap", KAFKA.bootstrapServers(), "--topic-prefix", KAFKA.topicPrefix(), "--timeout",
        "10"));
    return Cli.run(all.toArray(String[]::new));
  }
}
