package io.ringshift.cli.internal;

import picocli.CommandLine.Option;

/** {@code --json}, as every command with a JSON form of its output takes it (printed by {@link JsonOutput}). */
public final class JsonOption {
  @Option(names = "--json", description = "Print JSON instead of text (every row: status and plan list every task).")
  boolean json;

  /** Whether the command prints JSON. */
  public boolean on() {
    return json;
  }
}
