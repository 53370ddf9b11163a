package io.ringshift.client;

/**
 * One of the most looked-up keys, as this client's sketch estimates it ({@link RingClient#hotKeys}).
 *
 * @param key the key's bytes (a copy)
 * @param position its ring position
 * @param share the estimated fraction of this client's recent lookups that were of this key, between 0 and 1
 * @param maxOvercount how much of {@code share} may be overcount: the true share is between {@code share -
 *     maxOvercount} and {@code share}
 */
public record HotKey(byte[] key, long position, double share, double maxOvercount) {
  public HotKey {
    key = key.clone();
  }

  @Override
  public byte[] key() {
    return key.clone();
  }

  /** The key as text: printable ASCII bytes as they are, every other byte as {@code \xNN}. */
  public String keyText() {
    return text(key);
  }

  /** {@code bytes} as {@link #keyText()} shows a key. */
  public static String text(byte[] bytes) {
    StringBuilder s = new StringBuilder(bytes.length);
    for (byte b : bytes) {
      if (b >= 0x20 && b < 0x7f && b != '\\') {
        s.append((char) b);
      } else {
        s.append(String.format(java.util.Locale.ROOT, "\\x%02x", b & 0xff));
      }
    }
    return s.toString();
  }

  @Override
  public String toString() {
    return String.format(java.util.Locale.ROOT, "%s %.2f%% (at most %.2f%% overcount)", keyText(), 100 * share,
        100 * maxOvercount);
  }
}
