package io.ringshift.cli.internal;

import java.nio.file.Path;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Logging of the command line, decided in {@code main} before any logger exists (slf4j-simple reads its
 * configuration once, when the first logger is created).
 *
 * <p>Every command reports its own outcome in one line, so Kafka's client logging is off: without that, an
 * unreachable broker would print a warning per reconnection attempt. {@code ringshift dev} runs a broker and
 * the orchestrator for minutes or hours, so there WARN and ERROR stay visible (a full disk, a crashed stream
 * thread) while INFO, thousands of lines per start, does not. A {@code -Dorg.slf4j.simpleLogger...} system
 * property set by the user ({@code RINGSHIFT_JAVA_OPTS}) wins over these defaults.
 */
public final class LogSettings {
  static final String PREFIX = "org.slf4j.simpleLogger.";

  private LogSettings() {}

  /** Sets the simple logger's defaults for the command that {@code args} runs. */
  public static void configure(String[] args) {
    // Storage nodes, migration workers and the publisher are long-running servers too: their warnings (a request
    // that failed in the store, a task's failure, a digest mismatch, a rejected epoch) stay visible.
    String command = firstCommand(args);
    boolean dev = "dev".equals(command) || "node".equals(command) || "worker".equals(command)
        || "publisher".equals(command);
    boolean keptState = Arrays.stream(args).anyMatch(a -> a.equals("--data-dir") || a.startsWith("--data-dir="));
    Map<String, String> defaults = new LinkedHashMap<>(defaults(dev || "demo".equals(command), keptState));
    if ("demo".equals(command)) {
      // The demo's terminal shows its progress; the roles' warnings (a stopped node is expected there) go to a file.
      defaults.put(PREFIX + "logFile", Path.of(System.getProperty("java.io.tmpdir"), "ringshift-demo.log").toString());
    }
    for (Map.Entry<String, String> e : defaults.entrySet()) {
      if (System.getProperty(e.getKey()) == null) {
        System.setProperty(e.getKey(), e.getValue());
      }
    }
  }

  /**
   * The defaults. For {@code dev} a few loggers warn on every start about things that are expected there and
   * that a user cannot act on; only their errors are shown.
   *
   * @param keptState whether {@code dev} keeps its state ({@code --data-dir}); without it the Streams state is
   *     in a temporary directory on purpose
   */
  static Map<String, String> defaults(boolean dev, boolean keptState) {
    if (!dev) {
      return Map.of(PREFIX + "defaultLogLevel", "off");
    }
    Map<String, String> p = new LinkedHashMap<>();
    p.put(PREFIX + "defaultLogLevel", "warn");
    p.put(PREFIX + "logFile", "System.err");
    p.put(PREFIX + "showDateTime", "true");
    p.put(PREFIX + "dateTimeFormat", "HH:mm:ss.SSS");
    p.put(PREFIX + "showShortLogName", "true");
    // A fresh single-node cluster: "Performing controller activation. The metadata log appears to be empty".
    p.put(PREFIX + "log.org.apache.kafka.controller.QuorumController", "error");
    // Two clients of a fresh cluster look up their group coordinator at once and both ask for __consumer_offsets:
    // "Auto topic creation failed for __consumer_offsets with error 'TOPIC_ALREADY_EXISTS'", on most starts.
    p.put(PREFIX + "log.org.apache.kafka.server.DefaultAutoTopicCreationManager", "error");
    // Advice about a Streams default that changes in Kafka 5.0, printed twice per start; it is the
    // orchestrator's configuration to decide, not something a dev user can change.
    p.put(PREFIX + "log.org.apache.kafka.streams.StreamsConfig", "error");
    // Clients inside the dev JVM: "UNKNOWN_TOPIC_OR_PARTITION" while Streams creates its repartition topic, and
    // reconnection chatter; the broker itself (kafka.*, org.apache.kafka.server, ...) still logs at WARN.
    p.put(PREFIX + "log.org.apache.kafka.clients.NetworkClient", "error");
    if (!keptState) {
      // "Using an OS temp directory in the state.dir property can cause failures": it is temporary on purpose.
      p.put(PREFIX + "log.org.apache.kafka.streams.processor.internals.StateDirectory", "error");
    }
    return p;
  }

  /** The first argument that is not an option: the subcommand (the root command's options take no value). */
  static String firstCommand(String[] args) {
    for (String arg : args) {
      if (!arg.startsWith("-")) {
        return arg;
      }
    }
    return null;
  }
}
