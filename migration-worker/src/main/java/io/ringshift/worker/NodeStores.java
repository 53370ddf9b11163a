package io.ringshift.worker;

import io.ringshift.storage.AdminSecret;
import io.ringshift.storage.RemoteStore;
import io.ringshift.storage.Store;
import io.ringshift.storage.StoreException;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * How a worker reaches a node's store by node id. In production every node is a {@code RemoteStore} over the
 * node's network API at the address its {@link NodeDirectory} gives; tests may hand in stores directly
 * ({@link #of}).
 */
public interface NodeStores extends AutoCloseable {

  /**
   * The store of {@code nodeId}. Calls on it throw {@link StoreException.Unavailable} while the node is down.
   *
   * @throws StoreException.Unavailable when the node is not known (not in the directory)
   */
  Store store(String nodeId);

  /** Whether {@link #store} knows {@code nodeId} (it is in the directory); an unknown node is never reachable. */
  boolean knows(String nodeId);

  /** Releases the connections this opened. */
  @Override
  void close();

  /**
   * The nodes of {@code directory}, each reached over its admin listener ({@link RemoteStore#connectAdmin}) with
   * {@code secret} and {@code timeout} per call; a node's store is created on first use and kept. A node that is
   * not in the directory is unavailable. Without a secret the calls go unauthenticated, and every node refuses them
   * ({@link StoreException.Unauthorized}).
   */
  static NodeStores remote(NodeDirectory directory, AdminSecret secret, Duration timeout) {
    Map<String, Store> open = new ConcurrentHashMap<>();
    return new NodeStores() {
      @Override
      public Store store(String nodeId) {
        NodeDirectory.Address address = directory.address(nodeId).orElseThrow(() ->
            new StoreException.Unavailable("node " + nodeId + " is not in the node directory (--nodes / --node); "
                + "known: " + directory.nodes().keySet(), null));
        return open.computeIfAbsent(nodeId, n -> secret == null ? RemoteStore.connect(address.toString(), timeout)
            : RemoteStore.connectAdmin(address.toString(), secret, timeout));
      }

      @Override
      public boolean knows(String nodeId) {
        return directory.address(nodeId).isPresent();
      }

      @Override
      public void close() {
        open.values().forEach(Store::close);
        open.clear();
      }
    };
  }

  /** Fixed stores, for tests and embedding; {@link #close()} leaves them open (their owner closes them). */
  static NodeStores of(Map<String, ? extends Store> stores) {
    Map<String, Store> copy = Map.copyOf(stores);
    return new NodeStores() {
      @Override
      public Store store(String nodeId) {
        Store store = copy.get(nodeId);
        if (store == null) {
          throw new StoreException.Unavailable("node " + nodeId + " is not known to this worker (known: "
              + new java.util.TreeSet<>(copy.keySet()) + ")", null);
        }
        return store;
      }

      @Override
      public boolean knows(String nodeId) {
        return copy.containsKey(nodeId);
      }

      @Override
      public void close() {
        // The caller owns the stores.
      }
    };
  }
}
