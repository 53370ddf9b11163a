package io.ringshift.client;

/**
 * The one exception of the client module: a lookup that cannot be answered because the client has not
 * accepted any snapshot yet (neither from its cold-start file nor from Kafka).
 *
 * <p>Retriable: it goes away once a verified snapshot arrives. Wait for one with
 * {@link RingClient#awaitEpoch(long, java.time.Duration) awaitEpoch(0, timeout)}. Configuration mistakes are
 * reported as {@link IllegalArgumentException} instead, since retrying cannot fix them.
 */
public final class RingClientException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  public RingClientException(String message) {
    super(message);
  }
}
