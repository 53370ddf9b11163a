package io.ringshift.cli.internal.control;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;
import picocli.CommandLine.TypeConversionException;

class ByteSizeConverterTest {
  @Test
  void shouldReadPlainNumbersAndBinaryUnits() {
    assertThat(ByteSizeConverter.parse("0")).isZero();
    assertThat(ByteSizeConverter.parse("1073741824")).isEqualTo(1L << 30);
    assertThat(ByteSizeConverter.parse("24TiB")).isEqualTo(24L << 40);
    assertThat(ByteSizeConverter.parse("24T")).isEqualTo(24L << 40);
    assertThat(ByteSizeConverter.parse("1.5 gib")).isEqualTo(3L << 29);
    assertThat(ByteSizeConverter.parse("512B")).isEqualTo(512);
  }

  @Test
  void shouldRefuseWhatIsNotASize() {
    assertThatThrownBy(() -> ByteSizeConverter.parse("lots")).isInstanceOf(TypeConversionException.class)
        .hasMessageContaining("'lots' is not a byte size");
    assertThatThrownBy(() -> ByteSizeConverter.parse("-1")).isInstanceOf(TypeConversionException.class);
    assertThatThrownBy(() -> ByteSizeConverter.parse("9000PiB")).hasMessageContaining("is more than");
  }
}
