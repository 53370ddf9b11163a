package io.ringshift.cli.internal.control;

import io.ringshift.cli.BadInputException;
import io.ringshift.cli.internal.Durations;
import io.ringshift.cli.internal.LongRunningCommand;
import io.ringshift.cli.internal.RunUntilStopped;
import io.ringshift.cli.internal.dashboard.PlaneDashboard;
import io.ringshift.dashboard.Dashboard;
import io.ringshift.localplane.LocalControlPlane;
import io.ringshift.localplane.LocalNodes;
import io.ringshift.localplane.LocalPlaneException;
import io.ringshift.ring.RingBuilder;
import io.ringshift.worker.WorkerConfig;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code ringshift dev}: a local control plane in one JVM, a single-node Kafka broker, the orchestrator and the
 * snapshot publisher, and with {@code --nodes N} also N storage nodes and a migration worker, until Ctrl-C.
 * Stopping closes the worker, the publisher, the orchestrator, the nodes and the broker, in that order
 * ({@link LocalControlPlane#close}).
 *
 * <p>{@code --nodes} defaults to 0, which runs exactly what {@code dev} ran before nodes existed: a newcomer
 * trying the control plane's commands needs no data plane, and nodes take ports (7101 and up) and memory that
 * nobody asked for. The worker copies at unlimited rates: its nodes are in this JVM on loopback, with no serving
 * traffic for a throttle to protect, and a tour should not wait for one.
 */
@Command(
    name = "dev",
    mixinStandardHelpOptions = true,
    sortOptions = false,
    description = {
      "Runs a local control plane in this process: a single-node Kafka broker (KRaft, 127.0.0.1 only, one replica "
          + "of everything: not for production), the orchestrator, which creates the ring.* topics, and the snapshot "
          + "publisher, which checks, signs and publishes every READY epoch to ring.snapshots. Prints the bootstrap "
          + "address and the publisher's public key file, and runs until Ctrl-C, which stops the publisher, the "
          + "orchestrator and then the broker.",
      "With --nodes N it also runs N storage nodes node-01..node-NN (RocksDB, HTTP on 127.0.0.1 from --node-port, "
          + "zones az-1..az-3 in turn) and one migration worker (dev-worker, unlimited copy rates) that copies "
          + "between them, through the nodes' admin listeners (port + 100) with a secret it keeps in admin.secret; it "
          + "writes the worker's nodes file (nodes.txt: the admin listeners), client-ports.txt and a members file for "
          + "'ringshift init' (members.json, all N nodes) and prints the paths and the nodes' addresses. Ctrl-C then stops the worker, the orchestrator, the nodes and the broker, in that "
          + "order.",
      "Without --data-dir everything lives in temporary directories deleted on exit. With --data-dir the broker "
          + "keeps its log in DIR/kafka, the orchestrator its state in DIR/streams, the nodes their stores in "
          + "DIR/nodes/ID and the publisher its key in DIR/publisher.key (made on the first start; clients trust "
          + "DIR/publisher.pub): a restart on the same DIR has the same clusters, epochs, tasks, data and key.",
      "Logs WARN and ERROR of the broker, the orchestrator, the publisher, the nodes and the worker on stderr."
    })
public final class DevCommand extends LongRunningCommand implements Callable<Integer> {

  @Spec private CommandSpec spec;

  @Option(names = "--data-dir", paramLabel = "DIR",
      description = "Keep the broker's data, the orchestrator's state and the nodes' stores here (created if "
          + "absent).")
  private Path dataDir;

  @Option(names = "--port", paramLabel = "PORT", defaultValue = "9092",
      description = "The broker's port on 127.0.0.1 (default: ${DEFAULT-VALUE}; 0 picks a free one).")
  private int port;

  @Option(names = "--cluster-bytes", paramLabel = "BYTES", defaultValue = "0", converter = ByteSizeConverter.class,
      description = "Logical data size the orchestrator assumes per cluster for the tasks' byte estimates, for "
          + "example 24TiB (default 0: estimates are 0).")
  private long clusterBytes;

  @Option(names = "--nodes", paramLabel = "N", defaultValue = "0",
      description = "Also run N storage nodes and a migration worker, 1.." + LocalNodes.MAX_NODES + "; their "
          + "nodes.txt and members.json go to DIR, or to a temporary directory (default: ${DEFAULT-VALUE}, neither).")
  private int nodes;

  @Option(names = "--node-port", paramLabel = "BASE", defaultValue = "7101",
      description = "With --nodes: node-01 listens on BASE on 127.0.0.1, node-02 on BASE+1, and so on (default: "
          + "${DEFAULT-VALUE}; 0 picks free ports).")
  private int nodePort;

  @Option(names = "--grace", paramLabel = "DURATION", defaultValue = "10min",
      description = "With --nodes: how long after its epoch is PUBLISHED the worker's cleanup waits before deleting "
          + "a range from a node that no longer owns it (default: ${DEFAULT-VALUE}, as 'ringshift worker'; ms, s, "
          + "min, h).")
  private String grace;

  // Hidden, as for the other commands: tests sharing a broker (docs/cli.md, "Topic prefix").
  @Option(names = "--topic-prefix", hidden = true, paramLabel = "PREFIX", defaultValue = "",
      description = "Prefix of the ring.* topic names.")
  private String topicPrefix;

  @Option(names = "--spares", paramLabel = "K", defaultValue = "0",
      description = "With --nodes N, also run K spare nodes, numbered after them and left out of members.json, so "
          + "that a join has a node to bring in (default: ${DEFAULT-VALUE}).")
  private int spares;

  @Option(names = "--no-transition-stages",
      description = "Publish every change at the fence, as before transition stages (docs/protocol.md, \"Fallback\"): "
          + "a baseline for what the stages save.")
  private boolean noStages;

  @Option(names = "--dashboard-port", paramLabel = "PORT", defaultValue = "8080",
      description = "The live web dashboard's port on 127.0.0.1 (default: ${DEFAULT-VALUE}, or a free port when it is "
          + "in use; 0 picks a free one; -1 runs none).")
  private int dashboardPort;

  public DevCommand() {}

  /** Runs until {@code stopRequested} opens (tests in other packages start dev in-process). */
  public DevCommand(CountDownLatch stopRequested, boolean trapSignals) {
    super(stopRequested, trapSignals);
  }

  @Override
  public Integer call() throws InterruptedException {
    if (dashboardPort < -1 || dashboardPort > 65_535) {
      throw new BadInputException("--dashboard-port was " + dashboardPort + "; it must be 0 (a free port), 1..65535, "
          + "or -1 for no dashboard");
    }
    if (port < 0 || port > 65_535) {
      throw new BadInputException("--port was " + port + "; it must be 0 (any free port) or 1..65535");
    }
    if (dataDir != null && Files.exists(dataDir) && !Files.isDirectory(dataDir)) {
      throw new BadInputException("--data-dir " + dataDir + " is a file; give a directory (created if absent)");
    }
    LocalControlPlane.Builder settings = LocalControlPlane.builder().port(port).dataDir(dataDir)
        .clusterBytes(clusterBytes).topicPrefix(topicPrefix).transitionStages(!noStages);
    if (nodes != 0 || matched("--node-port") || matched("--grace") || matched("--spares")) {
      settings.nodes(checkNodes(), checkNodePort()).spares(checkSpares()).worker(checkGrace());
    }
    PrintWriter out = spec.commandLine().getOut();
    PrintWriter err = spec.commandLine().getErr();
    LocalControlPlane plane;
    try {
      plane = settings.start();
    } catch (LocalPlaneException e) {
      if (e.reason().badInput()) {
        throw new BadInputException(e.getMessage(), e);
      }
      err.println("ringshift: dev: " + e.getMessage());
      err.flush();
      return 1;
    }
    Dashboard dashboard;
    try {
      dashboard = PlaneDashboard.start(plane, RingBuilder.DEFAULT_CLUSTER, dashboardPort, Map::of, out);
    } catch (RuntimeException e) {
      plane.close();
      throw e;
    }
    RunUntilStopped run = runUntilStopped("dev", () -> {
      if (dashboard != null) {
        dashboard.close();
      }
      plane.close();
      LocalControlPlane.Stopped s = plane.stopped();
      if (plane.nodes().isPresent()) {
        err.printf(Locale.ROOT, "ringshift dev: stopped (worker %d ms, publisher %d ms, orchestrator %d ms, nodes %d "
            + "ms, broker %d ms)%n", s.workerMillis(), s.publisherMillis(), s.orchestratorMillis(), s.nodesMillis(),
            s.brokerMillis());
      } else {
        err.printf(Locale.ROOT, "ringshift dev: stopped (publisher %d ms, orchestrator %d ms, broker %d ms)%n",
            s.publisherMillis(), s.orchestratorMillis(), s.brokerMillis());
      }
      err.flush();
    });
    banner(plane).forEach(out::println);
    out.flush();
    run.await();
    return 0;
  }

  private boolean matched(String option) {
    return spec.commandLine().getParseResult() != null && spec.commandLine().getParseResult().hasMatchedOption(option);
  }

  private int checkNodes() {
    if (nodes < 1 || nodes > LocalNodes.MAX_NODES) {
      throw new BadInputException("--nodes was " + nodes + "; it must be 1.." + LocalNodes.MAX_NODES
          + " (--node-port, --spares and --grace need it)");
    }
    return nodes;
  }

  private int checkSpares() {
    if (spares < 0 || nodes + spares > LocalNodes.MAX_NODES) {
      throw new BadInputException("--spares was " + spares + "; with --nodes " + nodes + " it must be 0.."
          + (LocalNodes.MAX_NODES - nodes) + " (" + LocalNodes.MAX_NODES + " nodes in all at most)");
    }
    return spares;
  }

  private int checkNodePort() {
    // Node i listens on BASE + i - 1 and its admin listener 100 above.
    int count = nodes + Math.max(0, spares);
    int last = nodePort + count - 1 + LocalNodes.ADMIN_PORT_OFFSET;
    if (nodePort < 0 || (nodePort > 0 && last > 65_535)) {
      throw new BadInputException("--node-port was " + nodePort + "; with --nodes " + count + " it must be 0 (free "
          + "ports) or 1.." + (65_536 - count - LocalNodes.ADMIN_PORT_OFFSET) + ", so that the last node's admin "
          + "listener (its port + " + LocalNodes.ADMIN_PORT_OFFSET + ") is at most 65535");
    }
    return nodePort;
  }

  private Duration checkGrace() {
    try {
      return Durations.parse("--grace", grace);
    } catch (IllegalArgumentException e) {
      throw new BadInputException(e.getMessage(), e);
    }
  }

  /** What {@code dev} prints once every part runs. */
  static List<String> banner(LocalControlPlane plane) {
    String b = plane.bootstrapServers();
    List<String> lines = new ArrayList<>();
    Optional<LocalNodes> nodes = plane.nodes();
    lines.add("ringshift dev: Kafka at " + b + ", the orchestrator and the snapshot publisher are running"
        + nodes.map(n -> ", with " + n.nodes().size() + " storage nodes and a migration worker.").orElse("."));
    if (plane.temporary()) {
      lines.add("  data:   temporary, deleted on exit (--data-dir DIR keeps it)");
    } else {
      lines.add("  data:   " + plane.brokerDataDir().orElseThrow() + " (broker), " + plane.stateDir() + " (orchestrator)"
          + nodes.map(n -> ", " + n.dir().resolve("nodes") + " (nodes)").orElse("") + ": kept");
    }
    lines.add("  topics: " + String.join(", ", plane.topics().all().stream().map(t -> t.name()).toList()));
    lines.add("  publisher: signs with key " + plane.publisher().orElseThrow().config().signingKey().id() + " (" + plane.keyFile()
        + "); clients trust " + plane.publicKeyFile());
    if (nodes.isEmpty()) {
      String cmd = launcher();
      lines.add("Try, in another terminal:");
      lines.add("  " + cmd + " init --members members.json --bootstrap " + b + " --wait");
      lines.add("  " + cmd + " join node-100 --zone az-1 --bootstrap " + b + "   # planned; no nodes here copy it (dev --nodes N runs them)");
      lines.add("  " + cmd + " status --bootstrap " + b);
      lines.add("Ctrl-C stops it.");
      return lines;
    }
    LocalNodes n = nodes.get();
    List<LocalNodes.Node> spareNodes = n.spares();
    for (LocalNodes.Node node : n.nodes()) {
      lines.add("  node:   " + node.id() + " (" + node.zone() + ") at " + node.hostPort() + ", admin listener "
          + node.adminHostPort() + (spareNodes.contains(node) ? " (spare: not in members.json)" : ""));
    }
    WorkerConfig worker = plane.worker().orElseThrow().config();
    lines.add("  worker: " + worker.workerId() + ", unlimited copy rates, cleanup grace " + shortDuration(worker.grace())
        + ", nodes file " + n.nodesFile() + ", admin secret " + n.secretFile());
    int count = n.nodes().size() - spareNodes.size();
    String replicas = count < RingBuilder.DEFAULT_REPLICAS ? " --replicas " + count : "";
    String cmd = launcher();
    lines.add("Try, in another terminal:");
    lines.add("  " + cmd + " init --members " + n.membersFile() + replicas + " --bootstrap " + b + " --wait");
    if (!spareNodes.isEmpty()) {
      LocalNodes.Node spare = spareNodes.get(0);
      lines.add("  " + cmd + " join " + spare.id() + " --zone " + spare.zone() + " --bootstrap " + b + " --wait");
    }
    if (count > RingBuilder.DEFAULT_REPLICAS) {
      LocalNodes.Node last = n.nodes().get(count - 1);
      lines.add("  " + cmd + " drain " + last.id() + " --bootstrap " + b + " --wait");
    }
    lines.add("  " + cmd + " status --bootstrap " + b);
    lines.add("Ctrl-C stops it.");
    return lines;
  }

  /**
   * How to run the CLI in the printed commands: {@code ringshift} when a {@code ringshift} is on the PATH, else
   * {@code ./ringshift}, the launcher at the repository root.
   */
  static String launcher() {
    String path = System.getenv("PATH");
    if (path != null) {
      for (String dir : path.split(java.io.File.pathSeparator)) {
        if (!dir.isEmpty() && Files.isExecutable(Path.of(dir, "ringshift"))) {
          return "ringshift";
        }
      }
    }
    return "./ringshift";
  }

  /** {@code 10min}, {@code 30s}, {@code 2h}, {@code 500ms}: as {@code --grace} takes it. */
  static String shortDuration(Duration d) {
    long ms = d.toMillis();
    if (ms != 0 && ms % 3_600_000 == 0) {
      return ms / 3_600_000 + "h";
    }
    if (ms != 0 && ms % 60_000 == 0) {
      return ms / 60_000 + "min";
    }
    if (ms % 1_000 == 0) {
      return ms / 1_000 + "s";
    }
    return ms + "ms";
  }
}
