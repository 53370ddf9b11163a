package io.ringshift.ring;

/**
 * Thrown when a ring cannot be built or used as asked: invalid members or parameters, an empty ring,
 * or a snapshot whose content does not match its checksum.
 *
 * <p>Every message names the offending field, its value and the rule it broke, for example
 * {@code member[3].weight was NaN; weight must be finite and > 0}. The error is permanent: retrying
 * the same input fails the same way, and nothing was changed by the failed call.
 */
public final class RingException extends IllegalArgumentException {
  private static final long serialVersionUID = 1L;

  public RingException(String message) {
    super(message);
  }

  /** Formats the message with {@link String#format}, so callers can name values precisely. */
  static RingException of(String format, Object... args) {
    return new RingException(String.format(java.util.Locale.ROOT, format, args));
  }
}
