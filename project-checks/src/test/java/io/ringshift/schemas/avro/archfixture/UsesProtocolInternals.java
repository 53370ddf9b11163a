package io.ringshift.schemas.avro.archfixture;

import io.ringshift.protocol.internal.SingleObjectSerde;

/**
 * A class in the Avro namespace that uses protocol's internals: allowed, because the namespace belongs to protocol.
 *
 * <p>A fixture of {@code io.ringshift.checks.ArchitectureRulesTest}, which imports it on its own; the
 * production rules never see it (test classes are not imported).
 */
public final class UsesProtocolInternals {
  private UsesProtocolInternals() {}

  public static int headerLength() {
    return SingleObjectSerde.HEADER_LENGTH;
  }
}
