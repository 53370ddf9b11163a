package io.ringshift.demo.internal;

import io.ringshift.storage.Entry;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * The demo's keys and what was acknowledged of each: {@code demo-0000000} to {@code demo-<keys-1>}, each value
 * starting with the key's write sequence number (8 bytes, big-endian) followed by bytes whose length is drawn from a
 * log-normal distribution (median {@value #MEDIAN_VALUE_BYTES} bytes, sigma {@value #SIGMA}, clamped to {@value
 * #MIN_VALUE_BYTES}..{@value #MAX_VALUE_BYTES}), as value sizes of real caches and stores are: mostly small, with a
 * long tail.
 *
 * <p>Value bytes are a pure function of (seed, key, sequence), so the checks at the end need not keep the values: a
 * replica holds a key's last acknowledged write, or a later one, when the sequence number its value starts with is at
 * least the acknowledged one ({@link #sequenceOf}).
 *
 * <p><b>Ack order.</b> A writer records an acknowledged write with {@link #acknowledge}, which sets the epoch before
 * the sequence number; a reader reads the sequence number first ({@link #ackedSequence}) and the epoch after ({@link
 * #ackedEpoch}). So a reader that sees sequence s sees the epoch of s or a later write's: at least the epoch s was
 * acknowledged at, which only makes its check more lenient, never wrong.
 */
public final class KeySpace {
  public static final int MEDIAN_VALUE_BYTES = 256;
  public static final double SIGMA = 1.0;
  public static final int MIN_VALUE_BYTES = 16;
  public static final int MAX_VALUE_BYTES = 64 * 1024;
  /** The acknowledged sequence of a key never written. */
  public static final long NONE = -1;

  private final int keys;
  private final long seed;
  /** Digits of a key's index, zero-padded: at least 7, more when the space needs them. */
  private final int width;
  private final AtomicLongArray ackedSequence;
  private final AtomicLongArray ackedEpoch;
  /** Bytes (key + value) of each key's last acknowledged value; written by the key's one writer only. */
  private final int[] ackedBytes;

  public KeySpace(int keys, long seed) {
    if (keys < 1) {
      throw new IllegalArgumentException("keys was " + keys + "; it must be at least 1");
    }
    this.keys = keys;
    this.seed = seed;
    this.width = Math.max(7, String.valueOf(keys - 1).length());
    this.ackedSequence = new AtomicLongArray(keys);
    this.ackedEpoch = new AtomicLongArray(keys);
    this.ackedBytes = new int[keys];
    for (int i = 0; i < keys; i++) {
      ackedSequence.set(i, NONE);
    }
  }

  public int size() {
    return keys;
  }

  /**
   * The key of index {@code i}, as UTF-8 bytes: {@code demo-} and the index zero-padded. Written digit by digit: the
   * application and the checks call it for every operation and every key, and a formatter per call was a visible part
   * of the demo's CPU.
   */
  public byte[] key(int i) {
    if (i < 0) {
      throw new IllegalArgumentException("key index was " + i + "; it must be >= 0");
    }
    byte[] out = new byte[PREFIX.length + width];
    System.arraycopy(PREFIX, 0, out, 0, PREFIX.length);
    int rest = i;
    for (int at = out.length - 1; at >= PREFIX.length; at--) {
      out[at] = (byte) ('0' + rest % 10);
      rest /= 10;
    }
    return out;
  }

  private static final byte[] PREFIX = "demo-".getBytes(StandardCharsets.UTF_8);

  /** The index of a key of this space, or -1 for any other key. */
  public int indexOf(byte[] key) {
    String text = new String(key, StandardCharsets.UTF_8);
    if (!text.startsWith("demo-") || text.length() != PREFIX.length + width) {
      return -1;
    }
    try {
      int i = Integer.parseInt(text.substring(5));
      return i >= 0 && i < keys ? i : -1;
    } catch (NumberFormatException e) {
      return -1;
    }
  }

  /** The value of write {@code sequence} of key {@code i}. */
  public byte[] value(int i, long sequence) {
    SplittableRandom random = new SplittableRandom(seed ^ (i * 0x9E3779B97F4A7C15L) ^ (sequence * 0xC2B2AE3D27D4EB4FL));
    int size = valueSize(random);
    byte[] value = new byte[size];
    for (int at = Long.BYTES; at < size; at += Long.BYTES) {
      long bits = random.nextLong();
      for (int b = 0; b < Long.BYTES && at + b < size; b++) {
        value[at + b] = (byte) (bits >>> (8 * b));
      }
    }
    ByteBuffer.wrap(value).putLong(sequence);
    return value;
  }

  /** A log-normal size: exp(ln(median) + sigma * N(0, 1)), clamped. */
  static int valueSize(SplittableRandom random) {
    // Box-Muller: one normal draw from two uniforms in (0, 1].
    double u1 = 1.0 - random.nextDouble();
    double u2 = random.nextDouble();
    double normal = Math.sqrt(-2 * Math.log(u1)) * Math.cos(2 * Math.PI * u2);
    double size = Math.exp(Math.log(MEDIAN_VALUE_BYTES) + SIGMA * normal);
    return (int) Math.max(MIN_VALUE_BYTES, Math.min(MAX_VALUE_BYTES, Math.round(size)));
  }

  /** The entry of write {@code sequence} of key {@code i}, for a bulk load. */
  public Entry entry(int i, long sequence) {
    return Entry.of(key(i), value(i, sequence));
  }

  /** The write sequence number a value starts with, or {@link #NONE} for a value too short to carry one. */
  public static long sequenceOf(byte[] value) {
    return value == null || value.length < Long.BYTES ? NONE : ByteBuffer.wrap(value).getLong();
  }

  /** Records that write {@code sequence} of key {@code i} ({@code bytes} of key and value) was acknowledged at {@code epoch}. */
  public void acknowledge(int i, long sequence, long epoch, int bytes) {
    ackedEpoch.set(i, epoch);
    ackedSequence.set(i, sequence);
    ackedBytes[i] = bytes;
  }

  public long ackedSequence(int i) {
    return ackedSequence.get(i);
  }

  public long ackedEpoch(int i) {
    return ackedEpoch.get(i);
  }

  /**
   * Logical bytes (keys and values) of the last acknowledged writes, one copy of each key. Exact once the writers
   * stopped; close enough while they write (a key's size is read without synchronisation).
   */
  public long logicalBytes() {
    long total = 0;
    for (int b : ackedBytes) {
      total += b;
    }
    return total;
  }

  /** How many keys have an acknowledged write. */
  public int acknowledgedKeys() {
    int n = 0;
    for (int i = 0; i < keys; i++) {
      n += ackedSequence.get(i) == NONE ? 0 : 1;
    }
    return n;
  }
}
