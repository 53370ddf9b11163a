package io.ringshift.ring.archfixture;

import io.ringshift.protocol.CodecException;

/**
 * A ring class that uses a protocol class: the ring library depending on another module.
 *
 * <p>A deliberate violation for {@code io.ringshift.checks.ArchitectureRulesTest}, which imports it on its own; the
 * production rules never see it (test classes are not imported).
 */
public final class UsesProtocol {
  private UsesProtocol() {}

  public static boolean isCodecFailure(RuntimeException e) {
    return e instanceof CodecException;
  }
}
