package io.ringshift.ring;

import static io.ringshift.ring.RingInvariants.check;

import io.ringshift.ring.internal.Utf8Scratch;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

/**
 * A key given as a {@code String} is placed exactly like its UTF-8 bytes ({@code String.getBytes(UTF_8)}),
 * including non-ASCII text and unpaired surrogates, which Java encodes as {@code '?'}. The allocation-free
 * encoder behind string lookups must therefore match the JDK byte for byte.
 */
class KeyEncodingProperties {

  @Test
  void shouldEncodeUtf8ExactlyLikeStringGetBytes() {
    Seeded.forAll("shouldEncodeUtf8ExactlyLikeStringGetBytes", 300, TestRings::randomText, (text, rnd) -> {
      // Twice, and then a short text, so a grown buffer and a reused one are both exercised.
      for (CharSequence s : new CharSequence[] {text, new StringBuilder(text), TestRings.randomText(rnd)}) {
        byte[] expected = s.toString().getBytes(StandardCharsets.UTF_8);
        Utf8Scratch scratch = Utf8Scratch.get();
        int length = scratch.encode(s);
        byte[] actual = Arrays.copyOf(scratch.bytes(), length);
        check(Arrays.equals(actual, expected), () -> "UTF-8 of " + escape(s) + " was " + Arrays.toString(actual)
            + ", String.getBytes gives " + Arrays.toString(expected));
      }
    });
  }

  @Test
  void shouldLookUpAStringKeyExactlyLikeItsUtf8Bytes() {
    Seeded.forAll("shouldLookUpAStringKeyExactlyLikeItsUtf8Bytes", 40, TestRings::randomRing, (spec, rnd) -> {
      RingSnapshot ring = spec.build();
      for (int i = 0; i < 200; i++) {
        String key = TestRings.randomText(rnd);
        byte[] bytes = key.getBytes(StandardCharsets.UTF_8);
        long expected = TestRings.xxh3(key);
        check(ring.position(key) == expected && ring.position(bytes) == expected
                && ring.position(new StringBuilder(key)) == expected,
            () -> "position of " + escape(key) + " differs between String, bytes and XXH3 of its UTF-8");
        check(ring.replicasOf(key) == ring.replicasOf(bytes) && ring.ownerOf(key) == ring.ownerOf(bytes)
                && ring.ownerOf(key) == ring.replicasOf(key).primary(),
            () -> "lookups of " + escape(key) + " differ between String and bytes");
      }
    });
  }

  @Test
  void shouldEncodeTheDocumentedSpecialCases() {
    // Pinned by hand as well, so that a regression in one of them names the case directly.
    String[][] cases = {
        {"", ""}, {"a", "61"}, {"é", "C3A9"}, {"中", "E4B8AD"}, {"\uFFFF", "EFBFBF"},
        {"\uD83D\uDE00", "F09F9880"}, {"\uD800", "3F"}, {"a\uDC00b", "613F62"}, {"\uDE00\uD83D", "3F3F"},
        {"\uD83D", "3F"}, {"\uD83D\uD83D\uDE00", "3FF09F9880"}};
    for (String[] c : cases) {
      Utf8Scratch scratch = Utf8Scratch.get();
      int length = scratch.encode(c[0]);
      String hex = java.util.HexFormat.of().withUpperCase().formatHex(scratch.bytes(), 0, length);
      check(hex.equals(c[1]), () -> escape(c[0]) + " encoded as " + hex + ", expected " + c[1]);
    }
  }

  /** The text with every non-ASCII char as a Java escape, so that a failure message is readable. */
  static String escape(CharSequence s) {
    StringBuilder out = new StringBuilder("\"");
    s.chars().forEach(c -> out.append(c >= 0x20 && c < 0x7F ? String.valueOf((char) c)
        : String.format("\\u%04X", c)));
    return out.append('"').toString();
  }
}
