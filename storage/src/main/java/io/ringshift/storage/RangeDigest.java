package io.ringshift.storage;

import java.util.HexFormat;

/**
 * An order-independent digest of the live keys of a range: equal contents give equal digests whatever order
 * the keys were written or copied in. The algorithm is documented in docs/storage.md; two stores agree on a
 * range exactly when their digests, counts and byte totals agree (up to hash collisions).
 *
 * @param digest the digest bytes
 * @param keys how many live keys the range holds
 * @param bytes total key plus value bytes of those keys
 * @param sequence the store's sequence number the digest was taken at (a consistent snapshot)
 */
public record RangeDigest(byte[] digest, long keys, long bytes, long sequence) {

  /** Whether two digests describe the same contents (the sequence numbers of two stores differ and are ignored). */
  public boolean sameContentAs(RangeDigest other) {
    return java.util.Arrays.equals(digest, other.digest) && keys == other.keys && bytes == other.bytes;
  }

  @Override
  public String toString() {
    return HexFormat.of().formatHex(digest) + " (" + keys + " keys, " + bytes + " bytes, at " + sequence + ")";
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof RangeDigest d && sameContentAs(d) && sequence == d.sequence;
  }

  @Override
  public int hashCode() {
    return java.util.Arrays.hashCode(digest);
  }
}
