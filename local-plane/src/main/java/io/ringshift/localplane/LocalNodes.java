package io.ringshift.localplane;

import io.ringshift.storage.AdminSecret;
import io.ringshift.storage.NodeServer;
import io.ringshift.storage.OwnershipCheckedStore;
import io.ringshift.storage.RemoteStore;
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
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Storage nodes as in production, in this JVM: each node is a RocksDB store ({@link RocksStore}) served by a
 * {@link NodeServer} on 127.0.0.1, checking stale writes against the published ring ({@link PublishedRingView}).
 * {@link #startNumbered} starts {@code node-01}..{@code node-NN} (zero-padded to the width of N, at least two
 * digits) in zones az-1, az-2, az-3 round-robin, node {@code i} on {@code basePort + i - 1} or on a free port when
 * {@code basePort} is 0; {@link #start(String, String)} adds a node later (a joiner).
 *
 * <p>Everything lives under one directory: the stores in {@code nodes/<id>}, the nodes' shared admin secret
 * {@code admin.secret} (made on the first start, kept after), and the files a newcomer needs: {@code nodes.txt}
 * (the worker's nodes file: {@code node-id host:port} lines naming each node's admin listener), {@code
 * client-ports.txt} (the same for the client ports, where clients read and write keys) and {@code members.json}
 * (the members file of {@code ringshift init --members}), rewritten whenever a node starts because the ports may
 * change.
 * Given no directory, a temporary one is created and {@link #close} deletes it. Thread safe.
 */
public final class LocalNodes implements AutoCloseable {
  /**
   * The reference shape (120 nodes) and a few spares; each node is a RocksDB instance and an HTTP server in this
   * JVM.
   */
  public static final int MAX_NODES = 128;

  /**
   * Handler threads per node by default: {@link NodeServer#DEFAULT_THREADS} for a tour of a few nodes, fewer when
   * many nodes share this JVM ({@link #threadsFor}).
   */
  public static final int MIN_THREADS = 8;

  private static final String HOST = "127.0.0.1";
  private static final int ZONES = 3;
  private static final Duration CALL_TIMEOUT = Duration.ofSeconds(10);
  /** Ids of the nodes started as spares, left out of {@code members.json}. */
  private final java.util.Set<String> spares = new java.util.HashSet<>();

  /**
   * One running node: its store, its server, a client of its client port ({@link #remote}, key reads and writes)
   * and one of its admin listener ({@link #admin}, what a worker uses).
   */
  public record Node(String id, String zone, Path dataDir, Store store, NodeServer server, Store remote,
      Store admin) {
    /** The client port's {@code host:port}. */
    public String hostPort() {
      return server.hostPort();
    }

    /** The admin listener's {@code host:port}. */
    public String adminHostPort() {
      return server.adminHostPort();
    }
  }

  private final Path dir;
  private final boolean temporary;
  private final Map<String, Node> nodes = new LinkedHashMap<>();
  /** The published ring every node checks the ownership of stale writes against (one client for all). */
  private final PublishedRingView ring;
  /** The admin secret every node of this directory checks and every worker of the plane sends. */
  private final AdminSecret secret;

  /** Handler threads of each node started from now on. */
  private volatile int threads = NodeServer.DEFAULT_THREADS;

  /**
   * Every node's ownership check: the shared view reports the newest write without a version any of them took, so that
   * the publisher keeps the fence while a client of before versions writes to the plane.
   */
  private final java.util.List<OwnershipCheckedStore> checked = new java.util.concurrent.CopyOnWriteArrayList<>();

  private LocalNodes(Path dir, boolean temporary, PublishedRingView ring) {
    this.dir = dir;
    this.temporary = temporary;
    this.ring = ring;
    this.secret = AdminSecret.readOrCreate(dir.resolve(SECRET_FILE));
    if (ring != null) {
      ring.reportUnversionedWrites(() -> checked.stream()
          .mapToLong(OwnershipCheckedStore::lastUnversionedWriteMillis).max().orElse(-1));
    }
  }

  /**
   * Handler threads per node when {@code nodes} nodes share this JVM: {@link NodeServer#DEFAULT_THREADS} up to 16
   * nodes, then fewer, down to {@link #MIN_THREADS}, so that 120 nodes hold about a thousand threads, not 3,840. A
   * node's scans and feeds each hold a thread while they stream, and a worker runs a few tasks per node at once, so
   * eight are plenty for one node of many.
   */
  public static int threadsFor(int nodes) {
    if (nodes <= 16) {
      return NodeServer.DEFAULT_THREADS;
    }
    return Math.max(MIN_THREADS, NodeServer.DEFAULT_THREADS * 16 / nodes);
  }

  /** The file of the nodes' admin secret in their directory. */
  public static final String SECRET_FILE = "admin.secret";

  /** A node on port P serves its admin listener on P + this (a free port when P is 0). */
  public static final int ADMIN_PORT_OFFSET = 100;

  /**
   * No node yet, under {@code dir} (a temporary directory when null); the nodes check stale writes against
   * {@code ring}, which they close with themselves.
   *
   * @throws UncheckedIOException when the directory cannot be created
   */
  public static LocalNodes in(Path dir, PublishedRingView ring) {
    boolean temporary = dir == null;
    try {
      Path root = temporary ? Files.createTempDirectory("ringshift-dev-") : Files.createDirectories(dir);
      return new LocalNodes(root.toAbsolutePath(), temporary, ring);
    } catch (IllegalArgumentException e) {
      ring.close();
      throw new LocalPlaneException(LocalPlaneException.Reason.BAD_DATA_DIR, "the storage nodes' admin secret: "
          + e.getMessage(), e);
    } catch (IOException e) {
      ring.close();
      throw new UncheckedIOException("cannot create the storage nodes' directory: " + e.getMessage(), e);
    }
  }

  /**
   * Starts {@code count} numbered nodes (see the class comment). On failure nothing is left running.
   *
   * @throws LocalPlaneException {@link LocalPlaneException.Reason#PORT_IN_USE} or {@link
   *     LocalPlaneException.Reason#BAD_DATA_DIR}, naming the node
   * @throws StoreException when RocksDB cannot open a store
   */
  public static LocalNodes startNumbered(int count, int basePort, Path dir, PublishedRingView ring) {
    return startNumbered(count, 0, basePort, dir, ring);
  }

  /**
   * {@link #startNumbered(int, int, Path, PublishedRingView)} with {@code spares} more nodes after the {@code count}
   * members, numbered on: they run and serve, but {@code members.json} leaves them out, so that they can join.
   */
  public static LocalNodes startNumbered(int count, int spares, int basePort, Path dir, PublishedRingView ring) {
    if (count < 1 || spares < 0 || count + spares > MAX_NODES) {
      throw new IllegalArgumentException("count was " + count + " and spares " + spares + "; count must be at least "
          + "1 and both together at most " + MAX_NODES);
    }
    LocalNodes nodes = in(dir, ring);
    try {
      int all = count + spares;
      nodes.threads = threadsFor(all);
      for (int i = 1; i <= all; i++) {
        if (i > count) {
          nodes.spares.add(id(i, all));
        }
        nodes.start(id(i, all), zone(i), basePort == 0 ? 0 : basePort + i - 1);
      }
      return nodes;
    } catch (RuntimeException e) {
      nodes.closeQuietly(e);
      throw e;
    }
  }

  /** Starts node {@code id} in {@code zone} on a free port; see {@link #start(String, String, int)}. */
  public Node start(String id, String zone) {
    return start(id, zone, 0);
  }

  /**
   * Opens node {@code id}'s store under this directory and serves it on {@code port} of 127.0.0.1 (0: a free
   * one), its admin listener on {@code port} + {@value #ADMIN_PORT_OFFSET} (a free one with port 0), then rewrites
   * {@code nodes.txt}, {@code client-ports.txt} and {@code members.json}.
   *
   * @throws LocalPlaneException {@link LocalPlaneException.Reason#PORT_IN_USE} when the port is taken, {@link
   *     LocalPlaneException.Reason#BAD_DATA_DIR} when the node's directory belongs to another node or is not a store
   * @throws IllegalArgumentException when a node {@code id} runs already
   */
  public synchronized Node start(String id, String zone, int port) {
    if (nodes.containsKey(id)) {
      throw new IllegalArgumentException("storage node " + id + " runs already");
    }
    Path dataDir = dir.resolve("nodes").resolve(id);
    Store store;
    try {
      store = RocksStore.open(dataDir, id, zone);
    } catch (StoreException.BadRequest e) {
      throw new LocalPlaneException(LocalPlaneException.Reason.BAD_DATA_DIR, "storage node " + id + ": "
          + e.getMessage(), e);
    }
    int adminPort = port == 0 ? 0 : port + ADMIN_PORT_OFFSET;
    NodeServer server;
    try {
      OwnershipCheckedStore check = OwnershipCheckedStore.wrap(store, ring);
      checked.add(check);
      server = NodeServer.start(check, new InetSocketAddress(HOST, port),
          new InetSocketAddress(HOST, adminPort), secret, threads);
    } catch (RuntimeException e) {
      store.close();
      if (e instanceof StoreException && e.getCause() instanceof BindException
          && e.getMessage().contains("admin listener")) {
        throw new LocalPlaneException(LocalPlaneException.Reason.PORT_IN_USE, "port " + adminPort + " on " + HOST
            + " is already in use, so the admin listener of storage node " + id + " cannot listen there (a node "
            + "on port P listens on P + " + ADMIN_PORT_OFFSET + " for workers); stop what uses it, or give another "
            + "--node-port (0 picks free ports)", e);
      }
      if (e instanceof StoreException && e.getCause() instanceof BindException) {
        throw new LocalPlaneException(LocalPlaneException.Reason.PORT_IN_USE, "port " + port + " on " + HOST
            + " is already in use, so storage node " + id + " cannot listen there; stop what uses it, or give "
            + "another --node-port (0 picks free ports)", e);
      }
      throw e;
    }
    Node node = new Node(id, zone, dataDir, store, server, RemoteStore.connect(server.hostPort(), CALL_TIMEOUT),
        RemoteStore.connectAdmin(server.adminHostPort(), secret, CALL_TIMEOUT));
    nodes.put(id, node);
    writeFiles();
    return node;
  }

  /**
   * Stops node {@code id} as a crash would, for a failure drill: its listeners stop answering at once (calls in flight
   * end with an error), its store closes, and it leaves {@link #nodes()} and the files; its data directory stays. A
   * node of the same id may be started again later on that data.
   *
   * @throws IllegalArgumentException when no node {@code id} runs
   */
  public synchronized void kill(String id) {
    Node node = nodes.remove(id);
    if (node == null) {
      throw new IllegalArgumentException("no storage node " + id + " runs here; running: " + nodes.keySet());
    }
    spares.remove(id);
    Failures failures = new Failures();
    failures.run(() -> node.server().close());
    failures.run(() -> node.remote().close());
    failures.run(() -> node.admin().close());
    failures.run(() -> node.store().close());
    failures.run(this::writeFiles);
    failures.throwFirst();
  }

  /** {@code node-01}: the 1-based index zero-padded to the width of {@code count}, at least 2 digits. */
  public static String id(int index, int count) {
    int width = Math.max(2, String.valueOf(count).length());
    return String.format(Locale.ROOT, "node-%0" + width + "d", index);
  }

  /** az-1, az-2, az-3, az-1, ... for the 1-based index. */
  public static String zone(int index) {
    return "az-" + (1 + (index - 1) % ZONES);
  }

  private void writeFiles() {
    StringBuilder txt = new StringBuilder("# the admin listeners of the storage nodes of ringshift dev, for "
        + "workers (with --node-secret-file " + secretFile() + "); rewritten at every start\n");
    StringBuilder clients = new StringBuilder("# the client ports of the storage nodes of ringshift dev (key reads "
        + "and writes); rewritten at every start\n");
    StringBuilder json = new StringBuilder("[\n");
    List<Node> all = new ArrayList<>(nodes.values());
    for (Node n : all) {
      txt.append(n.id()).append(' ').append(n.adminHostPort()).append('\n');
      clients.append(n.id()).append(' ').append(n.hostPort()).append('\n');
    }
    List<Node> members = all.stream().filter(n -> !spares.contains(n.id())).toList();
    for (int i = 0; i < members.size(); i++) {
      Node n = members.get(i);
      json.append("  {\"id\": \"").append(n.id()).append("\", \"zone\": \"").append(n.zone()).append("\"}")
          .append(i + 1 < members.size() ? ",\n" : "\n");
    }
    json.append("]\n");
    try {
      Files.writeString(nodesFile(), txt, StandardCharsets.UTF_8);
      Files.writeString(clientPortsFile(), clients, StandardCharsets.UTF_8);
      Files.writeString(membersFile(), json, StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot write " + nodesFile() + " or " + membersFile() + ": " + e.getMessage(),
          e);
    }
  }

  /** The running nodes, in the order they started. */
  public synchronized List<Node> nodes() {
    return List.copyOf(nodes.values());
  }

  /** The running nodes started as spares: not in {@code members.json}, ready to join. */
  public synchronized List<Node> spares() {
    return nodes.values().stream().filter(n -> spares.contains(n.id())).toList();
  }

  /**
   * Node {@code id}.
   *
   * @throws IllegalArgumentException when no such node runs
   */
  public synchronized Node node(String id) {
    Node node = nodes.get(id);
    if (node == null) {
      throw new IllegalArgumentException("storage node " + id + " does not run here; running: " + nodes.keySet());
    }
    return node;
  }

  /** A client of node {@code id}'s client port, as a writer reaches it (owned here). */
  public Store remote(String id) {
    return node(id).remote();
  }

  /** A client of node {@code id}'s admin listener, as a worker reaches it (owned here). */
  public Store admin(String id) {
    return node(id).admin();
  }

  /** Every node at the address of its admin listener, for a worker (which sends {@link #secret()}). */
  public synchronized NodeDirectory directory() {
    Map<String, NodeDirectory.Address> addresses = new LinkedHashMap<>();
    for (Node n : nodes.values()) {
      addresses.put(n.id(), new NodeDirectory.Address(HOST, n.server().adminPort()));
    }
    return NodeDirectory.of(addresses);
  }

  /** Every node at the address of its client port. */
  public synchronized NodeDirectory clientPorts() {
    Map<String, NodeDirectory.Address> addresses = new LinkedHashMap<>();
    for (Node n : nodes.values()) {
      addresses.put(n.id(), new NodeDirectory.Address(HOST, n.server().port()));
    }
    return NodeDirectory.of(addresses);
  }

  /** The admin secret of these nodes' admin listeners. */
  public AdminSecret secret() {
    return secret;
  }

  /** The file holding {@link #secret()}. */
  public Path secretFile() {
    return dir.resolve(SECRET_FILE);
  }

  /** The client ports, as {@code node-id host:port} lines. */
  public Path clientPortsFile() {
    return dir.resolve("client-ports.txt");
  }

  public Path dir() {
    return dir;
  }

  public boolean temporary() {
    return temporary;
  }

  public Path nodesFile() {
    return dir.resolve("nodes.txt");
  }

  public Path membersFile() {
    return dir.resolve("members.json");
  }

  /**
   * Stops every server (ending the streams in progress), then closes the ring view and every store, and deletes
   * the directory when it is temporary. Each node is closed even when another fails; the first failure is thrown
   * after.
   */
  @Override
  public synchronized void close() {
    Failures failures = new Failures();
    for (Node n : nodes.values()) {
      failures.run(() -> n.remote().close());
      failures.run(() -> n.admin().close());
      failures.run(() -> n.server().close());
    }
    failures.run(ring::close);
    for (Node n : nodes.values()) {
      failures.run(() -> n.store().close());
    }
    nodes.clear();
    if (temporary) {
      failures.run(() -> Directories.deleteRecursively(dir));
    }
    failures.throwFirst();
  }

  private void closeQuietly(Throwable cause) {
    try {
      close();
    } catch (RuntimeException e) {
      cause.addSuppressed(e);
    }
  }
}
