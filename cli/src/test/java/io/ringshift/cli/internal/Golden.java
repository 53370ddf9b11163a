package io.ringshift.cli.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.InputStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.function.Consumer;

/**
 * Command output compared byte for byte with a file under {@code src/test/resources/json}: the JSON documents are
 * an interface scripts parse, so a changed field name, order, number format or null is a breaking change even
 * when the figures stay the same.
 */
public final class Golden {
  /** Where a mismatching output is written, to diff against the expected file (or to review a new one). */
  private static final Path ACTUAL = Path.of("target", "golden-actual");

  private Golden() {}

  /** What {@code print} writes to a {@link PrintWriter}, as a string. */
  public static String printed(Consumer<PrintWriter> print) {
    StringWriter text = new StringWriter();
    print.accept(new PrintWriter(text));
    return text.toString();
  }

  /** Asserts that {@code actual} is exactly the text of {@code json/<name>}. */
  public static void assertMatches(String name, String actual) {
    String expected = expected(name);
    if (!actual.equals(expected)) {
      try {
        Files.createDirectories(ACTUAL);
        Files.writeString(ACTUAL.resolve(name), actual, StandardCharsets.UTF_8);
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
    assertThat(actual).as("output of json/%s (actual in %s)", name, ACTUAL.resolve(name).toAbsolutePath())
        .isEqualTo(expected);
  }

  private static String expected(String name) {
    try (InputStream in = Golden.class.getResourceAsStream("/json/" + name)) {
      return in == null ? "(no file json/" + name + ")" : new String(in.readAllBytes(), StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
