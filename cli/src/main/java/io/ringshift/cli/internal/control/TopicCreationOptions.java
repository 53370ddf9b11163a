package io.ringshift.cli.internal.control;

import io.ringshift.cli.BadInputException;
import java.util.Locale;
import picocli.CommandLine.Option;

/**
 * How a role creates the control plane's topics that are missing when it starts (the orchestrator all of them, the
 * publisher {@code ring.snapshots}); topics that exist are left as they are ({@code ringshift topics check}).
 */
public final class TopicCreationOptions {
  @Option(names = "--partitions", paramLabel = "N", defaultValue = "3",
      description = "Partitions of each topic it creates (default: ${DEFAULT-VALUE}).")
  int partitions;

  @Option(names = "--replication-factor", paramLabel = "auto|R", defaultValue = "auto",
      description = "Replication factor of each topic it creates: auto (the default) is 3 with "
          + "min.insync.replicas=2 on a cluster of 3 brokers or more, one replica per broker below; a number "
          + "sets it (min.insync.replicas 2 from 3 up).")
  String replicationFactor;

  /** @throws BadInputException when {@code --partitions} is below 1 */
  public int partitions() {
    if (partitions < 1) {
      throw new BadInputException("--partitions was " + partitions + "; it must be at least 1");
    }
    return partitions;
  }

  /**
   * The replication factor, 0 for {@code auto}.
   *
   * @throws BadInputException naming the value when it is neither {@code auto} nor a number from 1 to 32767
   */
  public short replicationFactor() {
    String value = replicationFactor.strip().toLowerCase(Locale.ROOT);
    if (value.equals("auto")) {
      return 0;
    }
    try {
      int factor = Integer.parseInt(value);
      if (factor >= 1 && factor <= Short.MAX_VALUE) {
        return (short) factor;
      }
    } catch (NumberFormatException e) {
      // reported below
    }
    throw new BadInputException("--replication-factor was " + replicationFactor + "; give auto or a number from 1 "
        + "to " + Short.MAX_VALUE);
  }
}
