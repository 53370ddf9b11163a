package io.ringshift.cli.archfixture;

import io.ringshift.futuremodule.internal.FutureInternal;

/**
 * A CLI class that uses the internals of a module added after the rules were written: still a violation.
 *
 * <p>A deliberate violation for {@code io.ringshift.checks.ArchitectureRulesTest}, which imports it on its own; the
 * production rules never see it (test classes are not imported).
 */
public final class UsesFutureInternals {
  private UsesFutureInternals() {}

  public static String name() {
    return FutureInternal.name();
  }
}
