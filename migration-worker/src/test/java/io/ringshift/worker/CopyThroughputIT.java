package io.ringshift.worker;

import static io.ringshift.worker.ItKafka.task;
import static org.assertj.core.api.Assertions.assertThat;

import io.ringshift.devkit.junit.EmbeddedKafkaExtension;
import io.ringshift.ring.RingRange;
import io.ringshift.schemas.avro.RangeCopyTask;
import io.ringshift.schemas.avro.TaskKind;
import io.ringshift.schemas.avro.TaskState;
import io.ringshift.schemas.avro.TaskStatus;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * Copy throughput of one worker between two node processes on loopback (docs/benchmarks.md): the source and the
 * target are {@link NodeChild} JVMs, the worker runs here with its default batches and checkpoints. The snapshot
 * copy of half the source (about 48 MiB) is timed from the task's first COPYING status to the status that ends
 * the snapshot (both stamped by the worker). Then the other half is copied under an 8 MiB/s worker limit, and
 * the rate it achieved after its first two seconds (the bucket fills up to one second of burst while the task
 * starts) is compared with the limit. The figures are printed; the assertion checks that the throttle never
 * exceeds the limit, not how fast this machine is.
 */
class CopyThroughputIT {
  @RegisterExtension static final EmbeddedKafkaExtension KAFKA = new EmbeddedKafkaExtension();

  private static final int KEYS = 100_000;
  private static final int VALUE_BYTES = 1000;
  private static final long LIMIT = 8L << 20;

  @TempDir Path dir;
  private final List<Process> children = new ArrayList<>();

  @AfterEach
  void killNodes() throws InterruptedException {
    for (Process p : children) {
      p.destroyForcibly();
      p.waitFor(30, TimeUnit.SECONDS);
    }
  }

  @Test
  void shouldCopyBetweenNodeProcessesFastAndHoldTheLimit() throws Exception {
    int source = startNode("node-a", KEYS);
    int target = startNode("node-b", 0);
    NodeDirectory nodes = NodeDirectory.empty()
        .with("node-a", new NodeDirectory.Address("127.0.0.1", source))
        .with("node-b", new NodeDirectory.Address("127.0.0.1", target));
    try (ItKafka kafka = new ItKafka(KAFKA.bootstrapServers(), KAFKA.topicPrefix())) {
      WorkerConfig config = WorkerConfig.of(KAFKA.bootstrapServers(), "worker-throughput", nodes)
          .withTopics(kafka.topics).withGroupId(KAFKA.applicationId() + "-workers").withLimits(Limits.unlimited())
          .withNodeSecret(io.ringshift.storage.AdminSecret.read(secretFile()));
      try (MigrationWorker worker = new MigrationWorker(config).start()) {
        RangeCopyTask fast = task(TaskKind.COPY, 2, RingRange.of(0, Long.MAX_VALUE), List.of("node-a"), "node-b");
        double unthrottled = snapshotRate(kafka, fast, 0);

        worker.setLimits(Limits.unlimited().withRates(LIMIT, 0));
        RangeCopyTask slow = task(TaskKind.COPY, 2, RingRange.of(Long.MAX_VALUE, 0), List.of("node-a"), "node-b");
        double throttled = snapshotRate(kafka, slow, 2000);

        System.out.printf(Locale.ROOT, "CopyThroughputIT: unthrottled %.1f MB/s (%.1f MiB/s); under a %.1f MiB/s "
                + "limit %.2f MiB/s (%+.1f%%)%n", unthrottled / 1e6, unthrottled / (1 << 20), LIMIT / (double) (1 << 20),
            throttled / (1 << 20), 100 * (throttled / LIMIT - 1));
        // Speed is a benchmark figure, not a pass mark: a slow or busy CI machine may copy below the limit. What
        // must hold anywhere is that the throttle never lets more through than the limit.
        assertThat(throttled).as("bytes/s under the limit").isLessThanOrEqualTo(LIMIT * 1.1);
      }
    }
  }

  /**
   * Emits the task and returns the bytes per second of its snapshot copy, by the worker's own timestamps: from
   * the first status at least {@code skipMillis} into the copy (a token bucket may start with up to a second of
   * burst) to the status that ends the snapshot.
   */
  private static double snapshotRate(ItKafka kafka, RangeCopyTask task, long skipMillis) {
    kafka.emit(task);
    TaskStatus start = kafka.awaitStatus(task.getTaskId(), "copying",
        s -> s.getState() == TaskState.COPYING && s.getCopiedBytes() == 0);
    TaskStatus done = kafka.awaitStatus(task.getTaskId(), "snapshot copied",
        s -> s.getCaughtUpPosition() != null && s.getCaughtUpPosition().equals(s.getWatermark()));
    TaskStatus from = kafka.statuses(task.getTaskId()).stream()
        .filter(s -> s.getTimestampMillis() >= start.getTimestampMillis() + skipMillis)
        .findFirst().orElse(start);
    long millis = done.getTimestampMillis() - from.getTimestampMillis();
    long bytes = done.getCopiedBytes() - from.getCopiedBytes();
    System.out.printf(Locale.ROOT, "  %s: %d bytes in %d ms (from %d ms into the copy)%n", task.getTaskId(), bytes,
        millis, from.getTimestampMillis() - start.getTimestampMillis());
    return bytes * 1000.0 / Math.max(1, millis);
  }

  /** The admin secret the child nodes check and the worker sends. */
  private Path secretFile() {
    Path file = dir.resolve("admin.secret");
    io.ringshift.storage.AdminSecret.readOrCreate(file);
    return file;
  }

  private int startNode(String id, int keys) throws IOException {
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    Process child = new ProcessBuilder(java, "-Xmx512m", "-cp", System.getProperty("java.class.path"),
        NodeChild.class.getName(), dir.resolve(id).toString(), id, Integer.toString(keys),
        Integer.toString(VALUE_BYTES), secretFile().toString()).redirectErrorStream(true).start();
    children.add(child);
    BufferedReader out = new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8));
    List<String> seen = new ArrayList<>();
    String line;
    while ((line = out.readLine()) != null) {
      if (line.startsWith("PORT ")) {
        Thread drain = new Thread(() -> out.lines().forEach(l -> { }), "node-child-output");
        drain.setDaemon(true);
        drain.start();
        return Integer.parseInt(line.substring(5));
      }
      seen.add(line);
    }
    throw new IllegalStateException("node " + id + " ended before serving; its output: " + seen);
  }
}
