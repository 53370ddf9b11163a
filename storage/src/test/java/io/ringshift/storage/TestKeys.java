package io.ringshift.storage;

import static java.nio.charset.StandardCharsets.UTF_8;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/** Keys for tests, and the token order a store keeps them in. */
final class TestKeys {
  private TestKeys() {}

  static byte[] bytes(String s) {
    return s.getBytes(UTF_8);
  }

  static String text(byte[] b) {
    return new String(b, UTF_8);
  }

  static long position(String key) {
    return Entry.positionOf(bytes(key));
  }

  /** {@code count} keys named {@code prefix-i}, sorted in token order (by unsigned ring position). */
  static List<String> inTokenOrder(String prefix, int count) {
    List<String> keys = new ArrayList<>();
    for (int i = 0; i < count; i++) {
      keys.add(prefix + "-" + i);
    }
    keys.sort(Comparator.comparing(TestKeys::position, Long::compareUnsigned));
    return keys;
  }
}
