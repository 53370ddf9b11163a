package io.ringshift.devkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.ringshift.devkit.EmbeddedKafkaException.Reason;
import io.ringshift.devkit.internal.Ports;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Locale;
import java.util.Set;
import java.util.stream.Collectors;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Starting, restarting and stopping brokers. Each test runs its own brokers, because starting and stopping
 * is what it checks; about five broker starts in all.
 */
class EmbeddedKafkaLifecycleIT {
  /** Yammer's metrics registry is JVM-wide: its tick threads outlive every broker, by Kafka's design. */
  private static final String YAMMER_TICK_THREAD = "metrics-meter-tick-thread";

  @TempDir
  Path tmp;

  @Test
  void shouldKeepTopicsRecordsAndClusterIdWhenRestartedOnAKeptDataDir() throws Exception {
    Path dataDir = tmp.resolve("kafka-data");
    int port = Ports.freePort();
    EmbeddedKafka.Builder builder = EmbeddedKafka.builder().port(port).dataDir(dataDir);

    String clusterId;
    try (EmbeddedKafka first = timedStart(builder, "fresh kept dir")) {
      assertThat(first.bootstrapServers()).isEqualTo("127.0.0.1:" + port);
      clusterId = first.clusterId();
      first.createTopics("kept");
      Clients.send(first.bootstrapServers(), "kept", "k", "survives a restart");
      timedClose(first);
    }
    assertThat(dataDir.resolve("meta.properties")).content().contains("cluster.id=" + clusterId);

    // Same port again: the first broker released it.
    try (EmbeddedKafka second = timedStart(builder, "restart on kept dir")) {
      assertThat(second.clusterId()).isEqualTo(clusterId);
      assertThat(Clients.topics(second.bootstrapServers())).contains("kept");
      assertThat(Clients.read(second.bootstrapServers(), "kept", 1))
          .extracting(ConsumerRecord::value).containsExactly("survives a restart");
      timedClose(second);
    }
    assertThat(dataDir).as("a kept data dir outlives close").isDirectory();
  }

  @Test
  void shouldRunTwoBrokersAtOnceOnFreePortsAndLeaveNoThreadOrTempDirBehind() throws Exception {
    Set<Thread> threadsBefore = Thread.getAllStackTraces().keySet();

    EmbeddedKafka one = timedStart(EmbeddedKafka.builder(), "temp dir");
    EmbeddedKafka two = timedStart(EmbeddedKafka.builder(), "temp dir, second broker");
    Path oneDir = one.dataDir();
    Path twoDir = two.dataDir();
    try {
      assertThat(one.port()).isNotEqualTo(two.port());
      assertThat(oneDir).isNotEqualTo(twoDir).isDirectory();
      assertThat(one.clusterId()).isNotEqualTo(two.clusterId());
      one.createTopics("only-on-one");
      Clients.send(one.bootstrapServers(), "only-on-one", "k", "v");
      assertThat(Clients.topics(two.bootstrapServers())).doesNotContain("only-on-one");
    } finally {
      timedClose(one);
      timedClose(two);
    }

    assertThat(oneDir).doesNotExist();
    assertThat(twoDir).doesNotExist();
    one.close();
    assertThatThrownBy(one::bootstrapServers).isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("closed");
    await("threads started by the brokers to end").atMost(Duration.ofSeconds(10)).pollInSameThread()
        .untilAsserted(() -> assertThat(newThreads(threadsBefore)).isEmpty());
  }

  @Test
  void shouldRefuseABusyPortWithAMessageNamingPortAndDataDir() throws IOException {
    Path dataDir = tmp.resolve("never-started");
    try (ServerSocket taken = new ServerSocket(0, 1, InetAddress.getByName("127.0.0.1"))) {
      int port = taken.getLocalPort();
      EmbeddedKafka kafka = EmbeddedKafka.builder().port(port).dataDir(dataDir).build();

      assertThatThrownBy(kafka::start)
          .isInstanceOfSatisfying(EmbeddedKafkaException.class, e -> {
            assertThat(e.reason()).isEqualTo(Reason.PORT_IN_USE);
            assertThat(e.isRetriable()).isTrue();
          })
          .hasMessageContaining("port " + port + " on 127.0.0.1 is already in use")
          .hasMessageContaining(dataDir.toString());
    }
  }

  @Test
  void shouldRefuseANonEmptyDirectoryThatKafkaDidNotWrite() throws IOException {
    Path notKafka = Files.createDirectories(tmp.resolve("home"));
    Files.writeString(notKafka.resolve("notes.txt"), "precious");

    assertThatThrownBy(() -> EmbeddedKafka.builder().dataDir(notKafka).build().start())
        .isInstanceOfSatisfying(EmbeddedKafkaException.class,
            e -> assertThat(e.reason()).isEqualTo(Reason.INVALID_DATA_DIR))
        .hasMessageContaining(notKafka + " is not empty and holds no Kafka meta.properties");
    assertThat(notKafka.resolve("notes.txt")).hasContent("precious");
  }

  /**
   * A failed disk under the broker: its data directory deleted while it runs. Kafka finds the log directory failed at
   * its next checkpoint and halts the JVM with status 1, which in a test run kills the fork without a word (as CI
   * saw when the disk was full). The in-process broker reports the fault instead, and the JVM goes on.
   */
  @Test
  void shouldReportAFailedLogDirectoryInsteadOfHaltingTheJvm() throws Exception {
    Path dataDir = tmp.resolve("failing-disk");
    EmbeddedKafka kafka = EmbeddedKafka.builder().dataDir(dataDir)
        .brokerProperty("log.flush.offset.checkpoint.interval.ms", "100")
        .brokerProperty("log.flush.start.offset.checkpoint.interval.ms", "100").build().start();
    try {
      kafka.createTopics("doomed");
      assertThat(kafka.fatalFault()).isEmpty();
      try (var paths = Files.walk(dataDir)) {
        for (Path p : paths.sorted(java.util.Comparator.reverseOrder()).toList()) {
          Files.deleteIfExists(p);
        }
      }

      await("the fatal fault").atMost(Duration.ofSeconds(60)).until(() -> kafka.fatalFault().isPresent());
      assertThat(kafka.fatalFault().orElseThrow()).contains("asked to halt the JVM with status 1")
          .contains("refused");
    } finally {
      kafka.close();
    }
    try (EmbeddedKafka next = EmbeddedKafka.builder().build().start()) {
      assertThat(next.fatalFault()).as("a fault belongs to the broker that raised it").isEmpty();
    }
  }

  private static EmbeddedKafka timedStart(EmbeddedKafka.Builder builder, String what) {
    long started = System.nanoTime();
    EmbeddedKafka kafka = builder.build().start();
    System.out.printf(Locale.ROOT, "[devkit] broker started in %d ms (%s) at %s%n",
        Duration.ofNanos(System.nanoTime() - started).toMillis(), what, kafka.bootstrapServers());
    return kafka;
  }

  private static void timedClose(EmbeddedKafka kafka) {
    long started = System.nanoTime();
    kafka.close();
    System.out.printf(Locale.ROOT, "[devkit] broker stopped in %d ms%n",
        Duration.ofNanos(System.nanoTime() - started).toMillis());
  }

  private static Set<String> newThreads(Set<Thread> before) {
    return Thread.getAllStackTraces().keySet().stream()
        .filter(t -> !before.contains(t) && t.isAlive())
        .map(Thread::getName)
        .filter(name -> !name.startsWith(YAMMER_TICK_THREAD))
        .collect(Collectors.toSet());
  }
}
