package io.ringshift.storage;

import io.ringshift.ring.RingHash;
import java.util.Arrays;

/**
 * One key of a store as it is copied: its ring position, the key, the value, or a {@code null} value for a deletion
 * (a tombstone), and the entry's {@link Version}. Arrays are not copied; callers must not change them.
 *
 * @param position the key's ring position, {@link #positionOf(byte[])}: keys are stored in token order
 * @param version the version the entry was written with; {@link Version#ZERO} for one written before versions
 */
public record Entry(long position, byte[] key, byte[] value, Version version) {
  public Entry {
    if (key == null) {
      throw new IllegalArgumentException("an entry needs a key");
    }
    if (version == null) {
      throw new IllegalArgumentException("an entry needs a version (Version.ZERO for none)");
    }
  }

  /** An entry of {@link Version#ZERO}: one written before versions. */
  public Entry(long position, byte[] key, byte[] value) {
    this(position, key, value, Version.ZERO);
  }

  /** An entry for {@code key} at its ring position, of {@link Version#ZERO}; a {@code null} value is a deletion. */
  public static Entry of(byte[] key, byte[] value) {
    return of(key, value, Version.ZERO);
  }

  /** An entry for {@code key} at its ring position, of {@code version}; a {@code null} value is a deletion. */
  public static Entry of(byte[] key, byte[] value, Version version) {
    if (key == null) {
      throw new IllegalArgumentException("an entry needs a key");
    }
    return new Entry(positionOf(key), key, value, version);
  }

  /** This entry with {@code newVersion}. */
  public Entry withVersion(Version newVersion) {
    return new Entry(position, key, value, newVersion);
  }

  /**
   * Whether a store holding {@code stored} for this entry's key keeps this entry instead (max-version-wins,
   * docs/storage.md "Versions"): this entry's version is above the stored one; or the versions are equal and this is
   * a deletion where the stored entry is not; or both are values of equal versions and this value is the larger,
   * compared as unsigned bytes. Equal entries never supersede each other, so applying an entry twice writes once. A
   * {@code null} {@code stored} (the key is absent) is superseded by any value and by any deletion above
   * {@link Version#ZERO} (a deletion of version 0, a range delete read back from a change feed, has nothing to keep
   * out).
   */
  public boolean supersedes(Entry stored) {
    if (stored == null) {
      return value != null || version.isAfter(Version.ZERO);
    }
    int c = version.compareTo(stored.version);
    if (c != 0) {
      return c > 0;
    }
    if (value == null || stored.value == null) {
      return value == null && stored.value != null;
    }
    return Arrays.compareUnsigned(value, stored.value) > 0;
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
        && Arrays.equals(value, e.value) && version.equals(e.version);
  }

  @Override
  public int hashCode() {
    return 31 * (31 * (31 * Long.hashCode(position) + Arrays.hashCode(key)) + Arrays.hashCode(value))
        + version.hashCode();
  }

  @Override
  public String toString() {
    return String.format("Entry[%016x, %d key bytes, %s, %s]", position, key.length,
        value == null ? "deleted" : value.length + " value bytes", version);
  }
}
