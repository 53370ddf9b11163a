package io.ringshift.storage;

import io.ringshift.storage.internal.http.HttpStoreClient;
import java.time.Duration;

/**
 * The {@link Store} of a node process, reached over its HTTP API ({@link NodeServer}), so a worker drives a local
 * and a remote store alike.
 *
 * <p>What the returned store guarantees beyond the SPI: every error comes back as the node raised it (a
 * {@link StoreException.BadRequest} keeps the node's message); a node that cannot be reached, does not answer
 * within the timeout, or has closed is {@link StoreException.Unavailable} naming its address; scans and change
 * feeds stream lazily in bounded memory, however large the range. Closing it ends its open scans and feeds (their
 * next read throws {@link StoreException.Unavailable}); it never closes the node.
 */
public final class RemoteStore {
  private RemoteStore() {}

  /** How a remote store sends client writes ({@code put}, {@code delete}). */
  public enum WriteMode {
    /**
     * Group commit (docs/storage.md, "Batched writes"): concurrent writes to the node go together in one {@code POST
     * /v1/writes}, each answered on its own; a write alone goes alone, so nothing waits for a batch to fill. A node
     * that does not serve the endpoint gets one request per write. The default.
     */
    BATCHED,
    /** One {@code PUT} or {@code DELETE /v1/keys/KEY} per write, as before batched writes. */
    ONE_PER_REQUEST
  }

  /**
   * A store for the node at {@code hostPort} ({@code 127.0.0.1:7070}, {@code node-3.internal:7070},
   * {@code [::1]:7070}). Contacts nobody: the first call does, so a node that is down now can be used later.
   *
   * @param timeout how long to wait for a connection, and for the answer to a call (for a scan or a feed: for its
   *     first bytes, and then for each further read of its body, which otherwise throws
   *     {@link StoreException.Unavailable}; time the reader spends between items does not count)
   * @throws StoreException.BadRequest when {@code hostPort} is not host:port or the timeout is not positive
   */
  public static Store connect(String hostPort, Duration timeout) {
    return HttpStoreClient.connect(hostPort, timeout);
  }

  /**
   * As {@link #connect(String, Duration)}, sending client writes as {@code mode} says.
   *
   * @throws IllegalArgumentException when {@code mode} is null
   */
  public static Store connect(String hostPort, Duration timeout, WriteMode mode) {
    if (mode == null) {
      throw new IllegalArgumentException("write mode was null; give BATCHED or ONE_PER_REQUEST");
    }
    return HttpStoreClient.connect(hostPort, timeout, null, mode == WriteMode.BATCHED);
  }

  /**
   * A store for the admin listener of the node at {@code hostPort} (docs/storage.md, "Two listeners"), sending
   * {@code secret} with every call: how a worker reaches a node. The client port ({@link #connect(String, Duration)})
   * serves only key reads and writes and answers every other call {@link StoreException.Unauthorized}.
   *
   * @throws StoreException.BadRequest as {@link #connect(String, Duration)}
   * @throws IllegalArgumentException when {@code secret} is null
   */
  public static Store connectAdmin(String hostPort, AdminSecret secret, Duration timeout) {
    if (secret == null) {
      throw new IllegalArgumentException("an admin listener needs its secret");
    }
    return HttpStoreClient.connect(hostPort, timeout, secret);
  }
}
