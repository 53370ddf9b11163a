package io.ringshift.cli.internal.audit;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.ringshift.audit.History;
import io.ringshift.cli.Ringshift;
import io.ringshift.cli.internal.Cli;
import io.ringshift.devkit.junit.EmbeddedKafkaExtension;
import io.ringshift.orchestrator.Orchestrator;
import io.ringshift.orchestrator.OrchestratorConfig;
import io.ringshift.protocol.Topics;
import io.ringshift.protocol.PublishedSnapshot;
import io.ringshift.protocol.RecordSerdes;
import io.ringshift.protocol.RingSnapshotCodec;
import io.ringshift.protocol.SigningKey;
import io.ringshift.schemas.avro.EpochRecord;
import io.ringshift.schemas.avro.EpochState;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code ringshift audit} against a real broker: each test creates the control plane's topics (3 partitions, as the
 * orchestrator creates them) under its own prefix and writes a history the way the orchestrator and the publisher
 * write it, in transactions: PLANNED and READY in one, then the snapshot on ring.snapshots and the PUBLISHED record
 * in another.
 */
class AuditIT {
  @RegisterExtension static final EmbeddedKafkaExtension KAFKA = new EmbeddedKafkaExtension();

  private static final Duration TIMEOUT = Duration.ofSeconds(30);
  private static final ObjectMapper JSON = new ObjectMapper();

  @TempDir Path dir;

  private Topics topics;
  private SigningKey key;
  private Path trustedKey;
  private History history;

  @BeforeEach
  void createTopicsAndKey() throws Exception {
    topics = Topics.withPrefix(KAFKA.topicPrefix());
    Orchestrator.createTopics(OrchestratorConfig.local(KAFKA.bootstrapServers(), dir.resolve("state"))
        .withTopics(topics), TIMEOUT);
    key = SigningKey.generate();
    key.write(dir.resolve("publisher.key"), dir.resolve("publisher.pub"));
    trustedKey = dir.resolve("publisher.pub");
    history = History.standard("default", key);
  }

  /** Runs the command line with this test's broker and topics. */
  private static Cli.Result cli(String... args) {
    List<String> all = new ArrayList<>(List.of(args));
    all.addAll(List.of("--bootstrap", KAFKA.bootstrapServers(), "--topic-prefix", KAFKA.topicPrefix()));
    return Cli.run(all.toArray(String[]::new));
  }

  private KafkaProducer<byte[], byte[]> producer() {
    Properties p = new Properties();
    p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, KAFKA.bootstrapServers());
    p.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, KAFKA.applicationId());
    p.put(ProducerConfig.ACKS_CONFIG, "all");
    return new KafkaProducer<>(p, new ByteArraySerializer(), new ByteArraySerializer());
  }

  /** Writes the history: per epoch, PLANNED and READY in one transaction, snapshot and PUBLISHED in the next. */
  private void writeHistory(History h) {
    try (KafkaProducer<byte[], byte[]> producer = producer()) {
      producer.initTransactions();
      List<EpochRecord> records = h.epochs();
      for (int i = 0; i < records.size(); i++) {
        EpochRecord e = records.get(i);
        if (e.getState() != EpochState.PUBLISHED) {
          if (e.getState() == EpochState.PLANNED) {
            producer.beginTransaction();
          }
          producer.send(epochRecord(e));
          if (e.getState() == EpochState.READY) {
            producer.commitTransaction();
          }
          continue;
        }
        producer.beginTransaction();
        producer.send(snapshot(h.cluster(), h.snapshots().get((int) e.getEpoch() - 1).value()));
        producer.send(epochRecord(e));
        producer.commitTransaction();
      }
      // A publisher that crashed mid-transaction: its snapshot of epoch 6 is aborted, which read_committed skips.
      producer.beginTransaction();
      PublishedSnapshot latest = h.snapshot(h.latestEpoch());
      producer.send(snapshot(h.cluster(), new RingSnapshotCodec().encode(PublishedSnapshot.unsigned(
          latest.ring().toBuilder().epoch(h.latestEpoch() + 1).build(), latest.checksum(), List.of()).signedBy(key))));
      producer.flush();
      producer.abortTransaction();
    }
  }

  private ProducerRecord<byte[], byte[]> epochRecord(EpochRecord e) {
    return new ProducerRecord<>(topics.epochs().name(), e.getClusterId().getBytes(StandardCharsets.UTF_8),
        RecordSerdes.epochRecord().serialize(e));
  }

  private ProducerRecord<byte[], byte[]> snapshot(String cluster, byte[] value) {
    return new ProducerRecord<>(topics.snapshots().name(), cluster.getBytes(StandardCharsets.UTF_8), value);
  }

  /** Writes one snapshot outside any transaction, as anyone with write access to the topic could. */
  private void writeSnapshot(String cluster, byte[] value) throws Exception {
    Properties p = new Properties();
    p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, KAFKA.bootstrapServers());
    try (KafkaProducer<byte[], byte[]> producer =
        new KafkaProducer<>(p, new ByteArraySerializer(), new ByteArraySerializer())) {
      producer.send(snapshot(cluster, value)).get(TIMEOUT.toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS);
    }
  }

  @Test
  void shouldPassAPublishedHistoryAndFailOnATamperedLatestSnapshot() throws Exception {
    writeHistory(history);

    Cli.Result good = cli("audit", "--trusted-key", trustedKey.toString());

    assertThat(good.exitCode()).as(good.toString()).isZero();
    List<String> lines = good.stdout().lines().toList();
    assertThat(lines).hasSize(8);
    assertThat(lines.get(0)).isEqualTo("cluster default: 5 published epochs of 15 epoch records on ring.epochs, "
        + "5 snapshots on ring.snapshots");
    assertThat(lines.get(1)).matches("EPOCH +STATE +CHECKSUM +KEY +MEMBERS +CAUSE +SNAPSHOT");
    assertThat(lines.get(2)).matches("1 +ok +" + history.snapshot(1).ring().checksumHex().substring(0, 12) + " +"
        + key.id() + " +9 +INIT +match");
    assertThat(lines.get(4)).matches("3 +ok +[0-9a-f]{12} +" + key.id() + " +9 +FAIL node-002 +match");
    assertThat(lines.get(6)).matches("5 +ok +[0-9a-f]{12} +" + key.id() + " +8 +DRAIN node-005 +match");
    assertThat(lines.get(7)).isEqualTo("audit passed: 5 published epochs verified in 1 cluster; snapshot bytes: "
        + "5 match, 0 compacted, 0 absent");
    assertThat(good.stderr()).isEmpty();

    // Epoch 5 again, one member's weight changed and the checksum made to fit, under the publisher's signature.
    PublishedSnapshot latest = history.snapshot(5);
    writeSnapshot("default", History.forgedWithWeight(latest, latest.ring().members().get(0).id(), 2.0));

    Cli.Result tampered = cli("audit", "--trusted-key", trustedKey.toString(), "--cluster", "default");

    assertThat(tampered.exitCode()).as(tampered.toString()).isEqualTo(Ringshift.EXIT_AUDIT_FAILED);
    assertThat(tampered.stderr()).startsWith("ringshift: audit failed: cluster default epoch 5: snapshot bytes: "
        + "expected ").contains("they decode to epoch 5").endsWith("\n");
    assertThat(tampered.stderr().lines()).hasSize(1);
    List<String> tamperedLines = tampered.stdout().lines().toList();
    assertThat(tamperedLines.get(tamperedLines.size() - 1)).matches("5 +FAIL +[0-9a-f]{12} .* +DRAIN node-005 +-");

    JsonNode json = JSON.readTree(cli("audit", "--trusted-key", trustedKey.toString(), "--json").stdout());
    assertThat(json.get("passed").asBoolean()).isFalse();
    assertThat(json.get("failure").get("epoch").asLong()).isEqualTo(5);
    assertThat(json.get("failure").get("check").asText()).isEqualTo("snapshot bytes");
  }

  @Test
  void shouldFailAtTheFirstEpochWhenTheSigningKeyIsNotTrusted() throws Exception {
    writeHistory(history);
    SigningKey other = SigningKey.generate();
    other.write(dir.resolve("other.key"), dir.resolve("other.pub"));

    Cli.Result result = cli("audit", "--trusted-key", dir.resolve("other.pub").toString());

    assertThat(result.exitCode()).as(result.toString()).isEqualTo(Ringshift.EXIT_AUDIT_FAILED);
    assertThat(result.stderr()).startsWith("ringshift: audit failed: cluster default epoch 1: signature: expected a "
        + "key id among the trusted keys [" + other.id() + "], found UNKNOWN_KEY: ");
  }

  @Test
  void shouldPrintPerEpochMovementUnderOtherVnodes() throws Exception {
    writeHistory(history);

    Cli.Result result = cli("audit", "--what-if", "--vnodes", "64");

    assertThat(result.exitCode()).as(result.toString()).isZero();
    List<String> lines = result.stdout().lines().toList();
    assertThat(lines.get(0)).isEqualTo("what-if for cluster default: 5 published epochs; recorded vnodes 16, "
        + "replicas 3; what-if vnodes 64, replicas 3");
    assertThat(lines.subList(2, 8)).satisfiesExactly(
        l -> assertThat(l).matches("1 +INIT +9 +- +- +\\d\\.\\d{3} +\\d\\.\\d{3}"),
        l -> assertThat(l).matches("2 +JOIN node-010 +10 +\\d+\\.\\d\\d% +\\d+\\.\\d\\d% .*"),
        l -> assertThat(l).matches("3 +FAIL node-002 +9 +\\d+\\.\\d\\d% +\\d+\\.\\d\\d% .*"),
        l -> assertThat(l).matches("4 +FAIL node-002 +9 +0\\.00% +0\\.00% .*"),
        l -> assertThat(l).matches("5 +DRAIN node-005 +8 +\\d+\\.\\d\\d% +\\d+\\.\\d\\d% .*"),
        l -> assertThat(l).matches("total +\\d+\\.\\d\\d% +\\d+\\.\\d\\d% +\\d\\.\\d{3} worst +\\d\\.\\d{3} worst"));
    JsonNode json = JSON.readTree(cli("audit", "--what-if", "--vnodes", "64", "--json").stdout());
    JsonNode join = json.get("clusters").get(0).get("epochs").get(1);
    assertThat(join.get("movedActual").asDouble())
        .isEqualTo(history.publishedRecord(2).getDiffSummary().getMovedReplicaFraction());
    assertThat(join.get("movedWhatIf").asDouble()).isPositive();
  }

  @Test
  void shouldRefuseAClusterWithoutEpochRecords() {
    writeHistory(history);

    Cli.Result result = cli("audit", "--trusted-key", trustedKey.toString(), "--cluster", "nope");

    assertThat(result.exitCode()).as(result.toString()).isEqualTo(2);
    assertThat(result.stderr()).isEqualTo("ringshift: cluster nope has no epoch record on ring.epochs at "
        + KAFKA.bootstrapServers() + "; is the cluster id right?\n");
  }

  @Test
  void shouldSayWhenTheTopicsAreMissing() {
    Cli.Result result = Cli.run("audit", "--trusted-key", trustedKey.toString(), "--bootstrap",
        KAFKA.bootstrapServers(), "--topic-prefix", "elsewhere.");

    assertThat(result.exitCode()).as(result.toString()).isEqualTo(2);
    assertThat(result.stderr()).startsWith("ringshift: Kafka at " + KAFKA.bootstrapServers()
        + " has no topic elsewhere.ring.snapshots");
  }
}
