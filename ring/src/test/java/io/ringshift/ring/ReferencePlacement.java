package io.ringshift.ring;

import java.io.ByteArrayOutputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * A second, deliberately naive implementation of the placement rules and the checksum, written from
 * docs/placement.md and not from the production classes: plain lists, a comparator sort, a linear lower-bound
 * and a literal two-lap walk. The tests compare every snapshot against it, so the optimised code (radix sort,
 * bucket index, precomputed replica table, streaming digest) and the document are checked against each other.
 * It is what a port to another language would write first.
 */
final class ReferencePlacement {
  /** One token: its value (unsigned), its node and its index {@code i} within the node. */
  record Token(long value, String nodeId, int index) {}

  private static final Comparator<String> UTF8_ORDER =
      (a, b) -> Arrays.compareUnsigned(utf8(a), utf8(b));
  /** The documented tie order: (token unsigned, node id as UTF-8 unsigned bytes, index). */
  static final Comparator<Token> RING_ORDER =
      Comparator.comparing(Token::value, Long::compareUnsigned)
          .thenComparing(Token::nodeId, UTF8_ORDER)
          .thenComparingInt(Token::index);

  final List<Member> members;
  final List<String> zones;
  final List<Token> tokens;
  final int vnodes;
  final int replicas;
  final RingHash hash;
  private final Map<String, Integer> memberIndexes = new HashMap<>();
  private final List<List<String>> rangeReplicas;

  private ReferencePlacement(List<Member> members, int vnodes, int replicas, RingHash hash) {
    this.members = new ArrayList<>(members);
    this.members.sort(Comparator.comparing(Member::id, UTF8_ORDER));
    for (int i = 0; i < this.members.size(); i++) {
      memberIndexes.put(this.members.get(i).id(), i);
    }
    Set<String> zoneSet = new TreeSet<>(UTF8_ORDER);
    members.forEach(m -> zoneSet.add(m.zone()));
    this.zones = List.copyOf(zoneSet);
    this.vnodes = vnodes;
    this.replicas = replicas;
    this.hash = hash;
    List<Token> all = new ArrayList<>();
    for (Member m : this.members) {
      long count = tokenCount(m.weight(), vnodes);
      for (int i = 0; i < count; i++) {
        all.add(new Token(hash(hash, m.id() + "#" + i), m.id(), i));
      }
    }
    all.sort(RING_ORDER);
    this.tokens = List.copyOf(all);
    List<List<String>> sets = new ArrayList<>();
    for (int r = 0; r < tokens.size(); r++) {
      sets.add(walk(r));
    }
    this.rangeReplicas = List.copyOf(sets);
  }

  static ReferencePlacement of(RingSnapshot snapshot) {
    return new ReferencePlacement(snapshot.members(), snapshot.vnodes(), snapshot.replicas(), snapshot.hash());
  }

  static ReferencePlacement of(List<Member> members, int vnodes, int replicas, RingHash hash) {
    return new ReferencePlacement(members, vnodes, replicas, hash);
  }

  /**
   * The documented token count, {@code floor(weight * V + 0.5)} in IEEE doubles. It equals Java's
   * {@code Math.round} for every product that yields at least one token (see TokenCountRoundingTest).
   */
  static long tokenCount(double weight, int vnodes) {
    return (long) Math.floor(weight * vnodes + 0.5);
  }

  static long hash(RingHash hash, String text) {
    byte[] bytes = utf8(text);
    return hash.hash(bytes, 0, bytes.length);
  }

  static byte[] utf8(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  Member member(String id) {
    return members.get(memberIndex(id));
  }

  int memberIndex(String id) {
    Integer index = memberIndexes.get(id);
    if (index == null) {
      throw new IllegalArgumentException("no member " + id);
    }
    return index;
  }

  /** The range of a position: the first token at or after it (unsigned), wrapping to 0. A plain bisection. */
  int rangeOf(long position) {
    int lo = 0;
    int hi = tokens.size();
    while (lo < hi) {
      int mid = (lo + hi) >>> 1;
      if (Long.compareUnsigned(tokens.get(mid).value(), position) < 0) {
        lo = mid + 1;
      } else {
        hi = mid;
      }
    }
    return lo == tokens.size() ? 0 : lo;
  }

  List<String> replicasOfRange(int range) {
    return rangeReplicas.get(range);
  }

  List<String> replicasAt(long position) {
    return rangeReplicas.get(rangeOf(position));
  }

  /**
   * The replica walk as documented: from the range's own token, clockwise, at most twice round the ring;
   * take a node not taken yet, and while some zone is unused, only a node of an unused zone.
   */
  private List<String> walk(int range) {
    int target = Math.min(replicas, members.size());
    Set<String> picked = new LinkedHashSet<>();
    Set<String> usedZones = new TreeSet<>();
    int n = tokens.size();
    for (int step = 0; step < 2 * n && picked.size() < target; step++) {
      String node = tokens.get((range + step) % n).nodeId();
      String zone = member(node).zone();
      if (picked.contains(node)) {
        continue;
      }
      if (usedZones.size() < zones.size() && usedZones.contains(zone)) {
        continue;
      }
      picked.add(node);
      usedZones.add(zone);
    }
    return List.copyOf(picked);
  }

  /** The checksum as docs/placement.md specifies it: SHA-256 of {@link #canonicalEncoding}. */
  String checksumHex(String clusterId, long epoch, String policyId) {
    try {
      return HexFormat.of().formatHex(
          MessageDigest.getInstance("SHA-256").digest(canonicalEncoding(clusterId, epoch, policyId)));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }

  /** The canonical encoding as docs/placement.md specifies it, written with plain java.io. */
  byte[] canonicalEncoding(String clusterId, long epoch, String policyId) {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    try (DataOutputStream out = new DataOutputStream(bytes)) {
      writeString(out, "ringshift.ring.v1");
      writeString(out, clusterId);
      out.writeLong(epoch);
      writeString(out, hash.id());
      writeString(out, policyId);
      out.writeInt(vnodes);
      out.writeInt(replicas);
      out.writeInt(members.size());
      for (Member m : members) {
        writeString(out, m.id());
        writeString(out, m.zone());
        out.writeLong(Double.doubleToLongBits(m.weight()));
        writeString(out, m.state().name());
        out.writeInt((int) tokenCount(m.weight(), vnodes));
      }
      out.writeInt(tokens.size());
      for (Token t : tokens) {
        out.writeLong(t.value());
        out.writeInt(memberIndex(t.nodeId()));
        out.writeInt(t.index());
      }
      for (List<String> set : rangeReplicas) {
        out.writeByte(set.size());
        for (String id : set) {
          out.writeInt(memberIndex(id));
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return bytes.toByteArray();
  }

  private static void writeString(DataOutputStream out, String s) throws IOException {
    byte[] b = utf8(s);
    out.writeInt(b.length);
    out.write(b);
  }
}
