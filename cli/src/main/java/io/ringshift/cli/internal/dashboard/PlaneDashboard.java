package io.ringshift.cli.internal.dashboard;

import io.ringshift.dashboard.Dashboard;
import io.ringshift.dashboard.DashboardConfig;
import io.ringshift.localplane.LocalControlPlane;
import io.ringshift.worker.Limits;
import io.ringshift.worker.MigrationWorker;
import java.io.PrintWriter;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.Supplier;

/**
 * The dashboard of a local plane ({@code ringshift dev}, {@code ringshift demo}): its topics, its nodes' client ports,
 * its workers' throttles and caps, and the clients the command knows of. A port in use is no reason to stop a tour:
 * the dashboard then takes a free port, and says so.
 */
public final class PlaneDashboard {
  private PlaneDashboard() {}

  /**
   * Starts the dashboard of {@code plane}'s cluster {@code cluster} on {@code port} (0: a free one; -1: none) and
   * prints its URL; null when none runs.
   */
  public static Dashboard start(LocalControlPlane plane, String cluster, int port,
      Supplier<Map<String, Long>> clients, PrintWriter out) {
    if (port < 0) {
      return null;
    }
    Map<String, String> clientPorts = new LinkedHashMap<>();
    plane.nodes().ifPresent(nodes -> nodes.nodes().forEach(n -> clientPorts.put(n.id(), n.hostPort())));
    DashboardConfig config = DashboardConfig.of(plane.bootstrapServers()).withTopics(plane.topics())
        .withCluster(cluster).withBind("127.0.0.1", port).withNodes(clientPorts)
        .withWorkers(() -> plane.workers().stream().map(PlaneDashboard::limits).toList()).withClients(clients);
    Dashboard dashboard;
    String note = "";
    try {
      dashboard = Dashboard.start(config);
    } catch (IllegalArgumentException e) {
      dashboard = Dashboard.start(config.withBind("127.0.0.1", 0));
      note = " (port " + port + " was in use)";
    }
    out.println("dashboard: " + dashboard.url() + note);
    out.flush();
    return dashboard;
  }

  static DashboardConfig.WorkerLimits limits(MigrationWorker worker) {
    Limits l = worker.limits();
    return new DashboardConfig.WorkerLimits(worker.config().workerId(), l.bytesPerSecond(),
        l.perSourceBytesPerSecond(), l.maxTasks(), l.maxTasksPerSource(), l.maxTasksPerTarget(),
        worker.activeTasks());
  }
}
