package io.ringshift.client.internal;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;

/**
 * The most frequent keys of a stream, in bounded memory: the Space-Saving algorithm (Metwally, Agrawal and El Abbadi,
 * 2005) over {@code capacity} counters. A key that is counted takes a free counter, or replaces the key with the
 * smallest count and inherits that count as its possible overcount ({@code error}). Every key whose true count is
 * above {@code total / capacity} is in the sketch, and each count is at most {@code error} too high.
 *
 * <p>Keys are told apart by their 64-bit ring position (the hash the lookup computed anyway), and their bytes are
 * kept only while they hold a counter: memory is {@code capacity} positions, counts and keys. The counts decay: when
 * the counted total reaches {@code halfLife}, every count (and the total) is halved, so the sketch follows a workload
 * whose hot keys change. Thread-safe; {@link #offer} takes a lock, so callers sample (the client counts one lookup in
 * {@link #SAMPLE}).
 */
public final class HotKeySketch {
  /** The client counts one lookup in this many (chosen at random per lookup). */
  public static final int SAMPLE = 8;

  private final long[] positions;
  private final long[] counts;
  private final long[] errors;
  private final byte[][] keys;
  private final long halfLife;
  private int used;
  private long total;

  /** One key and what the sketch knows of it. */
  public record Entry(byte[] key, long position, long count, long error) {}

  public HotKeySketch(int capacity, long halfLife) {
    if (capacity < 1) {
      throw new IllegalArgumentException("capacity was " + capacity + "; a sketch needs at least 1 counter");
    }
    if (halfLife < 2) {
      throw new IllegalArgumentException("halfLife was " + halfLife + "; it must be >= 2");
    }
    this.positions = new long[capacity];
    this.counts = new long[capacity];
    this.errors = new long[capacity];
    this.keys = new byte[capacity][];
    this.halfLife = halfLife;
  }

  /** Counts one occurrence of the key at {@code position}; {@code key} is copied only when it takes a counter. */
  public synchronized void offer(long position, byte[] key) {
    offer(position, key, null);
  }

  /** As {@link #offer(long, byte[])} for a key given as text (encoded as UTF-8 only when it takes a counter). */
  public synchronized void offer(long position, CharSequence key) {
    offer(position, null, key);
  }

  private void offer(long position, byte[] bytes, CharSequence text) {
    total++;
    int i = indexOf(position);
    if (i < 0) {
      if (used < counts.length) {
        i = used++;
        counts[i] = 0;
        errors[i] = 0;
      } else {
        i = smallest();
        errors[i] = counts[i];
      }
      positions[i] = position;
      keys[i] = bytes != null ? bytes.clone() : text.toString().getBytes(java.nio.charset.StandardCharsets.UTF_8);
    }
    counts[i]++;
    if (total >= halfLife) {
      total /= 2;
      for (int j = 0; j < used; j++) {
        counts[j] /= 2;
        errors[j] /= 2;
      }
    }
  }

  private int indexOf(long position) {
    for (int i = 0; i < used; i++) {
      if (positions[i] == position) {
        return i;
      }
    }
    return -1;
  }

  private int smallest() {
    int min = 0;
    for (int i = 1; i < used; i++) {
      if (counts[i] < counts[min]) {
        min = i;
      }
    }
    return min;
  }

  /** What was counted since the last halving, decayed as the counts are. */
  public synchronized long total() {
    return total;
  }

  /** The {@code n} keys with the highest counts, highest first (ties by position). */
  public synchronized List<Entry> top(int n) {
    Integer[] order = new Integer[used];
    for (int i = 0; i < used; i++) {
      order[i] = i;
    }
    Arrays.sort(order, Comparator.<Integer>comparingLong(i -> -counts[i]).thenComparingLong(i -> positions[i]));
    List<Entry> top = new ArrayList<>(Math.min(n, used));
    for (int k = 0; k < Math.min(n, used); k++) {
      int i = order[k];
      top.add(new Entry(keys[i].clone(), positions[i], counts[i], errors[i]));
    }
    return top;
  }
}
