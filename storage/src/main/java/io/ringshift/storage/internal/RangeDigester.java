package io.ringshift.storage.internal;

import com.dynatrace.hash4j.hashing.HashStream64;
import com.dynatrace.hash4j.hashing.Hashing;
import io.ringshift.storage.RangeDigest;
import io.ringshift.storage.Version;

/**
 * The range digest (docs/storage.md, "Range digest"), written so another engine can compute the same bytes.
 *
 * <p>For each live key {@code k} with version {@code ver} and value {@code v} the digest hashes the record
 * {@code r = len(k) as 4 bytes big-endian ++ k ++ ver ++ v} twice ({@code ver} is the 20 bytes of
 * {@code Version#encode}; tombstones are not counted), with XXH3-64 under two seeds, and adds each hash to
 * its own unsigned 64-bit sum (wrapping, mod 2^64). The digest is the 16 bytes {@code sumA ++ sumB}, both big
 * endian; the key count and the byte total (key plus value bytes) travel beside it. Addition commutes, so the
 * order keys are visited in, written in or copied in does not matter, and unlike XOR a key counted twice does not
 * cancel out. The length prefix keeps ("ab", "c") and ("a", "bc") apart. Two independent 64-bit sums make an
 * accidental match of different contents about 2^-128 likely (the sums are not a cryptographic MAC: a store
 * does not defend against an adversary forging its own contents).
 */
public final class RangeDigester {
  /** XXH3-64 seed of the first sum: the ASCII bytes "ringshfA" read big endian. */
  public static final long SEED_A = 0x72696e677368_6641L;
  /** XXH3-64 seed of the second sum: the ASCII bytes "ringshfB" read big endian. */
  public static final long SEED_B = 0x72696e677368_6642L;

  private final HashStream64 streamA = Hashing.xxh3_64(SEED_A).hashStream();
  private final HashStream64 streamB = Hashing.xxh3_64(SEED_B).hashStream();
  private final byte[] lengthPrefix = new byte[4];
  private final byte[] versionBytes = new byte[Version.BYTES];
  private long sumA;
  private long sumB;
  private long keys;
  private long bytes;

  /** Adds one live key, its version and its value. */
  public void add(byte[] key, Version version, byte[] value) {
    version.encode(versionBytes, 0);
    lengthPrefix[0] = (byte) (key.length >>> 24);
    lengthPrefix[1] = (byte) (key.length >>> 16);
    lengthPrefix[2] = (byte) (key.length >>> 8);
    lengthPrefix[3] = (byte) key.length;
    sumA += streamA.reset().putBytes(lengthPrefix).putBytes(key).putBytes(versionBytes).putBytes(value)
        .getAsLong();
    sumB += streamB.reset().putBytes(lengthPrefix).putBytes(key).putBytes(versionBytes).putBytes(value)
        .getAsLong();
    keys++;
    bytes += key.length + (long) value.length;
  }

  /** The digest of everything added, taken at {@code sequence}. */
  public RangeDigest result(long sequence) {
    byte[] digest = new byte[16];
    DataKeys.putLong(digest, 0, sumA);
    DataKeys.putLong(digest, 8, sumB);
    return new RangeDigest(digest, keys, bytes, sequence);
  }
}
