package io.ringshift.cli.internal.control;

import io.ringshift.cli.internal.JsonOption;
import io.ringshift.orchestrator.admin.AdminException;
import io.ringshift.orchestrator.admin.PlanPreview;
import io.ringshift.orchestrator.admin.ClusterView;
import io.ringshift.cli.BadInputException;
import io.ringshift.cli.internal.JsonOutput;
import io.ringshift.orchestrator.admin.ControlPlaneAdmin.Part;
import io.ringshift.ring.RingException;
import io.ringshift.cli.internal.Durations;
import io.ringshift.cli.internal.NodeAddresses;
import io.ringshift.storage.AdminSecret;
import io.ringshift.worker.NodeDirectory;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
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

  @Option(names = "--nodes", paramLabel = "FILE", description = "The nodes' admin listeners (lines `node-id "
      + "host:port`, as for the worker): each COPY and REPAIR task's range is measured on its source (a range digest: "
      + "one read of the range on the node, only the digest on the network) for the cost report.")
  private Path nodesFile;

  @Option(names = "--node", paramLabel = "ID=HOST:PORT", description = "A node's admin listener, added to --nodes; "
      + "repeatable.")
  private List<String> nodes = new ArrayList<>();

  @Option(names = "--node-secret-file", paramLabel = "FILE",
      description = "The nodes' admin secret file, required with --nodes or --node.")
  private Path nodeSecretFile;

  @Option(names = "--node-timeout", paramLabel = "DURATION", defaultValue = "30s",
      description = "How long one range measurement may take (default: ${DEFAULT-VALUE}).")
  private String nodeTimeout;

  @Option(names = "--rate", paramLabel = "SIZE", defaultValue = "0", converter = ByteSizeConverter.class,
      description = "The workers' total copy rate (the sum of their --bytes-per-second, for example 200MiB), for the "
          + "ETA; the ETA takes the slower of it and the rate the last epoch's copies were measured at.")
  private long rate;

  @Override
  public Integer call() {
    ChangeSpec change = new ChangeSpec(ChangeSpec.action(action), node, zone, weight);
    String clusterId = cluster.id();
    if (limit < 0) {
      throw new BadInputException("--limit was " + limit + "; it must be >= 0");
    }
    NodeDirectory directory = null;
    AdminSecret secret = null;
    Duration timeout = Durations.parse("--node-timeout", nodeTimeout);
    if (nodesFile != null || !nodes.isEmpty()) {
      directory = NodeAddresses.read(nodesFile, nodes, "no storage node given");
      if (nodeSecretFile == null) {
        throw new BadInputException("--nodes and --node need --node-secret-file: the nodes' admin listeners answer "
            + "only calls that carry their admin secret");
      }
      try {
        secret = AdminSecret.read(nodeSecretFile);
      } catch (IllegalArgumentException e) {
        throw new BadInputException("--node-secret-file: " + e.getMessage(), e);
      }
    } else if (nodeSecretFile != null) {
      throw new BadInputException("--node-secret-file applies with --nodes or --node only");
    }
    KafkaOptions.Read read = kafka.read(EnumSet.of(Part.EPOCHS, Part.TASKS, Part.TASK_STATUS, Part.PARTICIPANTS),
        spec.commandLine().getErr());
    ClusterView view = KafkaOptions.view(clusterId, read, 0);
    PlanReport report;
    PlanPreview preview;
    try {
      preview = PlanPreview.of(change.toChange(), view, clusterBytes);
    } catch (AdminException | RingException e) {
      throw new BadInputException("the orchestrator would reject " + change.describe() + ": " + e.getMessage(), e);
    }
    Set<String> unreachable = java.util.concurrent.ConcurrentHashMap.newKeySet();
    Map<String, Long> measured = PlanCost.measure(preview.plan().tasks(), directory, secret, timeout, unreachable);
    double[] copyRate = PlanCost.measuredRate(read.contents(), clusterId);
    Set<String> dead = new java.util.HashSet<>(PlanPreview.deadNodes(view.history(), preview.base().epoch()));
    if (change.action() == io.ringshift.schemas.avro.MembershipAction.FAIL) {
      dead.add(change.nodeId());
    }
    PlanCost cost = new PlanCost(measured, unreachable, copyRate == null ? -1 : copyRate[0],
        copyRate == null ? -1 : (long) copyRate[1], rate, PlanCost.risk(preview, dead));
    // The publisher's rule for this change, on the participants read now (docs/protocol.md, "Fallback").
    io.ringshift.protocol.Participants participants =
        io.ringshift.protocol.Participants.of(clusterId, read.contents().participants());
    String fenceReason = io.ringshift.protocol.Cutover.fenceReason(change.action(), preview.plan().tasks().size(),
        view.published(), participants, System.currentTimeMillis()).orElse(null);
    report = new PlanReport(change, preview, cost, fenceReason);
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
