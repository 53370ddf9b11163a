package io.ringshift.ring;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** The ring hash is XXH3-64 with seed 0 over UTF-8, as published vectors (docs/placement.md) pin it. */
class Xxh3VectorsTest {

  @ParameterizedTest(name = "XXH3-64(\"{0}\") = {1}")
  @CsvSource(value = {"'',2D06800538D394C2", "a,E6C632B61E964E1F", "abc,78AF5F94892F3950"}, emptyValue = "")
  void shouldHashThePublishedVectors(String input, String expectedHex) {
    long expected = Long.parseUnsignedLong(expectedHex, 16);
    byte[] bytes = input.getBytes(StandardCharsets.UTF_8);

    assertThat(RingHash.xxh3().hash(bytes, 0, bytes.length)).isEqualTo(expected);
    RingSnapshot ring = RingSnapshot.builder().addMember("n1", "az-1").build();
    assertThat(ring.position(input)).isEqualTo(expected);
    assertThat(ring.position(bytes)).isEqualTo(expected);
  }

  @Test
  void shouldHashOnlyTheGivenSliceOfTheArray() {
    byte[] padded = "xxabcxx".getBytes(StandardCharsets.UTF_8);

    assertThat(RingHash.xxh3().hash(padded, 2, 3)).isEqualTo(0x78AF5F94892F3950L);
  }

  @Test
  void shouldNameTheHashInEverySnapshot() {
    RingSnapshot ring = RingSnapshot.builder().addMember("n1", "az-1").build();

    assertThat(ring.hashId()).isEqualTo("xxh3-64/seed=0/utf-8").isEqualTo(RingHash.Xxh3.ID);
    assertThat(ring.policyId()).isEqualTo("vnode-ring/zone-aware-walk/v1");
  }

  @Test
  void shouldDeriveTokenIOfANodeFromTheHashOfIdHashI() {
    // Decimal i without padding: node "n1" with 12 tokens hashes "n1#0" .. "n1#11".
    RingSnapshot ring = RingSnapshot.builder().vnodes(12).addMember("n1", "az-1").build();

    for (int t = 0; t < ring.tokenCount(); t++) {
      int i = ring.tokenIndexWithinMember(t);
      assertThat(ring.token(t)).as("token %d", t).isEqualTo(TestRings.xxh3("n1#" + i));
    }
    assertThat(ring.tokenCount()).isEqualTo(12);
  }
}
