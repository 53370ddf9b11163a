package io.ringshift.cli.internal.control;

import io.ringshift.protocol.EpochRecords;
import io.ringshift.cli.BadInputException;
import io.ringshift.cli.internal.JsonOutput;
import io.ringshift.cli.internal.control.ControlPlaneClient.Contents;
import io.ringshift.cli.internal.control.ControlPlaneClient.Part;
import io.ringshift.orchestrator.EpochPlanner;
import io.ringshift.ring.Member;
import io.ringshift.ring.RingBuilder;
import io.ringshift.ring.RingException;
import io.ringshift.ring.RingSnapshot;
import io.ringshift.schemas.avro.EpochRecord;
import io.ringshift.schemas.avro.EpochState;
import io.ringshift.schemas.avro.MembershipAction;
import io.ringshift.schemas.avro.TaskState;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.HashSet;
import java.util.List;
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

  @Option(names = "--cluster", paramLabel = "ID", defaultValue = RingBuilder.DEFAULT_CLUSTER,
      description = "Cluster id (default: ${DEFAULT-VALUE}).")
  private String cluster;

  @Option(names = "--cluster-bytes", paramLabel = "BYTES", defaultValue = "0", converter = ByteSizeConverter.class,
      description = "Logical size of the cluster's data (for example 24TiB), to show bytes; 0 (default) shows "
          + "keyspace fractions.")
  private long clusterBytes;

  @Mixin private KafkaOptions kafka;

  @Option(names = "--json", description = "Print JSON (every task) instead of text.")
  private boolean json;

  @Option(names = "--limit", paramLabel = "N", defaultValue = "20",
      description = "Tasks listed in the text (default: ${DEFAULT-VALUE}; 0 lists all).")
  private int limit;

  @Override
  public Integer call() {
    ChangeSpec change = new ChangeSpec(ChangeSpec.action(action), node, zone, weight);
    String clusterId = Requests.cluster(cluster);
    if (limit < 0) {
      throw new BadInputException("--limit was " + limit + "; it must be >= 0");
    }
    Contents contents;
    String bootstrap;
    try (ControlPlaneClient client = kafka.connect()) {
      contents = client.read(EnumSet.of(Part.EPOCHS, Part.TASKS, Part.TASK_STATUS));
      bootstrap = client.bootstrap();
    }
    Requests.warnUnreadable(contents.unreadable(), spec.commandLine().getErr());
    ClusterView view = ClusterView.of(clusterId, contents.epochs(), contents.tasks(), contents.statuses(),
        List.of(), 0);
    if (!view.exists()) {
      throw StatusCommand.unknownCluster(clusterId, bootstrap, view);
    }
    PlanReport report;
    try {
      report = plan(change, view, clusterBytes);
    } catch (BadInputException | RingException e) {
      throw new BadInputException("the orchestrator would reject " + change.describe() + ": " + e.getMessage(), e);
    }
    PrintWriter out = spec.commandLine().getOut();
    if (json) {
      JsonOutput.print(out, report.json());
    } else {
      report.text(limit).forEach(out::println);
      out.flush();
    }
    return 0;
  }

  /**
   * Plans {@code change} as the orchestrator's state machine would (docs/orchestrator.md). The base is the
   * orchestrator's active ring: the latest READY epoch that is not a failure epoch. With nothing in flight a change
   * is planned from it at the next epoch. While an epoch is in flight, a change other than FAIL waits and is
   * planned from that epoch's target. A FAIL of a node of the base publishes a failure epoch at once (the base
   * without every node that died since, numbered as the epoch in flight or the next) and plans the rest from the
   * base as the epoch after it; a FAIL of a node only the plan in flight adds re-plans that epoch under its number.
   *
   * @throws BadInputException or {@link RingException} with the reason the orchestrator would give
   */
  static PlanReport plan(ChangeSpec change, ClusterView view, long clusterBytes) {
    EpochRecord baseRecord = view.planningBase();
    if (baseRecord == null) {
      throw new BadInputException("cluster " + view.clusterId() + " has no READY epoch to plan from");
    }
    String clusterId = view.clusterId();
    String node = change.nodeId();
    boolean fail = change.action() == MembershipAction.FAIL;
    RingSnapshot base = EpochRecords.ring(baseRecord);
    EpochRecord inFlight = view.inFlight();
    if (inFlight == null) {
      List<Member> members = change.applyTo(clusterId, base.members());
      if (fail && EpochPlanner.keepsReplicaZones(base, List.of(node))) {
        EpochPlanner.Plan plan = EpochPlanner.plan(base, members, base.epoch() + 2, 0, Set.of(node), clusterBytes);
        return new PlanReport(change, clusterId, base, PlanReport.Basis.FAILURE, null, plan, 0, clusterBytes);
      }
      EpochPlanner.Plan plan = EpochPlanner.plan(base, members, base.epoch() + 1, 0,
          fail ? Set.of(node) : Set.of(), clusterBytes);
      return new PlanReport(change, clusterId, base, PlanReport.Basis.ACTIVE, null, plan, 0, clusterBytes);
    }
    RingSnapshot target = EpochRecords.ring(inFlight);
    if (!fail) {
      List<Member> members = change.applyTo(clusterId, target.members());
      EpochPlanner.Plan plan = EpochPlanner.plan(target, members, target.epoch() + 1, 0, Set.of(), clusterBytes);
      return new PlanReport(change, clusterId, target, PlanReport.Basis.QUEUED, inFlight.getEpoch(), plan, 0,
          clusterBytes);
    }
    Set<String> dead = deadNodes(view.history(), base.epoch());
    if (dead.contains(node)) {
      throw new BadInputException("FAIL of node " + node + ": it already failed");
    }
    if (target.member(node) == null && base.member(node) == null) {
      throw new BadInputException("FAIL of node " + node + ": it is not a member of cluster " + clusterId);
    }
    List<Member> members = new ArrayList<>(target.members());
    members.removeIf(m -> m.id().equals(node));
    dead.add(node);
    long publishedFailures = inFlight.getEpoch() - base.epoch() - 1;
    boolean everyFailurePublished = publishedFailures == failedMembers(base, dead).size() - 1;
    if (base.member(node) != null && everyFailurePublished && EpochPlanner.keepsReplicaZones(base, dead)) {
      EpochPlanner.Plan plan = EpochPlanner.plan(base, members, target.epoch() + 1, 0, dead, clusterBytes);
      return new PlanReport(change, clusterId, base, PlanReport.Basis.FAILURE, inFlight.getEpoch(), plan, 0,
          clusterBytes);
    }
    int planVersion = (inFlight.getPlanVersion() == null ? 0 : inFlight.getPlanVersion()) + 1;
    EpochPlanner.Plan plan = EpochPlanner.plan(base, members, target.epoch(), planVersion, dead, clusterBytes);
    Set<String> verified = new HashSet<>();
    view.tasks().stream().filter(t -> t.state() == TaskState.VERIFIED).forEach(t -> verified.add(t.task().getTaskId()));
    int kept = (int) plan.tasks().stream().filter(t -> verified.contains(t.taskId())).count();
    return new PlanReport(change, clusterId, base, PlanReport.Basis.REPLAN, inFlight.getEpoch(), plan, kept,
        clusterBytes);
  }

  /** The dead nodes that are members of the base ring. */
  private static List<String> failedMembers(RingSnapshot base, java.util.Collection<String> dead) {
    return dead.stream().filter(id -> base.member(id) != null).toList();
  }

  /**
   * The nodes that failed since the base epoch, in the order they failed: the node of every PLANNED record of a later epoch caused by a
   * FAIL (failure epochs, the plans after them and re-plans all name the FAIL that made them).
   */
  static Set<String> deadNodes(List<EpochRecord> history, long baseEpoch) {
    Set<String> dead = new java.util.LinkedHashSet<>();
    for (EpochRecord e : history) {
      if (e.getEpoch() > baseEpoch && e.getState() == EpochState.PLANNED && e.getCause() != null
          && e.getCause().getAction() == MembershipAction.FAIL) {
        dead.add(e.getCause().getNodeId());
      }
    }
    return dead;
  }
}
