package io.ringshift.cli.internal;

import io.ringshift.cli.BadInputException;
import io.ringshift.worker.NodeDirectory;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.List;

/**
 * Storage node addresses from {@code --nodes FILE} ({@code node-id host:port} lines) and repeated {@code --node
 * ID=HOST:PORT} options: the worker's (admin listeners) and the data commands' (client ports).
 */
public final class NodeAddresses {
  private NodeAddresses() {}

  /**
   * The directory of {@code file} (null: none) and {@code nodes}, the options adding to the file.
   *
   * @param none the message when neither names a node
   * @throws BadInputException naming the option and the bad line or value, or with {@code none}
   */
  public static NodeDirectory read(Path file, List<String> nodes, String none) {
    NodeDirectory directory = NodeDirectory.empty();
    if (file != null) {
      try {
        directory = NodeDirectory.read(file);
      } catch (UncheckedIOException | IllegalArgumentException e) {
        throw new BadInputException("--nodes: " + e.getMessage(), e);
      }
    }
    for (String node : nodes) {
      String[] parts = node.split("=", 2);
      if (parts.length != 2) {
        throw new BadInputException("--node was \"" + node + "\"; write ID=HOST:PORT, for example "
            + "node-1=127.0.0.1:7001");
      }
      try {
        directory = directory.with(parts[0].strip(), NodeDirectory.Address.parse(parts[1]));
      } catch (IllegalArgumentException e) {
        throw new BadInputException("--node " + node + ": " + e.getMessage(), e);
      }
    }
    if (directory.nodes().isEmpty()) {
      throw new BadInputException(none);
    }
    return directory;
  }
}
