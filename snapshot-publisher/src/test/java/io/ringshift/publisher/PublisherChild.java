package io.ringshift.publisher;

import io.ringshift.protocol.Topics;
import java.nio.file.Path;

/**
 * Runs a publisher in a child JVM, so that a test can kill it with SIGKILL while it publishes. Arguments: bootstrap
 * servers, topic prefix, transactional id, signing key file. Prints {@code RUNNING} once it has caught up, then
 * runs until killed.
 */
public final class PublisherChild {
  private PublisherChild() {}

  public static void main(String[] args) throws Exception {
    PublisherConfig config = PublisherConfig.of(args[0], Path.of(args[3]))
        .withTopics(Topics.withPrefix(args[1]))
        .withTransactionalId(args[2])
        // The kill test counts one snapshot per epoch: the changes it writes are cut over at their fence.
        .withTransitionStages(false);
    new SnapshotPublisher(config).start();
    System.out.println("RUNNING");
    System.out.flush();
    Thread.currentThread().join(); // until the test kills this JVM
  }
}
