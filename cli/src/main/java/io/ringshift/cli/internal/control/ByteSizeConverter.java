package io.ringshift.cli.internal.control;

import java.math.BigDecimal;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.TypeConversionException;

/**
 * A byte count with an optional binary unit: {@code 0}, {@code 1073741824}, {@code 500GiB}, {@code 24TiB},
 * {@code 1.5 TiB}. Units are binary (KiB = 1024 B); {@code K}, {@code M}, {@code G}, {@code T}, {@code P} mean
 * the same, so that {@code 24T} is not silently 10% smaller than the {@code 24 TiB} of the reference scenario.
 */
public final class ByteSizeConverter implements ITypeConverter<Long> {
  private static final Pattern SIZE =
      Pattern.compile("(\\d+(?:\\.\\d+)?)\\s*(|B|[KMGTP]|[KMGTP]i?B)", Pattern.CASE_INSENSITIVE);

  @Override
  public Long convert(String value) {
    return parse(value);
  }

  static long parse(String value) {
    Matcher m = SIZE.matcher(value.strip());
    if (!m.matches()) {
      throw new TypeConversionException("'" + value + "' is not a byte size; write for example 0, 1073741824, "
          + "500GiB or 24TiB");
    }
    String unit = m.group(2).toUpperCase(Locale.ROOT);
    int power = unit.isEmpty() || unit.equals("B") ? 0 : "KMGTP".indexOf(unit.charAt(0)) + 1;
    BigDecimal bytes = new BigDecimal(m.group(1)).multiply(BigDecimal.valueOf(1024).pow(power));
    if (bytes.compareTo(BigDecimal.valueOf(Long.MAX_VALUE)) > 0) {
      throw new TypeConversionException("'" + value + "' is more than " + Long.MAX_VALUE + " bytes");
    }
    return bytes.setScale(0, java.math.RoundingMode.HALF_UP).longValueExact();
  }
}
