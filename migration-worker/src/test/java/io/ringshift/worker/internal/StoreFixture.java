package io.ringshift.worker.internal;

import io.ringshift.ring.RingRange;
import io.ringshift.storage.ChangeFeed;
import io.ringshift.storage.Entry;
import io.ringshift.storage.Fence;
import io.ringshift.storage.RangeDigest;
import io.ringshift.storage.RangeScan;
import io.ringshift.storage.RocksStore;
import io.ringshift.storage.Store;
import io.ringshift.storage.StoreException;
import io.ringshift.storage.Version;
import io.ringshift.storage.WriteResult;
import io.ringshift.worker.NodeStores;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

/**
 * Real RocksDB stores for the task tests, one per node in a temporary directory, each behind a switch that
 * makes the node unreachable ({@link StoreException.Unavailable}, as a remote store reports a node that is
 * down) without closing its database.
 */
public final class StoreFixture implements AutoCloseable {
  private final Path dir;
  private final Map<String, Node> nodes = new LinkedHashMap<>();

  public StoreFixture(Path dir) {
    this.dir = dir;
  }

  /** Opens node {@code id}'s store behind {@code wrapper} (an ownership-checked store, say). */
  public Node nodeBehind(String id, java.util.function.UnaryOperator<Store> wrapper) {
    return nodes.computeIfAbsent(id, n -> new Node(n, wrapper.apply(RocksStore.open(dir.resolve(n), n, "az-1"))));
  }

  /** Opens (or returns) node {@code id}'s store. */
  public Node node(String id) {
    return nodes.computeIfAbsent(id, n -> new Node(n, RocksStore.open(dir.resolve(n), n, "az-1")));
  }

  public NodeStores stores() {
    return new NodeStores() {
      @Override
      public Store store(String nodeId) {
        Node node = nodes.get(nodeId);
        if (node == null) {
          throw new StoreException.Unavailable("node " + nodeId + " is not known to this test", null);
        }
        return node;
      }

      @Override
      public boolean knows(String nodeId) {
        return true; // a node the test has not opened yet stands for one that is down, not one nobody knows
      }

      @Override
      public void close() {
        // The fixture closes the stores.
      }
    };
  }

  @Override
  public void close() {
    nodes.values().forEach(n -> n.delegate.close());
  }

  public static byte[] bytes(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  /** A node's store behind an on/off switch. */
  public static final class Node implements Store {
    final String id;
    public final Store delegate;
    private volatile boolean down;
    private volatile CountDownLatch stall;
    private final AtomicInteger stalledCalls = new AtomicInteger();
    private final AtomicInteger feedLosses = new AtomicInteger();
    private final AtomicInteger feedsOpened = new AtomicInteger();
    private final AtomicInteger loads = new AtomicInteger();
    private volatile java.util.function.Predicate<String> losesApplied = k -> false;
    private volatile boolean digestsFail;
    private volatile java.util.function.Consumer<List<Entry>> onApplied = e -> { };
    private volatile java.util.function.Consumer<String> beforeCall = c -> { };

    Node(String id, Store delegate) {
      this.id = id;
      this.delegate = delegate;
    }

    public void down() {
      down = true;
    }

    public void up() {
      down = false;
    }

    /** Holds every call through this node (a slow node) until {@link #unstall}; {@link #stalledCalls} counts them. */
    public void stall() {
      stall = new CountDownLatch(1);
    }

    public void unstall() {
      CountDownLatch held = stall;
      stall = null;
      if (held != null) {
        held.countDown();
      }
    }

    /**
     * The next {@code times} change feeds opened on this node fail with {@link StoreException.FeedUnavailable}, as
     * a node whose WAL retention is shorter than a copy takes answers.
     */
    public void loseLog(int times) {
      feedLosses.set(times);
    }

    /**
     * From now on, {@link #apply} silently drops the entries whose key (as UTF-8 text) matches {@code keys}: a
     * broken target that loses copied writes. {@code k -> false} mends it.
     */
    public void loseApplied(java.util.function.Predicate<String> keys) {
      losesApplied = keys;
    }

    /** Whether {@link #digest} fails as an unreachable node's would, the node answering every other call. */
    public void failDigests(boolean fail) {
      digestsFail = fail;
    }

    /** How many change feeds were opened on this node so far (of one range or of several). */
    public int feedsOpened() {
      return feedsOpened.get();
    }

    /** How many calls a stall has held so far. */
    public int stalledCalls() {
      return stalledCalls.get();
    }

    /** Puts {@code count} keys {@code prefix-i} with {@code valueBytes}-byte values at epoch 1. */
    public void fill(String prefix, int count, int valueBytes) {
      for (int i = 0; i < count; i++) {
        byte[] value = new byte[valueBytes];
        java.util.Arrays.fill(value, (byte) i);
        delegate.put(bytes(prefix + "-" + i), value, 1);
      }
    }

    /** Every live entry of {@code range}, read directly from the database. */
    public Map<String, String> contents(RingRange range) {
      Map<String, String> out = new LinkedHashMap<>();
      try (RangeScan scan = delegate.scan(range, null)) {
        scan.forEachRemaining(e -> {
          if (!e.isDeletion()) {
            out.put(new String(e.key(), StandardCharsets.UTF_8), java.util.HexFormat.of().formatHex(e.value()));
          }
        });
      }
      return out;
    }

    private <T> T reach(Supplier<T> call) {
      CountDownLatch held = stall;
      if (held != null) {
        stalledCalls.incrementAndGet();
        try {
          held.await();
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          throw new StoreException.Unavailable(id + ": interrupted while stalled", e);
        }
      }
      if (down) {
        throw new StoreException.Unavailable(id + ": connection refused", null);
      }
      return call.get();
    }

    @Override
    public NodeInfo info() {
      return reach(delegate::info);
    }

    @Override
    public long latestSequence() {
      return reach(delegate::latestSequence);
    }

    @Override
    public WriteResult put(byte[] key, byte[] value, long epoch) {
      return reach(() -> delegate.put(key, value, epoch));
    }

    @Override
    public WriteResult delete(byte[] key, long epoch) {
      return reach(() -> delegate.delete(key, epoch));
    }

    @Override
    public WriteResult put(byte[] key, byte[] value, long epoch, Version version) {
      return reach(() -> delegate.put(key, value, epoch, version));
    }

    @Override
    public WriteResult delete(byte[] key, long epoch, Version version) {
      return reach(() -> delegate.delete(key, epoch, version));
    }

    @Override
    public Optional<byte[]> get(byte[] key) {
      return reach(() -> delegate.get(key));
    }

    /**
     * Calls {@code listener} right before this node opens a scan ({@code "scan"}) or computes a digest ({@code
     * "digest"}): a test's writes then land exactly between two reads of the worker.
     */
    public void beforeCall(java.util.function.Consumer<String> listener) {
      beforeCall = listener;
    }

    @Override
    public RangeScan scan(RingRange range, Cursor after) {
      beforeCall.accept("scan");
      RangeScan scan = reach(() -> delegate.scan(range, after));
      return new RangeScan() {
        @Override
        public long sequence() {
          return scan.sequence();
        }

        @Override
        public void close() {
          scan.close();
        }

        @Override
        public boolean hasNext() {
          return reach(scan::hasNext);
        }

        @Override
        public Entry next() {
          return reach(scan::next);
        }
      };
    }

    @Override
    public ChangeFeed changesIn(List<RingRange> ranges, long afterSequence) {
      if (feedLosses.getAndUpdate(n -> Math.max(0, n - 1)) > 0) {
        throw new StoreException.FeedUnavailable(id + ": the log does not reach back to sequence " + afterSequence);
      }
      feedsOpened.incrementAndGet();
      ChangeFeed feed = reach(() -> delegate.changesIn(ranges, afterSequence));
      return new ChangeFeed() {
        @Override
        public long upTo() {
          return feed.upTo();
        }

        @Override
        public void close() {
          feed.close();
        }

        @Override
        public boolean hasNext() {
          return reach(feed::hasNext);
        }

        @Override
        public io.ringshift.storage.Change next() {
          return reach(feed::next);
        }
      };
    }

    @Override
    public long apply(List<Entry> entries) {
      java.util.function.Predicate<String> lost = losesApplied;
      List<Entry> kept = entries.stream().filter(e -> !lost.test(new String(e.key(), StandardCharsets.UTF_8)))
          .toList();
      long sequence = reach(() -> kept.isEmpty() ? delegate.latestSequence() : delegate.apply(kept));
      onApplied.accept(kept);
      return sequence;
    }

    /**
     * Loads through the real store's bulk path. A node that goes down while a load streams fails it at its next
     * entry, as a remote store's connection would; the store then loads nothing of it.
     */
    @Override
    public io.ringshift.storage.LoadResult load(java.util.Iterator<Entry> entries) {
      loads.incrementAndGet();
      java.util.Iterator<Entry> watched = new java.util.Iterator<>() {
        @Override
        public boolean hasNext() {
          reachable();
          return entries.hasNext();
        }

        @Override
        public Entry next() {
          reachable();
          Entry e = entries.next();
          onApplied.accept(List.of(e));
          return e;
        }
      };
      return reach(() -> delegate.load(watched));
    }

    private void reachable() {
      if (down) {
        throw new StoreException.Unavailable(id + ": connection refused (in the middle of a load)", null);
      }
    }

    /** How many loads were sent to this node so far. */
    public int loads() {
      return loads.get();
    }

    /**
     * Calls {@code listener} with the entries of every apply this node took, after it took them, and with each entry
     * of a load as the load reads it (a load's entries are not all taken until it ends).
     */
    public void onApplied(java.util.function.Consumer<List<Entry>> listener) {
      onApplied = listener;
    }

    @Override
    public RangeDigest digest(RingRange range) {
      if (digestsFail) {
        throw new StoreException.Unavailable(id + ": connection refused (digest)", null);
      }
      beforeCall.accept("digest");
      return reach(() -> delegate.digest(range));
    }

    @Override
    public Fence fence(RingRange range, long epoch) {
      return reach(() -> delegate.fence(range, epoch));
    }

    @Override
    public List<Fence> fences() {
      return reach(delegate::fences);
    }

    @Override
    public void unfence(RingRange range, long epoch) {
      reach(() -> {
        delegate.unfence(range, epoch);
        return null;
      });
    }

    @Override
    public long deleteRange(RingRange range, long epoch) {
      return reach(() -> delegate.deleteRange(range, epoch));
    }

    @Override
    public void close() {
      // The fixture closes the database.
    }
  }
}
