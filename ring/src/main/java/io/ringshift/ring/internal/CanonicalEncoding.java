package io.ringshift.ring.internal;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;

/**
 * Streams the canonical encoding of a snapshot into SHA-256. The layout is specified in docs/placement.md
 * ("Checksum"); every integer is big-endian, every string is a u32 byte length followed by its UTF-8 bytes.
 */
public final class CanonicalEncoding {
  /** First field of the encoding; bump it whenever the layout changes. */
  public static final String FORMAT = "ringshift.ring.v1";

  private final MessageDigest digest;
  private final ByteBuffer buffer = ByteBuffer.allocate(64 * 1024);

  public CanonicalEncoding() {
    try {
      digest = MessageDigest.getInstance("SHA-256");
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is required by every Java platform", e);
    }
  }

  public CanonicalEncoding putString(String value) {
    byte[] bytes = value.getBytes(StandardCharsets.UTF_8);
    putInt(bytes.length);
    flushIfLessThan(bytes.length);
    if (bytes.length > buffer.remaining()) {
      digest.update(bytes);
    } else {
      buffer.put(bytes);
    }
    return this;
  }

  public CanonicalEncoding putLong(long value) {
    flushIfLessThan(8);
    buffer.putLong(value);
    return this;
  }

  public CanonicalEncoding putInt(int value) {
    flushIfLessThan(4);
    buffer.putInt(value);
    return this;
  }

  public CanonicalEncoding putByte(int value) {
    flushIfLessThan(1);
    buffer.put((byte) value);
    return this;
  }

  public CanonicalEncoding putDouble(double value) {
    return putLong(Double.doubleToLongBits(value));
  }

  public byte[] sha256() {
    flush();
    return digest.digest();
  }

  private void flushIfLessThan(int needed) {
    if (buffer.remaining() < needed) {
      flush();
    }
  }

  private void flush() {
    buffer.flip();
    digest.update(buffer);
    buffer.clear();
  }
}
