package io.ringshift.storage;

import java.nio.ByteBuffer;

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
    ByteBuffer.wrap(out, offset, BYTES).putLong(millis).putInt(logical).putLong(writer);
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
    ByteBuffer b = ByteBuffer.wrap(in, offset, BYTES);
    return new Version(b.getLong(), b.getInt(), b.getLong());
  }

  @Override
  public String toString() {
    return String.format("v%d.%d@%016x", millis, logical, writer);
  }
}
