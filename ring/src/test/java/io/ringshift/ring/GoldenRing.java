package io.ringshift.ring;

import io.ringshift.ring.internal.CanonicalEncoding;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Writes and reads the golden ring files under {@code ring/src/test/resources/golden/}. Each file is plain
 * UTF-8 text, one record per line, tab-separated, so that a port in another language can check itself
 * against it without any ringshift code:
 *
 * <pre>
 * param    &lt;name&gt;  &lt;value&gt;                 format, hash, policy, cluster, epoch, vnodes, replicas
 * member   &lt;id&gt;    &lt;zone&gt;  &lt;weight&gt;  &lt;state&gt;
 * checksum &lt;64 hex digits&gt;
 * key      &lt;key&gt;   &lt;position, 16 hex digits&gt;  &lt;replica ids in preference order, comma-separated&gt;
 * </pre>
 *
 * Lines starting with {@code #} are comments. Weights are Java's shortest round-trip decimal form.
 */
final class GoldenRing {
  static final Path SOURCE_DIRECTORY = Path.of("src", "test", "resources", "golden");
  static final int KEYS = 1000;

  /** The golden rings: one fully zoned, one with fewer zones than R (where the walk may go round twice). */
  enum Case {
    THREE_ZONES("ring-v1-three-zones.txt", 64, List.of(
        Member.of("node-01", "eu-west-1a"),
        Member.of("node-02", "eu-west-1a", 2.0),
        Member.of("node-03", "eu-west-1b"),
        Member.of("node-04", "eu-west-1b", 0.5),
        Member.of("node-05", "eu-west-1c", 1.5),
        Member.of("node-06", "eu-west-1c"),
        new Member("node-07", "eu-west-1a", 1.0, MemberState.FILLING),
        Member.of("nœud-08", "eu-west-1b"),
        Member.of("узел-09", "eu-west-1c", 1.25),
        Member.of("ノード-10", "eu-west-1a"),
        Member.of("node-\uD83D\uDE80-11", "eu-west-1b"))),
    // zone-b has a single token: the range just after it meets every zone-a token before b1 completes the
    // zones, so its third replica is only found on a second lap of the walk.
    TWO_ZONES("ring-v1-two-zones.txt", 2, List.of(
        Member.of("a1", "zone-a"),
        Member.of("a2", "zone-a"),
        Member.of("a3", "zone-a", 1.5),
        Member.of("b1", "zone-b", 0.5)));

    final String fileName;
    final int vnodes;
    final List<Member> members;

    Case(String fileName, int vnodes, List<Member> members) {
      this.fileName = fileName;
      this.vnodes = vnodes;
      this.members = members;
    }

    RingSnapshot build() {
      return RingSnapshot.builder().clusterId("golden").epoch(42).vnodes(vnodes).replicas(3).members(members)
          .build();
    }
  }

  private GoldenRing() {}

  /** The fixed keys: ASCII, the hash vectors, and non-ASCII text of one to four UTF-8 bytes per character. */
  static List<String> keys() {
    List<String> keys = new ArrayList<>(List.of("", "a", "abc", "é", "中文", "ключ", "\uD83D\uDD11",
        "user:42", "UPPER", " space", "key-with-trailing-space ", "ß", "\uFFFD", "x".repeat(100)));
    for (int i = 0; keys.size() < KEYS; i++) {
      keys.add(String.format("key-%04d", i));
    }
    return keys;
  }

  static String render(RingSnapshot ring, List<String> keys) {
    StringBuilder out = new StringBuilder();
    out.append("# ringshift golden ring: do not edit by hand. It pins placement and the checksum across\n");
    out.append("# releases; GoldenRingTest explains how to regenerate it deliberately.\n");
    param(out, "format", CanonicalEncoding.FORMAT);
    param(out, "hash", ring.hashId());
    param(out, "policy", ring.policyId());
    param(out, "cluster", ring.clusterId());
    param(out, "epoch", Long.toString(ring.epoch()));
    param(out, "vnodes", Integer.toString(ring.vnodes()));
    param(out, "replicas", Integer.toString(ring.replicas()));
    for (Member m : ring.members()) {
      out.append("member\t").append(m.id()).append('\t').append(m.zone()).append('\t').append(m.weight())
          .append('\t').append(m.state().name()).append('\n');
    }
    out.append("checksum\t").append(ring.checksumHex()).append('\n');
    for (String key : keys) {
      out.append("key\t").append(key).append('\t').append(hex(ring.position(key))).append('\t')
          .append(String.join(",", ring.replicasOf(key).ids())).append('\n');
    }
    return out.toString();
  }

  static String hex(long value) {
    return HexFormat.of().withUpperCase().toHexDigits(value);
  }

  private static void param(StringBuilder out, String name, String value) {
    out.append("param\t").append(name).append('\t').append(value).append('\n');
  }

  /** A golden file's content, read back without reference to {@link Case}. */
  record Parsed(Map<String, String> params, List<Member> members, String checksum, List<String[]> keys) {}

  static Parsed parse(String text) {
    Map<String, String> params = new LinkedHashMap<>();
    List<Member> members = new ArrayList<>();
    List<String[]> keys = new ArrayList<>();
    String checksum = null;
    for (String line : text.split("\n", -1)) {
      if (line.isEmpty() || line.startsWith("#")) {
        continue;
      }
      String[] f = line.split("\t", -1);
      switch (f[0]) {
        case "param" -> params.put(f[1], f[2]);
        case "member" -> members.add(new Member(f[1], f[2], Double.parseDouble(f[3]), MemberState.valueOf(f[4])));
        case "checksum" -> checksum = f[1];
        case "key" -> keys.add(new String[] {f[1], f[2], f[3]});
        default -> throw new IllegalArgumentException("unknown golden line: " + line);
      }
    }
    return new Parsed(params, members, checksum, keys);
  }

  static void write(Path directory) throws IOException {
    Files.createDirectories(directory);
    for (Case c : Case.values()) {
      Path file = directory.resolve(c.fileName);
      Files.writeString(file, render(c.build(), keys()), StandardCharsets.UTF_8);
      System.out.println("wrote " + file.toAbsolutePath());
    }
  }

  /** Regenerates the golden files; run from the {@code ring} directory (see GoldenRingTest). */
  public static void main(String[] args) throws IOException {
    write(args.length > 0 ? Path.of(args[0]) : SOURCE_DIRECTORY);
  }
}
