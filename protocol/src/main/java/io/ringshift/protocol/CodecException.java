package io.ringshift.protocol;

import java.util.Locale;
import java.util.Objects;

/**
 * The one exception of the protocol module: bytes that cannot be decoded into a valid record, or a value that
 * cannot be encoded. The message names the problem (the bad header bytes, the unknown fingerprint or id, the
 * invalid member, both checksums); {@link #reason()} classifies it for callers that route rejected records,
 * for example to a reject topic.
 *
 * <p>Permanent, never retriable: the same bytes fail the same way on every attempt. The one case that a later
 * software version can fix is {@link Reason#UNKNOWN_SCHEMA} (a writer schema newer than this reader).
 */
public final class CodecException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  /** What was wrong with the input. */
  public enum Reason {
    /** The bytes do not start with the single-object marker {@code C3 01} and an 8-byte fingerprint. */
    BAD_HEADER,
    /** The header names a writer schema fingerprint this reader does not know (written by a newer version?). */
    UNKNOWN_SCHEMA,
    /** The body ends early, has trailing bytes, or is not valid Avro for its writer schema. */
    MALFORMED,
    /** The record's format version is one this reader does not implement. */
    UNSUPPORTED_FORMAT,
    /** The record names a hash algorithm this reader does not implement. */
    UNKNOWN_HASH,
    /** The record names a placement policy this reader does not implement. */
    UNKNOWN_POLICY,
    /** A field breaks a rule of the ring (bad member, duplicate id, bad parameter). */
    INVALID_CONTENT,
    /** The ring rebuilt from the record does not have the checksum the record states. */
    CHECKSUM_MISMATCH,
    /** A published snapshot carries no signature. */
    UNSIGNED,
    /** A published snapshot is signed by a key the reader does not trust. */
    UNKNOWN_KEY,
    /** A published snapshot's signature does not verify with the key it names. */
    BAD_SIGNATURE
  }

  private final Reason reason;

  public CodecException(Reason reason, String message) {
    super(message);
    this.reason = Objects.requireNonNull(reason, "reason");
  }

  public CodecException(Reason reason, String message, Throwable cause) {
    super(message, cause);
    this.reason = Objects.requireNonNull(reason, "reason");
  }

  static CodecException of(Reason reason, String format, Object... args) {
    return new CodecException(reason, String.format(Locale.ROOT, format, args));
  }

  /** Why the input was refused. */
  public Reason reason() {
    return reason;
  }
}
