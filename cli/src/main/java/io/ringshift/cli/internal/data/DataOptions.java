package io.ringshift.cli.internal.data;

import io.ringshift.cli.BadInputException;
import io.ringshift.cli.internal.Durations;
import io.ringshift.cli.internal.NodeAddresses;
import io.ringshift.worker.NodeDirectory;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import picocli.CommandLine.Option;

/**
 * What the data commands ({@code put}, {@code get}, {@code load}) need besides Kafka: the publisher keys whose
 * snapshots they route by, the cluster, and where the storage nodes' client ports are.
 */
public final class DataOptions {
  @Option(names = "--trusted-key", paramLabel = "FILE", required = true,
      description = "A publisher public key (PEM) whose signed snapshots the command routes by; repeat for rotated "
          + "keys (ringshift dev writes publisher.pub).")
  List<Path> trustedKeys = new ArrayList<>();

  @Option(names = "--cluster", paramLabel = "ID", defaultValue = "default",
      description = "The cluster (default: ${DEFAULT-VALUE}).")
  String cluster;

  @Option(names = "--nodes", paramLabel = "FILE",
      description = "The storage nodes' client ports: one 'node-id host:port' per line ('#' starts a comment); "
          + "ringshift dev writes client-ports.txt.")
  Path nodesFile;

  @Option(names = "--node", paramLabel = "ID=HOST:PORT",
      description = "A storage node's client port; repeat for more (adds to --nodes).")
  List<String> nodes = new ArrayList<>();

  @Option(names = "--ring-timeout", paramLabel = "DURATION", defaultValue = "30s",
      description = "How long to wait for the first published ring (default: ${DEFAULT-VALUE}).")
  String ringTimeout;

  @Option(names = "--node-timeout", paramLabel = "DURATION", defaultValue = "5s",
      description = "How long a call to a storage node may take (default: ${DEFAULT-VALUE}).")
  String nodeTimeout;

  /** The client ports of the nodes. @throws BadInputException when none is given or one is malformed */
  NodeDirectory directory() {
    return NodeAddresses.read(nodesFile, nodes, "no storage node given; list their client ports with --nodes FILE "
        + "(ringshift dev writes client-ports.txt) or --node ID=HOST:PORT");
  }

  Duration ringTimeout() {
    return positive("--ring-timeout", ringTimeout);
  }

  Duration nodeTimeout() {
    return positive("--node-timeout", nodeTimeout);
  }

  static Duration positive(String option, String value) {
    Duration d;
    try {
      d = Durations.parse(option, value);
    } catch (IllegalArgumentException e) {
      throw new BadInputException(e.getMessage(), e);
    }
    if (d.isZero() || d.isNegative()) {
      throw new BadInputException(option + " was " + value + "; it must be longer than 0");
    }
    return d;
  }
}
