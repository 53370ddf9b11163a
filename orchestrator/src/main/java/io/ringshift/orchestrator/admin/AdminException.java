package io.ringshift.orchestrator.admin;

import java.util.Objects;

/**
 * The one exception of the admin API: a request to the control plane could not be made. The message names the
 * problem as an operator can act on it (the address, the missing topic, the rule a change breaks).
 */
public final class AdminException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  /** Why. */
  public enum Reason {
    /** The request itself is wrong (a change the orchestrator would refuse, a cluster with no epoch, a topic that
     * does not exist there). Permanent: the same request fails the same way. */
    BAD_REQUEST,
    /** Kafka did not answer in time, or a read made no progress. Retriable once the brokers are up. A write that
     * timed out may still have been received; the message says so. */
    UNAVAILABLE
  }

  private final Reason reason;

  public AdminException(Reason reason, String message) {
    this(reason, message, null);
  }

  public AdminException(Reason reason, String message, Throwable cause) {
    super(message, cause);
    this.reason = Objects.requireNonNull(reason, "reason");
  }

  public Reason reason() {
    return reason;
  }

  public boolean retriable() {
    return reason == Reason.UNAVAILABLE;
  }

  static AdminException badRequest(String message) {
    return new AdminException(Reason.BAD_REQUEST, message);
  }

  static AdminException unavailable(String message, Throwable cause) {
    return new AdminException(Reason.UNAVAILABLE, message, cause);
  }
}
