package io.ringshift.cli.internal.control;

import io.ringshift.devkit.EmbeddedKafka;
import io.ringshift.orchestrator.Orchestrator;
import io.ringshift.orchestrator.OrchestratorConfig;
import io.ringshift.orchestrator.Topics;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.ConsumerGroupDescription;
import org.apache.kafka.clients.admin.RemoveMembersFromConsumerGroupOptions;
import org.apache.kafka.common.errors.GroupIdNotFoundException;

/**
 * The embedded broker and the orchestrator in this JVM: what {@code ringshift dev} runs. {@link #start} starts
 * the broker, then the orchestrator (which creates its topics); {@link #close} stops them in the opposite
 * order, so the orchestrator can finish its transaction and leave its group while the broker still answers.
 *
 * <p>With a data directory the broker keeps its log in {@code <dir>/kafka} and the orchestrator its Streams
 * state in {@code <dir>/streams}, so a later start on the same directory has the same topics, epochs and
 * cluster aggregates. Without one both live in temporary directories that {@link #close} deletes.
 */
final class DevControlPlane implements AutoCloseable {
  /**
   * How to run it.
   *
   * @param port the broker's port on 127.0.0.1; 0 picks a free one
   * @param dataDir where to keep the data, or null for temporary directories
   * @param clusterBytes the orchestrator's estimate of a cluster's logical size, for the tasks' byte estimates
   */
  record Settings(int port, Path dataDir, long clusterBytes, String topicPrefix, String applicationId,
      Duration startupTimeout) {
    Settings {
      Objects.requireNonNull(topicPrefix, "topicPrefix");
      Objects.requireNonNull(applicationId, "applicationId");
      Objects.requireNonNull(startupTimeout, "startupTimeout");
    }

    static Settings of(int port, Path dataDir, long clusterBytes) {
      return new Settings(port, dataDir, clusterBytes, "", OrchestratorConfig.DEFAULT_APPLICATION_ID,
          Duration.ofSeconds(60));
    }
  }

  /** How long each part took to stop, for the goodbye line. */
  record Stopped(long orchestratorMillis, long brokerMillis) {}

  private final EmbeddedKafka kafka;
  private final Orchestrator orchestrator;
  private final OrchestratorConfig config;
  private final Path temporaryStateDir;
  private Stopped stopped;

  private DevControlPlane(EmbeddedKafka kafka, Orchestrator orchestrator, OrchestratorConfig config,
      Path temporaryStateDir) {
    this.kafka = kafka;
    this.orchestrator = orchestrator;
    this.config = config;
    this.temporaryStateDir = temporaryStateDir;
  }

  /**
   * Starts the broker and then the orchestrator, and returns once the orchestrator is RUNNING.
   *
   * @throws io.ringshift.devkit.EmbeddedKafkaException when the broker cannot start (port in use, bad data dir)
   * @throws IllegalStateException when the orchestrator does not reach RUNNING in time; nothing is left running
   */
  static DevControlPlane start(Settings settings) {
    EmbeddedKafka.Builder builder = EmbeddedKafka.builder().port(settings.port())
        .startupTimeout(settings.startupTimeout());
    if (settings.dataDir() != null) {
      builder.dataDir(settings.dataDir().resolve("kafka"));
    }
    EmbeddedKafka kafka = builder.build().start();
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
      kafka.close();
      throw new UncheckedIOException("cannot create the orchestrator's state directory: " + e.getMessage(), e);
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
      orchestrator.close();
      kafka.close();
      deleteQuietly(temporary, e);
      throw e;
    }
    return new DevControlPlane(kafka, orchestrator, config, temporary);
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

  /** Stops the orchestrator, then the broker, and deletes temporary directories. Idempotent, thread-safe. */
  @Override
  public synchronized void close() {
    if (stopped != null) {
      return;
    }
    long t0 = System.nanoTime();
    try {
      orchestrator.close();
    } finally {
      long t1 = System.nanoTime();
      try {
        kafka.close();
      } finally {
        long t2 = System.nanoTime();
        stopped = new Stopped(TimeUnit.NANOSECONDS.toMillis(t1 - t0), TimeUnit.NANOSECONDS.toMillis(t2 - t1));
        if (temporaryStateDir != null) {
          deleteRecursively(temporaryStateDir);
        }
      }
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
