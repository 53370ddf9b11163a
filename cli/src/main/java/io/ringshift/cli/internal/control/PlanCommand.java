package io.ringshift.cli.internal.control;

import io.ringshift.cli.internal.JsonOption;
import io.ringshift.orchestrator.admin.AdminException;
import io.ringshift.orchestrator.admin.PlanPreview;
import io.ringshift.orchestrator.admin.ClusterView;
import io.ringshift.cli.BadInputException;
import io.ringshift.cli.internal.JsonOutput;
import io.ringshift.orchestrator.admin.ControlPlaneAdmin.Part;
import io.ringshift.ring.RingException;
import java.io.PrintWriter;
import java.util.EnumSet;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/** {@code ringshift plan ACTION NODE}: the tasks a change would produce, without writing anything. */
@Command(
    name = "plan",
    mixinStandardHelpOptions = true,
    sortOptions = false,
    description = {
      "Shows what a membership change would do, without writing anything: the tasks the orchestrator would "
          + "emit (kind, range, sources, target), their count, the keyspace (or, with --cluster-bytes, the bytes) "
          + "moved per preferred source zone -> target zone, and the fraction of replica data that moves against "
          + "the ideal.",
      "The change is planned as the orchestrator would plan it, with its planner: from the cluster's active epoch "
          + "as recorded on ring.epochs; while an epoch is in flight, from that epoch's target (the change would "
          + "wait for it), except a FAIL, which re-plans the epoch in flight at once. Exit 2 when the orchestrator "
          + "would reject the change, with its reason."
    })
public final class PlanCommand implements Callable<Integer> {
  @Spec private CommandSpec spec;

  @Parameters(index = "0", paramLabel = "ACTION", description = "join, drain, fail or set-weight.")
  private String action;

  @Parameters(index = "1", paramLabel = "NODE", description = "The node's id.")
  private String node;

  @Option(names = "--zone", paramLabel = "ZONE", description = "join: the node's zone (required).")
  private String zone;

  @Option(names = "--weight", paramLabel = "W",
      description = "join: the node's weight (default 1); set-weight: the new weight (required).")
  private Double weight;

  @Mixin private ClusterOption cluster;

  @Option(names = "--cluster-bytes", paramLabel = "BYTES", defaultValue = "0", converter = ByteSizeConverter.class,
      description = "Logical size of the cluster's data (for example 24TiB), to show bytes; 0 (default) shows "
          + "keyspace fractions.")
  private long clusterBytes;

  @Mixin private KafkaOptions kafka;

  @Mixin private JsonOption json;

  @Option(names = "--limit", paramLabel = "N", defaultValue = "20",
      description = "Tasks listed in the text (default: ${DEFAULT-VALUE}; 0 lists all).")
  private int limit;

  @Override
  public Integer call() {
    ChangeSpec change = new ChangeSpec(ChangeSpec.action(action), node, zone, weight);
    String clusterId = cluster.id();
    if (limit < 0) {
      throw new BadInputException("--limit was " + limit + "; it must be >= 0");
    }
    ClusterView view = kafka.view(clusterId, EnumSet.of(Part.EPOCHS, Part.TASKS, Part.TASK_STATUS), 0, spec.commandLine().getErr());
    PlanReport report;
    try {
      report = new PlanReport(change, PlanPreview.of(change.toChange(), view, clusterBytes));
    } catch (AdminException | RingException e) {
      throw new BadInputException("the orchestrator would reject " + change.describe() + ": " + e.getMessage(), e);
    }
    PrintWriter out = spec.commandLine().getOut();
    if (json.on()) {
      JsonOutput.print(out, report.json());
    } else {
      report.text(limit).forEach(out::println);
      out.flush();
    }
    return 0;
  }
}
