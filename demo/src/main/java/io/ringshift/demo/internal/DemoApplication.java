package io.ringshift.demo.internal;

import io.ringshift.client.Placement;
import io.ringshift.client.RingClient;
import io.ringshift.client.SnapshotSwap;
import io.ringshift.ring.Member;
import io.ringshift.storage.Entry;
import io.ringshift.storage.RoutedWriter;
import io.ringshift.storage.Routing;
import io.ringshift.storage.Store;
import io.ringshift.storage.StoreException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Function;

/**
 * The application of the demo: a writer and a reader on the client path for the whole scenario, at a steady rate
 * (half the operations writes, half reads), routing every key by a {@link RingClient} that follows the published
 * ring, as any application of the fleet would.
 *
 * <p><b>Writes</b> go through {@link RoutedWriter} to every replica of the key, tagged with the ring's epoch. Each
 * writer thread owns the keys {@code i} with {@code i mod threads} its number, so a key's writes are in order and
 * its last acknowledged write is well defined ({@link KeySpace}). A write refused for a newer epoch (a fence) or
 * failed on a replica (a node down before its failure is published) is sent again until every replica applies it;
 * the time from its first attempt to the acknowledgement is its <em>unavailability window</em>, recorded with the
 * epoch it landed at.
 *
 * <p><b>Reads</b> pick a key with an acknowledged write, look up its readable replicas (a replica still being filled
 * after a failure is not readable), and read one at random (the next one if it fails). A read by a ring of epoch R
 * of a key last acknowledged at epoch W &le; R must return that write or a later one; anything older, or nothing, is
 * a <em>stale read</em>. Every read is logged (time, node, position) so that the demo can check afterwards, against
 * the tasks' own record, that no read was served by a replica before its copy was verified.
 */
public final class DemoApplication implements AutoCloseable {
  /** Writer threads: enough in flight that group commit batches the nodes' requests. */
  static final int WRITERS = 64;
  static final int READERS = 16;
  /** How long a refused write waits for the epoch the refusal names before it is sent again. */
  static final Duration EPOCH_WAIT = Duration.ofSeconds(10);
  private static final long BACKOFF_NANOS = TimeUnit.MILLISECONDS.toNanos(50);

  /** Why a write waited. */
  public enum WindowKind {
    /** Refused for a newer epoch: its range was fenced (or had moved), until the client routed by that epoch. */
    FENCED,
    /** Failed on a replica that did not answer, until its failure was published and the write routed without it. */
    REPLICA_DOWN
  }

  /** One write that waited: the epoch it landed at, why, and how long from its first attempt to its ack. */
  public record Window(long epoch, WindowKind kind, long startMillis, long millis) {}

  /** The client's swap to a published epoch: how long after its publication the client routed by it. */
  public record Swap(long epoch, long atMillis, long delayMillis) {}

  private final KeySpace keys;
  private final RingClient client;
  private final Function<String, Store> stores;
  private final RoutedWriter writer;
  private final Timeline timeline;
  private final long seed;
  private final int writesPerSecond;
  private final int readsPerSecond;
  private final Semaphore writePermits = new Semaphore(0);
  private final Semaphore readPermits = new Semaphore(0);
  private final ScheduledExecutorService ticker = Executors.newSingleThreadScheduledExecutor(r -> {
    Thread t = new Thread(r, "ringshift-demo-pacer");
    t.setDaemon(true);
    return t;
  });
  private final List<Thread> threads = new ArrayList<>();
  private final List<Window> windows = new CopyOnWriteArrayList<>();
  private final List<Swap> swaps = new CopyOnWriteArrayList<>();
  private final List<String> staleReads = new CopyOnWriteArrayList<>();
  private final AtomicLong stale = new AtomicLong();
  private final AtomicLong reads = new AtomicLong();
  private final AtomicLong behind = new AtomicLong();
  private final AtomicLong unreadable = new AtomicLong();
  private final AtomicLong abandoned = new AtomicLong();
  private final ReadLog readLog = new ReadLog();
  private final AtomicReference<Throwable> failure = new AtomicReference<>();
  private final java.util.function.Consumer<SnapshotSwap> swapListener;
  private volatile boolean running;
  private volatile long stopDeadlineNanos = Long.MAX_VALUE;

  /**
   * @param stores the client-port store of each node id (a node that is down answers with errors)
   * @param opsPerSecond operations per second, half writes, half reads
   */
  public DemoApplication(KeySpace keys, RingClient client, Function<String, Store> stores, int opsPerSecond, long seed,
      Timeline timeline) {
    this.keys = keys;
    this.client = client;
    this.stores = stores;
    this.timeline = timeline;
    this.seed = seed;
    this.writesPerSecond = Math.max(1, opsPerSecond / 2);
    this.readsPerSecond = Math.max(1, opsPerSecond - opsPerSecond / 2);
    Routing routing = new Routing() {
      @Override
      public Route route(byte[] key) {
        if (client.current().isEmpty()) {
          return null;
        }
        // The placement, not the ring alone: in a transition stage it names the replicas of both rings.
        Placement p = client.placement(key);
        return new Route(p.epoch(), p.ownerIds());
      }

      @Override
      public boolean awaitEpoch(long epoch, Duration timeout) {
        try {
          return client.awaitEpoch(epoch, timeout);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          return false;
        }
      }
    };
    this.writer = RoutedWriter.create(routing, stores).withEpochWait(EPOCH_WAIT);
    this.swapListener = swap -> {
      long now = System.currentTimeMillis();
      long published = client.publishedAt().map(java.time.Instant::toEpochMilli).orElse(now);
      swaps.add(new Swap(swap.epoch(), now, Math.max(0, now - published)));
    };
  }

  /** Starts the writer and reader threads and the pacer. */
  public DemoApplication start() {
    running = true;
    client.addSwapListener(swapListener);
    // Permits every 10 ms; at most two ticks of backlog, so that threads that waited do not burst afterwards.
    int writeTick = Math.max(1, writesPerSecond / 100);
    int readTick = Math.max(1, readsPerSecond / 100);
    long period = writesPerSecond < 100 ? Math.max(1, 1000 / writesPerSecond) : 10;
    ticker.scheduleAtFixedRate(() -> {
      if (writePermits.availablePermits() < 2 * writeTick) {
        writePermits.release(writeTick);
      }
      if (readPermits.availablePermits() < 2 * readTick) {
        readPermits.release(readTick);
      }
    }, 0, period, TimeUnit.MILLISECONDS);
    SplittableRandom seeds = new SplittableRandom(seed);
    for (int w = 0; w < WRITERS; w++) {
      int lane = w;
      SplittableRandom random = seeds.split();
      threads.add(thread("ringshift-demo-writer-" + w, () -> writeLoop(lane, random)));
    }
    for (int r = 0; r < READERS; r++) {
      SplittableRandom random = seeds.split();
      threads.add(thread("ringshift-demo-reader-" + r, () -> readLoop(random)));
    }
    threads.forEach(Thread::start);
    return this;
  }

  private Thread thread(String name, Runnable body) {
    Thread t = new Thread(() -> {
      try {
        body.run();
      } catch (RuntimeException | Error e) {
        failure.compareAndSet(null, e);
      }
    }, name);
    t.setDaemon(true);
    return t;
  }

  private void writeLoop(int lane, SplittableRandom random) {
    int owned = (keys.size() - lane + WRITERS - 1) / WRITERS;
    if (owned <= 0) {
      return;
    }
    while (running) {
      if (!acquire(writePermits)) {
        continue;
      }
      int index = lane + WRITERS * random.nextInt(owned);
      writeOnce(index);
    }
  }

  /** One write of the next sequence number of key {@code index}, sent until acknowledged or the stop deadline. */
  private void writeOnce(int index) {
    long sequence = keys.ackedSequence(index) + 1;
    byte[] key = keys.key(index);
    byte[] value = keys.value(index, sequence);
    long started = System.currentTimeMillis();
    WindowKind waited = null;
    while (System.nanoTime() - stopDeadlineNanos < 0) {
      try {
        RoutedWriter.Written written = writer.put(key, value);
        long now = System.currentTimeMillis();
        if (written.retried()) {
          timeline.refused(now);
          waited = waited == null ? WindowKind.FENCED : waited;
        }
        keys.acknowledge(index, sequence, written.epoch(), key.length + value.length);
        timeline.acknowledged(now, started);
        if (waited != null) {
          windows.add(new Window(written.epoch(), waited, started, now - started));
        }
        return;
      } catch (StoreException.StaleEpoch e) {
        timeline.refused(System.currentTimeMillis());
        waited = waited == null ? WindowKind.FENCED : waited;
      } catch (StoreException e) {
        // A replica down or timed out (ReplicasFailed), or no ring yet: sent again, as a client would.
        timeline.failed(System.currentTimeMillis());
        waited = waited == null ? WindowKind.REPLICA_DOWN : waited;
        LockSupport.parkNanos(BACKOFF_NANOS);
      }
    }
    abandoned.incrementAndGet(); // never acknowledged: nothing promised, nothing to find afterwards
  }

  private void readLoop(SplittableRandom random) {
    while (running) {
      if (!acquire(readPermits)) {
        continue;
      }
      readOnce(random.nextInt(keys.size()), random);
    }
  }

  private void readOnce(int index, SplittableRandom random) {
    long acked = keys.ackedSequence(index);
    if (acked == KeySpace.NONE) {
      return;
    }
    long ackedEpoch = keys.ackedEpoch(index);
    byte[] key = keys.key(index);
    Placement placement = client.placement(key);
    List<Member> readable = placement.readable();
    if (readable.isEmpty()) {
      return;
    }
    long position = Entry.positionOf(key);
    int first = random.nextInt(readable.size());
    for (int attempt = 0; attempt < readable.size(); attempt++) {
      String node = readable.get((first + attempt) % readable.size()).id();
      long at = System.currentTimeMillis();
      Optional<byte[]> value;
      try {
        value = stores.apply(node).get(key);
      } catch (StoreException e) {
        unreadable.incrementAndGet();
        timeline.read(at, true, false);
        continue;
      }
      readLog.add(at, node, position);
      reads.incrementAndGet();
      long held = value.map(KeySpace::sequenceOf).orElse(KeySpace.NONE);
      boolean isStale = false;
      if (ackedEpoch > placement.epoch()) {
        behind.incrementAndGet(); // the write is of a newer ring than this client's: reads are never fenced
      } else if (held < acked) {
        isStale = true;
        stale.incrementAndGet();
        if (staleReads.size() < 10) {
          staleReads.add(String.format(Locale.ROOT, "%s from %s at epoch %d: %s, but write %d was acknowledged at "
              + "epoch %d", new String(key, java.nio.charset.StandardCharsets.UTF_8), node, placement.epoch(),
              held == KeySpace.NONE ? "absent" : "write " + held, acked, ackedEpoch));
        }
      }
      timeline.read(at, false, isStale);
      return;
    }
  }

  private boolean acquire(Semaphore permits) {
    try {
      return permits.tryAcquire(100, TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      running = false;
      return false;
    }
  }

  /**
   * Stops taking new operations and waits for the writes in flight to be acknowledged, at most {@code grace} (a
   * write still unacknowledged then is abandoned: nothing was promised for it).
   *
   * @throws IllegalStateException when a thread failed with an unexpected error
   */
  public void stop(Duration grace) throws InterruptedException {
    running = false;
    stopDeadlineNanos = System.nanoTime() + grace.toNanos();
    ticker.shutdownNow();
    for (Thread t : threads) {
      t.join(grace.toMillis() + 5_000);
    }
    client.removeSwapListener(swapListener);
    Throwable failed = failure.get();
    if (failed != null) {
      throw new IllegalStateException("the demo's workload failed: " + failed, failed);
    }
  }

  public List<Window> windows() {
    return List.copyOf(windows);
  }

  public List<Swap> swaps() {
    return List.copyOf(swaps);
  }

  public long reads() {
    return reads.get();
  }

  public long staleReads() {
    return stale.get();
  }

  public List<String> staleExamples() {
    return List.copyOf(staleReads);
  }

  /** Reads of a key whose last write was acknowledged by a newer ring than the reader's: not checked. */
  public long readsBehind() {
    return behind.get();
  }

  /** Read attempts that failed (a node down): tried on the next readable replica. */
  public long unreadable() {
    return unreadable.get();
  }

  /** Writes given up at the stop deadline, never acknowledged. */
  public long abandoned() {
    return abandoned.get();
  }

  public ReadLog readLog() {
    return readLog;
  }

  @Override
  public void close() {
    running = false;
    stopDeadlineNanos = System.nanoTime();
    ticker.shutdownNow();
    client.removeSwapListener(swapListener);
  }

  /**
   * Every read served: when, by which node, at which ring position; about 16 bytes a read, kept per node so that a
   * check over one node's reads does not walk everyone's.
   */
  public static final class ReadLog {
    private final Map<String, NodeReads> byNode = new ConcurrentHashMap<>();

    void add(long atMillis, String node, long position) {
      byNode.computeIfAbsent(node, id -> new NodeReads()).add(atMillis, position);
    }

    /** Reads served by {@code node} at a position {@code inRange} accepts, at or after {@code fromMillis} and before {@code toMillis}. */
    public long count(String node, java.util.function.LongPredicate inRange, long fromMillis, long toMillis) {
      NodeReads reads = byNode.get(node);
      return reads == null ? 0 : reads.count(inRange, fromMillis, toMillis);
    }

    public long size() {
      return byNode.values().stream().mapToLong(NodeReads::size).sum();
    }
  }

  private static final class NodeReads {
    private long[] times = new long[256];
    private long[] positions = new long[256];
    private int size;

    synchronized void add(long atMillis, long position) {
      if (size == times.length) {
        times = Arrays.copyOf(times, size * 2);
        positions = Arrays.copyOf(positions, size * 2);
      }
      times[size] = atMillis;
      positions[size] = position;
      size++;
    }

    synchronized long count(java.util.function.LongPredicate inRange, long fromMillis, long toMillis) {
      long count = 0;
      for (int i = 0; i < size; i++) {
        if (times[i] >= fromMillis && times[i] < toMillis && inRange.test(positions[i])) {
          count++;
        }
      }
      return count;
    }

    synchronized int size() {
      return size;
    }
  }
}
