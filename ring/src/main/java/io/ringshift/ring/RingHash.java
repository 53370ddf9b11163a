package io.ringshift.ring;

import com.dynatrace.hash4j.hashing.Hasher64;
import com.dynatrace.hash4j.hashing.Hashing;

/**
 * The 64-bit hash that positions keys and tokens on the ring. Its {@link #id()} is part of every snapshot
 * and of its checksum: changing the hash is a full repartition, never a silent change.
 *
 * <p>Production rings use {@link #xxh3()}. Other implementations exist for tests (for example to force
 * token collisions) and must use an id of their own.
 */
public interface RingHash {
  /** Stable identifier written into snapshots, for example {@code xxh3-64/seed=0/utf-8}. */
  String id();

  /** Hashes {@code length} bytes of {@code bytes} from {@code offset}. Must not allocate. */
  long hash(byte[] bytes, int offset, int length);

  /** XXH3-64 with seed 0 (hash4j), the documented ringshift hash. */
  static RingHash xxh3() {
    return Xxh3.INSTANCE;
  }

  /** The XXH3-64 ring hash. */
  final class Xxh3 implements RingHash {
    public static final String ID = "xxh3-64/seed=0/utf-8";
    static final Xxh3 INSTANCE = new Xxh3();
    private static final Hasher64 HASHER = Hashing.xxh3_64();

    private Xxh3() {}

    @Override
    public String id() {
      return ID;
    }

    @Override
    public long hash(byte[] bytes, int offset, int length) {
      return HASHER.hashBytesToLong(bytes, offset, length);
    }

    @Override
    public String toString() {
      return ID;
    }
  }
}
