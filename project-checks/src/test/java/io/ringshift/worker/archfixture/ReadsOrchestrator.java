package io.ringshift.worker.archfixture;

import io.ringshift.orchestrator.Orchestrator;

/**
 * A worker class that holds the orchestrator: one role depending on another.
 *
 * <p>A deliberate violation for {@code io.ringshift.checks.ArchitectureRulesTest}, which imports it on its own; the
 * production rules never see it (test classes are not imported).
 */
public final class ReadsOrchestrator {
  private ReadsOrchestrator() {}

  public static void stop(Orchestrator orchestrator) {
    orchestrator.close();
  }
}
