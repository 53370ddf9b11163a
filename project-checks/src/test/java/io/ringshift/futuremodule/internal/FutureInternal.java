package io.ringshift.futuremodule.internal;

/**
 * The internal package of a module that does not exist yet: the internal-package rule is keyed on the package, not on a
 * list of modules.
 *
 * <p>A fixture of {@code io.ringshift.checks.ArchitectureRulesTest}, which imports it on its own; the
 * production rules never see it (test classes are not imported).
 */
public final class FutureInternal {
  private FutureInternal() {}

  public static String name() {
    return "future";
  }
}
