package io.ringshift.storage.archfixture;

import io.ringshift.publisher.SnapshotPublisher;

/**
 * A storage class that holds the snapshot publisher: the storage library depending on a role.
 *
 * <p>A deliberate violation for {@code io.ringshift.checks.ArchitectureRulesTest}, which imports it on its own; the
 * production rules never see it (test classes are not imported).
 */
public final class ReadsPublisher {
  private ReadsPublisher() {}

  public static String describe(SnapshotPublisher publisher) {
    return String.valueOf(publisher);
  }
}
