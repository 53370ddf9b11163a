package io.ringshift.client.archfixture;

import io.ringshift.ring.internal.TokenTable;

/**
 * A client class that reads the ring's internal token table: breaks the internal-package rule.
 *
 * <p>A deliberate violation for {@code io.ringshift.checks.ArchitectureRulesTest}, which imports it on its own; the
 * production rules never see it (test classes are not imported).
 */
public final class UsesRingInternals {
  private UsesRingInternals() {}

  public static int tokens(TokenTable table) {
    return table.size();
  }
}
