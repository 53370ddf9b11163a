package io.ringshift.ring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class ByteUnitsTest {
  @Test
  void shouldReadPlainNumbersAndBinaryUnits() {
    assertThat(ByteUnits.parse("0")).isZero();
    assertThat(ByteUnits.parse("1073741824")).isEqualTo(1L << 30);
    assertThat(ByteUnits.parse("24TiB")).isEqualTo(24L << 40);
    assertThat(ByteUnits.parse("24T")).isEqualTo(24L << 40);
    assertThat(ByteUnits.parse("1.5 gib")).isEqualTo(3L << 29);
    assertThat(ByteUnits.parse("512B")).isEqualTo(512);
  }

  @Test
  void shouldRefuseWhatIsNotASize() {
    assertThatThrownBy(() -> ByteUnits.parse("lots")).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("'lots' is not a byte size");
    assertThatThrownBy(() -> ByteUnits.parse("-1")).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> ByteUnits.parse("9000PiB")).hasMessageContaining("is more than");
  }

  @Test
  void shouldFormatWithThreeSignificantDigitsInBinaryUnits() {
    assertThat(ByteUnits.format(0)).isEqualTo("0 B");
    assertThat(ByteUnits.format(1536)).isEqualTo("1.50 KiB");
    assertThat(ByteUnits.format(20L << 20)).isEqualTo("20.0 MiB");
    assertThat(ByteUnits.format(100L << 20)).isEqualTo("100 MiB");
    assertThat(ByteUnits.format(24L << 40)).isEqualTo("24.0 TiB");
  }
}
