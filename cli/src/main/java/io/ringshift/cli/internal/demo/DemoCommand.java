package io.ringshift.cli.internal.demo;

import io.ringshift.cli.BadInputException;
import io.ringshift.cli.internal.Durations;
import io.ringshift.cli.internal.LongRunningCommand;
import io.ringshift.cli.internal.ReportFiles;
import io.ringshift.cli.internal.RunUntilStopped;
import io.ringshift.cli.internal.control.ByteSizeConverter;
import io.ringshift.cli.internal.dashboard.PlaneDashboard;
import io.ringshift.dashboard.Dashboard;
import io.ringshift.demo.Demo;
import io.ringshift.demo.DemoException;
import io.ringshift.demo.DemoResult;
import io.ringshift.demo.DemoSettings;
import io.ringshift.localplane.LocalControlPlane;
import io.ringshift.localplane.LocalPlaneException;
import io.ringshift.ring.PlacementPolicy;
import io.ringshift.ring.RingException;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code ringshift demo}: the README's first command (docs/operations.md, "The demo"). Every option has a default;
 * each is checked before anything starts. Exit code 0 when every check of the run passed, 3 when one failed (the
 * summary names it), 1 when the run could not finish (a step did not happen in time), 2 for bad input.
 */
@Command(
    name = "demo",
    mixinStandardHelpOptions = true,
    sortOptions = false,
    description = {
      "Runs the whole control plane in this process and shows it at work: an embedded Kafka broker (KRaft), the "
          + "orchestrator, the snapshot publisher, two migration workers and storage nodes in three zones (each role "
          + "talking to the others only through Kafka and the nodes' HTTP API), a load of keys, and an application "
          + "writing and reading through RingClient at a steady rate throughout. Then a scale-out, a join made by "
          + "mistake and cancelled mid-copy, a drain, a weight change, and a confirmed failure with its repair, each "
          + "followed live (bytes copied of the estimate, rate, ETA, throttle, tasks by state, why tasks wait).",
      "At the end it reads back every acknowledged write from every replica of the final ring, runs the audit, and "
          + "prints per change the bytes moved against the ideal, the time per phase, the write-unavailability "
          + "window at its fences and the client's swap delay, then the lost writes, stale reads and reads from "
          + "filling replicas (each must be 0). Exit code 0 when every check passes, 3 when one fails, 1 when the run "
          + "could not finish. The roles' warnings go to a log file it names, not to the terminal.",
      "Everything lives in temporary directories, deleted on exit."
    })
public final class DemoCommand extends LongRunningCommand implements Callable<Integer> {
  /** Exit code when the run finished and a check failed. */
  public static final int EXIT_CHECK_FAILED = 3;

  @Spec private CommandSpec spec;

  @Option(names = "--nodes", paramLabel = "N", defaultValue = "12",
      description = "Storage nodes of the first ring, in zones az-1..az-3 in turn, plus two spares to join; "
          + DemoSettings.MIN_NODES + ".." + DemoSettings.MAX_NODES + " (default: ${DEFAULT-VALUE}).")
  private int nodes;

  @Option(names = "--keys", paramLabel = "N", defaultValue = "200000",
      description = "Keys loaded before the first change (log-normal value sizes, median 256 B), then written and "
          + "read (default: ${DEFAULT-VALUE}).")
  private int keys;

  @Option(names = "--rate", paramLabel = "OPS", defaultValue = "2000",
      description = "The application's operations per second, half writes and half reads (default: "
          + "${DEFAULT-VALUE}).")
  private int rate;

  @Option(names = "--throttle", paramLabel = "RATE", defaultValue = "50MiB", converter = ByteSizeConverter.class,
      description = "Each worker's copy rate per second, for example 20MiB; 0 for unlimited (default: "
          + "${DEFAULT-VALUE}).")
  private long throttle;

  @Option(names = "--seed", paramLabel = "N",
      description = "Seed of the nodes drained, reweighted and failed, and of the keys and values (default: random; "
          + "the run prints it).")
  private Long seed;

  @Option(names = "--vnodes", paramLabel = "V", defaultValue = "32",
      description = "Tokens per unit of weight (default: ${DEFAULT-VALUE}).")
  private int vnodes;

  @Option(names = "--policy", paramLabel = "POLICY", defaultValue = "hashed",
      description = "Placement policy of the demo cluster: hashed (tokens derived from node ids) or balanced (tokens "
          + "chosen by the balanced allocator, docs/placement.md section 12) (default: ${DEFAULT-VALUE}).")
  private String policyName;

  @Option(names = "--workers", paramLabel = "N", defaultValue = "2",
      description = "Migration workers sharing the tasks (default: ${DEFAULT-VALUE}).")
  private int workers;

  @Option(names = "--grace", paramLabel = "DURATION", defaultValue = "5s",
      description = "How long old replicas keep moved ranges after publication before cleanup deletes them; the "
          + "run waits for every cleanup (default: ${DEFAULT-VALUE}).")
  private String grace;

  @Option(names = "--report", paramLabel = "FILE.html",
      description = "Also write a self-contained HTML report: a timeline of the epochs with the application's write "
          + "latency and refusals over time, and the bytes each change moved against the ideal.")
  private String report;

  @Option(names = "--dashboard-port", paramLabel = "PORT", defaultValue = "" + DemoSettings.DEFAULT_DASHBOARD_PORT,
      description = "The live dashboard's port on 127.0.0.1 (default: ${DEFAULT-VALUE}, or a free port when it is "
          + "in use; 0 picks a free one; -1 runs none).")
  private int dashboardPort;

  @Option(names = "--keep",
      description = "Leave the plane running after the summary (for the dashboard and the other commands), until "
          + "Ctrl-C.")
  private boolean keep;

  public DemoCommand() {}

  private static void close(Dashboard dashboard, Demo demo) {
    try {
      if (dashboard != null) {
        dashboard.close();
      }
    } finally {
      demo.close();
    }
  }

  private static PlacementPolicy policyOf(String name) {
    try {
      return PlacementPolicy.parse(name);
    } catch (RingException e) {
      throw new IllegalArgumentException("--policy: " + e.getMessage(), e);
    }
  }

  /** Runs until {@code stopRequested} opens after the summary, with {@code --keep} (tests in-process). */
  public DemoCommand(CountDownLatch stopRequested, boolean trapSignals) {
    super(stopRequested, trapSignals);
  }

  @Override
  public Integer call() throws Exception {
    DemoSettings settings;
    try {
      settings = DemoSettings.defaults().withNodes(nodes).withKeys(keys).withRate(rate).withThrottle(throttle)
          .withVnodes(vnodes).withWorkers(workers).withGrace(Durations.parse("--grace", grace)).withKeep(keep)
          .withDashboardPort(dashboardPort).withPolicy(policyOf(policyName));
      if (seed != null) {
        settings = settings.withSeed(seed);
      }
    } catch (IllegalArgumentException e) {
      throw new BadInputException(e.getMessage(), e);
    }
    Path reportPath = report == null ? null : ReportFiles.check("--report", report);
    settings = settings.withReport(reportPath);
    PrintWriter out = spec.commandLine().getOut();
    PrintWriter err = spec.commandLine().getErr();
    String logFile = System.getProperty("org.slf4j.simpleLogger.logFile");
    if (logFile != null && !logFile.startsWith("System.")) {
      out.println("the roles' warnings and errors go to " + logFile);
    }
    Demo demo;
    try {
      demo = Demo.start(settings, out, System.console() != null);
    } catch (LocalPlaneException e) {
      err.println("ringshift: demo: " + e.getMessage());
      err.flush();
      return 1;
    }
    Dashboard dashboard;
    try {
      dashboard = PlaneDashboard.start(demo.plane(), Demo.CLUSTER, settings.dashboardPort(), demo::clientEpochs,
          out);
    } catch (RuntimeException e) {
      demo.close();
      throw e;
    }
    DemoResult result;
    try {
      result = demo.run();
    } catch (DemoException e) {
      err.println("ringshift: demo: " + e.getMessage());
      err.flush();
      close(dashboard, demo);
      return 1;
    } catch (RuntimeException | InterruptedException e) {
      close(dashboard, demo);
      throw e;
    }
    if (reportPath != null) {
      demo.writeReport(result, reportPath);
      out.println("report written to " + reportPath);
      out.flush();
    }
    int exit = result.passed() ? 0 : EXIT_CHECK_FAILED;
    if (!keep) {
      close(dashboard, demo);
      return exit;
    }
    LocalControlPlane plane = demo.plane();
    RunUntilStopped run = runUntilStopped("demo", () -> close(dashboard, demo));
    out.println("the plane keeps running (--keep): Kafka at " + plane.bootstrapServers() + ", cluster " + Demo.CLUSTER
        + (dashboard == null ? "" : ", dashboard " + dashboard.url()) + "; try `ringshift status --cluster "
        + Demo.CLUSTER + " --bootstrap " + plane.bootstrapServers() + "`. Ctrl-C stops it.");
    out.flush();
    run.await();
    return exit;
  }
}
