package io.ringshift.orchestrator;

import io.ringshift.protocol.Topics;
import static org.assertj.core.api.Assertions.assertThat;

import io.ringshift.devkit.junit.EmbeddedKafkaExtension;
import io.ringshift.schemas.avro.EpochRecord;
import io.ringshift.schemas.avro.MembershipAction;
import io.ringshift.schemas.avro.RangeCopyTask;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.Deserializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * Exactly-once under a hard crash: the orchestrator runs in a child JVM that is killed with SIGKILL while it
 * processes a stream of task statuses (mid-transaction), then a new instance finishes the work. Every epoch
 * record and every task must be there exactly once (read_committed, to the end of each topic).
 */
class OrchestratorCrashIT {
  @RegisterExtension static final EmbeddedKafkaExtension KAFKA = new EmbeddedKafkaExtension();

  private static final Duration TIMEOUT = Duration.ofSeconds(60);
  private static final String CLUSTER = "c1";

  @Test
  void shouldNeitherDuplicateNorLoseAnythingWhenKilledMidTransaction(@TempDir Path childState,
      @TempDir Path stateDir) throws Exception {
    OrchestratorConfig config = OrchestratorConfig.local(KAFKA.bootstrapServers(), stateDir)
        .withApplicationId(KAFKA.applicationId())
        .withTopics(Topics.withPrefix(KAFKA.topicPrefix()));
    Orchestrator.createTopics(config, TIMEOUT);
    Process child = startChild(config, childState);
    List<RangeCopyTask> firstTasks;
    try {
      ItClients.send(KAFKA, config, Events.init(CLUSTER, 12, 32));
      ItClients.send(KAFKA, config, Events.change(CLUSTER, MembershipAction.JOIN, "node-12", "az-2", null));
      int expected = ItClients.epochs(KAFKA, config, 3).get(2).getDiffSummary().getTasks();
      firstTasks = ItClients.values(KAFKA.consume(config.topics().tasks().name(), expected, TIMEOUT,
          IsolationLevel.READ_COMMITTED, new StringDeserializer(), config.topics().tasks().valueSerde()
              .deserializer()));
      // Statuses for every task and a queued change, then SIGKILL while they are being processed.
      ItClients.verify(KAFKA, config, firstTasks);
      ItClients.send(KAFKA, config, Events.change(CLUSTER, MembershipAction.JOIN, "node-13", "az-3", null));
    } finally {
      child.destroyForcibly();
      assertThat(child.waitFor(30, TimeUnit.SECONDS)).as("child JVM ended").isTrue();
    }

    try (Orchestrator orchestrator = new Orchestrator(config).start(TIMEOUT)) {
      List<EpochRecord> epochs = ItClients.epochs(KAFKA, config, 5);
      assertThat(epochs).extracting(e -> e.getState() + "@" + e.getEpoch())
          .containsExactly("PLANNED@1", "READY@1", "PLANNED@2", "READY@2", "PLANNED@3");
      int epoch3Tasks = epochs.get(4).getDiffSummary().getTasks();
      int cleanups = ItClients.joinCleanupIds(CLUSTER).size();
      KAFKA.consume(config.topics().tasks().name(), firstTasks.size() + cleanups + epoch3Tasks, TIMEOUT,
          IsolationLevel.READ_COMMITTED);
      // Exact counts, reading to the end: no duplicate from the replayed transaction.
      assertThat(readAll(config.topics().epochs().name(), config.topics().epochs().valueSerde().deserializer()))
          .hasSize(5);
      List<RangeCopyTask> tasks = readAll(config.topics().tasks().name(),
          config.topics().tasks().valueSerde().deserializer());
      Map<String, Integer> perId = new HashMap<>();
      tasks.forEach(t -> perId.merge(t.getTaskId(), 1, Integer::sum));
      assertThat(perId).allSatisfy((id, count) -> assertThat(count).as("task %s", id).isEqualTo(1));
      assertThat(tasks).hasSize(firstTasks.size() + cleanups + epoch3Tasks);
    }
  }

  private static Process startChild(OrchestratorConfig config, Path stateDir) throws IOException {
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    Process child = new ProcessBuilder(java, "-cp", System.getProperty("java.class.path"),
        OrchestratorChild.class.getName(), config.bootstrapServers(), config.applicationId(),
        KAFKA.topicPrefix(), stateDir.toString())
        .redirectErrorStream(true)
        .start();
    BufferedReader out = new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8));
    long deadline = System.nanoTime() + TIMEOUT.toNanos();
    String line;
    while ((line = out.readLine()) != null) {
      if (line.equals("RUNNING")) {
        // Keep draining the child's output so that it never blocks on a full pipe.
        Thread drain = new Thread(() -> out.lines().forEach(l -> { }), "child-output");
        drain.setDaemon(true);
        drain.start();
        return child;
      }
      if (System.nanoTime() > deadline) {
        break;
      }
    }
    child.destroyForcibly();
    throw new IllegalStateException("the child orchestrator did not report RUNNING within " + TIMEOUT);
  }




  private static <V> List<ConsumerRecord<String, V>> records(String topic, Deserializer<V> values) {
    Properties p = new Properties();
    p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, KAFKA.bootstrapServers());
    p.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
    List<ConsumerRecord<String, V>> all = new ArrayList<>();
    try (KafkaConsumer<String, V> consumer = new KafkaConsumer<>(p, new StringDeserializer(), values)) {
      List<TopicPartition> partitions = consumer.partitionsFor(topic).stream()
          .map(i -> new TopicPartition(topic, i.partition())).toList();
      consumer.assign(partitions);
      consumer.seekToBeginning(partitions);
      Map<TopicPartition, Long> end = consumer.endOffsets(partitions);
      long deadline = System.nanoTime() + TIMEOUT.toNanos();
      while (partitions.stream().anyMatch(tp -> consumer.position(tp) < end.get(tp))) {
        if (System.nanoTime() > deadline) {
          throw new AssertionError("could not read " + topic + " to its end offsets " + end + " within " + TIMEOUT);
        }
        consumer.poll(Duration.ofMillis(200)).forEach(all::add);
      }
    }
    return all;
  }


  private static <V> List<V> readAll(String topic, Deserializer<V> values) {
    List<V> out = new ArrayList<>();
    records(topic, values).forEach(r -> out.add(r.value()));
    return out;
  }

}
