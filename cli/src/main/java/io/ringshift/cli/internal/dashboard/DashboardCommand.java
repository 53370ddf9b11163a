package io.ringshift.cli.internal.dashboard;

import io.ringshift.cli.BadInputException;
import io.ringshift.cli.KafkaUnavailableException;
import io.ringshift.cli.internal.LongRunningCommand;
import io.ringshift.cli.internal.NodeAddresses;
import io.ringshift.cli.internal.RunUntilStopped;
import io.ringshift.cli.internal.control.ClusterOption;
import io.ringshift.cli.internal.control.KafkaOptions;
import io.ringshift.dashboard.Dashboard;
import io.ringshift.dashboard.DashboardConfig;
import io.ringshift.orchestrator.admin.AdminException;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** {@code ringshift dashboard}: the live web dashboard of a control plane (docs/operations.md, "The dashboard"). */
@Command(
    name = "dashboard",
    mixinStandardHelpOptions = true,
    sortOptions = false,
    description = {
      "Serves a live web dashboard of a control plane on http://--bind:--port/ until Ctrl-C: the published ring "
          + "drawn as a circle of token ranges coloured by node and zone (the epoch in flight inside it, what it moves "
          + "marked), the epochs as a timeline with their causes and outcomes, the epoch in flight with its tasks by "
          + "state, progress, rate, ETA and why tasks wait, and the latest rejected requests. With --nodes it also "
          + "shows each node's health, keys, fences and the ring epoch it routes by. The page updates as the topics "
          + "change (server-sent events); its script and style come from this jar, nothing from the network. It "
          + "reads the topics and the nodes' /health and changes nothing."
    })
public final class DashboardCommand extends LongRunningCommand implements Callable<Integer> {
  @Spec private CommandSpec spec;

  @Mixin private KafkaOptions kafka;

  @Mixin private ClusterOption cluster;

  @Option(names = "--port", paramLabel = "PORT", defaultValue = "" + DashboardConfig.DEFAULT_PORT,
      description = "The page's port (default: ${DEFAULT-VALUE}; 0 picks a free one).")
  private int port;

  @Option(names = "--bind", paramLabel = "HOST", defaultValue = "127.0.0.1",
      description = "Where the page listens (default: ${DEFAULT-VALUE}; the page has no authentication: put it "
          + "behind your proxy before you bind it elsewhere).")
  private String bind;

  @Option(names = "--nodes", paramLabel = "FILE",
      description = "The storage nodes' client ports, one 'node-id host:port' per line ('ringshift dev' writes "
          + "client-ports.txt): their /health is read every 2 s.")
  private Path nodesFile;

  @Option(names = "--node", paramLabel = "ID=HOST:PORT",
      description = "A storage node's client port; repeat the option for more (adds to --nodes).")
  private List<String> nodes = new ArrayList<>();

  public DashboardCommand() {}

  DashboardCommand(CountDownLatch stopRequested, boolean onSignals) {
    super(stopRequested, onSignals);
  }

  @Override
  public Integer call() throws InterruptedException {
    Map<String, String> addresses = new TreeMap<>();
    if (nodesFile != null || !nodes.isEmpty()) {
      NodeAddresses.read(nodesFile, nodes, "no storage node given").nodes()
          .forEach((id, address) -> addresses.put(id, address.toString()));
    }
    DashboardConfig config;
    try {
      config = DashboardConfig.of(kafka.bootstrap()).withKafka(kafka.kafkaProperties()).withTopics(kafka.topics())
          .withCluster(cluster.id()).withBind(bind, port).withNodes(addresses);
    } catch (IllegalArgumentException e) {
      throw new BadInputException(e.getMessage(), e);
    }
    Dashboard dashboard;
    try {
      dashboard = Dashboard.start(config);
    } catch (IllegalArgumentException e) {
      throw new BadInputException(e.getMessage(), e);
    } catch (AdminException e) {
      if (e.retriable()) {
        throw new KafkaUnavailableException(e.getMessage(), e);
      }
      throw new BadInputException(e.getMessage(), e);
    }
    PrintWriter out = spec.commandLine().getOut();
    RunUntilStopped run = runUntilStopped("dashboard", dashboard::close);
    out.println("ringshift dashboard: " + dashboard.url() + " shows cluster " + config.cluster() + " of Kafka at "
        + config.bootstrap() + (addresses.isEmpty() ? "" : " and the health of " + addresses.size() + " nodes")
        + ". Ctrl-C stops it.");
    out.flush();
    run.await();
    return 0;
  }
}
