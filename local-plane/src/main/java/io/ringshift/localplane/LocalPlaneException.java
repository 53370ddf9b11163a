package io.ringshift.localplane;

import java.util.Objects;

/**
 * The one exception of the local plane: a part could not start. Nothing is left running when it is thrown. The
 * message names the part and the problem, ready to show an operator.
 */
public final class LocalPlaneException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  /** What went wrong. The first three are the caller's to fix (a port, a directory, a key file). */
  public enum Reason {
    /** A port the broker or a node must listen on is taken. */
    PORT_IN_USE,
    /** A data directory is not one this plane wrote (a node's store of another node, a foreign broker dir). */
    BAD_DATA_DIR,
    /** The publisher's key file in the data directory is not a signing key. */
    BAD_KEY_FILE,
    /** A part failed to start for another reason (the message says which part and why). */
    START_FAILED;

    /** Whether the caller's settings or files caused it, rather than the machine or a part. */
    public boolean badInput() {
      return this != START_FAILED;
    }
  }

  private final Reason reason;

  public LocalPlaneException(Reason reason, String message, Throwable cause) {
    super(message, cause);
    this.reason = Objects.requireNonNull(reason, "reason");
  }

  public Reason reason() {
    return reason;
  }
}
