package io.ringshift.cli.internal.node;

import io.ringshift.cli.BadInputException;
import io.ringshift.cli.internal.control.KafkaOptions;
import io.ringshift.protocol.KafkaProperties;
import io.ringshift.cli.internal.Durations;
import io.ringshift.cli.internal.LongRunningCommand;
import io.ringshift.cli.internal.MetricsEndpoint;
import io.ringshift.cli.internal.MetricsOptions;
import io.ringshift.cli.internal.RunUntilStopped;
import io.ringshift.storage.AdminSecret;
import io.ringshift.storage.NodeServer;
import io.ringshift.storage.RocksStore;
import io.ringshift.storage.Store;
import io.ringshift.storage.StoreException;
import java.io.PrintWriter;
import java.net.BindException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import io.ringshift.localplane.PublishedRingView;
import io.ringshift.client.RingClientConfig;
import io.ringshift.ring.RingBuilder;
import io.ringshift.storage.OwnershipCheckedStore;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.time.Duration;
import java.util.Locale;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import picocli.CommandLine.Command;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;
import picocli.CommandLine.TypeConversionException;

/**
 * {@code ringshift node}: a storage node, the RocksDB store of one node served over its HTTP API, until SIGINT or
 * SIGTERM. Stopping closes the server (ending the streams in progress), then the store.
 */
@Command(
    name = "node",
    mixinStandardHelpOptions = true,
    sortOptions = false,
    description = {
      "Runs a storage node: opens (or creates) the node's RocksDB store in --data-dir and serves it over HTTP on "
          + "two listeners (docs/storage.md): the client port --bind:--port (key reads and writes) and the admin "
          + "listener --admin-bind:--admin-port (scans, change feeds, apply, digests, fences, range deletes: what "
          + "migration workers use), which answers only requests carrying the secret of --admin-secret-file. Prints "
          + "where it serves and runs until Ctrl-C or SIGTERM.",
      "The data dir remembers its node id and zone: another node's data dir is refused.",
      "With --bootstrap the node follows the cluster's published ring (ring.snapshots, verified with "
          + "--trusted-key) and refuses a write tagged with an older epoch for a key it no longer replicates, "
          + "answering retry-with-epoch with the ring's epoch; it keeps the last good ring in --ring-file for a "
          + "restart without Kafka."
    })
public final class NodeCommand extends LongRunningCommand implements Callable<Integer> {

  @Spec private CommandSpec spec;

  @Option(names = "--id", required = true, paramLabel = "ID", description = "The node id, as in the ring's members.")
  private String id;

  @Option(names = "--zone", required = true, paramLabel = "ZONE", description = "The node's availability zone.")
  private String zone;

  @Option(names = "--data-dir", required = true, paramLabel = "DIR",
      description = "Where the store lives (created if absent).")
  private Path dataDir;

  @Option(names = "--port", required = true, paramLabel = "PORT",
      description = "The HTTP port (0 picks a free one, printed at start).")
  private int port;

  @Option(names = "--bind", paramLabel = "ADDRESS", defaultValue = "127.0.0.1",
      description = "The address to listen on (default: ${DEFAULT-VALUE}; 0.0.0.0 for every interface).")
  private String bind;

  @Option(names = "--admin-port", paramLabel = "PORT",
      description = "The admin listener's port (default: --port + 1000, or a free one with --port 0; printed at "
          + "start).")
  private Integer adminPort;

  @Option(names = "--admin-bind", paramLabel = "ADDRESS",
      description = "The address the admin listener listens on (default: --bind). Keep it on a network only "
          + "workers reach: the secret travels in clear HTTP.")
  private String adminBind;

  @Option(names = "--admin-secret-file", paramLabel = "FILE",
      description = "The file holding the admin secret (16 to 512 printable characters) that the workers send "
          + "(their --node-secret-file); one secret for the fleet (default: admin.secret in --data-dir, created "
          + "with a random secret, readable by its owner only, when absent).")
  private Path adminSecretFile;

  @Option(names = "--wal-retention", paramLabel = "DURATION", defaultValue = "6h", converter = DurationConverter.class,
      description = "How far back the change feed reaches: the write-ahead log is kept this long (default: "
          + "${DEFAULT-VALUE}; for example 90m, 6h, 2d).")
  private Duration walRetention;

  @Option(names = "--wal-size-limit-mb", paramLabel = "MB", defaultValue = "4096",
      description = "The most write-ahead log kept, in MB, whatever its age (default: ${DEFAULT-VALUE}; 0: no limit).")
  private long walSizeLimitMb;

  @Option(names = "--sync-writes", description = "Wait for each write to reach the disk (fsync) before answering.")
  private boolean syncWrites;

  @Option(names = "--threads", paramLabel = "N", defaultValue = "32",
      description = "HTTP handler threads; each open scan or change feed holds one (default: ${DEFAULT-VALUE}).")
  private int threads;

  @Option(names = "--bootstrap", paramLabel = "HOST:PORT",
      description = "Kafka bootstrap servers: follow the cluster's published ring and check ownership of writes "
          + "(default: the environment variable " + KafkaOptions.BOOTSTRAP_VARIABLE + ", else none: every write is "
          + "checked against fences only).")
  private String bootstrap;

  @Option(names = "--kafka-config", paramLabel = "FILE",
      description = "Kafka client properties (security.protocol, sasl.*, ssl.*) for the consumer that follows the "
          + "published ring.")
  private Path kafkaConfig;

  @Option(names = "--cluster", paramLabel = "ID", defaultValue = RingBuilder.DEFAULT_CLUSTER,
      description = "The cluster the node belongs to (default: ${DEFAULT-VALUE}).")
  private String cluster;

  @Option(names = "--trusted-key", paramLabel = "FILE",
      description = "A publisher public key (PEM) whose signed snapshots the node accepts; repeat for several. "
          + "Required with --bootstrap.")
  private List<Path> trustedKeys = new ArrayList<>();

  @Option(names = "--ring-file", paramLabel = "FILE",
      description = "Where the node keeps its last verified ring snapshot, to check ownership at once after a "
          + "restart without Kafka (default: ring-snapshot.bin in --data-dir).")
  private Path ringFile;

  @Option(names = "--topic-prefix", hidden = true, paramLabel = "PREFIX", defaultValue = "",
      description = "Prefix of the ring.* topic names (tests).")
  private String topicPrefix;

  @Mixin private MetricsOptions metricsOptions;

  public NodeCommand() {}

  NodeCommand(CountDownLatch stopRequested, boolean trapSignals) {
    super(stopRequested, trapSignals);
  }

  @Override
  public Integer call() throws InterruptedException {
    if (port < 0 || port > 65_535) {
      throw new BadInputException("--port was " + port + "; it must be 0 (any free port) or 1..65535");
    }
    if (threads < 1) {
      throw new BadInputException("--threads was " + threads + "; a node needs at least 1");
    }
    int admin = adminPort != null ? adminPort : port == 0 ? 0 : port + 1000;
    if (admin < 0 || admin > 65_535) {
      throw new BadInputException((adminPort != null ? "--admin-port was " + admin : "--admin-port defaults to "
          + "--port + 1000 = " + admin) + "; it must be 0 (any free port) or 1..65535");
    }
    if (admin != 0 && admin == port) {
      throw new BadInputException("--admin-port was " + admin + ", the same as --port; the client port and the "
          + "admin listener must be different ports");
    }
    InetAddress address;
    InetAddress adminAddress;
    try {
      address = InetAddress.getByName(bind);
    } catch (UnknownHostException e) {
      throw new BadInputException("--bind " + bind + " is not an address of this machine: " + e.getMessage(), e);
    }
    try {
      adminAddress = adminBind == null ? address : InetAddress.getByName(adminBind);
    } catch (UnknownHostException e) {
      throw new BadInputException("--admin-bind " + adminBind + " is not an address of this machine: "
          + e.getMessage(), e);
    }
    Path secretFile = adminSecretFile != null ? adminSecretFile : dataDir.resolve("admin.secret");
    if (adminSecretFile != null && !java.nio.file.Files.isRegularFile(adminSecretFile)) {
      throw new BadInputException("--admin-secret-file " + adminSecretFile + " is not a file; give the file "
          + "holding the fleet's admin secret, or leave the option out to use admin.secret in --data-dir");
    }
    String fromEnvironment = System.getenv(KafkaOptions.BOOTSTRAP_VARIABLE);
    String kafka = bootstrap != null ? bootstrap
        : fromEnvironment != null && !fromEnvironment.isBlank() ? fromEnvironment.strip() : null;
    String kafkaOption = bootstrap != null || kafka == null ? "--bootstrap"
        : "--bootstrap (here " + KafkaOptions.BOOTSTRAP_VARIABLE + "=" + kafka + ")";
    if (kafka == null && !trustedKeys.isEmpty()) {
      throw new BadInputException("--trusted-key needs --bootstrap: a node follows the published ring only from "
          + "Kafka");
    }
    if (kafka != null && trustedKeys.isEmpty()) {
      throw new BadInputException(kafkaOption + " needs at least one --trusted-key: the node accepts only "
          + "snapshots signed by a publisher key it trusts (ringshift dev writes publisher.pub)");
    }
    if (kafka == null && kafkaConfig != null) {
      throw new BadInputException("--kafka-config needs --bootstrap: without Kafka the node has no Kafka client");
    }
    KafkaProperties kafkaProperties;
    try {
      kafkaProperties = kafkaConfig == null ? KafkaProperties.none() : KafkaProperties.load(kafkaConfig);
    } catch (IllegalArgumentException e) {
      throw new BadInputException("--kafka-config: " + e.getMessage(), e);
    }
    PrintWriter out = spec.commandLine().getOut();
    PrintWriter err = spec.commandLine().getErr();
    MetricsEndpoint metrics = metricsOptions.start();
    RocksStore.Options options = new RocksStore.Options(walRetention, walSizeLimitMb, syncWrites);
    Store store;
    try {
      store = RocksStore.open(dataDir, id, zone, options);
    } catch (StoreException.BadRequest e) {
      metrics.close();
      throw new BadInputException(e.getMessage(), e);
    } catch (StoreException e) {
      metrics.close();
      err.println("ringshift: node: cannot open the store: " + e.getMessage());
      err.flush();
      return 1;
    }
    PublishedRingView ring;
    try {
      if (kafka == null) {
        ring = PublishedRingView.none();
      } else {
        RingClientConfig.Builder client = RingClientConfig.builder()
            .bootstrapServers(kafka)
            .clusterId(cluster)
            .topic(topicPrefix + RingClientConfig.DEFAULT_TOPIC)
            .epochsTopic(topicPrefix + RingClientConfig.DEFAULT_EPOCHS_TOPIC)
            .trustedKeyFiles(trustedKeys.toArray(Path[]::new))
            .persistFile(ringFile != null ? ringFile : dataDir.resolve("ring-snapshot.bin"))
            .meterRegistry(metrics.registry())
            .participantsTopic(topicPrefix + RingClientConfig.DEFAULT_PARTICIPANTS_TOPIC)
            .reportAsNode(id);
        kafkaProperties.values().forEach(client::consumerProperty);
        ring = PublishedRingView.follow(client.build());
      }
    } catch (IllegalArgumentException e) {
      store.close();
      metrics.close();
      throw new BadInputException(e.getMessage(), e);
    }
    AdminSecret secret;
    try {
      secret = AdminSecret.readOrCreate(secretFile);
    } catch (IllegalArgumentException e) {
      ring.close();
      store.close();
      metrics.close();
      throw new BadInputException(e.getMessage(), e);
    }
    NodeServer server;
    try {
      OwnershipCheckedStore checked = OwnershipCheckedStore.wrap(store, ring);
      ring.reportUnversionedWrites(checked::lastUnversionedWriteMillis);
      server = NodeServer.start(checked, new InetSocketAddress(address, port),
          new InetSocketAddress(adminAddress, admin), secret, threads, metrics.registry());
    } catch (StoreException e) {
      ring.close();
      store.close();
      metrics.close();
      if (e.getCause() instanceof BindException) {
        boolean adminTaken = e.getMessage() != null && e.getMessage().contains("admin listener");
        throw new BadInputException(adminTaken
            ? "port " + admin + " on " + adminAddress.getHostAddress() + " is already in use, so the admin listener "
                + "cannot listen there; stop what uses it or give another --admin-port"
            : "port " + port + " on " + bind + " is already in use; stop what uses it or give another --port", e);
      }
      err.println("ringshift: node: " + e.getMessage());
      err.flush();
      return 1;
    }
    RunUntilStopped run = runUntilStopped("node", () -> {
      try {
        server.close();
        ring.close();
      } finally {
        // Closing the store also ends a handler still reading it, had the server given up waiting for one.
        store.close();
        metrics.close();
        err.println("ringshift node: " + id + " stopped");
        err.flush();
      }
    });
    out.printf(Locale.ROOT, "ringshift node: %s admin listener (migration and admin endpoints) on %s; admin secret "
        + "in %s%n", id, server.adminHostPort(), secretFile.toAbsolutePath().normalize());
    out.printf(Locale.ROOT, "ringshift node: %s (zone %s) serves %s on %s (latest sequence %d); %s%s; Ctrl-C stops "
        + "it.%n", id, zone, dataDir.toAbsolutePath().normalize(), server.hostPort(), store.latestSequence(),
        ring.describe(), metrics.banner());
    out.flush();
    run.await();
    return 0;
  }

  /** A duration as {@link Durations} reads it ({@code 90s}, {@code 30m}, {@code 6h}, {@code 2d}, ISO-8601). */
  static final class DurationConverter implements ITypeConverter<Duration> {
    @Override
    public Duration convert(String value) {
      try {
        return Durations.parse("duration", value);
      } catch (IllegalArgumentException e) {
        throw new TypeConversionException("'" + value + "' is not a duration; write for example 90s, 30m, 6h or 2d");
      }
    }
  }
}
