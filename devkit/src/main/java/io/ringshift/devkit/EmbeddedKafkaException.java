package io.ringshift.devkit;

import java.util.Objects;
import org.apache.kafka.common.errors.RetriableException;

/**
 * The one exception of the devkit: the embedded broker could not start, or a helper could not do what it was
 * asked. The message names the port and the data directory involved; {@link #reason()} classifies the
 * failure and {@link #isRetriable()} says whether the same call can succeed later unchanged.
 */
public final class EmbeddedKafkaException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  /** What went wrong. */
  public enum Reason {
    /**
     * The requested port is taken by another process (or cannot be bound at all, such as a privileged port).
     * Retriable once that process lets it go.
     */
    PORT_IN_USE(true),
    /** The data directory is a file, or a non-empty directory Kafka did not write, or unreadable. Permanent. */
    INVALID_DATA_DIR(false),
    /** Formatting the KRaft log directory failed (for example a cluster id that does not match). Permanent. */
    FORMAT_FAILED(false),
    /** The broker failed while starting. Permanent until the cause (named in the chain) is fixed. */
    STARTUP_FAILED(false),
    /** The broker did not serve requests within the startup timeout. Retriable on a less loaded machine. */
    STARTUP_TIMEOUT(true),
    /** An admin call of a helper (such as creating a topic) failed. Retriable when its cause is. */
    ADMIN_FAILED(false);

    private final boolean retriable;

    Reason(boolean retriable) {
      this.retriable = retriable;
    }
  }

  private final Reason reason;

  public EmbeddedKafkaException(Reason reason, String message, Throwable cause) {
    super(message, cause);
    this.reason = Objects.requireNonNull(reason, "reason");
  }

  public EmbeddedKafkaException(Reason reason, String message) {
    this(reason, message, null);
  }

  /** Why the call failed. */
  public Reason reason() {
    return reason;
  }

  /**
   * Whether the same call may succeed later without changing anything: see each {@link Reason}. An
   * {@link Reason#ADMIN_FAILED} is retriable when Kafka says its cause is (a {@link RetriableException}).
   */
  public boolean isRetriable() {
    if (reason == Reason.ADMIN_FAILED) {
      return getCause() instanceof RetriableException;
    }
    return reason.retriable;
  }
}
