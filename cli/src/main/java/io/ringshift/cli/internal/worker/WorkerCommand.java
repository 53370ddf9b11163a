package io.ringshift.cli.internal.worker;

import io.ringshift.ring.ByteUnits;
import io.ringshift.cli.BadInputException;
import io.ringshift.cli.KafkaUnavailableException;
import io.ringshift.cli.internal.Durations;
import io.ringshift.cli.internal.LongRunningCommand;
import io.ringshift.cli.internal.MetricsEndpoint;
import io.ringshift.cli.internal.MetricsOptions;
import io.ringshift.cli.internal.NodeAddresses;
import io.ringshift.cli.internal.RunUntilStopped;
import io.ringshift.cli.internal.TrustedKeyFiles;
import io.ringshift.cli.internal.control.ByteSizeConverter;
import io.ringshift.cli.internal.control.KafkaOptions;
import io.ringshift.storage.AdminSecret;
import io.ringshift.worker.Limits;
import io.ringshift.worker.LimitsFile;
import io.ringshift.worker.MigrationWorker;
import io.ringshift.worker.NodeDirectory;
import io.ringshift.worker.TaskTuning;
import io.ringshift.worker.WorkerConfig;
import java.io.PrintWriter;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code ringshift worker}: runs a migration worker (docs/worker.md) until SIGINT or SIGTERM, which stop its tasks
 * at their next checkpoint boundary, write their last checkpoints and leave the consumer group.
 */
@Command(
    name = "worker",
    mixinStandardHelpOptions = true,
    sortOptions = false,
    description = {
      "Runs a migration worker: takes range-copy, repair and cleanup tasks from ring.tasks (a consumer group; run "
          + "more workers to share the work), copies ranges between the storage nodes over their HTTP API, "
          + "throttled, and reports progress on ring.task-status. Runs until Ctrl-C or SIGTERM, which write each "
          + "task's last checkpoint: a worker started again resumes them.",
      "Give the nodes with --nodes FILE (lines 'node-id host:port') and/or --node ID=HOST:PORT. Sizes take binary "
          + "units (40MiB); durations take ms, s, min or h (10min, 30s). A rate of 0 is unlimited."
    })
public final class WorkerCommand extends LongRunningCommand implements Callable<Integer> {
  private LimitsFile limitsFile;

  @Spec private CommandSpec spec;

  @Mixin private KafkaOptions kafka;

  @Mixin private MetricsOptions metricsOptions;

  @Option(names = "--nodes", paramLabel = "FILE",
      description = "The storage nodes' admin listeners: one 'node-id host:port' per line ('#' starts a comment).")
  private Path nodesFile;

  @Option(names = "--node", paramLabel = "ID=HOST:PORT",
      description = "A storage node's admin listener; repeat the option for more (adds to --nodes).")
  private List<String> nodes = new ArrayList<>();

  @Option(names = "--node-secret-file", paramLabel = "FILE",
      description = "The file holding the nodes' admin secret (their --admin-secret-file), sent with every call to "
          + "their admin listeners. Required.")
  private Path nodeSecretFile;

  @Option(names = "--worker-id", paramLabel = "ID",
      description = "This worker's id, unique among running workers and stable across restarts: a worker restarted "
          + "with the same id takes its tasks back at once (default: worker-<host name>).")
  private String workerId;

  @Option(names = "--group-id", paramLabel = "GROUP", defaultValue = WorkerConfig.DEFAULT_GROUP_ID,
      description = "The consumer group of the workers sharing ring.tasks (default: ${DEFAULT-VALUE}).")
  private String groupId;

  @Option(names = "--bytes-per-second", paramLabel = "SIZE", defaultValue = "100MiB",
      converter = ByteSizeConverter.class,
      description = "The worker's total copy rate (default: ${DEFAULT-VALUE}; 0: unlimited).")
  private long bytesPerSecond;

  @Option(names = "--per-source-bytes-per-second", paramLabel = "SIZE", defaultValue = "40MiB",
      converter = ByteSizeConverter.class,
      description = "The rate at which this worker reads from any one source node (default: ${DEFAULT-VALUE}; 0: "
          + "unlimited).")
  private long perSourceBytesPerSecond;

  @Option(names = "--max-tasks", paramLabel = "N", defaultValue = "8",
      description = "Tasks copying or catching up at once (default: ${DEFAULT-VALUE}).")
  private int maxTasks;

  @Option(names = "--max-tasks-per-source", paramLabel = "N", defaultValue = "2",
      description = "Of those, tasks reading from one source node (default: ${DEFAULT-VALUE}).")
  private int maxTasksPerSource;

  @Option(names = "--max-tasks-per-target", paramLabel = "N", defaultValue = "2",
      description = "Of those, tasks writing to one target node (default: ${DEFAULT-VALUE}).")
  private int maxTasksPerTarget;

  @Option(names = "--limits-file", paramLabel = "FILE",
      description = "Rates and caps to change while the worker runs: a properties file with any of the keys "
          + "bytes-per-second, per-source-bytes-per-second, max-tasks, max-tasks-per-source, max-tasks-per-target "
          + "(a key left out keeps the option's value). Read at start and checked once a second; a changed file "
          + "applies at once, a bad one is refused with a message and the limits in force stay.")
  private Path limitsPath;

  @Option(names = "--grace", paramLabel = "DURATION", defaultValue = "10min",
      description = "How long after its epoch is PUBLISHED a cleanup waits before deleting (default: "
          + "${DEFAULT-VALUE}).")
  private String grace;

  @Option(names = "--checkpoint-bytes", paramLabel = "SIZE", defaultValue = "4MiB",
      converter = ByteSizeConverter.class,
      description = "A copying task checkpoints at least every SIZE copied (default: ${DEFAULT-VALUE}) ...")
  private long checkpointBytes;

  @Option(names = "--checkpoint-interval", paramLabel = "DURATION", defaultValue = "2s",
      description = "... and at least this often (default: ${DEFAULT-VALUE}).")
  private String checkpointInterval;

  @Option(names = "--trusted-key", paramLabel = "FILE",
      description = "A publisher public key (PEM) whose PUBLISHED records open the cleanup gate; repeat for rotated "
          + "keys. Without one no cleanup ever deletes (an unsigned PUBLISHED record could be forged).")
  private List<Path> trustedKeys = new ArrayList<>();

  @Option(names = "--node-timeout", paramLabel = "DURATION", defaultValue = "2min",
      description = "How long a call to a storage node may take (default: ${DEFAULT-VALUE}).")
  private String nodeTimeout;

  public WorkerCommand() {}

  WorkerCommand(CountDownLatch stopRequested, boolean onSignals) {
    super(stopRequested, onSignals);
  }

  @Override
  public Integer call() throws InterruptedException {
    WorkerConfig config = config();
    PrintWriter out = spec.commandLine().getOut();
    PrintWriter err = spec.commandLine().getErr();
    MetricsEndpoint metrics = metricsOptions.start();
    MigrationWorker worker = new MigrationWorker(config, metrics.registry());
    try {
      worker.start();
    } catch (IllegalStateException | org.apache.kafka.common.KafkaException e) {
      worker.close();
      metrics.close();
      throw new KafkaUnavailableException("the worker could not start against Kafka at " + config.bootstrapServers()
          + ": " + e.getMessage(), e);
    }
    AutoCloseable limitsWatch = watchLimits(worker, err);
    // On SIGINT or SIGTERM the worker closes in a shutdown hook, so that every task writes its last checkpoint and
    // the worker leaves its group before the JVM exits.
    RunUntilStopped run = runUntilStopped("worker", () -> {
      try {
        limitsWatch.close();
      } catch (Exception e) {
        err.println("ringshift worker: stopping the limits file check failed: " + e);
      }
      worker.close();
      metrics.close();
      err.println("ringshift worker: " + config.workerId() + " stopped; its tasks' last checkpoints are written");
      err.flush();
    });
    Limits limits = config.limits();
    out.printf(Locale.ROOT, "ringshift worker: %s running in group %s on %s, %d nodes; %s per worker, %s per source, "
            + "%d tasks (%d per source, %d per target); cleanup grace %s%s.%n", config.workerId(), config.groupId(),
        config.bootstrapServers(), config.nodes().nodes().size(), rate(limits.bytesPerSecond()),
        rate(limits.perSourceBytesPerSecond()), limits.maxTasks(), limits.maxTasksPerSource(),
        limits.maxTasksPerTarget(), config.grace(), metrics.banner());
    if (config.trustedKeys() == null) {
      out.println("No --trusted-key: cleanups wait, and delete nothing, until the worker trusts the publisher's key.");
    }
    out.println("Ctrl-C stops it.");
    out.flush();
    Optional<Throwable> failure = run.await(worker.terminated());
    if (failure.isPresent()) {
      err.println("ringshift worker: " + config.workerId() + " was stopped by an error: " + failure.get());
      err.flush();
      return 1;
    }
    return 0;
  }

  /** The validated configuration; bad options are {@link BadInputException}s naming the option. */
  WorkerConfig config() {
    NodeDirectory directory = NodeAddresses.read(nodesFile, nodes,
        "no storage node given; list them with --nodes FILE or --node ID=HOST:PORT");
    if (nodeSecretFile == null) {
      throw new BadInputException("no --node-secret-file given: the nodes' admin listeners answer only calls that "
          + "carry their admin secret; give the file the nodes use (their --admin-secret-file; by default "
          + "admin.secret in a node's --data-dir; ringshift dev writes admin.secret in its data dir)");
    }
    AdminSecret secret;
    try {
      secret = AdminSecret.read(nodeSecretFile);
    } catch (IllegalArgumentException e) {
      throw new BadInputException("--node-secret-file: " + e.getMessage(), e);
    }
    atLeastOne("--max-tasks", maxTasks);
    atLeastOne("--max-tasks-per-source", maxTasksPerSource);
    atLeastOne("--max-tasks-per-target", maxTasksPerTarget);
    if (checkpointBytes < 1) {
      throw new BadInputException("--checkpoint-bytes was 0; a checkpoint needs at least 1 byte between");
    }
    try {
      Limits limits = new Limits(bytesPerSecond, perSourceBytesPerSecond, maxTasks, maxTasksPerSource,
          maxTasksPerTarget);
      if (limitsPath != null) {
        limitsFile = new LimitsFile(limitsPath, limits, "--limits-file");
        try {
          limits = limitsFile.read();
        } catch (IllegalArgumentException e) {
          throw new BadInputException(e.getMessage(), e);
        }
      }
      TaskTuning tuning = TaskTuning.DEFAULTS.withCheckpoints(checkpointBytes,
          Durations.parse("--checkpoint-interval", checkpointInterval));
      return WorkerConfig.of(kafka.bootstrap(), workerId == null ? defaultWorkerId() : workerId, directory)
          .withGroupId(groupId)
          .withTopics(kafka.topics())
          .withKafkaProperties(kafka.kafkaProperties())
          .withLimits(limits)
          .withTuning(tuning)
          .withGrace(Durations.parse("--grace", grace))
          .withStartTimeout(kafka.timeout())
          .withNodeTimeout(Durations.parse("--node-timeout", nodeTimeout))
          .withTrustedKeys(trustedKeys.isEmpty() ? null : TrustedKeyFiles.read(trustedKeys))
          .withNodeSecret(secret);
    } catch (IllegalArgumentException e) {
      throw new BadInputException(e.getMessage(), e);
    }
  }

  /** Applies the limits file whenever it changes; a bad file is reported and changes nothing. */
  private AutoCloseable watchLimits(MigrationWorker worker, PrintWriter err) {
    if (limitsFile == null) {
      return () -> { };
    }
    return limitsFile.watch(Duration.ofSeconds(1), changed -> {
      worker.setLimits(changed);
      err.printf(Locale.ROOT, "ringshift worker: limits from %s: %s per worker, %s per source, %d tasks (%d per "
              + "source, %d per target)%n", limitsFile.path(), rate(changed.bytesPerSecond()),
          rate(changed.perSourceBytesPerSecond()), changed.maxTasks(), changed.maxTasksPerSource(),
          changed.maxTasksPerTarget());
      err.flush();
    }, refused -> {
      err.println("ringshift worker: " + refused + "; the limits in force stay");
      err.flush();
    });
  }

  private static void atLeastOne(String option, int value) {
    if (value < 1) {
      throw new BadInputException(option + " was " + value + "; it must be at least 1");
    }
  }

  /** {@code worker-<host name>}, reduced to the characters a group member id allows. */
  static String defaultWorkerId() {
    String host;
    try {
      host = InetAddress.getLocalHost().getHostName();
    } catch (UnknownHostException e) {
      host = "localhost";
    }
    String id = "worker-" + host.replaceAll("[^A-Za-z0-9._-]", "-");
    return id.length() > 200 ? id.substring(0, 200) : id;
  }

  private static String rate(long bytesPerSecond) {
    if (bytesPerSecond == 0) {
      return "unlimited";
    }
    return ByteUnits.format(bytesPerSecond) + "/s";
  }
}
