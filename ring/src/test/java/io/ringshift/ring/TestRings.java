package io.ringshift.ring;

import com.dynatrace.hash4j.hashing.Hashing;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;

/** Ring fixtures shared by the tests: builders, random memberships, sample positions and test hashes. */
final class TestRings {
  /** Weights the random rings draw from; every one gives at least one token at any V >= 1. */
  static final double[] WEIGHTS = {0.5, 1.0, 1.0, 1.0, 1.5, 2.0, 3.0};
  /** Id fragments mixing ASCII with characters whose UTF-8 order differs from their UTF-16 order. */
  static final String[] ID_PARTS = {"n", "a", "b", "-", "7", "é", "中", "\uFF5E", "\uD83D\uDE00"};

  private TestRings() {}

  /** A generated ring: what a property draws, printed when the property fails. */
  record RingSpec(List<Member> members, int vnodes, int replicas) {
    RingSpec {
      members = List.copyOf(members);
    }

    RingSnapshot build() {
      return ring(vnodes, replicas, members);
    }

    RingSpec withMembers(List<Member> newMembers) {
      return new RingSpec(newMembers, vnodes, replicas);
    }

    int zoneCount() {
      return (int) members.stream().map(Member::zone).distinct().count();
    }

    @Override
    public String toString() {
      StringBuilder out = new StringBuilder("V=" + vnodes + " R=" + replicas + " members=[");
      for (Member m : members) {
        out.append(m.id()).append('@').append(m.zone()).append('*').append(m.weight());
        out.append(m.state() == MemberState.FILLING ? "(filling) " : " ");
      }
      return out.toString().trim() + "]";
    }
  }

  private static final int[] VNODES = {1, 2, 3, 5, 8, 16, 32};

  /**
   * A small random ring. Edge cases come often on purpose: one node, V = 1, R above the node or zone count,
   * a single zone.
   */
  static RingSpec randomRing(Random rnd) {
    int nodes = rnd.nextInt(8) == 0 ? 1 : 1 + rnd.nextInt(9);
    int zones = 1 + rnd.nextInt(4);
    int vnodes = VNODES[rnd.nextInt(VNODES.length)];
    int replicas = 1 + rnd.nextInt(4);
    return new RingSpec(randomMembers(rnd, nodes, zones), vnodes, replicas);
  }

  /**
   * Random text for keys: ASCII, controls, two-, three- and four-byte UTF-8, and unpaired surrogates (which
   * Java encodes as '?'); now and then long enough to make the per-thread UTF-8 buffer grow.
   */
  static String randomText(Random rnd) {
    int length = rnd.nextInt(20) == 0 ? rnd.nextInt(700) : rnd.nextInt(24);
    StringBuilder out = new StringBuilder(length);
    for (int i = 0; i < length; i++) {
      switch (rnd.nextInt(8)) {
        case 0, 1 -> out.append((char) (0x20 + rnd.nextInt(0x5F)));
        case 2 -> out.append((char) rnd.nextInt(0x80));
        case 3 -> out.append((char) (0x80 + rnd.nextInt(0x780)));
        case 4 -> {
          char c = (char) (0x800 + rnd.nextInt(0x10000 - 0x800));
          out.append(Character.isSurrogate(c) ? '\uFFFF' : c);
        }
        case 5 -> out.appendCodePoint(0x10000 + rnd.nextInt(0x100000));
        case 6 -> out.append((char) (0xD800 + rnd.nextInt(0x400)));
        default -> out.append((char) (0xDC00 + rnd.nextInt(0x400)));
      }
    }
    return out.toString();
  }

  static RingSnapshot ring(int vnodes, int replicas, List<Member> members) {
    return RingSnapshot.builder().vnodes(vnodes).replicas(replicas).members(members).build();
  }

  static String zone(int z) {
    return "az-" + (z + 1);
  }

  /** A fresh node id not in {@code taken}, built from {@link #ID_PARTS} so that ids are well-formed UTF-16. */
  static String freshId(Random rnd, Set<String> taken) {
    while (true) {
      StringBuilder id = new StringBuilder();
      int parts = 1 + rnd.nextInt(4);
      for (int i = 0; i < parts; i++) {
        id.append(ID_PARTS[rnd.nextInt(ID_PARTS.length)]);
      }
      if (!id.toString().isBlank() && taken.add(id.toString())) {
        return id.toString();
      }
    }
  }

  static List<Member> randomMembers(Random rnd, int nodes, int zones) {
    Set<String> ids = new HashSet<>();
    List<Member> members = new ArrayList<>();
    for (int i = 0; i < nodes; i++) {
      members.add(randomMember(rnd, ids, zones));
    }
    return members;
  }

  static Member randomMember(Random rnd, Set<String> taken, int zones) {
    String id = freshId(rnd, taken);
    MemberState state = rnd.nextInt(5) == 0 ? MemberState.FILLING : MemberState.ACTIVE;
    return new Member(id, zone(rnd.nextInt(zones)), WEIGHTS[rnd.nextInt(WEIGHTS.length)], state);
  }

  static List<Member> shuffled(List<Member> members, Random rnd) {
    List<Member> copy = new ArrayList<>(members);
    Collections.shuffle(copy, rnd);
    return copy;
  }

  /**
   * Positions that decide a comparison of two snapshots exactly, plus random ones: within an interval between
   * two consecutive tokens of the union of both tables both snapshots are constant, so every such interval is
   * represented by its end (a token). The neighbours of each token and the extremes catch off-by-one errors.
   */
  static long[] probePositions(RingSnapshot a, RingSnapshot b, Random rnd, int randomCount) {
    List<Long> positions = new ArrayList<>();
    for (RingSnapshot s : List.of(a, b)) {
      for (int i = 0; i < s.tokenCount(); i++) {
        long t = s.token(i);
        positions.add(t);
        positions.add(t + 1);
        positions.add(t - 1);
      }
    }
    positions.add(0L);
    positions.add(-1L);
    positions.add(Long.MIN_VALUE);
    positions.add(Long.MAX_VALUE);
    for (int i = 0; i < randomCount; i++) {
      positions.add(rnd.nextLong());
    }
    return positions.stream().mapToLong(Long::longValue).toArray();
  }

  static long xxh3(String s) {
    byte[] b = s.getBytes(StandardCharsets.UTF_8);
    return Hashing.xxh3_64().hashBytesToLong(b, 0, b.length);
  }

  /**
   * XXH3 folded onto a handful of values, so that many tokens of different nodes collide and the tie order
   * decides the ring. Tests only: it allocates nothing but places keys very unevenly.
   */
  static final class FewValuesHash implements RingHash {
    private static final long SPREAD = 0x9E3779B97F4A7C15L;
    private final int values;

    FewValuesHash(int values) {
      this.values = values;
    }

    @Override
    public String id() {
      return "test/xxh3-mod-" + values;
    }

    @Override
    public long hash(byte[] bytes, int offset, int length) {
      long h = Hashing.xxh3_64().hashBytesToLong(bytes, offset, length);
      return Math.floorMod(h, values) * SPREAD;
    }
  }

  /**
   * A hash read from a table, so that a test chooses every token (for example to put a range across the top
   * of the ring). Any input missing from the table is a mistake in the test and fails loudly.
   */
  static final class TableHash implements RingHash {
    private final String id;
    private final Map<String, Long> table;

    TableHash(String id, Map<String, Long> table) {
      this.id = id;
      this.table = Map.copyOf(table);
    }

    @Override
    public String id() {
      return id;
    }

    @Override
    public long hash(byte[] bytes, int offset, int length) {
      String input = new String(bytes, offset, length, StandardCharsets.UTF_8);
      Long value = table.get(input);
      if (value == null) {
        throw new IllegalStateException("TableHash " + id + " has no value for \"" + input + "\"");
      }
      return value;
    }
  }
}
