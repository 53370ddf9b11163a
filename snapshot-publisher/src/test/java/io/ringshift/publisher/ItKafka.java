package io.ringshift.publisher;

import io.ringshift.protocol.Topic;
import io.ringshift.protocol.Topics;
import io.ringshift.schemas.avro.EpochRecord;
import io.ringshift.schemas.avro.EpochState;
import io.ringshift.schemas.avro.RangeCopyTask;
import io.ringshift.schemas.avro.TaskStatus;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * What the publisher ITs write and read, as the orchestrator and the workers would write and a client would read:
 * every read is read_committed, over all partitions, from the beginning to the end offsets of the moment.
 */
final class ItKafka implements AutoCloseable {
  static final Duration TIMEOUT = Duration.ofSeconds(30);

  private final String bootstrap;
  private final Topics topics;
  private final KafkaProducer<String, byte[]> producer;

  ItKafka(String bootstrap, Topics topics) {
    this.bootstrap = bootstrap;
    this.topics = topics;
    Properties p = new Properties();
    p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    p.put(ProducerConfig.ACKS_CONFIG, "all");
    this.producer = new KafkaProducer<>(p, new StringSerializer(), new ByteArraySerializer());
  }

  Topics topics() {
    return topics;
  }

  /** Creates the control plane's topics with 3 partitions, as the orchestrator does; optionally not snapshots. */
  void createTopics(boolean snapshotsToo) {
    List<NewTopic> topicsToCreate = new ArrayList<>();
    for (Topic<?, ?> t : topics.all()) {
      if (snapshotsToo || !t.name().equals(topics.snapshots().name())) {
        topicsToCreate.add(new NewTopic(t.name(), 3, (short) 1).configs(Map.copyOf(t.configs())));
      }
    }
    try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap))) {
      admin.createTopics(topicsToCreate).all().get(30, TimeUnit.SECONDS);
    } catch (ExecutionException | TimeoutException e) {
      throw new IllegalStateException("could not create the topics: " + e, e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  /**
   * Writes a step as the orchestrator and its workers would: PLANNED, the tasks, their VERIFIED statuses, then
   * READY once those are acknowledged.
   */
  void write(ClusterScript.Step step) {
    write(step, step.verified(), step.ready());
  }

  /** Writes the step's PLANNED record, its tasks, the given statuses and then {@code ready}. */
  void write(ClusterScript.Step step, List<TaskStatus> statuses, EpochRecord ready) {
    epoch(step.planned());
    for (RangeCopyTask t : step.tasks()) {
      send(topics.tasks(), t.getTaskId(), t);
    }
    for (TaskStatus s : statuses) {
      send(topics.taskStatus(), s.getTaskId(), s);
    }
    producer.flush();
    epoch(ready);
    producer.flush();
  }

  /** Writes a task status on ring.task-status, as a worker does. */
  void status(TaskStatus status) {
    send(topics.taskStatus(), status.getTaskId(), status);
    producer.flush();
  }

  /** Writes tasks on ring.tasks, as the orchestrator writes a plan, and no status. */
  void tasks(List<RangeCopyTask> tasks) {
    tasks.forEach(t -> send(topics.tasks(), t.getTaskId(), t));
    producer.flush();
  }

  /** Writes a tombstone on ring.tasks for each task, as the orchestrator removes a superseded plan's tasks. */
  void tombstones(List<RangeCopyTask> tasks) {
    tasks.forEach(t -> producer.send(new ProducerRecord<>(topics.tasks().name(), t.getTaskId(), null)));
    producer.flush();
  }

  void epoch(EpochRecord record) {
    send(topics.epochs(), record.getClusterId(), record);
    producer.flush();
  }

  /** A participant's report on ring.participants, as a client's reporter writes it. */
  void participant(io.ringshift.schemas.avro.ParticipantReport report) {
    send(topics.participants(), report.getClusterId() + "/" + report.getParticipantId(), report);
    producer.flush();
  }

  private <V> void send(Topic<String, V> topic, String key, V value) {
    producer.send(new ProducerRecord<>(topic.name(), key, topic.valueSerde().serializer().serialize(topic.name(),
        value)));
  }

  /** Every record of ring.epochs, in log order within each cluster. */
  List<EpochRecord> epochs() {
    List<EpochRecord> out = new ArrayList<>();
    for (ConsumerRecord<String, byte[]> r : readAll(topics.epochs().name())) {
      out.add(topics.epochs().valueSerde().deserializer().deserialize(r.topic(), r.value()));
    }
    return out;
  }

  List<EpochRecord> epochs(EpochState state) {
    return epochs().stream().filter(e -> e.getState() == state).toList();
  }

  /** Every record of ring.snapshots (keys and encoded values), in log order within each cluster. */
  List<ConsumerRecord<String, byte[]>> snapshots() {
    return readAll(topics.snapshots().name());
  }

  private List<ConsumerRecord<String, byte[]>> readAll(String topic) {
    Properties p = new Properties();
    p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    p.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
    p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
    List<ConsumerRecord<String, byte[]>> out = new ArrayList<>();
    try (KafkaConsumer<String, byte[]> consumer = new KafkaConsumer<>(p, new StringDeserializer(),
        new ByteArrayDeserializer())) {
      List<TopicPartition> partitions = consumer.partitionsFor(topic, TIMEOUT).stream()
          .map(i -> new TopicPartition(topic, i.partition())).toList();
      consumer.assign(partitions);
      consumer.seekToBeginning(partitions);
      Map<TopicPartition, Long> ends = consumer.endOffsets(partitions);
      long deadline = System.nanoTime() + TIMEOUT.toNanos();
      while (partitions.stream().anyMatch(tp -> consumer.position(tp) < ends.get(tp))) {
        if (System.nanoTime() > deadline) {
          throw new AssertionError("could not read " + topic + " to its end " + ends + " within " + TIMEOUT);
        }
        consumer.poll(Duration.ofMillis(100)).forEach(out::add);
      }
    }
    out.sort(Comparator.<ConsumerRecord<String, byte[]>>comparingInt(ConsumerRecord::partition)
        .thenComparingLong(ConsumerRecord::offset));
    return out;
  }

  @Override
  public void close() {
    producer.close(Duration.ofSeconds(5));
  }
}
