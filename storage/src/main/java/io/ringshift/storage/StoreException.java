package io.ringshift.storage;

/**
 * The one exception type of the storage module. Its subclasses say whether retrying can help:
 * {@link BadRequest} and {@link FeedUnavailable} are permanent for the same call, {@link Unavailable} is
 * retriable.
 */
public class StoreException extends RuntimeException {

  public StoreException(String message) {
    super(message);
  }

  public StoreException(String message, Throwable cause) {
    super(message, cause);
  }

  /** Whether the same call may succeed later. */
  public boolean retriable() {
    return false;
  }

  /** The request is malformed or over a limit; the message names the value and the rule. Nothing changed. */
  public static class BadRequest extends StoreException {
    public BadRequest(String message) {
      super(message);
    }
  }

  /** The store cannot be reached or is closed; retriable. */
  public static class Unavailable extends StoreException {
    public Unavailable(String message, Throwable cause) {
      super(message, cause);
    }

    @Override
    public boolean retriable() {
      return true;
    }
  }

  /** The store's log no longer reaches back to the sequence number asked for; copy the range again. */
  public static class FeedUnavailable extends StoreException {
    public FeedUnavailable(String message) {
      super(message);
    }
  }
}
