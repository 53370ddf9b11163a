package io.ringshift.cli.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.ringshift.ring.RingSnapshot;
import io.ringshift.protocol.RingSnapshotCodec;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Every kind of bad input: exit code 2, one line on stderr that names the problem (picocli adds a "Try ...
 * --help" hint for option errors), nothing on stdout, no stack trace, and no file created or changed.
 */
class BadInputTest {
  private static final RingSnapshot RING = Fixtures.ring(6, 3).build();

  @TempDir Path dir;

  /** One bad invocation: files to create (name -> content), arguments ({d} is the directory), expected text. */
  record Case(String name, Map<String, byte[]> files, List<String> args, String expected) {
    @Override
    public String toString() {
      return name;
    }
  }

  @BeforeEach
  void writeGoodInputs() {
    Fixtures.write(dir.resolve("members.json"), Fixtures.membersJson(6, 3));
    Fixtures.snapshot(dir.resolve("good.snapshot"), RING);
  }

  static Stream<Case> cases() {
    return Stream.of(
        // ---- ring build: members file
        build("missing members file", null, "members file {d}/input.json does not exist"),
        buildArgs("members file is a directory", List.of("--members", "{d}", "--out", "{d}/out.snapshot"),
            "members file {d} is a directory"),
        build("empty members file", "", "{d}/input.json is empty; expected a JSON array of members"),
        build("malformed JSON", "[{\"id\": \"a\", \"zone\": \"z\",}]",
            "{d}/input.json: line 1, column 26: malformed JSON: Unexpected character ('}'"),
        build("truncated JSON", "[{\"id\": \"a\", \"zone\": \"z\"}",
            "{d}/input.json: line 1, column 26: malformed JSON: Unexpected end-of-input: expected close marker for "
                + "Array (start marker at [line: 1, column: 1])"),
        build("not an array", "{\"id\": \"a\", \"zone\": \"z\"}",
            "{d}/input.json: line 1, column 1: expected a JSON array of members, found an object"),
        build("array of strings", "[\"node-1\"]", "line 1, column 2: member[0] must be a JSON object, found a string"),
        build("no members", "[]", "{d}/input.json: members was empty; a ring needs at least one member"),
        build("unknown field", "[{\"id\": \"a\", \"zone\": \"z\"},\n {\"id\": \"b\", \"zone\": \"z\", \"wieght\": 2}]",
            "{d}/input.json: line 2, column 2: member[1]: unknown field \"wieght\"; a member has the fields id, "
                + "zone, weight, state"),
        build("duplicate id", "[{\"id\": \"a\", \"zone\": \"z\"}, {\"id\": \"a\", \"zone\": \"y\"}]",
            "line 1, column 28: member[1]: member id \"a\" appears twice (member[0] and member[1]); member ids "
                + "must be unique"),
        build("duplicate JSON key", "[{\"id\": \"a\", \"zone\": \"z\", \"id\": \"b\"}]",
            "line 1, column 31: malformed JSON: Duplicate field 'id'"),
        build("blank id", "[{\"id\": \"  \", \"zone\": \"z\"}]",
            "line 1, column 2: member[0]: member id was \"  \"; id must not be blank"),
        build("missing id", "[{\"zone\": \"z\"}]",
            "member[0]: member id was missing; every member needs a non-blank id"),
        build("missing zone", "[{\"id\": \"a\"}]",
            "member[0]: member zone was missing; every member needs a non-blank zone"),
        build("numeric id", "[{\"id\": 7, \"zone\": \"z\"}]",
            "member[0]: id must be a JSON string, found the number 7"),
        build("zero weight", "[{\"id\": \"a\", \"zone\": \"z\", \"weight\": 0}]",
            "member[0]: member a: weight was 0.0; weight must be finite and > 0"),
        build("negative weight", "[{\"id\": \"a\", \"zone\": \"z\", \"weight\": -1.5}]",
            "member[0]: member a: weight was -1.5; weight must be finite and > 0"),
        build("weight as a string", "[{\"id\": \"a\", \"zone\": \"z\", \"weight\": \"2\"}]",
            "member[0]: weight must be a JSON number, found the string \"2\""),
        build("infinite weight", "[{\"id\": \"a\", \"zone\": \"z\", \"weight\": 1e999}]",
            "member[0]: member a: weight was Infinity; weight must be finite and > 0"),
        build("weight too small for one token", "[{\"id\": \"a\", \"zone\": \"z\", \"weight\": 0.001}]",
            "cannot build the ring: member a: weight 0.001 with vnodes 256 gives round(weight * vnodes) = 0 tokens"),
        build("unknown state", "[{\"id\": \"a\", \"zone\": \"z\", \"state\": \"DRAINING\"}]",
            "member[0]: state was \"DRAINING\"; state must be one of [ACTIVE, FILLING]"),
        build("control character in id", "[{\"id\": \"a\\u0007b\", \"zone\": \"z\"}]",
            "member[0]: member id was \"a?b\"; id must not contain control characters (found U+0007)"),
        build("content after the array", "[{\"id\": \"a\", \"zone\": \"z\"}] []",
            "line 1, column 28: expected the end of the file after the members array, found an array"),
        // ---- ring build: options
        buildWith("vnodes 0", "cannot build the ring: vnodes was 0; vnodes must be >= 1", "--vnodes", "0"),
        buildWith("vnodes not a number", "Invalid value for option '--vnodes': 'many' is not an int",
            "--vnodes", "many"),
        buildWith("replicas 0", "cannot build the ring: replicas was 0; replicas must be between 1 and 64",
            "--replicas", "0"),
        buildWith("negative epoch", "cannot build the ring: epoch was -1; epoch must be >= 0", "--epoch", "-1"),
        buildWith("blank cluster", "cannot build the ring: clusterId was \" \"; clusterId must not be blank",
            "--cluster", " "),
        new Case("missing --out", Map.of(), List.of("ring", "build", "--members", "{d}/members.json"),
            "Missing required option: '--out=FILE'"),
        new Case("output directory missing", Map.of(),
            List.of("ring", "build", "--members", "{d}/members.json", "--out", "{d}/no/such/dir/out.snapshot"),
            "cannot write {d}/no/such/dir/out.snapshot: directory {d}/no/such/dir does not exist"),
        new Case("output is a directory", Map.of("outdir/keep", new byte[0]),
            List.of("ring", "build", "--members", "{d}/members.json", "--out", "{d}/outdir"),
            "cannot write {d}/outdir: it is a directory"),
        new Case("output is the members file", Map.of(),
            List.of("ring", "build", "--members", "{d}/members.json", "--out", "{d}/members.json"),
            "--out {d}/members.json is the members file; choose another output file"),
        // ---- ring show
        show("missing snapshot", null, "snapshot file {d}/input.snapshot does not exist"),
        show("empty snapshot", new byte[0],
            "{d}/input.snapshot is not a valid ring snapshot: 0 bytes is too short for an Avro single-object "
                + "message"),
        show("JSON instead of a snapshot", Fixtures.membersJson(2, 1).getBytes(StandardCharsets.UTF_8),
            "{d}/input.snapshot is not a valid ring snapshot: not an Avro single-object message: it starts with "
                + "5B 0A, expected the marker C3 01"),
        show("truncated snapshot", Arrays.copyOf(encoded(), encoded().length - 5),
            "{d}/input.snapshot is not a valid ring snapshot: truncated RingSnapshot"),
        show("trailing bytes", Arrays.copyOf(encoded(), encoded().length + 2),
            "not a valid ring snapshot: 2 unexpected bytes after the end of the RingSnapshot record"),
        show("unknown writer schema", withByte(encoded(), 4, encoded()[4] ^ 0x5A), // a fingerprint byte, changed
            "not a valid ring snapshot: unknown writer schema: fingerprint 0x"),
        show("altered checksum", alteredChecksum(),
            "not a valid ring snapshot: checksum mismatch: the snapshot states "),
        new Case("show without a file", Map.of(), List.of("ring", "show"), "Missing required parameter: 'FILE'"),
        // ---- ring lookup
        lookup("missing snapshot", List.of("--snapshot", "{d}/none.snapshot"),
            "snapshot file {d}/none.snapshot does not exist"),
        lookup("corrupt snapshot", List.of("--snapshot", "{d}/members.json"),
            "{d}/members.json is not a valid ring snapshot: not an Avro single-object message"),
        lookup("replicas 0", List.of("--snapshot", "{d}/good.snapshot", "--replicas", "0"),
            "--replicas was 0; it must be >= 1"),
        lookup("replicas not a number", List.of("--snapshot", "{d}/good.snapshot", "--replicas", "three"),
            "Invalid value for option '--replicas': 'three' is not an int"),
        lookup("replicas above the ring's limit", List.of("--snapshot", "{d}/good.snapshot", "--replicas", "65"),
            "--replicas 65: replicas was 65; replicas must be between 1 and 64"),
        lookup("no snapshot option", List.of(), "Missing required option: '--snapshot=FILE'"),
        // ---- ring diff
        diff("missing FROM", List.of("{d}/none.snapshot", "{d}/good.snapshot"),
            "snapshot file {d}/none.snapshot does not exist"),
        diff("corrupt TO", List.of("{d}/good.snapshot", "{d}/members.json"),
            "{d}/members.json is not a valid ring snapshot"),
        new Case("different clusters", Map.of("other.snapshot", encoded(RING.toBuilder().clusterId("other").build())),
            List.of("ring", "diff", "{d}/good.snapshot", "{d}/other.snapshot"),
            "cannot diff {d}/good.snapshot and {d}/other.snapshot: cannot diff cluster \"default\" against cluster "
                + "\"other\"; a diff compares one cluster"),
        diff("one file only", List.of("{d}/good.snapshot"), "Missing required parameter: 'TO'"),
        new Case("ring without a subcommand", Map.of(), List.of("ring"), "Missing required subcommand"));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("cases")
  void shouldExitTwoNamingTheProblemAndWriteNothing(Case c) throws IOException {
    c.files().forEach((name, content) -> write(dir.resolve(name), content));
    Set<String> before = listing();
    String[] args = c.args().stream().map(this::resolve).toArray(String[]::new);

    Cli.Result result = Cli.run(new byte[0], args);

    assertThat(result.exitCode()).as(result.toString()).isEqualTo(2);
    assertThat(result.stdoutBytes()).as(result.toString()).isEmpty();
    List<String> lines = result.stderr().lines().collect(Collectors.toList());
    assertThat(lines).as(result.toString()).isNotEmpty().hasSizeLessThanOrEqualTo(2);
    assertThat(lines.get(0)).startsWith("ringshift: ").contains(resolve(c.expected()));
    if (lines.size() == 2) {
      assertThat(lines.get(1)).as("only picocli's usage hint may follow").startsWith("Try 'ringshift ");
    }
    assertThat(result.stderr()).doesNotContain("\tat ").doesNotContain("Exception");
    assertThat(listing()).as("files after the failed run").isEqualTo(before);
  }

  @Test
  void shouldLeaveAnExistingOutputFileUntouchedWhenTheBuildFails() throws IOException {
    Path out = Fixtures.write(dir.resolve("ring.snapshot"), "previous snapshot");
    Path members = Fixtures.write(dir.resolve("bad.json"), "[{\"id\": \"a\"}]");

    Cli.Result result = Cli.run("ring", "build", "--members", members.toString(), "--out", out.toString());

    assertThat(result.exitCode()).isEqualTo(2);
    assertThat(Files.readString(out)).isEqualTo("previous snapshot");
  }

  private static Case build(String name, String membersJson, String expected) {
    Map<String, byte[]> files = new LinkedHashMap<>();
    if (membersJson != null) {
      files.put("input.json", membersJson.getBytes(StandardCharsets.UTF_8));
    }
    return new Case(name, files,
        List.of("ring", "build", "--members", "{d}/input.json", "--out", "{d}/out.snapshot"), expected);
  }

  private static Case buildArgs(String name, List<String> buildArgs, String expected) {
    List<String> args = new java.util.ArrayList<>(List.of("ring", "build"));
    args.addAll(buildArgs);
    return new Case(name, Map.of(), args, expected);
  }

  private static Case buildWith(String name, String expected, String... options) {
    List<String> args = new java.util.ArrayList<>(
        List.of("ring", "build", "--members", "{d}/members.json", "--out", "{d}/out.snapshot"));
    args.addAll(List.of(options));
    return new Case(name, Map.of(), args, expected);
  }

  private static Case show(String name, byte[] snapshot, String expected) {
    Map<String, byte[]> files = snapshot == null ? Map.of() : Map.of("input.snapshot", snapshot);
    return new Case(name, files, List.of("ring", "show", "{d}/input.snapshot"), expected);
  }

  private static Case lookup(String name, List<String> options, String expected) {
    List<String> args = new java.util.ArrayList<>(List.of("ring", "lookup"));
    args.addAll(options);
    return new Case(name, Map.of(), args, expected);
  }

  private static Case diff(String name, List<String> files, String expected) {
    List<String> args = new java.util.ArrayList<>(List.of("ring", "diff"));
    args.addAll(files);
    return new Case(name, Map.of(), args, expected);
  }

  private static byte[] encoded() {
    return encoded(RING);
  }

  private static byte[] encoded(RingSnapshot ring) {
    return new RingSnapshotCodec().encode(ring);
  }

  private static byte[] withByte(byte[] bytes, int index, int value) {
    bytes[index] = (byte) value;
    return bytes;
  }

  /** The encoding with one bit of the stated checksum flipped, so only the checksum comparison can catch it. */
  private static byte[] alteredChecksum() {
    byte[] bytes = encoded();
    byte[] checksum = RING.checksum();
    for (int i = 0; i + checksum.length <= bytes.length; i++) {
      if (Arrays.equals(bytes, i, i + checksum.length, checksum, 0, checksum.length)) {
        bytes[i] ^= 1;
        return bytes;
      }
    }
    throw new AssertionError("checksum not found in the encoding");
  }

  private String resolve(String text) {
    return text.replace("{d}", dir.toString());
  }

  private Set<String> listing() throws IOException {
    try (Stream<Path> files = Files.walk(dir)) {
      return files.map(p -> dir.relativize(p).toString()).collect(Collectors.toCollection(TreeSet::new));
    }
  }

  private static void write(Path path, byte[] content) {
    try {
      Files.createDirectories(path.getParent());
      Files.write(path, content);
    } catch (IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }
}
