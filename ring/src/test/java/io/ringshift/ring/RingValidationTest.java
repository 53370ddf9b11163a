package io.ringshift.ring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Invalid input is refused with a {@link RingException} whose message names the field and the offending
 * value, so that an operator can fix the input without reading code.
 */
class RingValidationTest {

  /** Each case: what is wrong, the call that must fail, and the message fragments that must appear. */
  static Stream<Arguments> invalidInputs() {
    return Stream.of(
        invalid("blank id", () -> Member.of("   ", "az-1"), "member id was \"   \"", "must not be blank"),
        invalid("empty id", () -> Member.of("", "az-1"), "member id was \"\"", "must not be blank"),
        invalid("missing id", () -> Member.of(null, "az-1"), "member id was missing"),
        invalid("id with a control character", () -> Member.of("a\nb", "az-1"), "member id was \"a?b\"",
            "U+000A"),
        invalid("id too long", () -> Member.of("x".repeat(257), "az-1"), "member id was 257 characters long",
            "at most 256"),
        invalid("duplicate id", () -> ring(b -> b.addMember("n1", "az-1").addMember("n1", "az-2")),
            "member id \"n1\" appears twice"),
        invalid("zero weight", () -> Member.of("n1", "az-1", 0.0), "member n1: weight was 0.0",
            "finite and > 0"),
        invalid("negative zero weight", () -> Member.of("n1", "az-1", -0.0), "member n1: weight was -0.0"),
        invalid("negative weight", () -> Member.of("n1", "az-1", -1.5), "member n1: weight was -1.5"),
        invalid("NaN weight", () -> Member.of("n1", "az-1", Double.NaN), "member n1: weight was NaN"),
        invalid("infinite weight", () -> Member.of("n1", "az-1", Double.POSITIVE_INFINITY),
            "member n1: weight was Infinity"),
        invalid("negative infinite weight", () -> Member.of("n1", "az-1", Double.NEGATIVE_INFINITY),
            "member n1: weight was -Infinity"),
        invalid("weight too small for one token", () -> ring(b -> b.vnodes(256).addMember("n1", "az-1", 0.001)),
            "member n1: weight 0.001 with vnodes 256", "= 0 tokens"),
        invalid("weight too large for the ring", () -> ring(b -> b.vnodes(256).addMember("n1", "az-1", 1e6)),
            "member n1: weight 1000000.0 with vnodes 256 gives 256000000 tokens"),
        invalid("missing zone", () -> Member.of("n1", null), "member zone was missing"),
        invalid("blank zone", () -> Member.of("n1", " "), "member zone was \" \"", "must not be blank"),
        invalid("missing state", () -> new Member("n1", "az-1", 1.0, null), "member n1: state was missing"),
        invalid("zero vnodes", () -> ring(b -> b.vnodes(0).addMember("n1", "az-1")), "vnodes was 0",
            "must be >= 1"),
        invalid("negative vnodes", () -> ring(b -> b.vnodes(-4).addMember("n1", "az-1")), "vnodes was -4"),
        invalid("zero replicas", () -> ring(b -> b.replicas(0).addMember("n1", "az-1")), "replicas was 0",
            "between 1 and 64"),
        invalid("negative replicas", () -> ring(b -> b.replicas(-1).addMember("n1", "az-1")), "replicas was -1"),
        invalid("too many replicas", () -> ring(b -> b.replicas(65).addMember("n1", "az-1")), "replicas was 65"),
        invalid("blank cluster id", () -> ring(b -> b.clusterId("  ").addMember("n1", "az-1")),
            "clusterId was \"  \"", "must not be blank"),
        invalid("empty cluster id", () -> ring(b -> b.clusterId("").addMember("n1", "az-1")),
            "clusterId was \"\""),
        invalid("missing cluster id", () -> ring(b -> b.clusterId(null).addMember("n1", "az-1")),
            "clusterId was missing"),
        invalid("negative epoch", () -> ring(b -> b.epoch(-1).addMember("n1", "az-1")), "epoch was -1",
            "must be >= 0"),
        invalid("no members", () -> ring(b -> b), "members was empty", "at least one member"));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("invalidInputs")
  void rejectsInvalidInputNamingTheFieldAndTheValue(String what, Executable call, List<String> fragments) {
    assertThatThrownBy(call::execute)
        .as(what)
        .isInstanceOf(RingException.class)
        .satisfies(e -> assertThat(e.getMessage()).contains(fragments));
  }

  @Test
  void shouldLeaveTheBuilderUsableAfterARejectedBuild() {
    RingBuilder builder = RingSnapshot.builder().vnodes(0).addMember("n1", "az-1");
    assertThatThrownBy(builder::build).isInstanceOf(RingException.class);

    // The error is permanent for that input, and the builder holds nothing half-built.
    assertThat(builder.vnodes(4).build().tokenCount()).isEqualTo(4);
  }

  private static Arguments invalid(String what, Executable call, String... fragments) {
    return Arguments.of(what, call, List.of(fragments));
  }

  private static RingSnapshot ring(java.util.function.UnaryOperator<RingBuilder> configure) {
    return configure.apply(RingSnapshot.builder()).build();
  }

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

  @Test
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
