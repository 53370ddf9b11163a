package io.ringshift.publisher;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.ringshift.devkit.junit.EmbeddedKafkaExtension;
import io.ringshift.protocol.Topics;
import io.ringshift.publisher.ClusterScript.Step;
import io.ringshift.protocol.PublishedSnapshot;
import io.ringshift.protocol.RingSnapshotCodec;
import io.ringshift.protocol.SigningKey;
import io.ringshift.protocol.TrustedKeys;
import io.ringshift.schemas.avro.EpochRecord;
import io.ringshift.schemas.avro.EpochState;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.LongStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * A publisher killed with SIGKILL at random points while READY epochs keep arriving, and started again each time
 * under the same transactional id, publishes every epoch exactly once, in order, chained. The publisher runs in a
 * child JVM started with this test's class path. The seed is printed; {@code -Dringshift.seed=N} replays the kill
 * points.
 */
class SnapshotPublisherKillIT {
  @RegisterExtension static final EmbeddedKafkaExtension KAFKA = new EmbeddedKafkaExtension();

  private static final int EPOCHS = 10;
  private static final int KILLS = 5;
  private static final long WRITE_INTERVAL_MS = 400;
  private static final Duration START_TIMEOUT = Duration.ofSeconds(60);

  @TempDir Path dir;

  @Test
  void shouldPublishEveryEpochExactlyOnceAcrossKills() throws Exception {
    long seed = Long.getLong("ringshift.seed", System.nanoTime());
    System.out.printf("SnapshotPublisherKillIT: seed %d (replay: -Dringshift.seed=%d)%n", seed, seed);
    Random random = new Random(seed);
    SigningKey key = SigningKey.generate();
    Path keyFile = dir.resolve("publisher.key");
    key.write(keyFile, dir.resolve("publisher.pub"));
    Topics topics = Topics.withPrefix(KAFKA.topicPrefix());
    List<String> childArgs = List.of(KAFKA.bootstrapServers(), KAFKA.topicPrefix(), KAFKA.applicationId(),
        keyFile.toString());

    // 40 nodes x 256 tokens: a decision takes the child (C1 only) a good share of a second, a window the kills can
    // land in.
    ClusterScript script = new ClusterScript("killed", 256);
    List<Step> steps = new ArrayList<>();
    steps.add(script.init(40));
    for (int i = 41; steps.size() < EPOCHS; i++) {
      steps.add(script.join(String.format("node-%02d", i), "az-" + (i % 3 + 1)));
    }

    long started = System.nanoTime();
    ScheduledExecutorService writer = Executors.newSingleThreadScheduledExecutor();
    try (ItKafka kafka = new ItKafka(KAFKA.bootstrapServers(), topics)) {
      kafka.createTopics(true);
      Process child = startChild(childArgs);
      AtomicInteger written = new AtomicInteger();
      int scheduled = 0;
      int midPublication = 0;
      try {
        for (int round = 0; round <= KILLS; round++) {
          // Each round writes its share of the epochs, one every WRITE_INTERVAL_MS, while a child runs; then the
          // child is killed at a random moment.
          int until = (round + 1) * EPOCHS / (KILLS + 1);
          for (int i = 0; scheduled < until; i++, scheduled++) {
            Step step = steps.get(scheduled);
            writer.schedule(() -> {
              kafka.write(step);
              written.incrementAndGet();
            }, i * WRITE_INTERVAL_MS, TimeUnit.MILLISECONDS);
          }
          if (round == KILLS) {
            break;
          }
          // 0-90 ms after one of the round's READY records is acknowledged: mostly while the publisher reads,
          // checks or commits it, sometimes just before or after.
          int first = round * EPOCHS / (KILLS + 1);
          int target = first + random.nextInt(until - first);
          long delay = random.nextInt(90);
          await("READY of epoch " + (target + 1) + " written").atMost(Duration.ofSeconds(30))
              .pollInterval(Duration.ofMillis(1)).until(() -> written.get() > target);
          await().pollDelay(Duration.ofMillis(delay)).atMost(Duration.ofMillis(delay + 1000)).until(() -> true);
          child.destroyForcibly();
          assertThat(child.waitFor(30, TimeUnit.SECONDS)).as("killed child ended").isTrue();
          int writtenThen = written.get();
          int publishedThen = kafka.epochs(EpochState.PUBLISHED).size();
          if (publishedThen < writtenThen) {
            midPublication++;
          }
          System.out.printf("  kill %d, %3d ms after the READY of epoch %2d: %2d READY written, %2d PUBLISHED%n",
              round, delay, target + 1, writtenThen, publishedThen);
          child = startChild(childArgs);
        }
        await("every epoch written").atMost(Duration.ofSeconds(30)).until(() -> written.get() == EPOCHS);
        await("every epoch published").atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(100))
            .until(() -> kafka.epochs(EpochState.PUBLISHED).size() >= EPOCHS);
      } finally {
        child.destroyForcibly();
        child.waitFor(30, TimeUnit.SECONDS);
      }
      System.out.printf("  %d of %d kills left READY epochs unpublished%n", midPublication, KILLS);

      List<Long> expected = LongStream.rangeClosed(1, EPOCHS).boxed().toList();
      RingSnapshotCodec codec = new RingSnapshotCodec();
      List<PublishedSnapshot> snapshots = kafka.snapshots().stream().map(r -> codec.decodePublished(r.value()))
          .toList();
      assertThat(snapshots).extracting(PublishedSnapshot::epoch).as("ring.snapshots history, read_committed")
          .containsExactlyElementsOf(expected);
      TrustedKeys trusted = TrustedKeys.of(key.publicKey());
      for (int i = 0; i < snapshots.size(); i++) {
        trusted.verify(snapshots.get(i));
        assertThat(snapshots.get(i).ring()).isEqualTo(steps.get(i).ring());
        if (i > 0) {
          assertThat(snapshots.get(i).follows(snapshots.get(i - 1))).as("epoch %d chains", i + 1).isTrue();
        }
      }
      List<EpochRecord> published = kafka.epochs(EpochState.PUBLISHED);
      assertThat(published).extracting(EpochRecord::getEpoch).as("PUBLISHED records")
          .containsExactlyElementsOf(expected);
      assertThat(kafka.epochs(EpochState.REJECTED)).isEmpty();
      System.out.printf("SnapshotPublisherKillIT: %d epochs, %d kills, each epoch published once; %.1f s%n", EPOCHS,
          KILLS, (System.nanoTime() - started) / 1e9);
    } finally {
      writer.shutdownNow();
    }
  }

  private static Process startChild(List<String> args) throws IOException {
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    // A short-lived JVM: C1 only and the serial collector start faster on a small machine.
    List<String> command = new ArrayList<>(List.of(java, "-Xmx256m", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC",
        "-cp", System.getProperty("java.class.path"), PublisherChild.class.getName()));
    command.addAll(args);
    Process child = new ProcessBuilder(command).redirectErrorStream(true).start();
    BufferedReader out = new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8));
    List<String> seen = new ArrayList<>();
    long deadline = System.nanoTime() + START_TIMEOUT.toNanos();
    String line;
    while ((line = out.readLine()) != null) {
      if (line.equals("RUNNING")) {
        // Keep draining the child's output so that it never blocks on a full pipe.
        Thread drain = new Thread(() -> out.lines().forEach(l -> { }), "publisher-child-output");
        drain.setDaemon(true);
        drain.start();
        return child;
      }
      seen.add(line);
      if (System.nanoTime() > deadline) {
        break;
      }
    }
    child.destroyForcibly();
    throw new IllegalStateException("the publisher child did not report RUNNING within " + START_TIMEOUT
        + "; its output: " + String.join("\n", seen));
  }
}
