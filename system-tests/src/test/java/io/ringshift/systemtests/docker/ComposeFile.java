package io.ringshift.systemtests.docker;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** {@code docker/compose.yaml}, read as YAML: its services and the {@code ringshift} command lines they run. */
final class ComposeFile {
  /** The repository's {@code docker/} folder, seen from the module directory the tests run in. */
  static final Path DOCKER = Path.of("..", "docker");
  private static final Pattern RINGSHIFT_IN_SCRIPT = Pattern.compile("(?:^|[\\s|&;(])ringshift\\s+([^|&;)\\n]+)");

  private final JsonNode root;

  private ComposeFile(JsonNode root) {
    this.root = root;
  }

  static ComposeFile read() throws IOException {
    return new ComposeFile(new ObjectMapper(new YAMLFactory()).readTree(Files.readString(DOCKER.resolve(
        "compose.yaml"))));
  }

  JsonNode root() {
    return root;
  }

  /** Service name to its definition, in file order. */
  Map<String, JsonNode> services() {
    Map<String, JsonNode> services = new LinkedHashMap<>();
    root.get("services").fields().forEachRemaining(e -> services.put(e.getKey(), e.getValue()));
    return services;
  }

  /**
   * The {@code ringshift} argument lists a service runs: its command, when the image's entrypoint ({@code ringshift})
   * runs it; each {@code ringshift ...} line of its script, when its entrypoint is a shell.
   */
  static List<List<String>> ringshiftCommands(JsonNode service) {
    List<List<String>> commands = new ArrayList<>();
    JsonNode entrypoint = service.get("entrypoint");
    JsonNode command = service.get("command");
    if (command == null) {
      return commands;
    }
    if (entrypoint == null) {
      List<String> args = new ArrayList<>();
      command.forEach(a -> args.add(a.asText()));
      commands.add(args);
      return commands;
    }
    StringBuilder script = new StringBuilder();
    command.forEach(a -> script.append(a.asText()).append('\n'));
    Matcher m = RINGSHIFT_IN_SCRIPT.matcher(script);
    while (m.find()) {
      commands.add(Arrays.asList(m.group(1).strip().split("\\s+")));
    }
    return commands;
  }
}
