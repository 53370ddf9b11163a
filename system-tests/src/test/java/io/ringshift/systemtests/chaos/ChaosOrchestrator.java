package io.ringshift.systemtests.chaos;

import io.ringshift.orchestrator.Orchestrator;
import io.ringshift.orchestrator.OrchestratorConfig;
import io.ringshift.protocol.Topics;
import java.nio.file.Path;
import java.time.Duration;

/**
 * The orchestrator as its own process for the fault-injection suite (there is no {@code ringshift orchestrator}
 * command yet). Arguments: bootstrap servers, application id, topic prefix, state directory. Prints {@code RUNNING}
 * once processing, then runs until killed.
 */
public final class ChaosOrchestrator {
  private ChaosOrchestrator() {}

  public static void main(String[] args) throws InterruptedException {
    OrchestratorConfig config = OrchestratorConfig.local(args[0], Path.of(args[3]))
        .withApplicationId(args[1])
        .withTopics(Topics.withPrefix(args[2]));
    new Orchestrator(config).start(Duration.ofSeconds(120));
    System.out.println("RUNNING");
    System.out.flush();
    Thread.currentThread().join();
  }
}
