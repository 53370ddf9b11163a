package io.ringshift.cli.internal.control;

import io.ringshift.cli.internal.NodeRing;
import io.ringshift.client.RingClientConfig;
import io.ringshift.storage.OwnershipCheckedStore;

import io.ringshift.cli.BadInputException;
import io.ringshift.storage.NodeServer;
import io.ringshift.storage.RocksStore;
import io.ringshift.storage.Store;
import io.ringshift.storage.StoreException;
import io.ringshift.worker.NodeDirectory;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.BindException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The storage nodes of {@code ringshift dev --nodes N}: N RocksDB stores ({@link RocksStore}), each served by a
 * {@link NodeServer} on 127.0.0.1, with ids {@code node-01}..{@code node-NN} (zero-padded to the width of N, at
 * least two digits) in zones az-1, az-2, az-3 round-robin. Node {@code i} listens on {@code basePort + i - 1}, or
 * on a free port when {@code basePort} is 0.
 *
 * <p>Everything lives under one directory: the stores in {@code nodes/<id>}, and the two files a newcomer needs,
 * {@code nodes.txt} (the worker's nodes file: {@code node-id host:port} lines) and {@code members.json} (the
 * members file of {@code ringshift init --members}), rewritten at every start because the ports may change. Given
 * no directory, a temporary one is created and {@link #close} deletes it.
 */
final class DevNodes implements AutoCloseable {
  /** Enough for any tour; each node is a RocksDB instance and an HTTP server in this JVM. */
  static final int MAX_NODES = 64;

  private static final String HOST = "127.0.0.1";
  private static final int ZONES = 3;

  /** One running node. */
  record Node(String id, String zone, Path dataDir, Store store, NodeServer server) {
    String hostPort() {
      return server.hostPort();
    }
  }

  private final Path dir;
  private final boolean temporary;
  private final List<Node> nodes;
  /** The published ring every node checks the ownership of stale writes against (one client for all). */
  private final NodeRing ring;

  private DevNodes(Path dir, boolean temporary, List<Node> nodes, NodeRing ring) {
    this.dir = dir;
    this.temporary = temporary;
    this.nodes = List.copyOf(nodes);
    this.ring = ring;
  }

  /** {@link #start(int, int, Path, RingClientConfig)} with nodes that follow no ring (fences only). */
  static DevNodes start(int count, int basePort, Path dir) {
    return start(count, basePort, dir, null);
  }

  /**
   * Opens and serves {@code count} nodes under {@code dir} (a temporary directory when null) and writes
   * {@code nodes.txt} and {@code members.json} there. On failure nothing is left running.
   *
   * @throws BadInputException when a port is taken (naming it and the node) or a node's data directory belongs
   *     to another node or is not a store
   * @throws StoreException when RocksDB cannot open a store
   * @throws UncheckedIOException when the directory or the files cannot be written
   */
  static DevNodes start(int count, int basePort, Path dir, RingClientConfig ringConfig) {
    if (count < 1 || count > MAX_NODES) {
      throw new IllegalArgumentException("count was " + count + "; it must be 1.." + MAX_NODES);
    }
    boolean temporary = dir == null;
    Path root;
    try {
      root = temporary ? Files.createTempDirectory("ringshift-dev-") : Files.createDirectories(dir);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot create the storage nodes' directory: " + e.getMessage(), e);
    }
    List<Node> started = new ArrayList<>();
    // Like `ringshift node --bootstrap`: a write tagged with an older epoch for a key a node no longer replicates
    // gets retry-with-epoch with the ring's epoch.
    NodeRing ring = ringConfig == null ? NodeRing.none() : NodeRing.follow(ringConfig);
    try {
      for (int i = 1; i <= count; i++) {
        started.add(startNode(id(i, count), zone(i), root.resolve("nodes").resolve(id(i, count)),
            basePort == 0 ? 0 : basePort + i - 1, ring));
      }
      DevNodes nodes = new DevNodes(root.toAbsolutePath(), temporary, started, ring);
      nodes.writeFiles();
      return nodes;
    } catch (RuntimeException e) {
      new DevNodes(root.toAbsolutePath(), temporary, started, ring).closeQuietly(e);
      throw e;
    }
  }

  private static Node startNode(String id, String zone, Path dataDir, int port, NodeRing ring) {
    Store store;
    try {
      store = RocksStore.open(dataDir, id, zone);
    } catch (StoreException.BadRequest e) {
      throw new BadInputException("storage node " + id + ": " + e.getMessage(), e);
    }
    try {
      NodeServer server = NodeServer.start(OwnershipCheckedStore.wrap(store, ring), new InetSocketAddress(HOST, port));
      return new Node(id, zone, dataDir, store, server);
    } catch (RuntimeException e) {
      store.close();
      if (e instanceof StoreException && e.getCause() instanceof BindException) {
        throw new BadInputException("port " + port + " on " + HOST + " is already in use, so storage node " + id
            + " cannot listen there; stop what uses it, or give another --node-port (0 picks free ports)", e);
      }
      throw e;
    }
  }

  /** {@code node-01}: the 1-based index zero-padded to the width of {@code count}, at least 2 digits. */
  static String id(int index, int count) {
    int width = Math.max(2, String.valueOf(count).length());
    return String.format(Locale.ROOT, "node-%0" + width + "d", index);
  }

  /** az-1, az-2, az-3, az-1, ... for the 1-based index. */
  static String zone(int index) {
    return "az-" + (1 + (index - 1) % ZONES);
  }

  private void writeFiles() {
    StringBuilder txt = new StringBuilder("# the storage nodes of ringshift dev, rewritten at every start\n");
    StringBuilder json = new StringBuilder("[\n");
    for (int i = 0; i < nodes.size(); i++) {
      Node n = nodes.get(i);
      txt.append(n.id()).append(' ').append(n.hostPort()).append('\n');
      json.append("  {\"id\": \"").append(n.id()).append("\", \"zone\": \"").append(n.zone()).append("\"}")
          .append(i + 1 < nodes.size() ? ",\n" : "\n");
    }
    json.append("]\n");
    try {
      Files.writeString(nodesFile(), txt, StandardCharsets.UTF_8);
      Files.writeString(membersFile(), json, StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot write " + nodesFile() + " or " + membersFile() + ": " + e.getMessage(),
          e);
    }
  }

  List<Node> nodes() {
    return nodes;
  }

  /** Every node at its address, for the worker. */
  NodeDirectory directory() {
    Map<String, NodeDirectory.Address> addresses = new LinkedHashMap<>();
    for (Node n : nodes) {
      addresses.put(n.id(), new NodeDirectory.Address(HOST, n.server().port()));
    }
    return NodeDirectory.of(addresses);
  }

  Path dir() {
    return dir;
  }

  boolean temporary() {
    return temporary;
  }

  Path nodesFile() {
    return dir.resolve("nodes.txt");
  }

  Path membersFile() {
    return dir.resolve("members.json");
  }

  /**
   * Stops every server (ending the streams in progress), then closes every store, and deletes the directory when
   * it is temporary. Each node is closed even when another fails; the first failure is thrown after.
   */
  @Override
  public void close() {
    RuntimeException failure = null;
    for (Node n : nodes) {
      try {
        n.server().close();
      } catch (RuntimeException e) {
        failure = add(failure, e);
      }
    }
    try {
      ring.close();
    } catch (RuntimeException e) {
      failure = add(failure, e);
    }
    for (Node n : nodes) {
      try {
        n.store().close();
      } catch (RuntimeException e) {
        failure = add(failure, e);
      }
    }
    if (temporary) {
      try {
        DevControlPlane.deleteRecursively(dir);
      } catch (UncheckedIOException e) {
        failure = add(failure, e);
      }
    }
    if (failure != null) {
      throw failure;
    }
  }

  private void closeQuietly(Throwable cause) {
    try {
      close();
    } catch (RuntimeException e) {
      cause.addSuppressed(e);
    }
  }

  private static RuntimeException add(RuntimeException first, RuntimeException next) {
    if (first == null) {
      return next;
    }
    first.addSuppressed(next);
    return first;
  }
}
