package io.ringshift.worker;

import io.ringshift.ring.RingHash;
import io.ringshift.ring.RingRange;
import io.ringshift.storage.Entry;
import io.ringshift.storage.NodeServer;
import io.ringshift.storage.RangeScan;
import io.ringshift.storage.RemoteStore;
import io.ringshift.storage.RocksStore;
import io.ringshift.storage.Store;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Storage nodes as in production, in this JVM: each node is a {@link NodeServer} on 127.0.0.1 over its own
 * {@link RocksStore}, and everybody (the test's writer, its checks, the worker) reaches it only through
 * {@link RemoteStore} over HTTP. Closing stops the servers, then the stores.
 */
public final class StorageNodes implements AutoCloseable {
  private static final Duration CALL_TIMEOUT = Duration.ofSeconds(10);

  /** A running node: its local store (owned here), its server and a client of its HTTP API. */
  public record Node(String id, String zone, Store local, NodeServer server, Store remote) {}

  private final Path dir;
  private final Map<String, Node> nodes = new TreeMap<>();

  public StorageNodes(Path dir) {
    this.dir = dir;
  }

  /** Opens a node's RocksDB store in its own directory and serves it on a free port of 127.0.0.1. */
  public Node start(String id, String zone) {
    Store local = RocksStore.open(dir.resolve(id), id, zone);
    NodeServer server = NodeServer.start(local, new InetSocketAddress("127.0.0.1", 0), 8);
    Node node = new Node(id, zone, local, server, RemoteStore.connect(server.hostPort(), CALL_TIMEOUT));
    nodes.put(id, node);
    return node;
  }

  /** The HTTP client of node {@code id}. */
  public Store remote(String id) {
    Node node = nodes.get(id);
    if (node == null) {
      throw new IllegalArgumentException("node " + id + " was not started; started: " + nodes.keySet());
    }
    return node.remote();
  }

  /** Where every node listens, as a worker deployment would be configured. */
  public NodeDirectory directory() {
    NodeDirectory directory = NodeDirectory.empty();
    for (Node n : nodes.values()) {
      directory = directory.with(n.id(), NodeDirectory.Address.parse(n.server().hostPort()));
    }
    return directory;
  }

  /**
   * Everything node {@code id} holds, read over HTTP with one streamed scan of the whole ring: key (UTF-8) to
   * value. Checks on the way that the node stores each key at the position the ring gives it.
   */
  public Map<String, byte[]> contents(String id) {
    Map<String, byte[]> contents = new HashMap<>();
    try (RangeScan scan = remote(id).scan(RingRange.whole(), null)) {
      while (scan.hasNext()) {
        Entry e = scan.next();
        long ringPosition = RingHash.xxh3().hash(e.key(), 0, e.key().length);
        if (e.position() != ringPosition) {
          throw new AssertionError(String.format("node %s holds key %s at position %016x, but the ring places it at "
              + "%016x", id, new String(e.key(), StandardCharsets.UTF_8), e.position(), ringPosition));
        }
        contents.put(new String(e.key(), StandardCharsets.UTF_8), e.value());
      }
    }
    return contents;
  }

  /** How many keys node {@code id} holds in {@code range}. */
  public long keysIn(String id, RingRange range) {
    return remote(id).digest(range).keys();
  }

  @Override
  public void close() {
    RuntimeException first = null;
    List<AutoCloseable> order = new ArrayList<>();
    for (Node n : nodes.values()) {
      order.add(n.remote());
    }
    for (Node n : nodes.values()) {
      order.add(n.server());
    }
    for (Node n : nodes.values()) {
      order.add(n.local());
    }
    for (AutoCloseable c : order) {
      try {
        c.close();
      } catch (Exception e) {
        if (first == null) {
          first = new IllegalStateException("closing " + c + " failed", e);
        } else {
          first.addSuppressed(e);
        }
      }
    }
    if (first != null) {
      throw first;
    }
  }
}
