package io.ringshift.cli.internal.orchestrator;

import io.ringshift.cli.BadInputException;
import io.ringshift.cli.KafkaUnavailableException;
import io.ringshift.cli.internal.Durations;
import io.ringshift.cli.internal.LongRunningCommand;
import io.ringshift.cli.internal.MetricsEndpoint;
import io.ringshift.cli.internal.MetricsOptions;
import io.ringshift.cli.internal.RunUntilStopped;
import io.ringshift.cli.internal.control.ByteSizeConverter;
import io.ringshift.cli.internal.control.KafkaOptions;
import io.ringshift.cli.internal.control.TopicCreationOptions;
import io.ringshift.orchestrator.Orchestrator;
import io.ringshift.orchestrator.OrchestratorConfig;
import io.ringshift.ring.ByteUnits;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Locale;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import org.apache.kafka.common.KafkaException;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code ringshift orchestrator}: runs the orchestrator (docs/orchestrator.md), the Kafka Streams application that
 * turns membership events into planned epochs and their tasks, until SIGINT or SIGTERM.
 */
@Command(
    name = "orchestrator",
    mixinStandardHelpOptions = true,
    sortOptions = false,
    description = {
      "Runs the orchestrator: reads ring.membership, plans each change into an epoch and its range-copy tasks "
          + "(exactly once), marks an epoch READY when its tasks are verified, and re-plans after a rejected "
          + "epoch. Creates the control plane's topics that are missing. Runs until Ctrl-C or SIGTERM.",
      "Run more instances with the same --application-id to share the clusters by partition of ring.membership; "
          + "a standby takes over the partitions of one that stops. Each instance needs a --state-dir of its own."
    })
public final class OrchestratorCommand extends LongRunningCommand implements Callable<Integer> {
  @Spec private CommandSpec spec;

  @Mixin private KafkaOptions kafka;

  @Option(names = "--state-dir", paramLabel = "DIR", required = true,
      description = "This instance's Kafka Streams state directory (created if missing; its state is rebuilt from "
          + "the changelog topics when it is lost).")
  private Path stateDir;

  @Option(names = "--application-id", paramLabel = "ID", defaultValue = OrchestratorConfig.DEFAULT_APPLICATION_ID,
      description = "The Kafka Streams application id every instance of one deployment shares: its consumer group "
          + "and the prefix of its internal topics (default: ${DEFAULT-VALUE}).")
  private String applicationId;

  @Mixin private TopicCreationOptions topicCreation;

  @Mixin private MetricsOptions metricsOptions;

  @Option(names = "--cluster-bytes", paramLabel = "SIZE", defaultValue = "0", converter = ByteSizeConverter.class,
      description = "Logical data size assumed per cluster for the tasks' byte estimates, for example 24TiB "
          + "(default 0: the estimates are 0).")
  private long clusterBytes;

  @Option(names = "--start-timeout", paramLabel = "DURATION", defaultValue = "2min",
      description = "How long to wait for the application to start processing (default: ${DEFAULT-VALUE}).")
  private String startTimeout;

  public OrchestratorCommand() {}

  OrchestratorCommand(CountDownLatch stopRequested, boolean onSignals) {
    super(stopRequested, onSignals);
  }

  @Override
  public Integer call() throws InterruptedException {
    OrchestratorConfig config = config();
    Duration timeout = startTimeout();
    PrintWriter out = spec.commandLine().getOut();
    PrintWriter err = spec.commandLine().getErr();
    MetricsEndpoint metrics = metricsOptions.start();
    Orchestrator orchestrator = new Orchestrator(config, metrics.registry());
    try {
      orchestrator.start(timeout);
    } catch (IllegalStateException | KafkaException e) {
      orchestrator.close();
      metrics.close();
      throw new KafkaUnavailableException("the orchestrator could not start against Kafka at "
          + config.bootstrapServers() + ": " + e.getMessage(), e);
    }
    RunUntilStopped run = runUntilStopped("orchestrator", () -> {
      orchestrator.close();
      err.println("ringshift orchestrator: stopped; it left the group " + config.applicationId()
          + ", a standby takes over at once");
      err.flush();
    });
    out.printf(Locale.ROOT, "ringshift orchestrator: application %s running on %s; state in %s; topics with %d "
            + "partitions, replication %s; cluster size estimate %s%s.%n", config.applicationId(),
        config.bootstrapServers(), config.stateDir(), config.partitions(),
        config.replicationFactor() == OrchestratorConfig.REPLICATION_FROM_CLUSTER ? "chosen from the brokers"
            : String.valueOf(config.replicationFactor()),
        config.clusterBytes() == 0 ? "none" : ByteUnits.format(config.clusterBytes()), metrics.banner());
    out.println("Ctrl-C stops it.");
    out.flush();
    Optional<Throwable> failure = run.await(orchestrator.terminated());
    if (failure.isPresent()) {
      err.println("ringshift orchestrator: stopped by an error in processing: " + failure.get());
      err.flush();
      return 1;
    }
    return 0;
  }

  /**
   * The validated configuration; bad options are {@link BadInputException}s naming the option. The state directory
   * is created only once every option is valid.
   */
  OrchestratorConfig config() {
    if (!applicationId.matches("[A-Za-z0-9._-]{1,200}")) {
      throw new BadInputException("--application-id was \"" + applicationId + "\"; it allows 1 to 200 letters, "
          + "digits, '.', '_' and '-' (it prefixes Kafka topic names)");
    }
    if (Files.exists(stateDir) && !Files.isDirectory(stateDir)) {
      throw new BadInputException("--state-dir " + stateDir + " is a file; give a directory");
    }
    startTimeout();
    OrchestratorConfig config;
    try {
      config = new OrchestratorConfig(kafka.bootstrap(), applicationId, stateDir.toAbsolutePath(), kafka.topics(),
          topicCreation.partitions(), topicCreation.replicationFactor(), clusterBytes, kafka.kafkaProperties());
    } catch (IllegalArgumentException e) {
      throw new BadInputException(e.getMessage(), e);
    }
    try {
      Files.createDirectories(stateDir);
    } catch (IOException e) {
      throw new BadInputException("--state-dir " + stateDir + " cannot be created: " + e.getMessage(), e);
    }
    return config;
  }

  private Duration startTimeout() {
    Duration timeout;
    try {
      timeout = Durations.parse("--start-timeout", startTimeout);
    } catch (IllegalArgumentException e) {
      throw new BadInputException(e.getMessage(), e);
    }
    if (timeout.isZero() || timeout.isNegative()) {
      throw new BadInputException("--start-timeout was " + startTimeout + "; it must be longer than 0");
    }
    return timeout;
  }
}
