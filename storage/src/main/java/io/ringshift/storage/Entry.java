package io.ringshift.storage;

import io.ringshift.ring.RingHash;
import java.util.Arrays;

/**
 * One key of a store as it is copied: its ring position, the key and the value, or a {@code null} value for a
 * deletion (a change-feed tombstone). Arrays are not copied; callers must not change them.
 *
 * @param position the key's ring position, {@link #positionOf(byte[])}: keys are stored in token order
 */
public record Entry(long position, byte[] key, byte[] value) {
  public Entry {
    if (key == null) {
      throw new IllegalArgumentException("an entry needs a key");
    }
  }

  /** An entry for {@code key} at its ring position; a {@code null} value is a deletion. */
  public static Entry of(byte[] key, byte[] value) {
    if (key == null) {
      throw new IllegalArgumentException("an entry needs a key");
    }
    return new Entry(positionOf(key), key, value);
  }

  /**
   * A key's ring position: {@code RingHash.xxh3()} (XXH3-64, seed 0) of the key's bytes, read as an unsigned
   * 64-bit number. Keys are stored in the order of their positions.
   */
  public static long positionOf(byte[] key) {
    return RingHash.xxh3().hash(key, 0, key.length);
  }

  public boolean isDeletion() {
    return value == null;
  }

  /** Bytes this entry moves over the wire: key plus value; what throttles and progress count. */
  public long size() {
    return key.length + (value == null ? 0L : value.length);
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof Entry e && position == e.position && Arrays.equals(key, e.key)
        && Arrays.equals(value, e.value);
  }

  @Override
  public int hashCode() {
    return 31 * (31 * Long.hashCode(position) + Arrays.hashCode(key)) + Arrays.hashCode(value);
  }

  @Override
  public String toString() {
    return String.format("Entry[%016x, %d key bytes, %s]", position, key.length,
        value == null ? "deleted" : value.length + " value bytes");
  }
}
