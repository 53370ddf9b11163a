package io.ringshift.orchestrator;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.search.RequiredSearch;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.ringshift.protocol.Topics;
import io.ringshift.schemas.avro.MembershipAction;
import io.ringshift.schemas.avro.MembershipEvent;
import io.ringshift.schemas.avro.RangeCopyTask;
import io.ringshift.schemas.avro.TaskStatus;
import java.nio.file.Path;
import java.util.List;
import java.util.Properties;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.TestInputTopic;
import org.apache.kafka.streams.TestOutputTopic;
import org.apache.kafka.streams.TopologyTestDriver;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The topology's meters follow what it processes (docs/metrics.md). */
class OrchestratorMetricsTest {
  private static final String CLUSTER = "c1";
  private static final Topics TOPICS = Topics.defaults();

  @TempDir Path stateDir;
  private final MeterRegistry registry = new SimpleMeterRegistry();
  private TopologyTestDriver driver;
  private TestInputTopic<byte[], byte[]> membership;
  private TestInputTopic<String, TaskStatus> statuses;
  private TestOutputTopic<String, RangeCopyTask> tasks;

  @BeforeEach
  void startDriver() {
    Properties props = new Properties();
    props.put(StreamsConfig.APPLICATION_ID_CONFIG, "orchestrator-metrics-test");
    props.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, "unused:9092");
    props.put(StreamsConfig.STATE_DIR_CONFIG, stateDir.toString());
    driver = new TopologyTestDriver(OrchestratorTopology.build(TOPICS, 1L << 40, 3, registry), props);
    membership = driver.createInputTopic(TOPICS.membership().name(), new ByteArraySerializer(),
        new ByteArraySerializer());
    statuses = driver.createInputTopic(TOPICS.taskStatus().name(), new StringSerializer(),
        TOPICS.taskStatus().valueSerde().serializer());
    tasks = driver.createOutputTopic(TOPICS.tasks().name(), new StringDeserializer(),
        TOPICS.tasks().valueSerde().deserializer());
  }

  @AfterEach
  void closeDriver() {
    driver.close();
  }

  private void send(MembershipEvent e) {
    membership.pipeInput(Events.key(e), Events.bytes(e));
  }

  private double epochs(String state) {
    return registry.get("ringshift.orchestrator.epochs").tag("state", state).counter().count();
  }

  private double rejects(String reason) {
    return registry.get("ringshift.orchestrator.rejects").tag("reason", reason).counter().count();
  }

  private double gauge(String name, String... tags) {
    RequiredSearch search = registry.get(name).tag("cluster", CLUSTER);
    if (tags.length > 0) {
      search = search.tags(tags);
    }
    return search.gauge().value();
  }

  @Test
  void shouldFollowTheEpochsAndTasksOfAJoin() {
    send(Events.init(CLUSTER, 12, 32));
    assertThat(epochs("PLANNED")).isEqualTo(1);
    assertThat(epochs("READY")).isEqualTo(1);
    assertThat(gauge("ringshift.orchestrator.epoch")).isEqualTo(1);

    send(Events.change(CLUSTER, MembershipAction.JOIN, "node-12", "az-2", null));
    List<RangeCopyTask> copies = tasks.readValuesToList();
    assertThat(copies).isNotEmpty();
    assertThat(epochs("PLANNED")).isEqualTo(2);
    assertThat(gauge("ringshift.orchestrator.target.epoch")).isEqualTo(2);
    assertThat(gauge("ringshift.orchestrator.tasks", "state", "unverified")).isEqualTo(copies.size());
    assertThat(gauge("ringshift.orchestrator.tasks", "state", "verified")).isZero();

    RangeCopyTask first = copies.get(0);
    statuses.pipeInput(first.getTaskId(), Events.verified(CLUSTER, first.getEpoch(), first.getTaskId()));
    assertThat(gauge("ringshift.orchestrator.tasks", "state", "verified")).isEqualTo(1);
    for (RangeCopyTask t : copies.subList(1, copies.size())) {
      statuses.pipeInput(t.getTaskId(), Events.verified(CLUSTER, t.getEpoch(), t.getTaskId()));
    }

    assertThat(epochs("READY")).isEqualTo(2);
    assertThat(gauge("ringshift.orchestrator.published.epoch")).isEqualTo(-1);
  }

  @Test
  void shouldCountRejectsByAFixedSetOfReasons() {
    send(Events.change(CLUSTER, MembershipAction.JOIN, "node-12", "az-2", null));
    assertThat(rejects("unknown_cluster")).isEqualTo(1);
    assertThat(registry.find("ringshift.orchestrator.epoch").gauges())
        .as("no series for a cluster that does not exist").isEmpty();

    send(Events.init(CLUSTER, 12, 32));
    send(Events.init(CLUSTER, 12, 32));
    send(Events.change(CLUSTER, MembershipAction.JOIN, "node-03", "az-1", null));
    membership.pipeInput("c1/node-99".getBytes(), new byte[] {(byte) 0xC3, 0x01, 1, 2, 3});

    assertThat(rejects("cluster_exists")).isEqualTo(1);
    assertThat(rejects("refused_change")).isEqualTo(1);
    assertThat(rejects("malformed")).isEqualTo(1);
    assertThat(rejects("rolled_back")).isZero();
  }
}
