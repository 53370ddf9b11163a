package io.ringshift.orchestrator.archfixture;

/**
 * An orchestrator type named {@code Progress}, like {@link io.ringshift.worker.archfixture.Progress}: one simple
 * name in two modules.
 *
 * <p>A deliberate violation for {@code io.ringshift.checks.ArchitectureRulesTest}, which imports it on its own; the
 * production rules never see it (test classes are not imported).
 */
public record Progress(int done, int total) {}
