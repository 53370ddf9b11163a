package io.ringshift.cli;

/**
 * Bad input to a command: a missing or unreadable file, malformed JSON, an invalid member or a corrupt
 * snapshot. The message names the problem; the command exits with code 2 and writes no output file.
 * Permanent: the same input fails the same way.
 */
public final class BadInputException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  public BadInputException(String message) {
    super(message);
  }

  public BadInputException(String message, Throwable cause) {
    super(message, cause);
  }
}
