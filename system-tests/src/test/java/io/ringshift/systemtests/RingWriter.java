package io.ringshift.systemtests;

import io.ringshift.localplane.LocalNodes;
import io.ringshift.ring.RingSnapshot;
import io.ringshift.schemas.avro.EpochRecord;
import io.ringshift.schemas.avro.EpochState;
import io.ringshift.storage.Store;
import io.ringshift.storage.WriteResult;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;

/**
 * A client writing under a migration, as invariant 1 of docs/architecture.md assumes one: puts, overwrites and deletes at a
 * steady rate, each to every replica its ring names, tagged with the ring's epoch. A write is acknowledged only
 * when every replica applied it; a replica answering {@link WriteResult.RetryWithEpoch} (a fenced range) makes the
 * client wait for that epoch's READY record, swap to its ring and write the same operation again to the new
 * replicas. The clients also swap as soon as they see the next epoch READY, as clients tailing the ring would.
 *
 * <p>It remembers the last acknowledged value of every key written or given ({@link #acknowledged()}): what the
 * new replicas must hold when the epoch is done. Several clients write at once, each on a thread of its own and
 * each owning its keys (writes to one key are never concurrent, so "last acknowledged" is well defined); they
 * share one rate, fed by a scheduled ticker, so nothing sleeps.
 *
 * <h2>Why a refused write is retried whole</h2>
 * A write refused by one replica may have been applied by the replicas before it. It is not acknowledged, so
 * nothing promises its value; writing the same value again to the new replicas makes it acknowledged and the
 * partial write harmless, as a real client's retry would.
 */
public final class RingWriter implements AutoCloseable {
  /** The value the acknowledged map holds for a deleted key (compared by identity). */
  public static final byte[] DELETED = new byte[0];

  private final LocalNodes nodes;
  private final ControlPlaneTail tail;
  private final Function<EpochRecord, RingSnapshot> ringOf;
  private final List<Lane> lanes = new ArrayList<>();
  private final Map<String, byte[]> acknowledged = new ConcurrentHashMap<>();
  private final Map<Long, AtomicLong> ackedByEpoch = new ConcurrentHashMap<>();
  private final AtomicLong refused = new AtomicLong();
  private final AtomicLong waitedNanos = new AtomicLong();
  private final Semaphore permits = new Semaphore(0);
  private final ScheduledExecutorService ticker = Executors.newSingleThreadScheduledExecutor(r -> {
    Thread t = new Thread(r, "pipeline-it-writer-ticker");
    t.setDaemon(true);
    return t;
  });
  private final List<Thread> threads = new ArrayList<>();
  private volatile RingSnapshot ring;
  private volatile boolean running = true;
  private volatile Throwable failure;
  private long startedNanos;
  private final AtomicLong stoppedNanos = new AtomicLong();

  /**
   * @param ring the ring the client starts on
   * @param initial the keys already loaded and their values
   * @param ringOf rebuilds the ring of an epoch record (the client's swap)
   * @param clients how many clients write at once; each owns its own keys, so the writes to one key are in order
   */
  public RingWriter(LocalNodes nodes, ControlPlaneTail tail, RingSnapshot ring, Map<String, byte[]> initial,
      Function<EpochRecord, RingSnapshot> ringOf, long seed, int clients) {
    this.nodes = nodes;
    this.tail = tail;
    this.ring = ring;
    this.ringOf = ringOf;
    this.acknowledged.putAll(initial);
    Random seeds = new Random(seed);
    for (int c = 0; c < clients; c++) {
      lanes.add(new Lane(c, clients, initial.size(), new Random(seeds.nextLong())));
    }
    List<String> sorted = new ArrayList<>(initial.keySet());
    sorted.sort(null);
    for (int i = 0; i < sorted.size(); i++) {
      lanes.get(i % clients).keys.add(sorted.get(i));
    }
    for (Lane lane : lanes) {
      Thread t = new Thread(lane, "pipeline-it-writer-" + lane.index);
      t.setDaemon(true);
      threads.add(t);
    }
  }

  /** Starts writing at about {@code writesPerSecond}. */
  public RingWriter start(int writesPerSecond) {
    int perTick = Math.max(1, writesPerSecond / 100);
    ticker.scheduleAtFixedRate(() -> {
      // At most two ticks of backlog: a writer that waited (for an epoch) does not burst afterwards.
      if (permits.availablePermits() < 2 * perTick) {
        permits.release(perTick);
      }
    }, 0, 10, TimeUnit.MILLISECONDS);
    startedNanos = System.nanoTime();
    threads.forEach(Thread::start);
    return this;
  }

  /** One client: its own keys (and the new keys it creates), one operation at a time. */
  private final class Lane implements Runnable {
    final int index;
    final int stride;
    final Random random;
    final List<String> keys = new ArrayList<>();
    int nextNewKey;

    Lane(int index, int stride, int loaded, Random random) {
      this.index = index;
      this.stride = stride;
      this.random = random;
      this.nextNewKey = loaded + index;
    }

    @Override
    public void run() {
      try {
        while (running && failure == null) {
          if (permits.tryAcquire(100, TimeUnit.MILLISECONDS)) {
            writeOnce();
          }
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        failure = e;
      } catch (Throwable e) {
        failure = e;
      } finally {
        stoppedNanos.accumulateAndGet(System.nanoTime(), Math::max);
      }
    }

    /** Puts a new key (10%), deletes (20%) or overwrites (70%) one of this client's keys. */
    private void writeOnce() throws Exception {
      int dice = random.nextInt(100);
      String key;
      byte[] value;
      if (dice < 10 || keys.isEmpty()) {
        key = LoadedData.key(nextNewKey);
        nextNewKey += stride;
        keys.add(key);
        value = LoadedData.value(random);
      } else if (dice < 30) {
        key = keys.get(random.nextInt(keys.size()));
        value = null;
      } else {
        key = keys.get(random.nextInt(keys.size()));
        value = LoadedData.value(random);
      }
      write(key, value);
    }
  }

  /** One operation, retried on the next epoch's ring until every replica applied it. */
  private void write(String key, byte[] value) throws Exception {
    byte[] keyBytes = key.getBytes(StandardCharsets.UTF_8);
    while (true) {
      swapIfNextEpochReady();
      RingSnapshot current = ring;
      WriteResult.RetryWithEpoch refusal = null;
      for (String node : current.replicasOf(keyBytes).ids()) {
        Store store = nodes.remote(node);
        WriteResult result = value == null ? store.delete(keyBytes, current.epoch())
            : store.put(keyBytes, value, current.epoch());
        if (result instanceof WriteResult.RetryWithEpoch r) {
          refusal = r;
          break;
        }
      }
      if (refusal == null) {
        acknowledged.put(key, value == null ? DELETED : value);
        ackedByEpoch.computeIfAbsent(current.epoch(), e -> new AtomicLong()).incrementAndGet();
        return;
      }
      refused.incrementAndGet();
      if (refusal.epoch() <= current.epoch()) {
        throw new IllegalStateException("a replica of " + key + " refused epoch " + current.epoch()
            + " with a retry at epoch " + refusal.epoch() + " (" + refusal.fencedRange() + "): no newer ring to try");
      }
      long waitFrom = System.nanoTime();
      EpochRecord ready = tail.whenEpoch(refusal.epoch(), EpochState.READY)
          .get(ControlPlaneTail.TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
      waitedNanos.addAndGet(System.nanoTime() - waitFrom);
      swapTo(ready);
    }
  }

  private void swapIfNextEpochReady() {
    var next = tail.whenEpoch(ring.epoch() + 1, EpochState.READY);
    if (next.isDone() && !next.isCompletedExceptionally()) {
      swapTo(next.join());
    }
  }

  private synchronized void swapTo(EpochRecord record) {
    if (record.getEpoch() > ring.epoch()) {
      ring = ringOf.apply(record);
    }
  }

  /** Acknowledged writes tagged with {@code epoch} so far. */
  public long acknowledgedAt(long epoch) {
    AtomicLong n = ackedByEpoch.get(epoch);
    return n == null ? 0 : n.get();
  }

  /** The epoch of the ring the client writes by now. */
  public long epoch() {
    return ring.epoch();
  }

  /** Whether the writer thread stopped on an error (a store error, a timeout waiting for an epoch). */
  public Throwable failure() {
    return failure;
  }

  /**
   * Stops after the operation in flight (acknowledged, or retried until it is) and reports.
   *
   * @throws AssertionError when the writer failed
   */
  public Report stop() {
    running = false;
    ticker.shutdownNow();
    for (Thread t : threads) {
      try {
        t.join(ControlPlaneTail.TIMEOUT.toMillis());
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new AssertionError("interrupted while stopping the writer", e);
      }
      if (t.isAlive()) {
        throw new AssertionError(t.getName() + " did not stop within " + ControlPlaneTail.TIMEOUT);
      }
    }
    if (failure != null) {
      throw new AssertionError("the writer failed: " + failure, failure);
    }
    long total = ackedByEpoch.values().stream().mapToLong(AtomicLong::get).sum();
    return new Report(total, acknowledgedAt(1), total - acknowledgedAt(1), refused.get(),
        waitedNanos.get() / 1_000_000, (stoppedNanos.get() - startedNanos) / 1_000_000, threads.size());
  }

  /** The last acknowledged value of every key ({@link #DELETED} for a deleted one); read after {@link #stop()}. */
  public Map<String, byte[]> acknowledged() {
    return Map.copyOf(acknowledged);
  }

  @Override
  public void close() {
    running = false;
    ticker.shutdownNow();
    threads.forEach(Thread::interrupt);
  }

  /**
   * What the writer did.
   *
   * @param acknowledged writes every replica applied
   * @param atEpoch1 of those, tagged with epoch 1
   * @param atLaterEpochs of those, tagged with a later epoch
   * @param refusals RetryWithEpoch answers
   * @param waitedMillis time spent waiting for a newer epoch after a refusal
   * @param elapsedMillis time the writer ran
   * @param clients clients writing at once
   */
  public record Report(long acknowledged, long atEpoch1, long atLaterEpochs, long refusals, long waitedMillis,
      long elapsedMillis, int clients) {
    double writesPerSecond() {
      return elapsedMillis == 0 ? 0 : acknowledged * 1000.0 / elapsedMillis;
    }

    @Override
    public String toString() {
      return String.format("%d clients acknowledged %,d writes in %,d ms (%,.0f/s; %,d at epoch 1, %,d later), "
          + "%,d refused with RetryWithEpoch, %,d ms waiting for the next epoch (all clients)", clients, acknowledged,
          elapsedMillis, writesPerSecond(), atEpoch1, atLaterEpochs, refusals, waitedMillis);
    }
  }
}
