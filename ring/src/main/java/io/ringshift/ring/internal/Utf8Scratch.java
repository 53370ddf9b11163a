package io.ringshift.ring.internal;

/**
 * Encodes a {@link CharSequence} as UTF-8 into a per-thread buffer, so that hashing a {@code String} key on the
 * request path allocates nothing once the buffer has grown to the longest key seen by the thread.
 *
 * <p>The bytes equal {@code s.toString().getBytes(StandardCharsets.UTF_8)}, including Java's replacement of an
 * unpaired surrogate by {@code '?'}.
 */
public final class Utf8Scratch {
  /** Longest key, in chars, encoded into the per-thread buffer; the buffer never grows past 3 bytes per char. */
  public static final int MAX_RETAINED_CHARS = 1024;

  private static final ThreadLocal<Utf8Scratch> PER_THREAD = ThreadLocal.withInitial(Utf8Scratch::new);

  private byte[] buffer = new byte[64];

  private Utf8Scratch() {}

  /** The calling thread's scratch buffer. */
  public static Utf8Scratch get() {
    return PER_THREAD.get();
  }

  /** The buffer filled by the last {@link #encode} call; valid until the next call on this thread. */
  public byte[] bytes() {
    return buffer;
  }

  /** Encodes {@code s} into {@link #bytes()} and returns the number of bytes written. */
  public int encode(CharSequence s) {
    int length = s.length();
    if (buffer.length < length * 3) {
      buffer = new byte[Math.max(length * 3, buffer.length * 2)];
    }
    byte[] out = buffer;
    int n = 0;
    for (int i = 0; i < length; i++) {
      char c = s.charAt(i);
      if (c < 0x80) {
        out[n++] = (byte) c;
      } else if (c < 0x800) {
        out[n++] = (byte) (0xC0 | (c >> 6));
        out[n++] = (byte) (0x80 | (c & 0x3F));
      } else if (Character.isSurrogate(c)) {
        char low = i + 1 < length ? s.charAt(i + 1) : 0;
        if (Character.isHighSurrogate(c) && Character.isLowSurrogate(low)) {
          int cp = Character.toCodePoint(c, low);
          out[n++] = (byte) (0xF0 | (cp >> 18));
          out[n++] = (byte) (0x80 | ((cp >> 12) & 0x3F));
          out[n++] = (byte) (0x80 | ((cp >> 6) & 0x3F));
          out[n++] = (byte) (0x80 | (cp & 0x3F));
          i++;
        } else {
          out[n++] = (byte) '?';
        }
      } else {
        out[n++] = (byte) (0xE0 | (c >> 12));
        out[n++] = (byte) (0x80 | ((c >> 6) & 0x3F));
        out[n++] = (byte) (0x80 | (c & 0x3F));
      }
    }
    return n;
  }
}
