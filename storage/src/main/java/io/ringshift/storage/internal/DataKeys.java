package io.ringshift.storage.internal;

import java.util.Arrays;

/**
 * The data column family's key layout: the 8-byte big-endian ring position of the key, then the key itself. Big
 * endian makes RocksDB's bytewise (unsigned) order the unsigned order of positions, so a ring range is a key range.
 */
final class DataKeys {
  static final int POSITION_BYTES = 8;

  private DataKeys() {}

  static byte[] encode(long position, byte[] key) {
    byte[] out = new byte[POSITION_BYTES + key.length];
    putLong(out, 0, position);
    System.arraycopy(key, 0, out, POSITION_BYTES, key.length);
    return out;
  }

  static long position(byte[] dataKey) {
    return getLong(dataKey, 0);
  }

  static byte[] key(byte[] dataKey) {
    return Arrays.copyOfRange(dataKey, POSITION_BYTES, dataKey.length);
  }

  /** The smallest data key at {@code position}: the 8 position bytes alone. */
  static byte[] positionPrefix(long position) {
    byte[] out = new byte[POSITION_BYTES];
    putLong(out, 0, position);
    return out;
  }

  static void putLong(byte[] out, int offset, long v) {
    for (int i = 7; i >= 0; i--) {
      out[offset + i] = (byte) v;
      v >>>= 8;
    }
  }

  static long getLong(byte[] in, int offset) {
    long v = 0;
    for (int i = 0; i < 8; i++) {
      v = (v << 8) | (in[offset + i] & 0xFF);
    }
    return v;
  }
}
