package io.ringshift.systemtests.chaos;

import io.ringshift.client.Placement;
import io.ringshift.client.RingClient;
import io.ringshift.ring.Member;
import io.ringshift.storage.Store;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Function;

/**
 * The scenario's readers: {@link #THREADS} threads that read, together at a steady {@link #RATE} reads/s, keys the
 * writers have acknowledged, drawn at random, each from one replica its {@link RingClient} (its own, tailing the snapshots as any client
 * does) offers as readable, chosen at random.
 *
 * <p>The check: a read by a client at epoch R of a key whose last write was acknowledged at epoch W &le; R returns
 * that write or a later one; absent, or an older value, is a <em>stale read</em>, which fails the scenario. Every
 * value starts with its writer's sequence number for the key ({@link #sequenceOf}), which orders them. A reader
 * whose ring is older than the write's (R &lt; W) may read a replica the write did not go to, since reads are never
 * fenced: such reads are counted as "behind", not checked. A read that fails (a node killed, a timeout) is counted by
 * exception; it is no violation, as a client would retry it on another replica.
 */
final class Readers implements AutoCloseable {
  /** Reader threads ({@code -Dchaos.readers}). */
  static final int THREADS = Integer.getInteger("chaos.readers", 4);
  /** Reads per second the threads aim at together ({@code -Dchaos.readRate}). */
  static final int RATE = Integer.getInteger("chaos.readRate", 100);

  /** A key's last acknowledged write: its writer's sequence number and the epoch of the ring it was written by. */
  record Ack(long sequence, long epoch) {}

  private final RingClient client;
  private final Function<String, Store> stores;
  private final Map<String, Ack> acks;
  /** The keys with an acknowledged write, in the order of their first; appended to by the writers. */
  private final List<String> keys;
  private final long seed;
  private final AtomicBoolean stop = new AtomicBoolean();
  private final List<Thread> threads = new ArrayList<>();
  final AtomicLong checked = new AtomicLong();
  final AtomicLong behind = new AtomicLong();
  final AtomicLong stale = new AtomicLong();
  final Map<String, Integer> failures = new ConcurrentHashMap<>();
  /** The first stale reads, described. */
  final List<String> staleReads = new CopyOnWriteArrayList<>();

  /**
   * @param client a started client of its own
   * @param stores a client-port store per node id
   * @param acks each key's last acknowledged write, kept by the writers
   * @param keys the keys in {@code acks}, a synchronized list the writers append a key to at its first write
   */
  Readers(RingClient client, Function<String, Store> stores, Map<String, Ack> acks, List<String> keys, long seed) {
    this.client = client;
    this.stores = stores;
    this.acks = acks;
    this.keys = keys;
    this.seed = seed;
  }

  /** The sequence number a writer puts at the start of each value. */
  static long sequenceOf(byte[] value) {
    return ByteBuffer.wrap(value, 0, Long.BYTES).getLong();
  }

  /** Writes {@code sequence} at the start of {@code value}, which has at least eight bytes. */
  static void stamp(byte[] value, long sequence) {
    ByteBuffer.wrap(value, 0, Long.BYTES).putLong(sequence);
  }

  void start() {
    long periodNanos = Math.max(1, THREADS * 1_000_000_000L / Math.max(1, RATE));
    for (int t = 0; t < THREADS; t++) {
      Random r = new Random(seed + t);
      Thread th = new Thread(() -> {
        long next = System.nanoTime() + r.nextLong(periodNanos);
        while (!stop.get()) {
          long wait = next - System.nanoTime();
          if (wait > 0) {
            LockSupport.parkNanos(wait);
          }
          next = Math.max(next + periodNanos, System.nanoTime() - periodNanos);
          readOne(r);
        }
      }, "chaos-reader-" + t);
      th.setDaemon(true);
      threads.add(th);
      th.start();
    }
  }

  private void readOne(Random r) {
    int size = keys.size();
    if (size == 0) {
      return; // nothing acknowledged yet
    }
    String key = keys.get(r.nextInt(size));
    Ack ack = acks.get(key);
    byte[] k = key.getBytes(StandardCharsets.UTF_8);
    Placement placement;
    try {
      placement = client.placement(k);
    } catch (RuntimeException e) {
      failures.merge(e.getClass().getSimpleName(), 1, Integer::sum);
      return;
    }
    if (placement.epoch() < ack.epoch()) {
      behind.incrementAndGet();
      return;
    }
    List<Member> readable = placement.readable();
    if (readable.isEmpty()) {
      failures.merge("no readable replica", 1, Integer::sum);
      return;
    }
    Member replica = readable.get(r.nextInt(readable.size()));
    Optional<byte[]> value;
    try {
      value = stores.apply(replica.id()).get(k);
    } catch (RuntimeException e) {
      failures.merge(e.getClass().getSimpleName(), 1, Integer::sum);
      return;
    }
    checked.incrementAndGet();
    long got = value.map(Readers::sequenceOf).orElse(-1L);
    if (got < ack.sequence()) {
      stale.incrementAndGet();
      if (staleReads.size() < 5) {
        staleReads.add(String.format(Locale.ROOT, "%s from %s by a client at epoch %d: %s, but write %d was "
            + "acknowledged at epoch %d", key, replica.id(), placement.epoch(),
            got < 0 ? "absent" : "write " + got, ack.sequence(), ack.epoch()));
      }
    }
  }

  void stop() throws InterruptedException {
    stop.set(true);
    for (Thread t : threads) {
      t.join(60_000);
    }
  }

  String describe() {
    return String.format(Locale.ROOT, "%d reads checked, %d stale; %d skipped (the reader's ring older than the "
        + "write's); failed attempts %s", checked.get(), stale.get(), behind.get(), new TreeMap<>(failures));
  }

  @Override
  public void close() {
    stop.set(true);
    client.close();
  }
}
