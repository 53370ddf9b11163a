package io.ringshift.cli.internal.control;

import io.ringshift.ring.RingBuilder;

import io.ringshift.client.RingClientConfig;

import io.ringshift.cli.BadInputException;
import io.ringshift.devkit.EmbeddedKafka;
import io.ringshift.orchestrator.Orchestrator;
import io.ringshift.orchestrator.OrchestratorConfig;
import io.ringshift.protocol.Topics;
import io.ringshift.publisher.PublisherConfig;
import io.ringshift.publisher.SnapshotPublisher;
import io.ringshift.protocol.SigningKey;
import io.ringshift.worker.Limits;
import io.ringshift.worker.MigrationWorker;
import io.ringshift.worker.WorkerConfig;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.ConsumerGroupDescription;
import org.apache.kafka.clients.admin.RemoveMembersFromConsumerGroupOptions;
import org.apache.kafka.common.errors.GroupIdNotFoundException;

/**
 * The embedded broker, the orchestrator, the snapshot publisher and optionally storage nodes with a migration
 * worker, in this JVM: what {@code ringshift dev} runs. {@link #start} starts the broker, the storage nodes
 * ({@link DevNodes}), the orchestrator (which creates its topics), the publisher and the worker; {@link #close}
 * stops them in the opposite order: the worker first, so its tasks write their last checkpoints while the nodes
 * and the broker still answer; then the publisher and the orchestrator, so they can finish their transactions
 * (and the orchestrator leave its group) while the broker still answers; then the nodes; the broker last.
 *
 * <p>With a data directory the broker keeps its log in {@code <dir>/kafka}, the orchestrator its Streams state in
 * {@code <dir>/streams}, the nodes their stores in {@code <dir>/nodes/<id>} and the publisher its signing key in
 * {@code <dir>/publisher.key} (public key {@code <dir>/publisher.pub}), so a later start on the same directory has
 * the same topics, epochs, cluster aggregates, data and key. Without one all live in temporary directories that
 * {@link #close} deletes.
 */
final class DevControlPlane implements AutoCloseable {
  /**
   * How to run it.
   *
   * @param port the broker's port on 127.0.0.1; 0 picks a free one
   * @param dataDir where to keep the data, or null for temporary directories
   * @param clusterBytes the orchestrator's estimate of a cluster's logical size, for the tasks' byte estimates
   * @param nodes how many storage nodes to run with a migration worker; 0 runs neither
   * @param nodePort the first node's port on 127.0.0.1, the others following; 0 picks free ports
   * @param grace the worker's cleanup grace period
   */
  record Settings(int port, Path dataDir, long clusterBytes, String topicPrefix, String applicationId,
      Duration startupTimeout, int nodes, int nodePort, Duration grace) {
    Settings {
      Objects.requireNonNull(topicPrefix, "topicPrefix");
      Objects.requireNonNull(applicationId, "applicationId");
      Objects.requireNonNull(startupTimeout, "startupTimeout");
      Objects.requireNonNull(grace, "grace");
    }

    static Settings of(int port, Path dataDir, long clusterBytes) {
      return new Settings(port, dataDir, clusterBytes, "", OrchestratorConfig.DEFAULT_APPLICATION_ID,
          Duration.ofSeconds(60), 0, 0, WorkerConfig.DEFAULT_GRACE);
    }

    Settings withNodes(int count, int basePort, Duration workerGrace) {
      return new Settings(port, dataDir, clusterBytes, topicPrefix, applicationId, startupTimeout, count, basePort,
          workerGrace);
    }
  }

  /** How long each part took to stop, for the goodbye line; 0 for the parts that did not run. */
  record Stopped(long workerMillis, long publisherMillis, long orchestratorMillis, long nodesMillis,
      long brokerMillis) {}

  /** The publisher's key files in a dev directory, made on the first start there. */
  static final String KEY_FILE = "publisher.key";
  static final String PUBLIC_KEY_FILE = "publisher.pub";

  /** The worker's id: one worker per dev process, and a stable id lets a restart take its tasks back at once. */
  static final String WORKER_ID = "dev-worker";

  private final EmbeddedKafka kafka;
  private final DevNodes nodes;
  private final Orchestrator orchestrator;
  private final OrchestratorConfig config;
  private final MigrationWorker worker;
  private final SnapshotPublisher publisher;
  private final Path keyDir;
  private final Path temporaryStateDir;
  private final Path temporaryKeyDir;
  private Stopped stopped;

  private DevControlPlane(EmbeddedKafka kafka, DevNodes nodes, Orchestrator orchestrator, OrchestratorConfig config,
      SnapshotPublisher publisher, Path keyDir, MigrationWorker worker, Path temporaryStateDir,
      Path temporaryKeyDir) {
    this.kafka = kafka;
    this.nodes = nodes;
    this.orchestrator = orchestrator;
    this.config = config;
    this.publisher = publisher;
    this.keyDir = keyDir;
    this.worker = worker;
    this.temporaryStateDir = temporaryStateDir;
    this.temporaryKeyDir = temporaryKeyDir;
  }

  /**
   * Starts the broker, the storage nodes, the orchestrator, the publisher and the worker, and returns once the
   * orchestrator is RUNNING, the publisher has read {@code ring.epochs} and the worker has joined its group. The
   * publisher's key is made in the dev directory if it has none ({@value #KEY_FILE}, {@value #PUBLIC_KEY_FILE}). On
   * any failure nothing is left running.
   *
   * @throws io.ringshift.devkit.EmbeddedKafkaException when the broker cannot start (port in use, bad data dir)
   * @throws io.ringshift.cli.BadInputException when a node's port is taken or its data directory is another's, or
   *     the dev directory holds a {@value #KEY_FILE} that is not a signing key
   * @throws io.ringshift.storage.StoreException when RocksDB cannot open a node's store
   * @throws IllegalStateException when the orchestrator does not reach RUNNING in time
   * @throws PublisherStartException when the publisher cannot start against the broker
   * @throws WorkerStartException when the worker cannot start against the broker
   */
  static DevControlPlane start(Settings settings) {
    // The publisher's key first: a bad key file in the data dir is refused before anything starts. It lives with
    // the other dev files in the data dir, or in a temporary directory deleted on exit like everything else.
    Path keyDir;
    Path temporaryKeyDir = null;
    SigningKey key;
    try {
      if (settings.dataDir() != null) {
        keyDir = Files.createDirectories(settings.dataDir());
      } else {
        keyDir = temporaryKeyDir = Files.createTempDirectory("ringshift-dev-key-");
      }
      key = publisherKey(keyDir);
    } catch (IOException e) {
      UncheckedIOException failure = new UncheckedIOException("cannot write the publisher's key: " + e.getMessage(),
          e);
      deleteQuietly(temporaryKeyDir, failure);
      throw failure;
    }
    EmbeddedKafka.Builder builder = EmbeddedKafka.builder().port(settings.port())
        .startupTimeout(settings.startupTimeout());
    if (settings.dataDir() != null) {
      builder.dataDir(settings.dataDir().resolve("kafka"));
    }
    EmbeddedKafka kafka;
    try {
      kafka = builder.build().start();
    } catch (RuntimeException e) {
      deleteQuietly(temporaryKeyDir, e);
      throw e;
    }
    DevNodes nodes = null;
    if (settings.nodes() > 0) {
      try {
        // The nodes follow cluster default's published ring, trusting this dev's publisher key.
        RingClientConfig.Builder ring = RingClientConfig.builder()
            .bootstrapServers(kafka.bootstrapServers())
            .clusterId(RingBuilder.DEFAULT_CLUSTER)
            .topic(settings.topicPrefix() + RingClientConfig.DEFAULT_TOPIC)
            .trustedKeyFiles(keyDir.resolve(PUBLIC_KEY_FILE));
        if (settings.dataDir() != null) {
          ring.persistFile(settings.dataDir().resolve("nodes").resolve("ring-snapshot.bin"));
        }
        nodes = DevNodes.start(settings.nodes(), settings.nodePort(), settings.dataDir(), ring.build());
      } catch (RuntimeException e) {
        closeAll(null, null, null, null, kafka, e);
        deleteQuietly(temporaryKeyDir, e);
        throw e;
      }
    }
    // Created once the broker runs, so that a broker that cannot start (a port in use) leaves nothing behind.
    Path stateDir;
    Path temporary = null;
    try {
      if (settings.dataDir() != null) {
        stateDir = Files.createDirectories(settings.dataDir().resolve("streams"));
      } else {
        stateDir = temporary = Files.createTempDirectory("ringshift-streams-");
      }
    } catch (IOException e) {
      UncheckedIOException failure = new UncheckedIOException("cannot create the orchestrator's state directory: "
          + e.getMessage(), e);
      closeAll(null, null, null, nodes, kafka, failure);
      deleteQuietly(temporaryKeyDir, failure);
      throw failure;
    }
    OrchestratorConfig config = new OrchestratorConfig(kafka.bootstrapServers(), settings.applicationId(), stateDir,
        Topics.withPrefix(settings.topicPrefix()), 3, (short) 1, settings.clusterBytes());
    Orchestrator orchestrator = new Orchestrator(config);
    try {
      if (settings.dataDir() != null) {
        removeStaleMembers(config.bootstrapServers(), config.applicationId(), settings.startupTimeout());
      }
      orchestrator.start(settings.startupTimeout());
    } catch (RuntimeException e) {
      closeAll(null, null, orchestrator, nodes, kafka, e);
      deleteQuietly(temporary, e);
      deleteQuietly(temporaryKeyDir, e);
      throw e;
    }
    SnapshotPublisher publisher = new SnapshotPublisher(PublisherConfig.of(config.bootstrapServers(), key)
        .withTopics(config.topics())
        .withTimeout(settings.startupTimeout()));
    try {
      publisher.start();
    } catch (RuntimeException e) {
      PublisherStartException failure = new PublisherStartException("the snapshot publisher did not start against "
          + config.bootstrapServers() + ": " + e.getMessage(), e);
      closeAll(null, publisher, orchestrator, nodes, kafka, failure);
      deleteQuietly(temporary, failure);
      deleteQuietly(temporaryKeyDir, failure);
      throw failure;
    }
    MigrationWorker worker = null;
    if (nodes != null) {
      WorkerConfig workerConfig = WorkerConfig.of(config.bootstrapServers(), WORKER_ID, nodes.directory())
          .withTopics(config.topics())
          .withLimits(Limits.unlimited())
          .withGrace(settings.grace())
          .withStartTimeout(settings.startupTimeout());
      worker = new MigrationWorker(workerConfig);
      try {
        worker.start();
      } catch (RuntimeException e) {
        WorkerStartException failure = new WorkerStartException("the migration worker did not start against "
            + config.bootstrapServers() + ": " + e.getMessage(), e);
        closeAll(worker, publisher, orchestrator, nodes, kafka, failure);
        deleteQuietly(temporary, failure);
        deleteQuietly(temporaryKeyDir, failure);
        throw failure;
      }
    }
    return new DevControlPlane(kafka, nodes, orchestrator, config, publisher, keyDir, worker, temporary,
        temporaryKeyDir);
  }

  /**
   * The publisher's key in {@code dir}: read from {@value #KEY_FILE}, or made and written there with its public key
   * in {@value #PUBLIC_KEY_FILE} on the first start (the public file is written again if it is missing).
   *
   * @throws BadInputException when {@value #KEY_FILE} exists but is not a signing key
   */
  static SigningKey publisherKey(Path dir) throws IOException {
    Path keyFile = dir.resolve(KEY_FILE);
    Path publicFile = dir.resolve(PUBLIC_KEY_FILE);
    if (!Files.exists(keyFile)) {
      SigningKey key = SigningKey.generate();
      key.write(keyFile, publicFile);
      return key;
    }
    SigningKey key;
    try {
      key = SigningKey.read(keyFile);
    } catch (IllegalArgumentException e) {
      throw new BadInputException(e.getMessage() + "; it is the publisher's key of this dev directory: restore it, "
          + "or delete " + keyFile + " and " + publicFile + " to make a new one (clients then trust the new "
          + PUBLIC_KEY_FILE + ")", e);
    }
    if (!Files.exists(publicFile)) {
      key.write(keyFile, publicFile);
    }
    return key;
  }

  /** The snapshot publisher could not start: Kafka unreachable or its topics missing within the start timeout. */
  static final class PublisherStartException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    PublisherStartException(String message, Throwable cause) {
      super(message, cause);
    }
  }

  /** The migration worker could not start: Kafka unreachable or its topics missing within the start timeout. */
  static final class WorkerStartException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    WorkerStartException(String message, Throwable cause) {
      super(message, cause);
    }
  }

  /** Closes the parts that exist, in stop order, adding their failures to {@code failure}. */
  private static void closeAll(MigrationWorker worker, SnapshotPublisher publisher, Orchestrator orchestrator,
      DevNodes nodes, EmbeddedKafka kafka, Throwable failure) {
    List<AutoCloseable> parts = new ArrayList<>();
    parts.add(worker);
    parts.add(publisher);
    parts.add(orchestrator);
    parts.add(nodes);
    parts.add(kafka);
    for (AutoCloseable part : parts) {
      if (part == null) {
        continue;
      }
      try {
        part.close();
      } catch (Exception e) {
        failure.addSuppressed(e);
      }
    }
  }

  /**
   * Kafka Streams does not leave its consumer group when it closes (so that a quick restart keeps its tasks), so
   * after a restart on kept data the group still lists the previous run's member until its session times out
   * (45 s), and the new orchestrator waits that long for its first assignment. The broker was started a moment
   * ago by this process, so no live orchestrator can be in the group: its members are stale and are removed.
   */
  static void removeStaleMembers(String bootstrap, String groupId, Duration timeout) {
    try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap))) {
      ConsumerGroupDescription group;
      try {
        group = admin.describeConsumerGroups(List.of(groupId)).describedGroups().get(groupId)
            .get(timeout.toMillis(), TimeUnit.MILLISECONDS);
      } catch (ExecutionException e) {
        if (e.getCause() instanceof GroupIdNotFoundException) {
          return; // never ran on this data
        }
        throw new IllegalStateException("cannot describe consumer group " + groupId + ": " + e.getCause(), e);
      }
      if (group.members().isEmpty()) {
        return;
      }
      RemoveMembersFromConsumerGroupOptions all = new RemoveMembersFromConsumerGroupOptions();
      all.reason("ringshift dev restarted; the previous orchestrator is gone");
      admin.removeMembersFromConsumerGroup(groupId, all).all().get(timeout.toMillis(), TimeUnit.MILLISECONDS);
    } catch (ExecutionException | java.util.concurrent.TimeoutException e) {
      throw new IllegalStateException("cannot remove the previous run's members from consumer group " + groupId
          + ": " + e, e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while preparing consumer group " + groupId, e);
    }
  }

  String bootstrapServers() {
    return config.bootstrapServers();
  }

  Path brokerDataDir() {
    return kafka.dataDir();
  }

  Path stateDir() {
    return config.stateDir().toAbsolutePath();
  }

  boolean temporary() {
    return temporaryStateDir != null;
  }

  Topics topics() {
    return config.topics();
  }

  /** The storage nodes, when {@code dev} runs them. */
  Optional<DevNodes> nodes() {
    return Optional.ofNullable(nodes);
  }

  /** The snapshot publisher. */
  SnapshotPublisher publisher() {
    return publisher;
  }

  /** The publisher's signing key file (its public key is {@link #publicKeyFile()}). */
  Path keyFile() {
    return keyDir.resolve(KEY_FILE).toAbsolutePath();
  }

  /** The publisher's public key file, which clients trust. */
  Path publicKeyFile() {
    return keyDir.resolve(PUBLIC_KEY_FILE).toAbsolutePath();
  }

  /** The migration worker, when {@code dev} runs storage nodes. */
  Optional<MigrationWorker> worker() {
    return Optional.ofNullable(worker);
  }

  /**
   * Stops the worker, the publisher, the orchestrator, the nodes and the broker, in that order, and deletes
   * temporary directories. Each part is stopped even when an earlier one fails to; the first failure is thrown after.
   * Idempotent, thread-safe.
   */
  @Override
  public synchronized void close() {
    if (stopped != null) {
      return;
    }
    RuntimeException failure = null;
    long[] millis = new long[5];
    Runnable[] steps = {
      () -> {
        if (worker != null) {
          worker.close();
        }
      },
      publisher::close,
      orchestrator::close,
      () -> {
        if (nodes != null) {
          nodes.close();
        }
      },
      kafka::close
    };
    for (int i = 0; i < steps.length; i++) {
      long start = System.nanoTime();
      try {
        steps[i].run();
      } catch (RuntimeException e) {
        if (failure == null) {
          failure = e;
        } else {
          failure.addSuppressed(e);
        }
      }
      millis[i] = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
    }
    stopped = new Stopped(millis[0], millis[1], millis[2], millis[3], millis[4]);
    if (temporaryStateDir != null) {
      deleteRecursively(temporaryStateDir);
    }
    if (temporaryKeyDir != null) {
      deleteRecursively(temporaryKeyDir);
    }
    if (failure != null) {
      throw failure;
    }
  }

  synchronized Stopped stopped() {
    return stopped;
  }

  private static void deleteQuietly(Path dir, Throwable failure) {
    if (dir == null) {
      return;
    }
    try {
      deleteRecursively(dir);
    } catch (UncheckedIOException e) {
      failure.addSuppressed(e);
    }
  }

  static void deleteRecursively(Path dir) {
    if (!Files.exists(dir)) {
      return;
    }
    try (Stream<Path> paths = Files.walk(dir)) {
      for (Path p : paths.sorted(Comparator.reverseOrder()).toList()) {
        Files.deleteIfExists(p);
      }
    } catch (IOException e) {
      throw new UncheckedIOException("cannot delete " + dir + ": " + e.getMessage(), e);
    }
  }
}
