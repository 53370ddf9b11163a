package io.ringshift.protocol;

import java.nio.ByteBuffer;
import java.util.HexFormat;

/** The bytes of Avro {@code bytes} fields (checksums, signatures), which generated classes carry as buffers. */
public final class AvroBytes {
  private static final HexFormat HEX = HexFormat.of();

  private AvroBytes() {}

  /** A copy of the buffer's remaining bytes, or null for null; the buffer's position is left alone. */
  public static byte[] toArray(ByteBuffer buffer) {
    if (buffer == null) {
      return null;
    }
    ByteBuffer view = buffer.duplicate();
    byte[] out = new byte[view.remaining()];
    view.get(out);
    return out;
  }

  /** The bytes in lowercase hex, or {@code none} for null. */
  public static String hex(byte[] bytes) {
    return bytes == null ? "none" : HEX.formatHex(bytes);
  }

  /** The buffer's remaining bytes in lowercase hex, or {@code none} for null. */
  public static String hex(ByteBuffer buffer) {
    return hex(toArray(buffer));
  }
}
