package io.ringshift.systemtests.docker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;

import com.fasterxml.jackson.databind.JsonNode;
import io.ringshift.cli.Ringshift;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/**
 * {@code docker/compose.yaml} and {@code docker/Dockerfile} checked without a Docker engine: every service's command
 * is a real {@code ringshift} subcommand whose options the CLI accepts, the roles the deployment needs are there, and
 * what the services reference (volumes, dependencies, config files) exists.
 */
class ComposeFileTest {
  @Test
  void shouldRunOnlyRealRingshiftCommandsWhoseOptionsTheCliAccepts() throws Exception {
    ComposeFile compose = ComposeFile.read();
    int checked = 0;
    for (Map.Entry<String, JsonNode> service : compose.services().entrySet()) {
      for (List<String> args : ComposeFile.ringshiftCommands(service.getValue())) {
        CommandLine cli = Ringshift.newCommandLine();
        assertThatCode(() -> {
          CommandLine.ParseResult parsed = cli.parseArgs(args.toArray(String[]::new));
          assertThat(parsed.hasSubcommand()).as("%s runs a ringshift subcommand: %s", service.getKey(), args)
              .isTrue();
        }).as("service %s: ringshift %s", service.getKey(), String.join(" ", args)).doesNotThrowAnyException();
        checked++;
      }
    }
    assertThat(checked).as("ringshift command lines in compose.yaml").isGreaterThanOrEqualTo(15);
  }

  @Test
  void shouldDeployEveryRoleOnThreeBrokersWithSixNodesInThreeZones() throws Exception {
    ComposeFile compose = ComposeFile.read();
    Map<String, JsonNode> services = compose.services();
    Map<String, List<String>> subcommands = new java.util.TreeMap<>();
    for (Map.Entry<String, JsonNode> e : services.entrySet()) {
      for (List<String> args : ComposeFile.ringshiftCommands(e.getValue())) {
        subcommands.computeIfAbsent(args.get(0), k -> new ArrayList<>()).add(e.getKey());
      }
    }
    assertThat(services.keySet()).contains("kafka-1", "kafka-2", "kafka-3");
    assertThat(subcommands.get("orchestrator")).containsExactly("orchestrator");
    assertThat(subcommands.get("publisher")).containsExactly("publisher");
    assertThat(subcommands.get("worker")).containsExactly("worker-1", "worker-2");
    assertThat(subcommands.get("load")).containsExactly("writer");
    assertThat(subcommands.get("node")).hasSize(7);
    Set<String> zones = new HashSet<>();
    int alwaysOn = 0;
    for (String node : subcommands.get("node")) {
      List<String> args = ComposeFile.ringshiftCommands(services.get(node)).get(0);
      zones.add(args.get(args.indexOf("--zone") + 1));
      if (services.get(node).get("profiles") == null) {
        alwaysOn++;
      }
    }
    assertThat(alwaysOn).as("storage nodes up from the start").isEqualTo(6);
    assertThat(zones).containsExactlyInAnyOrder("az-1", "az-2", "az-3");
    for (Map.Entry<String, JsonNode> e : services.entrySet()) {
      if (!e.getKey().startsWith("kafka-")) {
        assertThat(e.getValue().at("/environment/RINGSHIFT_BOOTSTRAP").asText()).as(e.getKey())
            .isEqualTo("kafka-1:9092,kafka-2:9092,kafka-3:9092");
      }
    }
  }

  @Test
  void shouldReferenceOnlyDeclaredVolumesServicesAndExistingFiles() throws Exception {
    ComposeFile compose = ComposeFile.read();
    Set<String> volumes = new HashSet<>();
    compose.root().get("volumes").fieldNames().forEachRemaining(volumes::add);
    Map<String, JsonNode> services = compose.services();
    for (Map.Entry<String, JsonNode> e : services.entrySet()) {
      JsonNode depends = e.getValue().get("depends_on");
      if (depends != null) {
        depends.fieldNames().forEachRemaining(d -> assertThat(services).as("%s depends on %s", e.getKey(), d)
            .containsKey(d));
      }
      JsonNode mounts = e.getValue().get("volumes");
      if (mounts == null) {
        continue;
      }
      for (JsonNode mount : mounts) {
        String source = mount.asText().split(":")[0];
        if (source.startsWith(".")) {
          assertThat(ComposeFile.DOCKER.resolve(source)).as("%s mounts %s", e.getKey(), source).exists();
        } else {
          assertThat(volumes).as("%s mounts volume %s", e.getKey(), source).contains(source);
        }
      }
    }
    for (String file : List.of("members.json", "nodes.txt", "client-ports.txt")) {
      assertThat(ComposeFile.DOCKER.resolve("config").resolve(file)).isRegularFile();
    }
  }

  @Test
  void shouldBuildTheCliJarAndRunItOnAJre17() throws Exception {
    String dockerfile = Files.readString(ComposeFile.DOCKER.resolve("Dockerfile"));
    assertThat(dockerfile).contains("FROM eclipse-temurin:17-jre")
        .contains("-pl cli -am package")
        .contains("COPY --from=build /src/cli/target/ringshift.jar /opt/ringshift/ringshift.jar")
        .contains("ENTRYPOINT [\"ringshift\"]");
    String pom = Files.readString(ComposeFile.DOCKER.resolve("..").resolve("cli").resolve("pom.xml"));
    assertThat(pom).as("the jar the Dockerfile copies is the CLI's shaded jar").contains("<finalName>ringshift</finalName>");
    assertThat(Files.readString(ComposeFile.DOCKER.resolve("ringshift.sh")))
        .contains("-jar /opt/ringshift/ringshift.jar \"$@\"");
  }
}
