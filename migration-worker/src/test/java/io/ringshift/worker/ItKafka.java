package io.ringshift.worker;

import static org.awaitility.Awaitility.await;

import io.ringshift.protocol.Topics;
import io.ringshift.protocol.EpochRecords;
import io.ringshift.protocol.RecordKeys;
import io.ringshift.protocol.SigningKey;
import io.ringshift.ring.RingRange;
import io.ringshift.schemas.avro.EpochRecord;
import io.ringshift.schemas.avro.EpochState;
import io.ringshift.schemas.avro.MembershipAction;
import io.ringshift.schemas.avro.MembershipEvent;
import io.ringshift.schemas.avro.RangeCopyTask;
import io.ringshift.schemas.avro.TaskKind;
import io.ringshift.schemas.avro.TaskStatus;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.function.Predicate;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * What the worker ITs do on the broker in the orchestrator's and the publisher's place: create the topics,
 * write tasks (and re-emit them with the fence requested) and PUBLISHED epoch records, and watch
 * {@code ring.task-status}.
 */
final class ItKafka implements AutoCloseable {
  static final Duration TIMEOUT = Duration.ofSeconds(60);
  static final String CLUSTER = "c1";

  final Topics topics;
  private final KafkaProducer<String, RangeCopyTask> tasks;
  private final KafkaProducer<String, EpochRecord> epochs;
  private final KafkaConsumer<String, TaskStatus> statusConsumer;
  private final List<TaskStatus> statuses = new ArrayList<>();
  private final java.util.Set<String> tombstonedStatuses = new java.util.HashSet<>();
  private final KafkaConsumer<String, byte[]> taskConsumer;
  private final java.util.Set<String> tombstonedTasks = new java.util.HashSet<>();

  ItKafka(String bootstrap, String topicPrefix) {
    topics = Topics.withPrefix(topicPrefix);
    Properties a = new Properties();
    a.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    try (Admin admin = Admin.create(a)) {
      topics.createMissing(admin, 3, (short) 1, TIMEOUT);
    }
    Properties p = new Properties();
    p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    tasks = new KafkaProducer<>(p, new StringSerializer(), topics.tasks().valueSerde().serializer());
    epochs = new KafkaProducer<>(p, new StringSerializer(), topics.epochs().valueSerde().serializer());
    Properties c = new Properties();
    c.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    statusConsumer = new KafkaConsumer<>(c, new StringDeserializer(), topics.taskStatus().valueSerde().deserializer());
    List<TopicPartition> partitions = partitionsOf(statusConsumer, topics.taskStatus().name());
    statusConsumer.assign(partitions);
    statusConsumer.seekToBeginning(partitions);
    taskConsumer = new KafkaConsumer<>(c, new StringDeserializer(),
        new org.apache.kafka.common.serialization.ByteArrayDeserializer());
    List<TopicPartition> taskPartitions = partitionsOf(taskConsumer, topics.tasks().name());
    taskConsumer.assign(taskPartitions);
    taskConsumer.seekToBeginning(taskPartitions);
  }

  /**
   * The partitions of a topic created a moment ago: the broker that answers the metadata request may not know the
   * topic yet when the controller has already committed it, and then says it has none (assigning no partitions
   * would leave the consumer unassigned, and its first poll would throw).
   */
  private static List<TopicPartition> partitionsOf(KafkaConsumer<?, ?> consumer, String topic) {
    List<TopicPartition> partitions = new ArrayList<>();
    await().atMost(TIMEOUT).until(() -> {
      partitions.clear();
      consumer.partitionsFor(topic).forEach(i -> partitions.add(new TopicPartition(i.topic(), i.partition())));
      return !partitions.isEmpty();
    });
    return List.copyOf(partitions);
  }

  /** The task ids tombstoned on ring.tasks so far (reads what is new first). */
  java.util.Set<String> tombstonesOnTasks() {
    taskConsumer.poll(Duration.ofMillis(50)).forEach(r -> {
      if (r.value() == null) {
        tombstonedTasks.add(r.key());
      }
    });
    return java.util.Set.copyOf(tombstonedTasks);
  }

  /** The task ids whose statuses were tombstoned on ring.task-status so far. */
  java.util.Set<String> tombstonedStatuses() {
    statuses();
    return java.util.Set.copyOf(tombstonedStatuses);
  }

  static RangeCopyTask task(TaskKind kind, long epoch, RingRange range, List<String> sources, String target) {
    return RangeCopyTask.newBuilder()
        .setTaskId(RecordKeys.taskId(CLUSTER, epoch, kind, range.start(), range.end(), target))
        .setClusterId(CLUSTER).setEpoch(epoch).setKind(kind)
        .setRangeStart(range.start()).setRangeEnd(range.end())
        .setSources(List.copyOf(sources)).setTarget(target).setTargetZone("az-1")
        .setEstimatedBytes(0).setTimestampMillis(System.currentTimeMillis()).setFenceRequested(false)
        .build();
  }

  void emit(RangeCopyTask... emitted) {
    for (RangeCopyTask t : emitted) {
      tasks.send(new ProducerRecord<>(topics.tasks().name(), t.getTaskId(), t));
    }
    tasks.flush();
  }

  void requestFence(RangeCopyTask... emitted) {
    for (RangeCopyTask t : emitted) {
      emit(RangeCopyTask.newBuilder(t).setFenceRequested(true).build());
    }
  }

  void tombstone(String taskId) {
    tasks.send(new ProducerRecord<>(topics.tasks().name(), taskId, null));
    tasks.flush();
  }

  /** Signs the PUBLISHED records written here; the workers of these ITs trust it. */
  static final SigningKey PUBLISHER = SigningKey.generate();

  void published(long epoch, long timestampMillis) {
    epochs.send(new ProducerRecord<>(topics.epochs().name(), CLUSTER, EpochRecords.signedBy(EpochRecord.newBuilder()
        .setClusterId(CLUSTER).setEpoch(epoch).setState(EpochState.PUBLISHED)
        .setCause(MembershipEvent.newBuilder().setClusterId(CLUSTER).setNodeId("node-t")
            .setAction(MembershipAction.JOIN).setZone("az-1").setRequestId("r").setRequestedBy("it")
            .setTimestampMillis(0).build())
        .setMembers(List.of()).setVnodes(1).setReplicas(1).setHashId("h").setPolicyId("p")
        .setMembershipDigest(ByteBuffer.allocate(32)).setTargetChecksum(ByteBuffer.allocate(32))
        .setTimestampMillis(timestampMillis)
        .build(), PUBLISHER)));
    epochs.flush();
  }

  /** Every status read so far (reads what is new first). */
  List<TaskStatus> statuses() {
    statusConsumer.poll(Duration.ofMillis(50)).forEach(r -> {
      if (r.value() == null) {
        tombstonedStatuses.add(r.key());
      } else {
        statuses.add(r.value());
      }
    });
    return List.copyOf(statuses);
  }

  /** Every status on the topic now: reads to the end offsets. */
  List<TaskStatus> statusesToEnd(String taskId) {
    var end = statusConsumer.endOffsets(statusConsumer.assignment());
    await("ring.task-status read to its end").atMost(TIMEOUT).until(() -> {
      statuses();
      return end.entrySet().stream().allMatch(e -> statusConsumer.position(e.getKey()) >= e.getValue());
    });
    return statuses(taskId);
  }

  List<TaskStatus> statuses(String taskId) {
    return statuses().stream().filter(s -> s.getTaskId().equals(taskId)).toList();
  }

  /** The first status of the task that matches, waiting for it. */
  TaskStatus awaitStatus(String taskId, String what, Predicate<TaskStatus> condition) {
    return await(taskId + ": " + what).atMost(TIMEOUT).pollInterval(Duration.ofMillis(20))
        .until(() -> statuses(taskId).stream().filter(condition).findFirst().orElse(null), s -> s != null);
  }

  @Override
  public void close() {
    tasks.close();
    epochs.close();
    statusConsumer.close();
    taskConsumer.close();
  }
}
