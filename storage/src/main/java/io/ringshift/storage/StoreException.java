package io.ringshift.storage;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The one exception type of the storage module. Its subclasses say whether retrying can help:
 * {@link BadRequest} and {@link FeedUnavailable} are permanent for the same call, {@link Unavailable} and
 * {@link StaleEpoch} are retriable, and {@link ReplicasFailed} is retriable when every replica's failure is.
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

  /**
   * The node's admin listener refused the request: it carried no admin secret or the wrong one (docs/storage.md,
   * "Two listeners"), or it went to the client port, which serves only key reads and writes. Nothing changed; the
   * same call is refused again until the caller is configured with the right secret and address.
   */
  public static class Unauthorized extends StoreException {
    public Unauthorized(String message) {
      super(message);
    }
  }

  /**
   * The node understood the request and refuses it by a protocol rule (a range delete for an epoch older than its
   * ring, which makes it a replica of the range again). Nothing changed; the same call is refused again.
   */
  public static class Refused extends StoreException {
    public Refused(String message) {
      super(message);
    }
  }

  /**
   * A write or fence tagged with an epoch more than one ahead of the ring the node routes by: no client or worker
   * can hold such an epoch unless the node has not seen it yet (or the request is forged, as with epoch 2^63 - 1,
   * which would pass every fence and be lost at cleanup). Nothing changed; retriable, since the node's ring
   * catches up.
   */
  public static class EpochAhead extends StoreException {
    public EpochAhead(String message) {
      super(message);
    }

    @Override
    public boolean retriable() {
      return true;
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

  /**
   * A {@link RoutedWriter} write was refused for an older epoch and did not land on a newer one: the newer epoch
   * did not reach the writer's routing in time, or the retry on it was refused too. The message names the key, the
   * epochs tried and the epoch last asked for. Retriable: the ring converges, and a later attempt routes by it.
   * Replicas that applied the write on the way keep it (nothing is rolled back); the write is not acknowledged.
   */
  public static class StaleEpoch extends StoreException {
    private final List<Long> triedEpochs;
    private final long askedEpoch;

    public StaleEpoch(String message, List<Long> triedEpochs, long askedEpoch) {
      super(message);
      this.triedEpochs = List.copyOf(triedEpochs);
      this.askedEpoch = askedEpoch;
    }

    /** The epochs the write was sent with, in order: one, or two when it was retried. */
    public List<Long> triedEpochs() {
      return triedEpochs;
    }

    /** The epoch the last refusal asked for. */
    public long askedEpoch() {
      return askedEpoch;
    }

    @Override
    public boolean retriable() {
      return true;
    }
  }

  /**
   * A {@link RoutedWriter} write failed on one or more of its replicas (each failure is the replica's own
   * {@link StoreException}, as {@link RemoteStore} raised it, also attached as a suppressed exception). The write is
   * not acknowledged; the replicas that applied it keep it. Retriable when every failure is.
   */
  public static class ReplicasFailed extends StoreException {
    private final long epoch;
    private final Map<String, StoreException> failures;
    private final List<String> applied;

    public ReplicasFailed(String message, long epoch, Map<String, StoreException> failures, List<String> applied) {
      super(message);
      this.epoch = epoch;
      this.failures = Collections.unmodifiableMap(new LinkedHashMap<>(failures));
      this.applied = List.copyOf(applied);
      failures.values().forEach(this::addSuppressed);
    }

    /** The epoch the write was tagged with. */
    public long epoch() {
      return epoch;
    }

    /** Each failed replica's node id and its failure, in the route's preference order. */
    public Map<String, StoreException> failures() {
      return failures;
    }

    /** The replicas that applied the write, in the route's preference order. */
    public List<String> applied() {
      return applied;
    }

    @Override
    public boolean retriable() {
      return failures.values().stream().allMatch(StoreException::retriable);
    }
  }
}
