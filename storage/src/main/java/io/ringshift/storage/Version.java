package io.ringshift.storage;

/**
 * The version of a stored entry: a hybrid logical clock reading of the writer that made it (docs/storage.md,
 * "Versions"). Versions are totally ordered by {@code millis}, then {@code logical}, then {@code writer} (unsigned),
 * and every store keeps, per key, the entry of the highest version ({@link Entry#supersedes}): writes, copies,
 * catch-up and bulk loads then commute, whatever order they arrive in.
 *
 * <p>An entry written before stores kept versions has {@link #ZERO}, below every version a clock hands out.
 *
 * @param millis the writer's physical clock in milliseconds since the epoch when it wrote (or a later reading it had
 *     observed), {@code >= 0}
 * @param logical a counter that orders writes within one millisecond, {@code >= 0}
 * @param writer the writer's id ({@link HybridClock#writerId}), which breaks ties between writers
 */
public record Version(long millis, int logical, long writer) implements Comparable<Version> {
  /** The version of an entry written before versions, and of nothing at all. */
  public static final Version ZERO = new Version(0, 0, 0);
  /** The bytes of {@link #encode}: millis (8), logical (4), writer (8), big endian. */
  public static final int BYTES = 20;

  public Version {
    if (millis < 0 || logical < 0) {
      throw new IllegalArgumentException(String.format(
          "version (%d ms, logical %d) is negative; both must be >= 0", millis, logical));
    }
  }

  /** A version of {@code writer} at {@code millis} with logical counter {@code logical}. */
  public static Version of(long millis, int logical, long writer) {
    return new Version(millis, logical, writer);
  }

  @Override
  public int compareTo(Version o) {
    int c = Long.compare(millis, o.millis);
    if (c != 0) {
      return c;
    }
    c = Integer.compare(logical, o.logical);
    return c != 0 ? c : Long.compareUnsigned(writer, o.writer);
  }

  /** Whether this version is above {@code o}. */
  public boolean isAfter(Version o) {
    return compareTo(o) > 0;
  }

  /** Writes the 20 bytes of this version at {@code offset}: millis, logical, writer, each big endian. */
  public void encode(byte[] out, int offset) {
    putLong(out, offset, millis);
    int l = logical;
    for (int i = 3; i >= 0; i--) {
      out[offset + 8 + i] = (byte) l;
      l >>>= 8;
    }
    putLong(out, offset + 12, writer);
  }

  /** The 20 bytes of this version. */
  public byte[] toBytes() {
    byte[] out = new byte[BYTES];
    encode(out, 0);
    return out;
  }

  /** Reads the version {@link #encode} wrote at {@code offset}. */
  public static Version decode(byte[] in, int offset) {
    if (in.length < offset + BYTES) {
      throw new IllegalArgumentException("a version takes " + BYTES + " bytes; only " + (in.length - offset)
          + " are there");
    }
    int l = 0;
    for (int i = 0; i < 4; i++) {
      l = (l << 8) | (in[offset + 8 + i] & 0xFF);
    }
    return new Version(getLong(in, offset), l, getLong(in, offset + 12));
  }

  private static void putLong(byte[] out, int offset, long v) {
    for (int i = 7; i >= 0; i--) {
      out[offset + i] = (byte) v;
      v >>>= 8;
    }
  }

  private static long getLong(byte[] in, int offset) {
    long v = 0;
    for (int i = 0; i < 8; i++) {
      v = (v << 8) | (in[offset + i] & 0xFF);
    }
    return v;
  }

  @Override
  public String toString() {
    return String.format("v%d.%d@%016x", millis, logical, writer);
  }
}
