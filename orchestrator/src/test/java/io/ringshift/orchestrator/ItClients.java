package io.ringshift.orchestrator;

import io.ringshift.devkit.junit.EmbeddedKafkaExtension;
import io.ringshift.ring.Member;
import io.ringshift.ring.RingSnapshot;
import io.ringshift.schemas.avro.EpochRecord;
import io.ringshift.schemas.avro.MembershipEvent;
import io.ringshift.schemas.avro.RangeCopyTask;
import io.ringshift.schemas.avro.TaskState;
import io.ringshift.schemas.avro.TaskStatus;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.Set;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

/** What the orchestrator ITs write to and read from the broker, as a membership tool and workers would. */
final class ItClients {
  static final Duration TIMEOUT = Duration.ofSeconds(60);

  private ItClients() {}

  static void send(EmbeddedKafkaExtension kafka, OrchestratorConfig config, MembershipEvent... events) {
    try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(producerProps(kafka),
        new ByteArraySerializer(), new ByteArraySerializer())) {
      for (MembershipEvent e : events) {
        producer.send(new ProducerRecord<>(config.topics().membership().name(), Events.key(e), Events.bytes(e)));
      }
      producer.flush();
    }
  }

  /** Reports every task VERIFIED, as the migration workers would. */
  static void verify(EmbeddedKafkaExtension kafka, OrchestratorConfig config, List<RangeCopyTask> tasks) {
    report(kafka, config, tasks, TaskState.VERIFIED);
  }

  /** Reports every task in {@code state}, as the migration workers would. */
  static void report(EmbeddedKafkaExtension kafka, OrchestratorConfig config, List<RangeCopyTask> tasks,
      TaskState state) {
    try (KafkaProducer<String, byte[]> producer = new KafkaProducer<>(producerProps(kafka), new StringSerializer(),
        new ByteArraySerializer())) {
      for (RangeCopyTask t : tasks) {
        TaskStatus status = Events.verified(t.getClusterId(), t.getEpoch(), t.getTaskId());
        status.setState(state);
        producer.send(new ProducerRecord<>(config.topics().taskStatus().name(), t.getTaskId(),
            config.topics().taskStatus().valueSerde().serializer().serialize("", status)));
      }
      producer.flush();
    }
  }

  /** Ids of the cleanup tasks of the ITs' usual change: node-12 (az-2) joins the 12-node ring (V = 32, R = 3). */
  static List<String> joinCleanupIds(String cluster) {
    var builder = RingSnapshot.builder().clusterId(cluster).epoch(1).vnodes(32).replicas(3);
    Events.members(12).forEach(m -> builder.addMember(m.getId(), m.getZone(), m.getWeight()));
    RingSnapshot active = builder.build();
    List<Member> joined = new ArrayList<>(active.members());
    joined.add(Member.of("node-12", "az-2"));
    return EpochPlanner.plan(active, joined, 2, 0, Set.of(), 0).cleanupTasks().stream()
        .map(PlannedTask::taskId).toList();
  }

  static List<EpochRecord> epochs(EmbeddedKafkaExtension kafka, OrchestratorConfig config, int count) {
    return values(kafka.consume(config.topics().epochs().name(), count, TIMEOUT, IsolationLevel.READ_COMMITTED,
        new StringDeserializer(), config.topics().epochs().valueSerde().deserializer()));
  }

  static List<RangeCopyTask> tasks(EmbeddedKafkaExtension kafka, OrchestratorConfig config, int count) {
    return values(kafka.consume(config.topics().tasks().name(), count, TIMEOUT, IsolationLevel.READ_COMMITTED,
        new StringDeserializer(), config.topics().tasks().valueSerde().deserializer()));
  }

  static <V> List<V> values(List<ConsumerRecord<String, V>> records) {
    List<V> values = new ArrayList<>();
    records.forEach(r -> values.add(r.value()));
    return values;
  }

  private static Properties producerProps(EmbeddedKafkaExtension kafka) {
    Properties p = new Properties();
    p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers());
    return p;
  }
}
