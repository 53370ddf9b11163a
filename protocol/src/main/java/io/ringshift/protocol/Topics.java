package io.ringshift.protocol;

import io.ringshift.schemas.avro.EpochRecord;
import io.ringshift.schemas.avro.RangeCopyTask;
import io.ringshift.schemas.avro.RejectedEvent;
import io.ringshift.schemas.avro.TaskStatus;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
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
 */
public record Topics(
    Topic<byte[], byte[]> membership,
    Topic<String, EpochRecord> epochs,
    Topic<String, RangeCopyTask> tasks,
    Topic<String, TaskStatus> taskStatus,
    Topic<String, RejectedEvent> rejected,
    Topic<String, byte[]> snapshots) {

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
        new Topic<>(prefix + "ring.snapshots", Serdes.String(), Serdes.ByteArray(), COMPACTED));
  }

  /** Every topic, in the order they are created. */
  public List<Topic<?, ?>> all() {
    return List.of(membership, epochs, tasks, taskStatus, rejected, snapshots);
  }

  /**
   * Creates the topics that do not exist yet, each with its configs; a topic that exists is left as it is, and one
   * created concurrently by another process counts as created. Idempotent.
   *
   * @throws IllegalStateException when the topics cannot be listed or one cannot be created within {@code timeout}
   */
  public void createMissing(Admin admin, int partitions, short replicationFactor, Duration timeout) {
    try {
      Set<String> existing = admin.listTopics().names().get(timeout.toMillis(), TimeUnit.MILLISECONDS);
      List<NewTopic> missing = new ArrayList<>();
      for (Topic<?, ?> topic : all()) {
        if (!existing.contains(topic.name())) {
          missing.add(new NewTopic(topic.name(), partitions, replicationFactor).configs(Map.copyOf(topic.configs())));
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
    } catch (ExecutionException | TimeoutException e) {
      throw new IllegalStateException("could not list topics: " + e, e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while listing topics", e);
    }
  }
}
