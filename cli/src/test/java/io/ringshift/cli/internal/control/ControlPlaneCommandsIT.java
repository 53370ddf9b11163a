package io.ringshift.cli.internal.control;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.ringshift.orchestrator.admin.ControlPlaneAdmin;
import io.ringshift.cli.internal.Cli;
import io.ringshift.cli.internal.Fixtures;
import io.ringshift.devkit.junit.EmbeddedKafkaExtension;
import io.ringshift.orchestrator.Orchestrator;
import io.ringshift.orchestrator.OrchestratorConfig;
import io.ringshift.protocol.RecordSerdes;
import io.ringshift.protocol.Topics;
import io.ringshift.schemas.avro.HotKeyShare;
import io.ringshift.schemas.avro.HotKeysReport;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * The control-plane commands against a real broker and a real orchestrator in this JVM. Each test has its own
 * topics (the hidden {@code --topic-prefix}) and its own orchestrator application id on the class's one broker.
 */
class ControlPlaneCommandsIT {
  @RegisterExtension static final EmbeddedKafkaExtension KAFKA = new EmbeddedKafkaExtension();

  private static final Duration TIMEOUT = Duration.ofSeconds(60);
  private static final ObjectMapper JSON = new ObjectMapper();

  @TempDir Path dir;

  private OrchestratorConfig config;
  private Orchestrator orchestrator;
  private Path members;

  @BeforeEach
  void startOrchestrator() {
    config = OrchestratorConfig.local(KAFKA.bootstrapServers(), dir.resolve("state"))
        .withApplicationId(KAFKA.applicationId())
        .withTopics(Topics.withPrefix(KAFKA.topicPrefix()));
    members = Fixtures.write(dir.resolve("members.json"), Fixtures.membersJson(12, 3));
  }

  @AfterEach
  void stopOrchestrator() {
    if (orchestrator != null) {
      orchestrator.close();
    }
  }

  private void runOrchestrator() {
    orchestrator = new Orchestrator(config).start(TIMEOUT);
  }

  /** Runs the command line with this test's broker and topics. */
  private static Cli.Result cli(String... args) {
    List<String> all = new ArrayList<>(List.of(args));
    all.addAll(List.of("--bootstrap", KAFKA.bootstrapServers(), "--topic-prefix", KAFKA.topicPrefix()));
    return Cli.run(all.toArray(String[]::new));
  }

  private Cli.Result init() {
    // Without --wait init waits for the orchestrator's answer; --wait would follow it to PUBLISHED, and this test
    // runs no publisher.
    Cli.Result result = cli("init", "--members", members.toString(), "--vnodes", "32");
    assertThat(result.exitCode()).as(result.toString()).isZero();
    return result;
  }

  private static JsonNode json(Cli.Result result) throws Exception {
    assertThat(result.exitCode()).as(result.toString()).isZero();
    return JSON.readTree(result.stdout());
  }

  @Test
  void shouldShowEpochOneAfterInit() throws Exception {
    runOrchestrator();

    Cli.Result init = init();

    List<String> lines = init.stdout().lines().toList();
    assertThat(lines.get(0)).matches("request [0-9a-f-]{36}: INIT of cluster default \\(12 members in 3 zones, "
        + "vnodes 32, replicas 3, checksum [0-9a-f]{12}\\) written to .*ring.membership at 127.0.0.1:\\d+");
    assertThat(lines.get(1)).matches("epoch 1 READY \\(plan 0, 12 members, checksum [0-9a-f]{12}\\)");

    Cli.Result status = cli("status");
    assertThat(status.exitCode()).as(status.toString()).isZero();
    assertThat(status.stdout().lines()).element(1).asString()
        .startsWith("active     epoch 1 READY: 12 members in 3 zones, vnodes 32, replicas 3, checksum ");
    assertThat(status.stdout()).contains("in flight  none\n", "rejected   none\n");

    JsonNode json = json(cli("status", "--json"));
    assertThat(json.get("active").get("epoch").asLong()).isEqualTo(1);
    assertThat(json.get("active").get("cause").get("requestId").asText())
        .isEqualTo(lines.get(0).substring("request ".length(), "request ".length() + 36));
    assertThat(json.get("inFlight").isNull()).isTrue();
    assertThat(json.get("hotKeys").get("clients").asInt()).as("no client reported hot keys").isZero();
    assertThat(json.get("hotKeys").get("keys")).isEmpty();

    // A client's report on ring.hot-keys (RingClientConfig.reportHotKeys writes these) shows in both forms.
    HotKeysReport report = HotKeysReport.newBuilder().setClusterId("default").setClientId("web-1").setLookups(1_000)
        .setKeys(List.of(new HotKeyShare(java.nio.ByteBuffer.wrap("user:42".getBytes(StandardCharsets.UTF_8)), 0.25,
            0.01)))
        .setTimestampMillis(System.currentTimeMillis()).build();
    try (KafkaProducer<String, byte[]> producer = new KafkaProducer<>(
        Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, KAFKA.bootstrapServers()), new StringSerializer(),
        new ByteArraySerializer())) {
      producer.send(new ProducerRecord<>(Topics.withPrefix(KAFKA.topicPrefix()).hotKeys().name(), "default/web-1",
          RecordSerdes.hotKeysReport().serialize(report))).get();
    }
    JsonNode hotKeys = json(cli("status", "--json")).get("hotKeys");
    assertThat(hotKeys.get("clients").asInt()).isEqualTo(1);
    JsonNode hot = hotKeys.get("keys");
    assertThat(hot).hasSize(1);
    assertThat(hot.get(0).get("key").asText()).isEqualTo("user:42");
    assertThat(hot.get(0).get("share").asDouble()).isEqualTo(0.25);
    assertThat(cli("status").stdout()).contains("25.00%  (1.00%)  user:42");
  }

  @Test
  void shouldPrintThePlannedEpochOfAJoinAndTheReasonForADuplicateOne() throws Exception {
    runOrchestrator();
    init();

    Cli.Result join = cli("join", "node-013", "--zone", "az-2");

    assertThat(join.exitCode()).as(join.toString()).isZero();
    List<String> lines = join.stdout().lines().toList();
    assertThat(lines).hasSize(3);
    assertThat(lines.get(2)).isEqualTo("follow it with: ringshift status --watch --cluster default (or run the "
        + "command with --wait to follow it to PUBLISHED)");
    assertThat(lines.get(1)).startsWith("epoch 2 PLANNED (plan 0, 13 members, checksum ").contains(" tasks, ");
    int tasks = Integer.parseInt(lines.get(1).replaceAll(".*: (\\d+) tasks.*", "$1"));
    assertThat(tasks).isPositive();

    Cli.Result duplicate = cli("join", "node-013", "--zone", "az-2");

    assertThat(duplicate.exitCode()).as(duplicate.toString()).isEqualTo(2);
    String requestId = duplicate.stdout().substring("request ".length(), "request ".length() + 36);
    assertThat(duplicate.stderr()).isEqualTo("ringshift: request " + requestId + " was rejected: JOIN of node node-013: "
        + "it is already a member of cluster default\n");

    JsonNode status = json(cli("status", "--json"));
    assertThat(status.get("inFlight").get("epoch").asLong()).isEqualTo(2);
    assertThat(status.get("tasks")).hasSize(tasks);
    assertThat(status.get("taskCounts").get("PENDING").asInt()).isEqualTo(tasks);
    assertThat(status.get("rejected").get(0).get("requestId").asText()).isEqualTo(requestId);
    assertThat(cli("status").stdout()).contains("in flight  epoch 2 plan 0 PLANNED: JOIN node-013 (az-2)",
        "tasks      " + tasks + ": PENDING " + tasks, "request " + requestId + "  JOIN of node node-013: it is "
            + "already a member");
  }

  @Test
  void shouldListTheAuditLog() throws Exception {
    runOrchestrator();
    init();
    assertThat(cli("drain", "node-001").exitCode()).isZero();

    Cli.Result epochs = cli("epochs");

    assertThat(epochs.exitCode()).as(epochs.toString()).isZero();
    List<String> lines = epochs.stdout().lines().toList();
    assertThat(lines.get(0)).isEqualTo("cluster default: 3 epoch records");
    assertThat(lines.get(1)).startsWith("TIME ").contains(" EPOCH ", " STATE ", " CAUSE ", " CHECKSUM ", " MOVED ");
    assertThat(lines.subList(2, 5)).satisfiesExactly(
        l -> assertThat(l).containsPattern("  1 +0 +PLANNED +INIT +[0-9a-f-]{36} +12 +[0-9a-f]{12} +0 +0.00%$"),
        l -> assertThat(l).containsPattern("  1 +0 +READY +INIT "),
        l -> assertThat(l).containsPattern("  2 +0 +PLANNED +DRAIN node-001 +[0-9a-f-]{36} +11 "));
    JsonNode json = json(cli("epochs", "--json"));
    assertThat(json.get("epochs")).hasSize(3);
    assertThat(json.get("epochs").get(2).get("cause").get("action").asText()).isEqualTo("DRAIN");
  }

  @Test
  void shouldPlanTheTasksOfAChangeWithoutWritingAnything() throws Exception {
    runOrchestrator();
    init();
    Map<TopicPartition, Long> before = endOffsets();

    JsonNode plan = json(cli("plan", "join", "node-013", "--zone", "az-2", "--json"));
    Cli.Result text = cli("plan", "join", "node-013", "--zone", "az-2", "--cluster-bytes", "24TiB");

    assertThat(endOffsets()).as("end offsets of every topic after plan").isEqualTo(before);
    assertThat(text.exitCode()).as(text.toString()).isZero();
    assertThat(text.stdout()).contains("from       active epoch 1 (12 members", "to         epoch 2 plan 0 (13 members",
        "tasks      " + plan.get("tasks").asInt() + " ", "cluster of 24.0 TiB");

    // What plan showed is what the orchestrator then does.
    Cli.Result join = cli("join", "node-013", "--zone", "az-2");
    assertThat(join.stdout()).contains("epoch 2 PLANNED (plan 0, 13 members, checksum "
        + plan.get("toChecksum").asText().substring(0, 12) + "): " + plan.get("tasks").asInt() + " tasks");
    assertThat(liveTasks()).isEqualTo(tasksOf(plan));

    // A change waits for epoch 2: plan shows it from epoch 2's target.
    assertThat(cli("plan", "drain", "node-003").stdout())
        .contains("from       the target of epoch 2 (13 members", "to         epoch 3 plan 0 (12 members");
    // A FAIL publishes failure epoch 2 at once and plans the join and the repair as epoch 3: plan shows that
    // plan, and the orchestrator makes exactly it.
    JsonNode replan = json(cli("plan", "fail", "node-003", "--json"));
    assertThat(replan.get("basis").asText()).isEqualTo("FAILURE");
    Cli.Result fail = cli("fail", "node-003");
    assertThat(fail.stdout()).as(fail.toString()).contains("epoch 3 PLANNED (plan 0, 12 members, checksum "
        + replan.get("toChecksum").asText().substring(0, 12) + "): " + replan.get("tasks").asInt() + " tasks");
    assertThat(liveTasks()).as("epoch 3's tasks; epoch 2's tombstoned").isEqualTo(tasksOf(replan));
    // What the orchestrator would refuse, plan refuses with the same reason.
    Cli.Result refused = cli("plan", "join", "node-002", "--zone", "az-2");
    assertThat(refused.exitCode()).isEqualTo(2);
    assertThat(refused.stderr()).isEqualTo("ringshift: the orchestrator would reject JOIN of node-002 (zone az-2, "
        + "weight 1.0): JOIN of node node-002: it is already a member of cluster default\n");
  }

  /** id, sources and target of every task of a plan's JSON. */
  private static Set<String> tasksOf(JsonNode plan) {
    Set<String> tasks = new java.util.HashSet<>();
    plan.get("taskList").forEach(t -> tasks.add(t.get("id").asText() + " " + t.get("sources").toString()));
    return tasks;
  }

  /** id and sources of every live task of the epoch in flight, as status reads them from ring.tasks. */
  private static Set<String> liveTasks() throws Exception {
    Set<String> tasks = new java.util.HashSet<>();
    json(cli("status", "--json")).get("tasks")
        .forEach(t -> tasks.add(t.get("id").asText() + " " + t.get("sources").toString()));
    return tasks;
  }

  @Test
  void shouldRefuseToInitAClusterThatExists() {
    runOrchestrator();
    init();
    Map<TopicPartition, Long> before = endOffsets();

    Cli.Result again = cli("init", "--members", members.toString());

    assertThat(again.exitCode()).as(again.toString()).isEqualTo(2);
    assertThat(again.stdout()).isEmpty();
    assertThat(again.stderr()).matches("ringshift: cluster default already exists at 127.0.0.1:\\d+ \\(latest epoch "
        + "record: epoch 1 READY at .*\\); init declares a new cluster only: use join, drain, fail or set-weight "
        + "to change it\n");
    assertThat(endOffsets()).as("nothing written").isEqualTo(before);
  }

  @Test
  void shouldSayWhenNoOutcomeArrivesAndWhenAClusterIsUnknown() {
    // The topics exist, but no orchestrator reads them.
    Orchestrator.createTopics(config, TIMEOUT);

    Cli.Result join = cli("join", "node-013", "--zone", "az-2", "--wait", "2");

    assertThat(join.exitCode()).as(join.toString()).isEqualTo(1);
    assertThat(join.stdout()).startsWith("request ");
    assertThat(join.stderr()).matches("ringshift: no answer to request [0-9a-f-]{36} within 2 s; is the "
        + "orchestrator running\\? .*\n");
    Cli.Result status = cli("status", "--cluster", "nobody");
    assertThat(status.exitCode()).isEqualTo(2);
    assertThat(status.stderr()).matches("ringshift: cluster nobody has no epoch at 127.0.0.1:\\d+ \\(declare it "
        + "with `ringshift init`\\)\n");
  }

  @Test
  void shouldNameTheTopicsThatDoNotExist() {
    Cli.Result status = cli("status");

    assertThat(status.exitCode()).isEqualTo(2);
    assertThat(status.stderr()).startsWith("ringshift: Kafka at " + KAFKA.bootstrapServers() + " has no topics "
        + KAFKA.topicPrefix() + "ring.epochs, ");
  }

  private Map<TopicPartition, Long> endOffsets() {
    try (ControlPlaneAdmin client = ControlPlaneAdmin.connect(KAFKA.bootstrapServers(), config.topics(),
        Duration.ofSeconds(10))) {
      return client.endOffsetsOfAllTopics();
    }
  }
}
