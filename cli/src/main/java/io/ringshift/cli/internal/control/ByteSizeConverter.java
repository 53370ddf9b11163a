package io.ringshift.cli.internal.control;

import io.ringshift.ring.ByteUnits;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.TypeConversionException;

/** A byte-size option ({@code 500GiB}, {@code 24TiB}, {@code 0}), as {@link ByteUnits#parse} reads it. */
public final class ByteSizeConverter implements ITypeConverter<Long> {
  @Override
  public Long convert(String value) {
    try {
      return ByteUnits.parse(value);
    } catch (IllegalArgumentException e) {
      throw new TypeConversionException(e.getMessage());
    }
  }
}
