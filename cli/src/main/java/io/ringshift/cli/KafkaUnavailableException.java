package io.ringshift.cli;

/**
 * Kafka could not be reached, or did not answer in time: no broker at the {@code --bootstrap} address, an
 * address that does not resolve, or a request that timed out. The message names the address and how long the
 * command waited; the command exits with code 2 and has written nothing (a write that timed out is reported
 * as such, because Kafka may still have received it).
 *
 * <p>Retriable: the same command can succeed once the broker is up.
 */
public final class KafkaUnavailableException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  public KafkaUnavailableException(String message) {
    super(message);
  }

  public KafkaUnavailableException(String message, Throwable cause) {
    super(message, cause);
  }
}
