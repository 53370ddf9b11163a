package io.ringshift.demo.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

class KeySpaceTest {
  @Test
  void shouldDeriveTheSameValueFromSeedKeyAndSequence() {
    KeySpace a = new KeySpace(100, 7);
    KeySpace b = new KeySpace(100, 7);
    assertThat(a.value(42, 3)).isEqualTo(b.value(42, 3));
    assertThat(a.value(42, 3)).isNotEqualTo(a.value(42, 4));
    assertThat(new KeySpace(100, 8).value(42, 3)).isNotEqualTo(a.value(42, 3));
  }

  @Test
  void shouldStartEveryValueWithItsSequenceNumber() {
    KeySpace keys = new KeySpace(10, 1);
    for (long sequence : new long[] {0, 1, 17, 1L << 40}) {
      assertThat(KeySpace.sequenceOf(keys.value(3, sequence))).isEqualTo(sequence);
    }
    assertThat(KeySpace.sequenceOf(new byte[3])).isEqualTo(KeySpace.NONE);
    assertThat(KeySpace.sequenceOf(null)).isEqualTo(KeySpace.NONE);
  }

  @Test
  void shouldDrawLogNormalSizesAroundTheMedianWithinTheClamp() {
    KeySpace keys = new KeySpace(20_000, 11);
    int[] sizes = new int[keys.size()];
    for (int i = 0; i < sizes.length; i++) {
      sizes[i] = keys.value(i, 0).length;
    }
    Arrays.sort(sizes);
    assertThat(sizes[0]).isGreaterThanOrEqualTo(KeySpace.MIN_VALUE_BYTES);
    assertThat(sizes[sizes.length - 1]).isLessThanOrEqualTo(KeySpace.MAX_VALUE_BYTES);
    assertThat(sizes[sizes.length / 2]).as("median").isBetween(230, 282);
    // sigma 1: the 84th percentile is e times the median.
    assertThat(sizes[(int) (sizes.length * 0.8413)]).as("84th percentile").isBetween(620, 770);
  }

  @Test
  void shouldMapKeysToTheirIndexAndNothingElse() {
    KeySpace keys = new KeySpace(1_000, 1);
    assertThat(new String(keys.key(7), StandardCharsets.UTF_8)).isEqualTo("demo-0000007");
    assertThat(new String(keys.key(0), StandardCharsets.UTF_8)).isEqualTo("demo-0000000");
    assertThat(new String(keys.key(999), StandardCharsets.UTF_8)).isEqualTo("demo-0000999");
    assertThat(keys.indexOf(keys.key(999))).isEqualTo(999);
    assertThat(keys.indexOf("demo-0001000".getBytes(StandardCharsets.UTF_8))).isEqualTo(-1);
    assertThat(keys.indexOf("load-0000001".getBytes(StandardCharsets.UTF_8))).isEqualTo(-1);
    assertThat(keys.indexOf("demo-x".getBytes(StandardCharsets.UTF_8))).isEqualTo(-1);
  }

  @Test
  void shouldRecordTheLastAcknowledgedWriteOfEachKey() {
    KeySpace keys = new KeySpace(3, 1);
    assertThat(keys.acknowledgedKeys()).isZero();
    keys.acknowledge(1, 5, 4, 100);
    keys.acknowledge(2, 0, 1, 50);
    assertThat(keys.ackedSequence(1)).isEqualTo(5);
    assertThat(keys.ackedEpoch(1)).isEqualTo(4);
    assertThat(keys.ackedSequence(0)).isEqualTo(KeySpace.NONE);
    assertThat(keys.acknowledgedKeys()).isEqualTo(2);
    assertThat(keys.logicalBytes()).isEqualTo(150);
  }
}
