package io.ringshift.ring;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The checksum is SHA-256 over the canonical encoding of docs/placement.md: it depends on everything that
 * decides placement or is published with it, and on nothing else (member order in particular).
 */
class ChecksumTest {
  private static final List<Member> MEMBERS = List.of(
      Member.of("node-b", "az-2", 1.5),
      new Member("node-a", "az-1", 1.0, MemberState.FILLING),
      Member.of("nöde-\uD83D\uDE00", "az-3"),
      Member.of("node-c", "az-1", 0.5));

  private static RingBuilder base() {
    return RingSnapshot.builder().clusterId("checksum").epoch(3).vnodes(8).replicas(3).members(MEMBERS);
  }

  @Test
  void shouldGiveTheSameChecksumForEveryOrderOfTheSameMembers() {
    String expected = base().build().checksumHex();

    for (List<Member> order : permutations(MEMBERS)) {
      RingSnapshot ring = base().members(order).build();
      assertThat(ring.checksumHex()).as("order %s", order.stream().map(Member::id).toList()).isEqualTo(expected);
    }
  }

  @Test
  void shouldChangeTheChecksumWhenAnyEncodedFieldChanges() {
    Map<String, RingSnapshot> variants = new LinkedHashMap<>();
    variants.put("base", base().build());
    variants.put("clusterId", base().clusterId("checksum2").build());
    variants.put("epoch", base().epoch(4).build());
    variants.put("vnodes", base().vnodes(9).build());
    variants.put("replicas", base().replicas(2).build());
    variants.put("hash", base().hash(new TestRings.FewValuesHash(1 << 20)).build());
    // Same token count (round(1.0000000000000002 * 8) = 8): only the weight's bits differ.
    variants.put("weight", base().members(replace(1, m -> m.withWeight(Math.nextUp(1.0)))).build());
    variants.put("zone", base().members(replace(3, m -> new Member(m.id(), "az-4", m.weight(), m.state())))
        .build());
    variants.put("state", base().members(replace(1, m -> m.withState(MemberState.ACTIVE))).build());
    variants.put("id", base().members(replace(0, m -> new Member("node-b2", m.zone(), m.weight(), m.state())))
        .build());

    Map<String, String> seen = new LinkedHashMap<>();
    variants.forEach((field, ring) -> {
      String previous = seen.put(ring.checksumHex(), field);
      assertThat(previous).as("%s gives the same checksum as %s", field, previous).isNull();
    });
    assertThat(variants.get("weight").tokenCount()).isEqualTo(variants.get("base").tokenCount());
  }

  @Test
  void shouldEncodeTheChecksumExactlyAsDocumented() {
    for (RingSnapshot ring : List.of(base().build(), base().replicas(7).build(), base().vnodes(1).build(),
        RingSnapshot.builder().addMember("solo", "z").build())) {
      ReferencePlacement reference = ReferencePlacement.of(ring);
      assertThat(ring.checksumHex()).isEqualTo(reference.checksumHex(ring.clusterId(), ring.epoch(),
          ring.policyId()));
    }
  }

  @Test
  void shouldHandOutACopyOfTheChecksum() {
    RingSnapshot ring = base().build();
    byte[] checksum = ring.checksum();
    checksum[0] ^= 1;

    assertThat(ring.checksum()).hasSize(32).isNotEqualTo(checksum);
    assertThat(ring.checksumHex()).isEqualTo(HexFormat.of().formatHex(ring.checksum())).hasSize(64);
  }

  private static List<Member> replace(int index, java.util.function.UnaryOperator<Member> change) {
    List<Member> members = new ArrayList<>(MEMBERS);
    members.set(index, change.apply(members.get(index)));
    return members;
  }

  private static List<List<Member>> permutations(List<Member> items) {
    if (items.size() <= 1) {
      return List.of(items);
    }
    List<List<Member>> all = new ArrayList<>();
    for (int i = 0; i < items.size(); i++) {
      List<Member> rest = new ArrayList<>(items);
      Member first = rest.remove(i);
      for (List<Member> tail : permutations(rest)) {
        List<Member> order = new ArrayList<>();
        order.add(first);
        order.addAll(tail);
        all.add(order);
      }
    }
    return all;
  }
}
