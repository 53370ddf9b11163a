package io.ringshift.cli.internal.control;

import io.ringshift.cli.BadInputException;
import io.ringshift.ring.RingBuilder;
import picocli.CommandLine.Option;

/** {@code --cluster}, as every command about one cluster takes it. */
public final class ClusterOption {
  @Option(names = "--cluster", paramLabel = "ID", defaultValue = RingBuilder.DEFAULT_CLUSTER,
      description = "Cluster id (default: ${DEFAULT-VALUE}).")
  String cluster;

  /** The validated cluster id. */
  public String id() {
    return check(cluster);
  }

  /** {@code cluster} if it is a valid cluster id. @throws BadInputException naming the rule it breaks */
  public static String check(String cluster) {
    if (cluster == null || cluster.isBlank()) {
      throw new BadInputException("--cluster was \"" + (cluster == null ? "" : cluster)
          + "\"; a cluster id must not be blank");
    }
    if (cluster.length() > RingBuilder.MAX_CLUSTER_ID_LENGTH) {
      throw new BadInputException("--cluster is " + cluster.length() + " characters; a cluster id has at most "
          + RingBuilder.MAX_CLUSTER_ID_LENGTH);
    }
    return cluster;
  }
}
