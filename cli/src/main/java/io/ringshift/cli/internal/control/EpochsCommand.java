package io.ringshift.cli.internal.control;

import io.ringshift.cli.internal.JsonOption;
import io.ringshift.orchestrator.admin.ClusterView;
import io.ringshift.cli.internal.JsonOutput;
import io.ringshift.orchestrator.admin.ControlPlaneAdmin.Part;
import java.io.PrintWriter;
import java.util.EnumSet;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/** {@code ringshift epochs}: the audit log of one cluster, one line per epoch record. */
@Command(
    name = "epochs",
    mixinStandardHelpOptions = true,
    sortOptions = false,
    description = {
      "Lists a cluster's audit log: every record on ring.epochs in the order written, one line each: time, "
          + "epoch, plan version, state, cause (action and node), request id, member count, the first 12 hex "
          + "digits of the ring checksum, task count, replica data moved, and the reason of a SUPERSEDED or "
          + "REJECTED record.",
      "Reads ring.epochs from the beginning up to its current end (read_committed); writes nothing. Exit 2 "
          + "when the cluster has no epoch."
    })
public final class EpochsCommand implements Callable<Integer> {
  @Spec private CommandSpec spec;

  @Mixin private ClusterOption cluster;

  @Mixin private KafkaOptions kafka;

  @Mixin private JsonOption json;

  @Override
  public Integer call() {
    String clusterId = cluster.id();
    ClusterView view = kafka.view(clusterId, EnumSet.of(Part.EPOCHS), 0, spec.commandLine().getErr());
    PrintWriter out = spec.commandLine().getOut();
    if (json.on()) {
      JsonOutput.print(out, Reports.epochsJson(clusterId, view.history()));
    } else {
      Reports.epochsText(clusterId, view.history()).forEach(out::println);
      out.flush();
    }
    return 0;
  }
}
