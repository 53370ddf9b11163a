package io.ringshift.storage;

import static io.ringshift.storage.TestKeys.bytes;
import static org.assertj.core.api.Assertions.assertThat;

import io.ringshift.ring.RingBuilder;
import io.ringshift.ring.RingRange;
import io.ringshift.ring.RingSnapshot;
import java.lang.management.ManagementFactory;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What the ownership check and a routed write cost, printed (docs/storage.md, "Measured"); the one assertion is the
 * documented guarantee that a write the check lets through allocates nothing. Times are printed, never asserted.
 */
class OwnershipCostTest {
  private static final int CHECKS = 2_000_000;
  private static final com.sun.management.ThreadMXBean THREADS =
      (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();

  @TempDir Path dir;
  private long sink;

  /** A node of the reference scenario's ring (120 nodes, 3 zones, 256 tokens each, R = 3) over a do-nothing store. */
  @Test
  void shouldAllocateNothingForAWriteTheCheckLetsThrough() {
    RingBuilder builder = RingSnapshot.builder().clusterId("cost").epoch(10).vnodes(256).replicas(3);
    for (int i = 0; i < 120; i++) {
      builder.addMember(String.format("node-%03d", i), "az-" + (i % 3));
    }
    RingSnapshot ring = builder.build();
    List<byte[]> owned = new ArrayList<>();
    List<byte[]> notOwned = new ArrayList<>();
    for (int i = 0; owned.size() < 1024 || notOwned.size() < 1024; i++) {
      byte[] key = bytes("user:" + i);
      (ring.replicasOf(key).contains("node-000") ? owned : notOwned).add(key);
    }
    byte[][] kept = owned.subList(0, 1024).toArray(new byte[0][]);
    byte[][] moved = notOwned.subList(0, 1024).toArray(new byte[0][]);
    Store checked = OwnershipCheckedStore.wrap(new NullStore("node-000"), () -> ring);

    Cost current = measure(checked, moved, 10);
    Cost lookup = measure(checked, kept, 9);
    Cost refusal = measure(checked, moved, 9);

    System.out.printf("ownership check, 120 nodes x 256 tokens: current epoch %.1f ns %.1f B; older epoch, key kept "
        + "(one lookup) %.1f ns %.1f B; older epoch, key moved (refused) %.1f ns %.1f B per write%n",
        current.nanos, current.bytes, lookup.nanos, lookup.bytes, refusal.nanos, refusal.bytes);
    assertThat(current.bytes).as("bytes per write at the node's epoch").isZero();
    assertThat(lookup.bytes).as("bytes per older-epoch write the node still replicates").isZero();
  }

  private record Cost(double nanos, double bytes) {}

  private Cost measure(Store store, byte[][] keys, long epoch) {
    byte[] value = new byte[100];
    for (int round = 0; round < 3; round++) {
      run(store, keys, value, epoch);
    }
    long thread = Thread.currentThread().getId();
    long allocated = THREADS.getThreadAllocatedBytes(thread);
    long started = System.nanoTime();
    run(store, keys, value, epoch);
    long nanos = System.nanoTime() - started;
    allocated = THREADS.getThreadAllocatedBytes(thread) - allocated;
    return new Cost(nanos / (double) CHECKS, allocated / (double) CHECKS);
  }

  private void run(Store store, byte[][] keys, byte[] value, long epoch) {
    for (int i = 0; i < CHECKS; i++) {
      sink += store.put(keys[i & 1023], value, epoch) instanceof WriteResult.Applied ? 1 : 0;
    }
  }

  /** Routed puts over HTTP on loopback, four nodes, R = 2: on a current route, and on a stale one that converges. */
  @Test
  void shouldPrintWhatARoutedWriteCostsOverHttp() {
    Map<String, Store> nodes = new LinkedHashMap<>();
    List<NodeServer> servers = new ArrayList<>();
    Map<String, Store> remotes = new LinkedHashMap<>();
    try {
      for (String id : Rings.NODES) {
        Store node = OwnershipCheckedStore.wrap(RocksStore.open(dir.resolve(id), id, Rings.EPOCH_5.member(id).zone()),
            () -> Rings.EPOCH_5);
        nodes.put(id, node);
        NodeServer server = NodeServer.start(node, new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
        servers.add(server);
        remotes.put(id, RemoteStore.connect(server.hostPort(), Duration.ofSeconds(10)));
      }
      List<byte[]> moved = new ArrayList<>();
      for (int i = 0; moved.size() < 500; i++) {
        byte[] key = bytes("key-" + i);
        if (!Rings.EPOCH_5.replicasOf(key).ids().containsAll(Rings.EPOCH_4.replicasOf(key).ids())) {
          moved.add(key);
        }
      }
      byte[] value = new byte[100];
      RoutedWriter current = RoutedWriter.create(new SteppingRouting(Rings.EPOCH_5), remotes::get);
      for (byte[] key : moved) {
        current.put(key, value);
      }
      long started = System.nanoTime();
      for (byte[] key : moved) {
        current.put(key, value);
      }
      long currentNanos = System.nanoTime() - started;
      int retried = 0;
      started = System.nanoTime();
      for (byte[] key : moved) {
        RoutedWriter stale = RoutedWriter.create(new SteppingRouting(Rings.EPOCH_4, Rings.EPOCH_5), remotes::get);
        retried += stale.put(key, value).retried() ? 1 : 0;
      }
      long staleNanos = System.nanoTime() - started;

      System.out.printf("routed put over HTTP (2 replicas, 100 B): current route %.0f us; stale route, refused and "
          + "retried once %.0f us (%d of %d keys retried)%n", currentNanos / 1e3 / moved.size(),
          staleNanos / 1e3 / moved.size(), retried, moved.size());
      assertThat(retried).as("every key moved, so every stale write was retried").isEqualTo(moved.size());
    } finally {
      remotes.values().forEach(Store::close);
      servers.forEach(NodeServer::close);
      nodes.values().forEach(Store::close);
    }
  }

  /**
   * Routed puts over HTTP on loopback to three nodes in three zones, R = 3, 100-byte values: the replicas written one
   * after another, as the writer used to, against in parallel (its default), from one writer thread (time per put)
   * and from eight (acknowledged writes per second). Prints the figures and their ratios; asserts only that every
   * write was acknowledged on all three replicas.
   */
  @Test
  void shouldPrintWhatParallelReplicaWritesGainOverHttp() throws Exception {
    RingSnapshot ring = RingSnapshot.builder().clusterId("test").epoch(5).vnodes(16).replicas(3)
        .addMember("w-1", "az-1").addMember("w-2", "az-2").addMember("w-3", "az-3").build();
    List<Store> nodes = new ArrayList<>();
    List<NodeServer> servers = new ArrayList<>();
    Map<String, Store> remotes = new LinkedHashMap<>();
    Map<String, Store> batchedRemotes = new LinkedHashMap<>();
    try {
      for (io.ringshift.ring.Member m : ring.members()) {
        Store node = OwnershipCheckedStore.wrap(RocksStore.open(dir.resolve(m.id()), m.id(), m.zone()), () -> ring);
        nodes.add(node);
        NodeServer server = NodeServer.start(node, new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
        servers.add(server);
        remotes.put(m.id(), RemoteStore.connect(server.hostPort(), Duration.ofSeconds(10),
            RemoteStore.WriteMode.ONE_PER_REQUEST));
        batchedRemotes.put(m.id(), RemoteStore.connect(server.hostPort(), Duration.ofSeconds(10)));
      }
      RoutedWriter parallel = RoutedWriter.create(new SteppingRouting(ring), remotes::get);
      RoutedWriter sequential = parallel.sequential();
      RoutedWriter batched = RoutedWriter.create(new SteppingRouting(ring), batchedRemotes::get);
      byte[] value = new byte[100];
      int perThread = Integer.getInteger("ringshift.writes.per-thread", 200);
      for (RoutedWriter warm : List.of(sequential, parallel, batched)) {
        writes(warm, 1, 100, "warm", value);
      }
      double sequentialOne = writes(sequential, 1, perThread, "s1", value);
      double parallelOne = writes(parallel, 1, perThread, "p1", value);
      double sequentialEight = writes(sequential, 8, perThread, "s8", value);
      double parallelEight = writes(parallel, 8, perThread, "p8", value);
      System.out.printf("routed put over HTTP (3 replicas, 100 B), one request per write: one writer thread %.0f "
          + "writes/s one replica after another, %.0f in parallel (x%.2f); eight threads %.0f writes/s one after "
          + "another, %.0f in parallel (x%.2f)%n", sequentialOne, parallelOne, parallelOne / sequentialOne,
          sequentialEight, parallelEight, parallelEight / sequentialEight);
      double batchedOne = writes(batched, 1, perThread, "b1", value);
      double batchedEight = writes(batched, 8, perThread, "b8", value);
      double parallelMany = writes(parallel, 32, perThread, "p32", value);
      double batchedMany = writes(batched, 32, perThread, "b32", value);
      System.out.printf("routed put over HTTP (3 replicas in parallel, 100 B), batched against one request per "
          + "write: one thread %.0f against %.0f writes/s (x%.2f); eight threads %.0f against %.0f (x%.2f); 32 "
          + "threads %.0f against %.0f (x%.2f)%n", batchedOne, parallelOne, batchedOne / parallelOne, batchedEight,
          parallelEight, batchedEight / parallelEight, batchedMany, parallelMany, batchedMany / parallelMany);
      for (Map.Entry<String, Store> r : batchedRemotes.entrySet()) {
        long[] stats = ((io.ringshift.storage.internal.http.HttpStoreClient) r.getValue()).batchStats();
        System.out.printf("  batched writes to %s: %d in %d requests (%.1f per request)%n", r.getKey(), stats[1],
            stats[0], stats[1] / (double) Math.max(1, stats[0]));
      }
      byte[] probe = bytes("b32-31-" + (perThread - 1));
      for (Store node : nodes) {
        assertThat(node.get(probe)).as("the last write on %s", node.info().nodeId()).isPresent();
      }
    } finally {
      remotes.values().forEach(Store::close);
      batchedRemotes.values().forEach(Store::close);
      servers.forEach(NodeServer::close);
      nodes.forEach(Store::close);
    }
  }

  /** {@code threads} threads each put {@code perThread} keys through {@code writer}; acknowledged writes per second. */
  private static double writes(RoutedWriter writer, int threads, int perThread, String prefix, byte[] value)
      throws Exception {
    java.util.concurrent.ExecutorService pool = java.util.concurrent.Executors.newFixedThreadPool(threads);
    try {
      long started = System.nanoTime();
      List<java.util.concurrent.Future<Integer>> done = new ArrayList<>();
      for (int t = 0; t < threads; t++) {
        int thread = t;
        done.add(pool.submit(() -> {
          int acknowledged = 0;
          for (int i = 0; i < perThread; i++) {
            if (writer.put(bytes(prefix + "-" + thread + "-" + i), value).replicas().size() == 3) {
              acknowledged++;
            }
          }
          return acknowledged;
        }));
      }
      int acknowledged = 0;
      for (java.util.concurrent.Future<Integer> f : done) {
        acknowledged += f.get();
      }
      double seconds = (System.nanoTime() - started) / 1e9;
      assertThat(acknowledged).isEqualTo(threads * perThread);
      return acknowledged / seconds;
    } finally {
      pool.shutdownNow();
    }
  }

  /**
   * A node through 1,000 epochs: node-x joins and drains in turn a ring of six nodes (16 tokens, R = 3), and at each
   * epoch node-01 is fenced, as a copy's source, on every range it replicated before the epoch whose replicas
   * change, then routes by the new ring. One store prunes its fences as the node does ({@link
   * OwnershipCheckedStore#pruneFences}), the other keeps them all, as nodes used to. Prints the fence counts and the
   * cost of a write at epochs 10, 100 and 1,000; asserts that the pruned count stays flat. 50 epochs by default
   * (a few seconds); {@code -Dringshift.fence.epochs=1000} for the documented run (about two minutes, most of it
   * the unpruned store rebuilding its ever larger fence set).
   */
  @Test
  void shouldKeepFencesAndWriteCostFlatOverAThousandEpochs() {
    int epochs = Integer.getInteger("ringshift.fence.epochs", 50);
    List<io.ringshift.ring.Member> six = new ArrayList<>();
    for (int i = 1; i <= 6; i++) {
      six.add(io.ringshift.ring.Member.of(String.format("node-%02d", i), "az-" + (i % 3 + 1)));
    }
    RingSnapshot base = RingSnapshot.builder().clusterId("test").epoch(1).vnodes(16).replicas(3).members(six).build();
    RingSnapshot withX = base.toBuilder().addMember("node-x", "az-1").build();
    RingSnapshot[] view = {base};
    Store pruned = OwnershipCheckedStore.wrap(RocksStore.open(dir.resolve("pruned"), "node-01", "az-2"),
        () -> view[0]);
    Store kept = RocksStore.open(dir.resolve("kept"), "node-01", "az-2");
    try {
      byte[] value = new byte[100];
      List<String> lines = new ArrayList<>();
      int prunedAtTen = -1;
      for (int epoch = 2; epoch <= epochs; epoch++) {
        RingSnapshot before = view[0];
        RingSnapshot next = (epoch % 2 == 0 ? withX : base).toBuilder().epoch(epoch).build();
        for (io.ringshift.ring.RangeChange change : io.ringshift.ring.RingDiff.between(before, next).changes()) {
          if (change.before().contains("node-01")) {
            pruned.fence(change.range(), epoch);
            kept.fence(change.range(), epoch);
          }
        }
        view[0] = next;
        ((OwnershipCheckedStore) pruned).pruneFences();
        if (epoch == 10 || epoch == 100 || epoch == 1000 || epoch == epochs) {
          double prunedNanos = writeCost(pruned, value, epoch);
          double keptNanos = writeCost(kept, value, epoch);
          lines.add(String.format("epoch %d: pruned %d fences, %.1f us per write; unpruned %d fences, %.1f us per "
              + "write", epoch, pruned.fences().size(), prunedNanos / 1e3, kept.fences().size(), keptNanos / 1e3));
          if (epoch == 10) {
            prunedAtTen = pruned.fences().size();
          }
        }
      }
      System.out.println("fences over " + epochs + " epochs of a join and drain in turn (node-01, 6 nodes x 16 tokens, R = 3): "
          + String.join("; ", lines));
      assertThat(pruned.fences().size()).as("pruned fences stay flat").isLessThanOrEqualTo(prunedAtTen);
      assertThat(kept.fences().size()).as("unpruned fences grow").isGreaterThan(epochs / 20 * Math.max(1, prunedAtTen));
    } finally {
      pruned.close();
      kept.close();
    }
  }

  /** Nanoseconds per put through {@code store}, at the ring's epoch, over keys spread over the ring. */
  private static double writeCost(Store store, byte[] value, long epoch) {
    int n = 5_000;
    for (int i = 0; i < 1_000; i++) {
      store.put(bytes("warm-" + i), value, epoch);
    }
    long started = System.nanoTime();
    for (int i = 0; i < n; i++) {
      store.put(bytes("cost-" + i), value, epoch);
    }
    return (System.nanoTime() - started) / (double) n;
  }

  /** A store that takes every write and holds nothing: the check's own cost, without RocksDB's. */
  private record NullStore(String nodeId) implements Store {
    private static final WriteResult APPLIED = new WriteResult.Applied(1);

    @Override
    public NodeInfo info() {
      return new NodeInfo(nodeId, "az-0", 0, 0, "test");
    }

    @Override
    public long latestSequence() {
      return 0;
    }

    @Override
    public WriteResult put(byte[] key, byte[] value, long epoch) {
      return APPLIED;
    }

    @Override
    public WriteResult delete(byte[] key, long epoch) {
      return APPLIED;
    }

    @Override
    public WriteResult put(byte[] key, byte[] value, long epoch, Version version) {
      return APPLIED;
    }

    @Override
    public WriteResult delete(byte[] key, long epoch, Version version) {
      return APPLIED;
    }

    @Override
    public Optional<byte[]> get(byte[] key) {
      return Optional.empty();
    }

    @Override
    public RangeScan scan(RingRange range, Cursor after) {
      throw new UnsupportedOperationException("not used by the cost test");
    }

    @Override
    public ChangeFeed changesIn(List<RingRange> ranges, long afterSequence) {
      throw new UnsupportedOperationException("not used by the cost test");
    }

    @Override
    public long apply(List<Entry> entries) {
      return 0;
    }

    @Override
    public RangeDigest digest(RingRange range) {
      throw new UnsupportedOperationException("not used by the cost test");
    }

    @Override
    public Fence fence(RingRange range, long epoch) {
      throw new UnsupportedOperationException("not used by the cost test");
    }

    @Override
    public List<Fence> fences() {
      return List.of();
    }

    @Override
    public void unfence(RingRange range, long epoch) {}

    @Override
    public long deleteRange(RingRange range, long epoch) {
      return 0;
    }

    @Override
    public void close() {}
  }
}
