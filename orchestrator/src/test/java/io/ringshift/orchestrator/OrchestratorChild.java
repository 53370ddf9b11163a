package io.ringshift.orchestrator;

import io.ringshift.protocol.Topics;
import java.nio.file.Path;
import java.time.Duration;

/**
 * Runs an orchestrator in a child JVM, so that a test can kill it with SIGKILL in the middle of a transaction.
 * Arguments: bootstrap servers, application id, topic prefix, state directory. Prints {@code RUNNING} once
 * processing, then runs until killed.
 */
public final class OrchestratorChild {
  private OrchestratorChild() {}

  public static void main(String[] args) throws InterruptedException {
    OrchestratorConfig config = OrchestratorConfig.local(args[0], Path.of(args[3]))
        .withApplicationId(args[1])
        .withTopics(Topics.withPrefix(args[2]));
    new Orchestrator(config).start(Duration.ofSeconds(60));
    System.out.println("RUNNING");
    System.out.flush();
    Thread.currentThread().join(); // until the test kills this JVM
  }
}
