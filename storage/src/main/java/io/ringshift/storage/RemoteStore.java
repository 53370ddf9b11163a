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
