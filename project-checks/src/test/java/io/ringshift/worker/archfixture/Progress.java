package io.ringshift.worker.archfixture;

/**
 * A worker type named {@code Progress}, like {@link io.ringshift.orchestrator.archfixture.Progress}: one simple name in
 * two modules.
 *
 * <p>A deliberate violation for {@code io.ringshift.checks.ArchitectureRulesTest}, which imports it on its own; the
 * production rules never see it (test classes are not imported).
 */
public record Progress(long copied) {}
