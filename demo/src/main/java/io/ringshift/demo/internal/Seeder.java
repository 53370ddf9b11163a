package io.ringshift.demo.internal;

import io.ringshift.ring.ReplicaSet;
import io.ringshift.ring.RingSnapshot;
import io.ringshift.storage.Entry;
import io.ringshift.storage.Store;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;

/**
 * The demo's initial data, loaded in bulk as a restore would be: write 0 of every key, applied to every replica the
 * first ring names through the nodes' admin listeners ({@link Store#apply}, the path migration uses), in batches.
 * Through the client path the same load takes minutes on a small machine (about 1,900 writes/s from 64 threads on
 * two cores, each write a request per replica); applied in batches it takes seconds. Nothing routes by a ring newer
 * than the one the load follows, so no fence or ownership check is skipped that would matter: the load runs before
 * the first change is asked for.
 */
public final class Seeder {
  private static final int BATCH_BYTES = 2 << 20;
  private static final int BATCH_ENTRIES = 4_000;

  private Seeder() {}

  /** What the load wrote: entries applied (one per key and replica) and their bytes. */
  public record Loaded(long entries, long bytes, long millis) {}

  /**
   * Applies write 0 of every key of {@code keys} to each replica of it in {@code ring}, {@code parallelism} nodes at
   * a time, and records each key as acknowledged at the ring's epoch.
   *
   * @param admin the admin-listener store of a node id
   * @throws io.ringshift.storage.StoreException when a node refuses or fails a batch (nothing is retried: the demo
   *     stops)
   */
  public static Loaded load(KeySpace keys, RingSnapshot ring, Function<String, Store> admin, int parallelism)
      throws InterruptedException {
    long begin = System.nanoTime();
    AtomicLong entries = new AtomicLong();
    AtomicLong bytes = new AtomicLong();
    ExecutorService pool = Executors.newFixedThreadPool(parallelism, r -> {
      Thread t = new Thread(r, "ringshift-demo-seed");
      t.setDaemon(true);
      return t;
    });
    try {
      List<Future<?>> loads = new ArrayList<>();
      for (String node : ring.memberIds()) {
        Store store = admin.apply(node);
        loads.add(pool.submit(() -> loadNode(keys, ring, node, store, entries, bytes)));
      }
      for (Future<?> f : loads) {
        try {
          f.get();
        } catch (ExecutionException e) {
          throw e.getCause() instanceof RuntimeException r ? r : new IllegalStateException(e.getCause());
        }
      }
    } finally {
      pool.shutdownNow();
    }
    for (int i = 0; i < keys.size(); i++) {
      byte[] key = keys.key(i);
      keys.acknowledge(i, 0, ring.epoch(), key.length + keys.value(i, 0).length);
    }
    return new Loaded(entries.get(), bytes.get(), (System.nanoTime() - begin) / 1_000_000);
  }

  private static void loadNode(KeySpace keys, RingSnapshot ring, String node, Store store, AtomicLong entries,
      AtomicLong bytes) {
    List<Entry> batch = new ArrayList<>();
    long batchBytes = 0;
    for (int i = 0; i < keys.size(); i++) {
      byte[] key = keys.key(i);
      ReplicaSet replicas = ring.replicasOf(key);
      if (!replicas.contains(node)) {
        continue;
      }
      Entry entry = Entry.of(key, keys.value(i, 0));
      batch.add(entry);
      batchBytes += entry.size();
      if (batch.size() >= BATCH_ENTRIES || batchBytes >= BATCH_BYTES) {
        store.apply(batch);
        entries.addAndGet(batch.size());
        bytes.addAndGet(batchBytes);
        batch = new ArrayList<>();
        batchBytes = 0;
      }
    }
    if (!batch.isEmpty()) {
      store.apply(batch);
      entries.addAndGet(batch.size());
      bytes.addAndGet(batchBytes);
    }
  }
}
