package io.ringshift.cli.internal.control;

import io.ringshift.cli.BadInputException;
import io.ringshift.devkit.EmbeddedKafkaException;
import io.ringshift.orchestrator.OrchestratorConfig;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.LoggerFactory;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code ringshift dev}: a local control plane in one JVM, a single-node Kafka broker and the orchestrator,
 * until Ctrl-C. Stopping closes the orchestrator first, then the broker ({@link DevControlPlane#close}).
 */
@Command(
    name = "dev",
    mixinStandardHelpOptions = true,
    sortOptions = false,
    description = {
      "Runs a local control plane in this process: a single-node Kafka broker (KRaft, 127.0.0.1 only, one replica "
          + "of everything: not for production) and the orchestrator, which creates the ring.* topics. Prints the "
          + "bootstrap address and runs until Ctrl-C, which stops the orchestrator and then the broker.",
      "Without --data-dir everything lives in temporary directories deleted on exit. With --data-dir the broker "
          + "keeps its log in DIR/kafka and the orchestrator its state in DIR/streams: a restart on the same DIR "
          + "has the same clusters, epochs and tasks.",
      "Logs WARN and ERROR of the broker and the orchestrator on stderr."
    })
public final class DevCommand implements Callable<Integer> {
  private final CountDownLatch stopRequested;
  private final boolean trapSignals;

  @Spec private CommandSpec spec;

  @Option(names = "--data-dir", paramLabel = "DIR",
      description = "Keep the broker's data and the orchestrator's state here (created if absent).")
  private Path dataDir;

  @Option(names = "--port", paramLabel = "PORT", defaultValue = "9092",
      description = "The broker's port on 127.0.0.1 (default: ${DEFAULT-VALUE}; 0 picks a free one).")
  private int port;

  @Option(names = "--cluster-bytes", paramLabel = "BYTES", defaultValue = "0", converter = ByteSizeConverter.class,
      description = "Logical data size the orchestrator assumes per cluster for the tasks' byte estimates, for "
          + "example 24TiB (default 0: estimates are 0).")
  private long clusterBytes;

  // Hidden, as for the other commands: tests sharing a broker (docs/cli.md, "Topic prefix").
  @Option(names = "--topic-prefix", hidden = true, paramLabel = "PREFIX", defaultValue = "",
      description = "Prefix of the ring.* topic names.")
  private String topicPrefix;

  /** Runs until SIGINT or SIGTERM. */
  public DevCommand() {
    this(new CountDownLatch(1), true);
  }

  /** Runs until {@code stopRequested} opens, or a signal when {@code trapSignals} (tests stop it directly). */
  DevCommand(CountDownLatch stopRequested, boolean trapSignals) {
    this.stopRequested = stopRequested;
    this.trapSignals = trapSignals;
  }

  @Override
  public Integer call() throws InterruptedException {
    if (port < 0 || port > 65_535) {
      throw new BadInputException("--port was " + port + "; it must be 0 (any free port) or 1..65535");
    }
    if (dataDir != null && Files.exists(dataDir) && !Files.isDirectory(dataDir)) {
      throw new BadInputException("--data-dir " + dataDir + " is a file; give a directory (created if absent)");
    }
    DevControlPlane.Settings settings = new DevControlPlane.Settings(port, dataDir, clusterBytes, topicPrefix,
        OrchestratorConfig.DEFAULT_APPLICATION_ID, Duration.ofSeconds(60));
    PrintWriter out = spec.commandLine().getOut();
    PrintWriter err = spec.commandLine().getErr();
    DevControlPlane plane;
    try {
      plane = DevControlPlane.start(settings);
    } catch (EmbeddedKafkaException e) {
      if (e.reason() == EmbeddedKafkaException.Reason.PORT_IN_USE
          || e.reason() == EmbeddedKafkaException.Reason.INVALID_DATA_DIR) {
        throw new BadInputException(e.getMessage(), e);
      }
      err.println("ringshift: dev: the broker did not start: " + e.getMessage());
      err.flush();
      return 1;
    } catch (IllegalStateException e) {
      err.println("ringshift: dev: the orchestrator did not start: " + e.getMessage());
      err.flush();
      return 1;
    }
    AtomicBoolean reported = new AtomicBoolean();
    Runnable stop = () -> {
      plane.close();
      if (reported.compareAndSet(false, true)) {
        DevControlPlane.Stopped s = plane.stopped();
        err.printf(Locale.ROOT, "ringshift dev: stopped (orchestrator %d ms, broker %d ms)%n",
            s.orchestratorMillis(), s.brokerMillis());
        err.flush();
      }
    };
    // The fallback for every other way the JVM exits (SIGHUP, a second Ctrl-C, no signal trap): stop in order
    // from a hook. It races with the broker's own hook, which the signal trap avoids (see SignalTrap).
    Thread hook = new Thread(() -> {
      try {
        stop.run();
      } finally {
        stopRequested.countDown();
      }
    }, "ringshift-dev-shutdown");
    Runtime.getRuntime().addShutdownHook(hook);
    if (trapSignals) {
      SignalTrap.install(stopRequested::countDown);
    }
    banner(plane).forEach(out::println);
    out.flush();
    stopRequested.await();
    stop.run();
    try {
      Runtime.getRuntime().removeShutdownHook(hook);
    } catch (IllegalStateException e) {
      // The JVM is already exiting (the hook woke us): it runs the hook, which finds everything stopped.
      LoggerFactory.getLogger(DevCommand.class).debug("JVM exiting; the shutdown hook has stopped dev", e);
    }
    return 0;
  }

  /** What {@code dev} prints once both parts run. */
  static List<String> banner(DevControlPlane plane) {
    String b = plane.bootstrapServers();
    List<String> lines = new ArrayList<>();
    lines.add("ringshift dev: Kafka at " + b + " and the orchestrator are running.");
    if (plane.temporary()) {
      lines.add("  data:   temporary, deleted on exit (--data-dir DIR keeps it)");
    } else {
      lines.add("  data:   " + plane.brokerDataDir() + " (broker), " + plane.stateDir() + " (orchestrator): kept");
    }
    lines.add("  topics: " + String.join(", ", plane.topics().all().stream().map(t -> t.name()).toList()));
    lines.add("Try, in another terminal:");
    lines.add("  ringshift init --members members.json --bootstrap " + b + " --wait");
    lines.add("  ringshift join node-100 --zone az-1 --bootstrap " + b + " --wait");
    lines.add("  ringshift status --bootstrap " + b);
    lines.add("Ctrl-C stops it.");
    return lines;
  }
}
