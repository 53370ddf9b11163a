package io.ringshift.protocol;

import io.ringshift.schemas.avro.EpochRecord;
import io.ringshift.schemas.avro.HotKeysReport;
import io.ringshift.schemas.avro.ParticipantReport;
import io.ringshift.schemas.avro.RangeCopyTask;
import io.ringshift.schemas.avro.RejectedEvent;
import io.ringshift.schemas.avro.TaskStatus;
import io.ringshift.schemas.avro.WorkerBudgets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.KafkaFuture;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.config.TopicConfig;
import org.apache.kafka.common.errors.TopicExistsException;
import org.apache.kafka.common.serialization.Serdes;

/**
 * The topics of the control plane (docs/architecture.md, "Data flow"). Membership events are read as raw bytes, so that a
 * malformed record can be sent to {@link #rejected()} exactly as it arrived.
 *
 * @param membership {@code ring.membership}: compacted, key {@code <cluster>/<node>}
 * @param epochs {@code ring.epochs}: the append-only audit log, infinite retention, key = cluster id
 * @param tasks {@code ring.tasks}: range-copy tasks, compacted, key = task id
 * @param taskStatus {@code ring.task-status}: task progress, compacted, key = task id
 * @param rejected {@code ring.rejected}: refused events with the reason and the original bytes
 * @param snapshots {@code ring.snapshots}: published, signed, chained ring snapshots, compacted, key = cluster
 *     id; values are raw bytes (a {@code RingSnapshot} in single-object encoding) so that a reader can count and
 *     refuse a malformed or forged record instead of failing in a deserializer
 * @param workerBudgets {@code ring.worker-budgets}: byte-rate budgets shared by a group of migration workers,
 *     compacted, key = worker group id
 * @param hotKeys {@code ring.hot-keys}: the hottest keys clients report, compacted, key = {@code
 *     <cluster>/<client id>}
 * @param participants {@code ring.participants}: what each client and node routes by, under a lease, compacted, key
 *     = {@code <cluster>/<participant id>}; a tombstone when a participant closes
 */
public record Topics(
    Topic<byte[], byte[]> membership,
    Topic<String, EpochRecord> epochs,
    Topic<String, RangeCopyTask> tasks,
    Topic<String, TaskStatus> taskStatus,
    Topic<String, RejectedEvent> rejected,
    Topic<String, byte[]> snapshots,
    Topic<String, WorkerBudgets> workerBudgets,
    Topic<String, HotKeysReport> hotKeys,
    Topic<String, ParticipantReport> participants) {

  private static final Map<String, String> COMPACTED =
      Map.of(TopicConfig.CLEANUP_POLICY_CONFIG, TopicConfig.CLEANUP_POLICY_COMPACT);
  /**
   * Membership events stay uncompacted for a day: a JOIN followed by a DRAIN of the same node (same key) must
   * both reach the orchestrator even if it was down when they were written.
   */
  private static final Map<String, String> COMPACTED_AFTER_A_DAY =
      Map.of(TopicConfig.CLEANUP_POLICY_CONFIG, TopicConfig.CLEANUP_POLICY_COMPACT,
          TopicConfig.MIN_COMPACTION_LAG_MS_CONFIG, String.valueOf(24L * 3600 * 1000));
  private static final Map<String, String> FOREVER =
      Map.of(TopicConfig.CLEANUP_POLICY_CONFIG, TopicConfig.CLEANUP_POLICY_DELETE,
          TopicConfig.RETENTION_MS_CONFIG, "-1", TopicConfig.RETENTION_BYTES_CONFIG, "-1");
  /** Rejects are diagnostics: kept for 30 days. */
  private static final Map<String, String> THIRTY_DAYS =
      Map.of(TopicConfig.CLEANUP_POLICY_CONFIG, TopicConfig.CLEANUP_POLICY_DELETE,
          TopicConfig.RETENTION_MS_CONFIG, String.valueOf(30L * 24 * 3600 * 1000));

  /** The standard topic names, {@code ring.*}. */
  public static Topics defaults() {
    return withPrefix("");
  }

  /** The standard topics with a name prefix, for tests that share a broker. */
  public static Topics withPrefix(String prefix) {
    return new Topics(
        new Topic<>(prefix + "ring.membership", Serdes.ByteArray(), Serdes.ByteArray(), COMPACTED_AFTER_A_DAY),
        new Topic<>(prefix + "ring.epochs", Serdes.String(), KafkaSerdes.of(RecordSerdes.epochRecord()), FOREVER),
        new Topic<>(prefix + "ring.tasks", Serdes.String(), KafkaSerdes.of(RecordSerdes.rangeCopyTask()), COMPACTED),
        new Topic<>(prefix + "ring.task-status", Serdes.String(), KafkaSerdes.of(RecordSerdes.taskStatus()),
            COMPACTED),
        new Topic<>(prefix + "ring.rejected", Serdes.String(), KafkaSerdes.of(RecordSerdes.rejectedEvent()),
            THIRTY_DAYS),
        new Topic<>(prefix + "ring.snapshots", Serdes.String(), Serdes.ByteArray(), COMPACTED),
        new Topic<>(prefix + "ring.worker-budgets", Serdes.String(), KafkaSerdes.of(RecordSerdes.workerBudgets()),
            COMPACTED),
        new Topic<>(prefix + "ring.hot-keys", Serdes.String(), KafkaSerdes.of(RecordSerdes.hotKeysReport()),
            COMPACTED),
        new Topic<>(prefix + "ring.participants", Serdes.String(),
            KafkaSerdes.of(RecordSerdes.participantReport()), COMPACTED));
  }

  /** Every topic, in the order they are created. */
  public List<Topic<?, ?>> all() {
    return List.of(membership, epochs, tasks, taskStatus, rejected, snapshots, workerBudgets, hotKeys, participants);
  }

  /**
   * Creates the topics that do not exist yet with {@link TopicReplication#ofFactor}{@code (replicationFactor)}.
   *
   * @see #createMissing(Admin, int, TopicReplication, Duration)
   */
  public void createMissing(Admin admin, int partitions, short replicationFactor, Duration timeout) {
    createMissing(admin, partitions, TopicReplication.ofFactor(replicationFactor), timeout);
  }

  /**
   * Creates the topics that do not exist yet, each with its configs and {@code min.insync.replicas}; a topic that
   * exists is left as it is ({@code ringshift topics check} reports one that differs), and one created concurrently
   * by another process counts as created. Idempotent.
   *
   * @throws IllegalStateException when the topics cannot be listed or one cannot be created within {@code timeout}
   */
  public void createMissing(Admin admin, int partitions, TopicReplication replication, Duration timeout) {
    Set<String> existing = Kafka.get(admin.listTopics().names(), timeout, "list topics");
    List<NewTopic> missing = new ArrayList<>();
    for (Topic<?, ?> topic : all()) {
      if (!existing.contains(topic.name())) {
        Map<String, String> configs = new TreeMap<>(topic.configs());
        configs.put(TopicConfig.MIN_IN_SYNC_REPLICAS_CONFIG, String.valueOf(replication.minInSync()));
        missing.add(new NewTopic(topic.name(), partitions, replication.factor()).configs(configs));
      }
    }
    if (missing.isEmpty()) {
      return;
    }
    admin.createTopics(missing).values().forEach((name, future) -> {
      try {
        future.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
      } catch (ExecutionException e) {
        if (!(e.getCause() instanceof TopicExistsException)) {
          throw new IllegalStateException("could not create topic " + name + ": " + e.getCause(), e);
        }
        // Created concurrently by another instance: exactly what we wanted.
      } catch (TimeoutException e) {
        throw new IllegalStateException("creating topic " + name + " timed out after " + timeout, e);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException("interrupted while creating topic " + name, e);
      }
    });
  }

  /**
   * The replication for topics created on the cluster {@code admin} talks to: {@link
   * TopicReplication#forBrokers} of its broker count.
   *
   * @throws IllegalStateException when the cluster does not answer within {@code timeout}
   */
  public static TopicReplication replicationFor(Admin admin, Duration timeout) {
    return TopicReplication.forBrokers(Kafka.get(admin.describeCluster().nodes(), timeout, "describe the cluster")
        .size());
  }

  /**
   * What differs between the topics on the cluster and what the roles need: a topic that is missing; a cleanup
   * policy, retention or compaction lag other than {@link Topic#configs()}; a replication factor or {@code
   * min.insync.replicas} below {@code expected}. Each difference is one line naming the topic, the config, what it
   * is and what it must be. Empty when everything is as the roles need it.
   *
   * @param expected the replication the topics should have on this cluster ({@link #replicationFor})
   * @throws IllegalStateException when the cluster does not answer within {@code timeout}
   */
  public List<String> differences(Admin admin, TopicReplication expected, Duration timeout) {
    Set<String> existing = Kafka.get(admin.listTopics().names(), timeout, "list topics");
    List<String> found = new ArrayList<>();
    List<Topic<?, ?>> present = new ArrayList<>();
    for (Topic<?, ?> topic : all()) {
      if (existing.contains(topic.name())) {
        present.add(topic);
      } else {
        found.add(topic.name() + ": does not exist (the orchestrator creates it at start)");
      }
    }
    if (present.isEmpty()) {
      return found;
    }
    List<String> names = present.stream().map(Topic::name).toList();
    Map<String, TopicDescription> descriptions =
        Kafka.get(admin.describeTopics(names).allTopicNames(), timeout, "describe topics");
    Map<ConfigResource, Config> configs = Kafka.get(admin.describeConfigs(names.stream()
        .map(name -> new ConfigResource(ConfigResource.Type.TOPIC, name)).toList()).all(), timeout,
        "describe topic configs");
    for (Topic<?, ?> topic : present) {
      Config config = configs.get(new ConfigResource(ConfigResource.Type.TOPIC, topic.name()));
      TreeMap<String, String> needed = new TreeMap<>(topic.configs());
      needed.forEach((key, value) -> {
        ConfigEntry entry = config == null ? null : config.get(key);
        String actual = entry == null ? null : entry.value();
        if (!value.equals(actual)) {
          found.add(String.format(Locale.ROOT, "%s: %s is %s, the roles need %s", topic.name(), key, actual, value));
        }
      });
      TopicDescription description = descriptions.get(topic.name());
      int factor = description.partitions().stream().mapToInt(p -> p.replicas().size()).min().orElse(0);
      if (factor < expected.factor()) {
        found.add(String.format(Locale.ROOT, "%s: replication factor is %d, this cluster should have %d "
            + "(a broker lost loses what only it held)", topic.name(), factor, expected.factor()));
      }
      ConfigEntry minInSync = config == null ? null : config.get(TopicConfig.MIN_IN_SYNC_REPLICAS_CONFIG);
      int actualMinInSync = minInSync == null ? 1 : Integer.parseInt(minInSync.value());
      if (actualMinInSync < Math.min(expected.minInSync(), factor)) {
        found.add(String.format(Locale.ROOT, "%s: min.insync.replicas is %d, this cluster should have %d "
            + "(an acknowledged record may be on one broker only)", topic.name(), actualMinInSync,
            expected.minInSync()));
      }
    }
    return found;
  }

  /** Waiting on an admin result within a deadline, with the operator-facing message when it fails. */
  private static final class Kafka {
    static <T> T get(KafkaFuture<T> future, Duration timeout, String what) {
      try {
        return future.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
      } catch (ExecutionException e) {
        throw new IllegalStateException("could not " + what + ": " + e.getCause(), e);
      } catch (TimeoutException e) {
        throw new IllegalStateException("could not " + what + " within " + timeout, e);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException("interrupted while trying to " + what, e);
      }
    }
  }
}
