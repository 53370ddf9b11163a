package io.ringshift.audit;

import java.util.Objects;

/**
 * The one exception of the audit module: the audit log could not be read. A discrepancy in the log is not an
 * exception; it is the {@link AuditReplay.Failure} of a {@link AuditReplay.Result}.
 */
public final class AuditException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  /** Why the log could not be read. */
  public enum Reason {
    /** A topic does not exist: no orchestrator ever ran on that cluster, or the topic prefix differs. Permanent. */
    MISSING_TOPIC,
    /** A read made no progress for the whole timeout: Kafka is unavailable or too slow. Retriable. */
    STALLED
  }

  private final Reason reason;

  public AuditException(Reason reason, String message, Throwable cause) {
    super(message, cause);
    this.reason = Objects.requireNonNull(reason, "reason");
  }

  public Reason reason() {
    return reason;
  }

  /** Whether reading again later may succeed. */
  public boolean retriable() {
    return reason == Reason.STALLED;
  }
}
