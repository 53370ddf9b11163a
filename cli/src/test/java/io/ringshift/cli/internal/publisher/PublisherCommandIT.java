package io.ringshift.cli.internal.publisher;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.ringshift.cli.internal.Cli;
import io.ringshift.cli.internal.Fixtures;
import io.ringshift.devkit.junit.EmbeddedKafkaExtension;
import io.ringshift.orchestrator.Orchestrator;
import io.ringshift.orchestrator.OrchestratorConfig;
import io.ringshift.protocol.Topics;
import io.ringshift.protocol.PublishedSnapshot;
import io.ringshift.protocol.RingSnapshotCodec;
import io.ringshift.protocol.TrustedKeys;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * {@code ringshift keygen} and {@code ringshift publisher} with the real orchestrator: {@code ringshift init} makes
 * epoch 1 READY, the publisher publishes it, the snapshot verifies with the public key file {@code keygen} wrote,
 * and {@code ringshift epochs} shows the PUBLISHED record.
 */
class PublisherCommandIT {
  @RegisterExtension static final EmbeddedKafkaExtension KAFKA = new EmbeddedKafkaExtension();

  private static final Duration TIMEOUT = Duration.ofSeconds(60);

  @TempDir Path dir;

  private final ExecutorService executor = Executors.newSingleThreadExecutor();
  private final List<AutoCloseable> closing = new ArrayList<>();

  @AfterEach
  void tearDown() throws Exception {
    executor.shutdownNow();
    assertThat(executor.awaitTermination(30, TimeUnit.SECONDS)).as("publisher command stopped").isTrue();
    for (int i = closing.size() - 1; i >= 0; i--) {
      closing.get(i).close();
    }
  }

  @Test
  void shouldPublishTheEpochsTheOrchestratorMakesReady() throws Exception {
    Topics topics = Topics.withPrefix(KAFKA.topicPrefix());
    closing.add(new Orchestrator(OrchestratorConfig.local(KAFKA.bootstrapServers(), dir.resolve("state"))
        .withApplicationId(KAFKA.applicationId()).withTopics(topics)).start(TIMEOUT));
    Path key = dir.resolve("publisher.key");
    assertThat(Cli.run("keygen", "--out", key.toString()).exitCode()).isZero();

    CountDownLatch stop = new CountDownLatch(1);
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    CommandLine command = new CommandLine(new PublisherCommand(stop, false));
    command.setOut(new PrintWriter(out, true));
    command.setErr(new PrintWriter(err, true));
    Future<Integer> exit = executor.submit(() -> command.execute("--bootstrap", KAFKA.bootstrapServers(),
        "--topic-prefix", KAFKA.topicPrefix(), "--transactional-id", KAFKA.applicationId(), "--signing-key",
        key.toString()));
    await("the publisher prints that it runs").atMost(TIMEOUT)
        .until(() -> out.toString().contains("Ctrl-C stops it.") || exit.isDone());
    assertThat(exit.isDone()).as("publisher ended early: %s %s", out, err).isFalse();
    assertThat(out.toString()).startsWith("ringshift publisher: signing with key ed25519:");

    Path members = Fixtures.write(dir.resolve("members.json"), Fixtures.membersJson(6, 3));
    Cli.Result init = cli("init", "--members", members.toString(), "--vnodes", "16", "--wait", "30");
    assertThat(init.exitCode()).as(init.toString()).isZero();
    await("epoch 1 published").atMost(TIMEOUT).until(() -> out.toString().contains("published epoch 1"));
    assertThat(out.toString()).contains("published epoch 1 of cluster default (checksum ")
        .contains(", 6 members, 0 filling marks)");

    PublishedSnapshot snapshot;
    try (KafkaConsumer<String, byte[]> consumer = consumer(topics.snapshots().name())) {
      List<byte[]> values = new ArrayList<>();
      await("the snapshot on ring.snapshots").atMost(TIMEOUT)
          .until(() -> {
            consumer.poll(Duration.ofMillis(100)).forEach(r -> values.add(r.value()));
            return !values.isEmpty();
          });
      snapshot = new RingSnapshotCodec().decodePublished(values.get(0));
    }
    TrustedKeys.read(List.of(dir.resolve("publisher.key.pub"))).verify(snapshot);
    assertThat(snapshot.epoch()).isEqualTo(1);
    Cli.Result epochs = cli("epochs");
    assertThat(epochs.stdout()).as(epochs.toString()).contains("PUBLISHED");

    stop.countDown();
    assertThat(exit.get(60, TimeUnit.SECONDS)).isZero();
    assertThat(err.toString()).isEqualTo("ringshift publisher: stopped after publishing 1 and rejecting 0 epochs\n");
  }

  private static Cli.Result cli(String... args) {
    List<String> all = new ArrayList<>(Arrays.asList(args));
    all.addAll(List.of("--bootstrap", KAFKA.bootstrapServers(), "--topic-prefix", KAFKA.topicPrefix()));
    return Cli.run(all.toArray(String[]::new));
  }

  private static KafkaConsumer<String, byte[]> consumer(String topic) {
    Properties p = new Properties();
    p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, KAFKA.bootstrapServers());
    p.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
    KafkaConsumer<String, byte[]> consumer = new KafkaConsumer<>(p, new StringDeserializer(),
        new ByteArrayDeserializer());
    List<TopicPartition> partitions = consumer.partitionsFor(topic).stream()
        .map(i -> new TopicPartition(topic, i.partition())).toList();
    consumer.assign(partitions);
    consumer.seekToBeginning(partitions);
    return consumer;
  }
}
