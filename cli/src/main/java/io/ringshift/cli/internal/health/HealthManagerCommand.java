package io.ringshift.cli.internal.health;

import io.ringshift.cli.BadInputException;
import io.ringshift.cli.KafkaUnavailableException;
import io.ringshift.cli.internal.Durations;
import io.ringshift.cli.internal.LongRunningCommand;
import io.ringshift.cli.internal.NodeAddresses;
import io.ringshift.cli.internal.RunUntilStopped;
import io.ringshift.cli.internal.control.ClusterOption;
import io.ringshift.cli.internal.control.KafkaOptions;
import io.ringshift.health.HealthListener;
import io.ringshift.health.HealthManager;
import io.ringshift.health.HealthManagerConfig;
import java.io.PrintWriter;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code ringshift health-manager}: probes every member's {@code /health} and writes a FAIL only after a debounced
 * outage (docs/operations.md, "Failure detection"), until SIGINT or SIGTERM; a line per suspicion, recovery and
 * FAIL.
 */
@Command(
    name = "health-manager",
    mixinStandardHelpOptions = true,
    sortOptions = false,
    description = {
      "Runs a health manager: probes GET /health on the client port of every member of the cluster's current epoch "
          + "and writes a FAIL to ring.membership (requestedBy health-manager) for a node that missed --misses "
          + "consecutive probes over at least --min-down; one timeout is only a suspicion, a node that answers "
          + "within the window is not failed, a node is failed at most once and never joined again. Runs until "
          + "Ctrl-C or SIGTERM.",
      "Run two or more with the same --transactional-id: they elect one that decides through a Kafka lease; the "
          + "others probe too and take over when it stops. Give the nodes' client ports with --nodes FILE (lines "
          + "'node-id host:port', as ringshift dev writes client-ports.txt) and/or --node ID=HOST:PORT."
    })
public final class HealthManagerCommand extends LongRunningCommand implements Callable<Integer> {

  @Spec private CommandSpec spec;

  @Mixin private KafkaOptions kafka;

  @Mixin private ClusterOption cluster;

  @Option(names = "--nodes", paramLabel = "FILE",
      description = "The storage nodes' client ports: one 'node-id host:port' per line ('#' starts a comment).")
  private Path nodesFile;

  @Option(names = "--node", paramLabel = "ID=HOST:PORT",
      description = "A storage node's client port; repeat the option for more (adds to --nodes).")
  private List<String> nodes = new ArrayList<>();

  @Option(names = "--probe-interval", paramLabel = "DURATION", defaultValue = "1s",
      description = "How often every member is probed (default: ${DEFAULT-VALUE}).")
  private String probeInterval;

  @Option(names = "--probe-timeout", paramLabel = "DURATION", defaultValue = "1s",
      description = "How long a probe may take before it counts as missed (default: ${DEFAULT-VALUE}).")
  private String probeTimeout;

  @Option(names = "--misses", paramLabel = "N", defaultValue = "3",
      description = "Consecutive missed probes a FAIL needs (default: ${DEFAULT-VALUE}) ...")
  private int misses;

  @Option(names = "--min-down", paramLabel = "DURATION", defaultValue = "10s",
      description = "... spanning at least this long, from the first missed probe to the latest (default: "
          + "${DEFAULT-VALUE}). One answered probe starts the count again.")
  private String minDown;

  @Option(names = "--manager-id", paramLabel = "ID",
      description = "This manager's name in the lease group, unique among the running managers (default: "
          + "health-manager-<host name>).")
  private String managerId;

  @Option(names = "--transactional-id", paramLabel = "ID",
      defaultValue = HealthManagerConfig.DEFAULT_TRANSACTIONAL_ID,
      description = "The id every health manager of the deployment shares: the FAIL producer's transactional id, "
          + "and the lease group ID.lease (default: ${DEFAULT-VALUE}).")
  private String transactionalId;

  @Option(names = "--lease-timeout", paramLabel = "DURATION", defaultValue = "10s",
      description = "A standby takes over this long after the deciding manager stopped answering, at once when it "
          + "stops cleanly (default: ${DEFAULT-VALUE}; at least the brokers' group.min.session.timeout.ms, 6 s by "
          + "default).")
  private String leaseTimeout;

  public HealthManagerCommand() {}

  HealthManagerCommand(CountDownLatch stopRequested, boolean onSignals) {
    super(stopRequested, onSignals);
  }

  @Override
  public Integer call() throws InterruptedException {
    HealthManagerConfig config = config();
    PrintWriter out = spec.commandLine().getOut();
    PrintWriter err = spec.commandLine().getErr();
    HealthManager manager = new HealthManager(config, new Printer(out, config));
    try {
      manager.start();
    } catch (IllegalStateException | org.apache.kafka.common.KafkaException e) {
      manager.close();
      throw new KafkaUnavailableException("the health manager could not start against Kafka at "
          + config.bootstrapServers() + ": " + e.getMessage(), e);
    }
    RunUntilStopped run = runUntilStopped("health-manager", () -> {
      manager.close();
      err.printf(Locale.ROOT, "ringshift health-manager: %s stopped after failing %d nodes%n", config.managerId(),
          manager.failedNodes().size());
      err.flush();
    });
    out.printf(Locale.ROOT, "ringshift health-manager: %s watching cluster %s on %s, %d node addresses; a probe "
            + "every %s (timeout %s), FAIL after %d misses over at least %s; lease %s.lease (timeout %s)%n",
        config.managerId(), config.clusterId(), config.bootstrapServers(), config.nodes().size(),
        Durations.format(config.probeInterval()), Durations.format(config.probeTimeout()), config.misses(),
        Durations.format(config.minDown()), config.transactionalId(), Durations.format(config.leaseTimeout()));
    out.println(manager.holdsLease() ? "deciding: this manager holds the lease"
        : "standing by: another manager holds the lease; this one probes and takes over when it stops");
    out.println("Ctrl-C stops it.");
    out.flush();
    Optional<Throwable> failure = run.await(manager.terminated());
    if (failure.isPresent()) {
      err.println("ringshift health-manager: " + config.managerId() + " was stopped by an error: " + failure.get());
      err.flush();
      return 1;
    }
    return 0;
  }

  /** The validated configuration; bad options are {@link BadInputException}s naming the option. */
  HealthManagerConfig config() {
    Map<String, String> addresses = new TreeMap<>();
    NodeAddresses.read(nodesFile, nodes, "no storage node given; list their client ports with --nodes FILE or "
        + "--node ID=HOST:PORT").nodes().forEach((id, address) -> addresses.put(id, address.toString()));
    if (misses < 1) {
      throw new BadInputException("--misses was " + misses + "; a FAIL needs at least 1 missed probe");
    }
    Duration interval = positive("--probe-interval", probeInterval);
    Duration timeout = positive("--probe-timeout", probeTimeout);
    Duration down = parse("--min-down", minDown);
    Duration lease = parse("--lease-timeout", leaseTimeout);
    if (lease.toMillis() < 1000) {
      throw new BadInputException("--lease-timeout was " + leaseTimeout + "; it must be at least 1s (and at least "
          + "the brokers' group.min.session.timeout.ms, 6s by default)");
    }
    if (transactionalId.isBlank()) {
      throw new BadInputException("--transactional-id was empty; give the id every health manager of the "
          + "deployment shares");
    }
    try {
      return HealthManagerConfig.of(kafka.bootstrap(), cluster.id(),
              managerId == null ? defaultManagerId() : managerId, addresses)
          .withTopics(kafka.topics())
          .withKafkaProperties(kafka.kafkaProperties())
          .withTimeout(kafka.timeout())
          .withTransactionalId(transactionalId)
          .withDebounce(interval, timeout, misses, down)
          .withLeaseTimeout(lease);
    } catch (IllegalArgumentException e) {
      throw new BadInputException(e.getMessage(), e);
    }
  }

  private static Duration parse(String option, String value) {
    try {
      return Durations.parse(option, value);
    } catch (IllegalArgumentException e) {
      throw new BadInputException(e.getMessage(), e);
    }
  }

  private static Duration positive(String option, String value) {
    Duration d = parse(option, value);
    if (d.isZero() || d.isNegative()) {
      throw new BadInputException(option + " was " + value + "; it must be positive");
    }
    return d;
  }

  /** {@code health-manager-<host name>}, reduced to the characters a group member id allows. */
  static String defaultManagerId() {
    String host;
    try {
      host = InetAddress.getLocalHost().getHostName();
    } catch (UnknownHostException e) {
      host = "localhost";
    }
    String id = "health-manager-" + host.replaceAll("[^A-Za-z0-9._-]", "-");
    return id.length() > 200 ? id.substring(0, 200) : id;
  }

  /** A line per thing the manager sees. */
  private static final class Printer implements HealthListener {
    private final PrintWriter out;
    private final HealthManagerConfig config;

    Printer(PrintWriter out, HealthManagerConfig config) {
      this.out = out;
      this.config = config;
    }

    @Override
    public void suspected(String node, String reason) {
      line("suspected %s: %s (a FAIL after %d misses over at least %s)", node, reason, config.misses(),
          Durations.format(config.minDown()));
    }

    @Override
    public void recovered(String node, int misses) {
      line("recovered %s: it answered again after %d missed probes; not failed", node, misses);
    }

    @Override
    public void failed(String node, String requestId, int missed, String reason) {
      line("FAIL of %s written (request %s, requestedBy %s): %s", node, requestId, HealthManagerConfig.REQUESTED_BY,
          reason);
    }

    @Override
    public void heldBack(int answering, int probed) {
      line("holding FAILs back: only %d of %d members answer, so this manager may be the one cut off", answering,
          probed);
    }

    @Override
    public void notProbed(String node) {
      line("not probed %s: a member without an address in --nodes/--node; it is never failed", node);
    }

    @Override
    public void activeChanged(boolean active) {
      line(active ? "deciding: this manager holds the lease of %s" : "standing by: another manager holds the lease "
          + "of %s", config.transactionalId());
    }

    private void line(String format, Object... args) {
      synchronized (out) {
        out.printf(Locale.ROOT, format + "%n", args);
        out.flush();
      }
    }
  }
}
