package io.ringshift.worker.internal;

import io.ringshift.storage.StoreException;

/** A node a task needs did not answer ({@link StoreException.Unavailable}), tagged with the role it plays. */
final class NodeDown extends RuntimeException {
  enum Role {
    SOURCE, TARGET, REPLICA
  }

  final String node;
  final Role role;

  NodeDown(String node, Role role, StoreException cause) {
    super(node + " (" + role.name().toLowerCase(java.util.Locale.ROOT) + "): " + cause.getMessage(), cause, false,
        false);
    this.node = node;
    this.role = role;
  }

  /** The cause in a few words, for a blockedReason. */
  String reason() {
    String message = getCause().getMessage();
    return message == null ? getCause().getClass().getSimpleName() : message;
  }
}
