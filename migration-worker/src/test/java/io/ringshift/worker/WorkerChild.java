package io.ringshift.worker;

import io.ringshift.protocol.Topics;
import java.time.Duration;

/**
 * Runs a migration worker in a child JVM, so that a test can kill it with SIGKILL in the middle of a copy.
 * Arguments: bootstrap servers, topic prefix, group id, worker id, per-source bytes/s, the nodes' admin secret file,
 * then one {@code node-id=host:port} (admin listener) per node. Prints {@code RUNNING} once started, then runs until killed.
 */
public final class WorkerChild {
  private WorkerChild() {}

  public static void main(String[] args) throws InterruptedException {
    NodeDirectory nodes = NodeDirectory.empty();
    for (int i = 6; i < args.length; i++) {
      String[] node = args[i].split("=", 2);
      nodes = nodes.with(node[0], NodeDirectory.Address.parse(node[1]));
    }
    WorkerConfig config = WorkerConfig.of(args[0], args[3], nodes)
        .withTopics(Topics.withPrefix(args[1]))
        .withGroupId(args[2])
        .withLimits(Limits.unlimited().withRates(0, Long.parseLong(args[4])))
        .withTuning(TaskTuning.DEFAULTS.withBatch(16 * 1024, 100)
            .withCheckpoints(64 * 1024, Duration.ofMillis(200))
            .withIntervals(Duration.ofMillis(50), Duration.ofMillis(200)))
        .withGrace(Duration.ZERO)
        .withNodeTimeout(Duration.ofSeconds(10))
        .withNodeSecret(io.ringshift.storage.AdminSecret.read(java.nio.file.Path.of(args[5])));
    new MigrationWorker(config).start();
    System.out.println("RUNNING");
    System.out.flush();
    Thread.currentThread().join(); // until the test kills this JVM
  }
}
