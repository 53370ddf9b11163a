package io.ringshift.cli.internal;

import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Durations as operators write them, for every command: {@code 500ms}, {@code 30s}, {@code 10min} (or {@code 10m}),
 * {@code 2h}, {@code 2d}.
 */
public final class Durations {
  private static final Pattern DURATION = Pattern.compile("(\\d+)\\s*(ms|s|m|min|h|d)?", Pattern.CASE_INSENSITIVE);

  private Durations() {}

  /**
   * Parses {@code value}, also accepting ISO-8601 ({@code PT10M}); a bare number is seconds.
   *
   * @throws IllegalArgumentException naming {@code option}, the value and the accepted forms
   */
  public static Duration parse(String option, String value) {
    String text = value.strip();
    Matcher m = DURATION.matcher(text);
    if (m.matches()) {
      long n;
      try {
        n = Long.parseLong(m.group(1));
      } catch (NumberFormatException e) {
        throw invalid(option, value);
      }
      String unit = m.group(2) == null ? "s" : m.group(2).toLowerCase(Locale.ROOT);
      return switch (unit) {
        case "ms" -> Duration.ofMillis(n);
        case "s" -> Duration.ofSeconds(n);
        case "m", "min" -> Duration.ofMinutes(n);
        case "h" -> Duration.ofHours(n);
        default -> Duration.ofDays(n);
      };
    }
    try {
      return Duration.parse(text.toUpperCase(Locale.ROOT));
    } catch (DateTimeParseException e) {
      throw invalid(option, value);
    }
  }

  /** {@code d} as {@link #parse} reads it back: {@code 500ms}, {@code 30s}, {@code 10min}, {@code 2h}. */
  public static String format(Duration d) {
    long ms = d.toMillis();
    if (ms % 1000 != 0) {
      return ms + "ms";
    }
    long s = ms / 1000;
    if (s != 0 && s % 3600 == 0) {
      return s / 3600 + "h";
    }
    if (s != 0 && s % 60 == 0) {
      return s / 60 + "min";
    }
    return s + "s";
  }

  private static IllegalArgumentException invalid(String option, String value) {
    return new IllegalArgumentException(option + " was \"" + value + "\"; write a duration such as 500ms, 30s, "
        + "10min or 2h");
  }
}
