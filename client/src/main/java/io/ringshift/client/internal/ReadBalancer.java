package io.ringshift.client.internal;

import io.ringshift.ring.Member;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.LongSupplier;

/**
 * Chooses which read-eligible replica serves a read, with bounded load (consistent hashing with bounded loads,
 * Mirrokni, Thorup and Zadimoghaddam, 2018; Envoy's {@code hash_balance_factor}). A read goes to the first replica in
 * the key's preference order whose recent reads from this client are at most {@code factor} times the mean over the
 * ring's read-eligible members; when every replica is over that bound, to the least loaded of them. A key whose
 * primary is not overloaded is read from its primary, as without the policy; the reads of a hot key fill its
 * primary up to the bound and overflow to its other replicas, which hold the key too.
 *
 * <p>"Recent" is the reads chosen in the current and the previous {@link #WINDOW_NANOS} window. The counts are this
 * client's own: each client bounds the load it sends, so a fleet of clients bounds the sum.
 */
public final class ReadBalancer {
  static final long WINDOW_NANOS = 1_000_000_000L;

  private final double factor;
  private final LongSupplier nanos;
  private final ConcurrentHashMap<String, Load> loads = new ConcurrentHashMap<>();
  private final Load total = new Load();
  private final AtomicLong windowStart;

  /** Reads sent to one node: this window's and the last one's. */
  private static final class Load {
    final LongAdder current = new LongAdder();
    volatile long previous;

    long recent() {
      return previous + current.sum();
    }
  }

  /** @param factor the bound over the mean, > 1 (Envoy's 150 is 1.5) */
  public ReadBalancer(double factor, LongSupplier nanos) {
    if (!(factor > 1) || Double.isInfinite(factor)) {
      throw new IllegalArgumentException("the read balance factor was " + factor + "; it must be a number > 1 (1.25 "
          + "lets a node take 25% more reads than the mean)");
    }
    this.factor = factor;
    this.nanos = nanos;
    this.windowStart = new AtomicLong(nanos.getAsLong());
  }

  public double factor() {
    return factor;
  }

  /**
   * The replica of {@code readable} (in preference order) that serves this read, counted as sent to it; null when
   * the list is empty. {@code members} is how many read-eligible members the ring has (the mean's divisor).
   */
  public Member choose(List<Member> readable, int members) {
    int n = readable.size();
    if (n == 0) {
      return null;
    }
    rotate();
    Member chosen = null;
    if (n == 1) {
      chosen = readable.get(0);
    } else {
      double bound = factor * (total.recent() + 1) / Math.max(1, members);
      long least = Long.MAX_VALUE;
      Member leastLoaded = null;
      for (int i = 0; i < n; i++) {
        Member m = readable.get(i);
        long load = load(m.id()).recent();
        if (load + 1 <= bound) {
          chosen = m;
          break;
        }
        if (load < least) {
          least = load;
          leastLoaded = m;
        }
      }
      if (chosen == null) {
        chosen = leastLoaded;
      }
    }
    load(chosen.id()).current.increment();
    total.current.increment();
    return chosen;
  }

  /** The reads this client sent to {@code node} recently (this window and the last). */
  public long recentReads(String node) {
    Load l = loads.get(node);
    return l == null ? 0 : l.recent();
  }

  private Load load(String node) {
    Load l = loads.get(node);
    return l != null ? l : loads.computeIfAbsent(node, k -> new Load());
  }

  /** Starts a new window when the current one is over; one caller does it, the others go on. */
  private void rotate() {
    long start = windowStart.get();
    long now = nanos.getAsLong();
    if (now - start < WINDOW_NANOS || !windowStart.compareAndSet(start, now)) {
      return;
    }
    boolean idle = now - start >= 2 * WINDOW_NANOS;
    for (Load l : loads.values()) {
      long current = l.current.sumThenReset();
      l.previous = idle ? 0 : current;
    }
    long current = total.current.sumThenReset();
    total.previous = idle ? 0 : current;
  }
}
