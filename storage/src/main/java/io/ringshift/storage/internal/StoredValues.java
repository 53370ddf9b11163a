package io.ringshift.storage.internal;

import io.ringshift.storage.Entry;
import io.ringshift.storage.Version;
import java.util.Arrays;

/**
 * How a store of format 2 keeps an entry's value (docs/storage.md, "Store format"): one kind byte ({@link #LIVE} or
 * {@link #TOMBSTONE}), the 20 bytes of the version ({@link Version#encode}), then the value bytes (none for a
 * tombstone). A deletion is kept as a tombstone, so an older write that arrives after it (a copy, a catch-up, a
 * dual write) does not bring the key back.
 */
public final class StoredValues {
  public static final byte LIVE = 1;
  public static final byte TOMBSTONE = 2;
  /** The bytes before the value. */
  public static final int HEADER = 1 + Version.BYTES;

  private StoredValues() {}

  /** The stored bytes of {@code value} (null: a tombstone) at {@code version}. */
  public static byte[] encode(byte[] value, Version version) {
    byte[] out = new byte[HEADER + (value == null ? 0 : value.length)];
    out[0] = value == null ? TOMBSTONE : LIVE;
    version.encode(out, 1);
    if (value != null) {
      System.arraycopy(value, 0, out, HEADER, value.length);
    }
    return out;
  }

  /** The stored bytes of {@code e}'s value and version. */
  public static byte[] encode(Entry e) {
    return encode(e.value(), e.version());
  }

  /** The entry stored as {@code stored} under ({@code position}, {@code key}). */
  public static Entry decode(long position, byte[] key, byte[] stored) {
    check(stored);
    Version version = Version.decode(stored, 1);
    byte[] value = stored[0] == TOMBSTONE ? null : Arrays.copyOfRange(stored, HEADER, stored.length);
    return new Entry(position, key, value, version);
  }

  /** Whether {@code stored} is a tombstone. */
  public static boolean isTombstone(byte[] stored) {
    check(stored);
    return stored[0] == TOMBSTONE;
  }

  /** The value of {@code stored}, or null for a tombstone. */
  public static byte[] value(byte[] stored) {
    check(stored);
    return stored[0] == TOMBSTONE ? null : Arrays.copyOfRange(stored, HEADER, stored.length);
  }

  /** The version of {@code stored}. */
  public static Version version(byte[] stored) {
    check(stored);
    return Version.decode(stored, 1);
  }

  private static void check(byte[] stored) {
    if (stored.length < HEADER || (stored[0] != LIVE && stored[0] != TOMBSTONE)
        || (stored[0] == TOMBSTONE && stored.length != HEADER)) {
      throw new IllegalStateException("a stored value of " + stored.length + " bytes with kind "
          + (stored.length == 0 ? "none" : Byte.toString(stored[0])) + " is not of store format 2");
    }
  }
}
