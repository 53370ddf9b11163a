package io.ringshift.ring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Invalid input is refused with a {@link RingException} whose message names the field and the offending
 * value, so that an operator can fix the input without reading code.
 */
class RingValidationTest {

  @ParameterizedTest
  @ValueSource(strings = {"n\uD800", "\uDC00n", "n\uDBFFx", "\uDE00\uD83D"})
  void rejectsIdWithUnpairedSurrogate(String id) {
    assertThatThrownBy(() -> Member.of(id, "az-1"))
        .isInstanceOf(RingException.class)
        .hasMessageStartingWith("member id was \"")
        .hasMessageContaining("must be well-formed Unicode")
        .hasMessageContaining("unpaired surrogate U+");
  }

  @ParameterizedTest
  @ValueSource(strings = {"az\uD800", "\uDFFF"})
  void rejectsZoneWithUnpairedSurrogate(String zone) {
    assertThatThrownBy(() -> Member.of("n1", zone))
        .isInstanceOf(RingException.class)
        .hasMessageContaining("member zone was \"")
        .hasMessageContaining("\\u" + String.format("%04X", (int) zone.charAt(zone.length() - 1)));
  }

  @ParameterizedTest
  @ValueSource(strings = {"c\uD800", "\uDC00"})
  void rejectsClusterIdWithUnpairedSurrogate(String clusterId) {
    assertThatThrownBy(() -> RingSnapshot.builder().clusterId(clusterId).addMember("n1", "az-1").build())
        .isInstanceOf(RingException.class)
        .hasMessageStartingWith("clusterId was \"")
        .hasMessageContaining("must be well-formed Unicode");
  }

  @ParameterizedTest
  @ValueSource(strings = {"n\uD83D\uDE00", "\uD83D\uDE00", "\uFF5E-中-é"})
  void acceptsIdsWithPairedSurrogatesAndOtherNonAscii(String id) {
    RingSnapshot ring = RingSnapshot.builder().clusterId("c-" + id).addMember(id, "zone-" + id).build();

    assertThat(ring.memberIds()).containsExactly(id);
    assertThat(ring.zones()).containsExactly("zone-" + id);
  }

  @org.junit.jupiter.api.Test
  void shouldNotLetIdsThatCollideInUtf8MakeTheChecksumDependOnOrder() {
    // Before ids were checked, "n\uD800" and "n\uDBFF" both encoded to "n?": the two orders below built rings
    // with different checksums. Now neither id is accepted, and distinct well-formed ids never collide.
    assertThatThrownBy(() -> Member.of("n\uD800", "az-1")).isInstanceOf(RingException.class);
    List<Member> members = List.of(Member.of("n\uD83D\uDE00", "az-1"), Member.of("n\uFF5E", "az-2"));
    RingSnapshot forward = TestRings.ring(8, 2, members);
    RingSnapshot backward = TestRings.ring(8, 2, List.of(members.get(1), members.get(0)));

    assertThat(backward.checksumHex()).isEqualTo(forward.checksumHex());
  }
}
