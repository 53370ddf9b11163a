package io.ringshift.devkit.internal;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import kafka.tools.StorageTool;

/**
 * Formats a KRaft log directory the way {@code kafka-storage.sh format --standalone} does, in this JVM:
 * {@link StorageTool#execute} returns an exit code instead of exiting. A directory already formatted is left
 * as it is ({@code --ignore-formatted}) so a restart keeps its data.
 */
public final class KraftStorage {
  private KraftStorage() {}

  /** Thrown with the tool's own output when formatting fails. */
  public static final class FormatException extends Exception {
    private static final long serialVersionUID = 1L;

    FormatException(String message, Throwable cause) {
      super(message, cause);
    }
  }

  /** Formats the directory of a single node that is its own controller quorum ({@code --standalone}). */
  public static void format(Properties brokerProperties, String clusterId, boolean alreadyFormatted)
      throws FormatException, IOException {
    format(brokerProperties, clusterId, alreadyFormatted, true);
  }

  /**
   * Formats the directory of one node; {@code standalone} for a node that is the whole controller quorum, false for
   * a node of a static quorum ({@code controller.quorum.voters} in its properties, which then needs no flag).
   */
  public static void format(Properties brokerProperties, String clusterId, boolean alreadyFormatted,
      boolean standalone) throws FormatException, IOException {
    // StorageTool reads its configuration from a file only.
    Path config = Files.createTempFile("ringshift-kafka-", ".properties");
    ByteArrayOutputStream output = new ByteArrayOutputStream();
    try {
      try (OutputStream out = Files.newOutputStream(config)) {
        brokerProperties.store(out, "written by ringshift devkit for kafka-storage format");
      }
      List<String> args = new ArrayList<>(List.of("format", "-t", clusterId, "-c", config.toString()));
      if (standalone) {
        args.add("--standalone");
      }
      if (alreadyFormatted) {
        args.add("--ignore-formatted");
      }
      int code;
      try (PrintStream print = new PrintStream(output, true, StandardCharsets.UTF_8)) {
        code = StorageTool.execute(args.toArray(String[]::new), print);
      } catch (RuntimeException e) {
        // FormatterException and TerseFailure: StorageTool.main turns them into exit code 1.
        throw new FormatException(describe(e.getMessage(), output), e);
      }
      if (code != 0) {
        throw new FormatException(describe("kafka-storage format exited with " + code, output), null);
      }
    } finally {
      Files.deleteIfExists(config);
    }
  }

  private static String describe(String problem, ByteArrayOutputStream output) {
    String printed = output.toString(StandardCharsets.UTF_8).trim();
    return printed.isEmpty() ? problem : problem + "; kafka-storage said: " + printed;
  }
}
