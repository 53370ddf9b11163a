package io.ringshift.cli.internal.simulate;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.ringshift.cli.Ringshift;
import io.ringshift.simulator.SimulationResult;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * {@code ringshift simulate} end to end on a small scenario (12 nodes, 20,000 keys): the JSON has the
 * documented fields, the text has every section, the HTML report is self-contained, bad options exit 2 and
 * write nothing. One run is shared by the tests that only read its output.
 */
class SimulateCommandTest {
  private static final String[] SMALL = {"simulate", "--nodes", "12", "--keys", "20000", "--quiet"};
  private static final ObjectMapper JSON = new ObjectMapper();

  @TempDir static Path shared;
  private static Run jsonRun;
  private static JsonNode json;
  private static Path report;

  record Run(int exitCode, String out, String err) {}

  @BeforeAll
  static void runOnce() throws IOException {
    report = shared.resolve("report.html");
    jsonRun = run(with(SMALL, "--json", "--report", report.toString()));
    json = JSON.readTree(jsonRun.out());
  }

  static Run run(String... args) {
    CommandLine cli = Ringshift.newCommandLine();
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    cli.setOut(new PrintWriter(out, true));
    cli.setErr(new PrintWriter(err, true));
    int code = cli.execute(args);
    return new Run(code, out.toString(), err.toString());
  }

  static String[] with(String[] base, String... more) {
    List<String> all = new ArrayList<>(List.of(base));
    all.addAll(List.of(more));
    return all.toArray(String[]::new);
  }

  /** The small scenario with one option replaced (picocli rejects an option given twice). */
  static String[] smallWith(String option, String value) {
    List<String> all = new ArrayList<>(List.of(SMALL));
    int i = all.indexOf(option);
    if (i >= 0) {
      all.set(i + 1, value);
    } else {
      all.addAll(List.of(option, value));
    }
    return all.toArray(String[]::new);
  }

  @Test
  void shouldPrintJsonWithTheDocumentedFields() {
    assertThat(jsonRun.exitCode()).as(jsonRun.err()).isZero();
    assertThat(json.path("format").asInt()).isEqualTo(SimulationResult.FORMAT);
    assertThat(json.path("parameters").path("nodes").asInt()).isEqualTo(12);
    assertThat(json.path("parameters").path("keys").asInt()).isEqualTo(20_000);
    assertThat(json.path("workload").path("keys").asInt()).isEqualTo(20_000);
    assertThat(json.path("workload").path("zipfExponent").asDouble()).isEqualTo(1.0);

    JsonNode changes = json.path("changes").path("rows");
    assertThat(names(changes, "name")).containsExactly("join", "drain", "failure", "weight");
    for (JsonNode c : changes) {
      assertThat(c.path("moved").fieldNames()).toIterable().contains("replicaCopies", "keysFraction", "bytes",
          "bytesFraction", "qpsFraction", "primaryKeysFraction", "idealFraction", "keysOverIdeal", "bytesOverIdeal");
      assertThat(c.path("diff").path("agrees").asBoolean()).as("diff agrees for %s", c.path("name")).isTrue();
      assertThat(c.path("sources").path("keysWithoutSurvivor").asLong()).isZero();
    }
    assertThat(changes.get(2).path("sources").path("keysDegradedFraction").asDouble()).isPositive();
    assertThat(json.path("changes").path("takeaway").asText()).isNotBlank();

    assertThat(json.path("balance").path("rows")).hasSize(7);
    assertThat(json.path("balance").path("rows").get(0).fieldNames()).toIterable()
        .contains("level", "measure", "maxOverMean", "minOverMean", "cv", "randomFloorCv", "perNodeLoad");
    assertThat(json.path("weights").path("rows").get(0).fieldNames()).toIterable()
        .contains("ring", "weight", "expectedShare", "primaryShare", "replicaShare", "primaryOverExpected");

    JsonNode sweep = json.path("vnodeSweep").path("rows");
    assertThat(names(sweep, "vnodes")).containsExactly("1", "2", "4", "8", "16", "32", "64", "128", "256", "512",
        "1024");
    assertThat(sweep.get(0).fieldNames()).toIterable().contains("tokens", "buildMillis", "footprintBytes",
        "rawTokenTableBytes", "wireSnapshotBytesEstimate", "primaryMaxOverMean", "primaryCv", "replicaMaxOverMean",
        "replicaCv", "joinMovedOverIdeal", "lookupNanos");
    assertThat(sweep.get(10).path("rawTokenTableBytes").asLong()).isEqualTo(12L * 12 * 1024);

    JsonNode schemes = json.path("schemes").path("rows");
    assertThat(names(schemes, "scheme")).containsExactly("modulo", "ring", "balanced/8",
        "balanced/" + json.path("parameters").path("vnodes").asInt(), "rendezvous", "jump", "partitions");
    JsonNode hashed = schemes.get(1);
    JsonNode balanced = schemes.get(3);
    assertThat(balanced.path("replicaKeysMaxOverMean").asDouble())
        .as("the balanced ring at the same V is at least as even as the hashed one")
        .isLessThanOrEqualTo(hashed.path("replicaKeysMaxOverMean").asDouble());
    assertThat(balanced.path("join").path("keysOverIdeal").asDouble()).isLessThan(1.3);
    assertThat(schemes.get(0).fieldNames()).toIterable().contains("zoneAware", "join", "removal",
        "replicaKeysMaxOverMean", "replicaKeysCv", "lookupNanos", "clientState", "clientStateBytes");
    assertThat(json.path("runtime").path("totalMillis").asLong()).isPositive();
  }

  @Test
  void shouldReportMovementCloseToIdealForTheRingAndFarFromItForModulo() {
    JsonNode join = json.path("changes").path("rows").get(0).path("moved");
    assertThat(join.path("keysOverIdeal").asDouble()).isBetween(0.75, 1.25);
    JsonNode modulo = json.path("schemes").path("rows").get(0).path("join");
    assertThat(modulo.path("primaryKeysFraction").asDouble()).isGreaterThan(0.85);
  }

  @Test
  void shouldWriteASelfContainedHtmlReport() throws IOException {
    String html = Files.readString(report);
    assertThat(html).startsWith("<!DOCTYPE html>").contains("<svg").endsWith("</html>\n");
    assertThat(html).doesNotContain("http://", "https://", "<script", "<link", "src=", "@import", "url(");
    for (String tag : List.of("svg", "section", "figure", "table", "details", "div", "p", "text")) {
      assertThat(count(html, "<" + tag + "[ >]")).as("<%s> opened and closed", tag)
          .isEqualTo(count(html, "</" + tag + ">"));
    }
    assertThat(count(html, "<svg[ >]")).isGreaterThanOrEqualTo(10);
    assertThat(html).contains("Membership changes on the ring", "Placement schemes on the same keys");
    try (var files = Files.list(shared)) {
      assertThat(files.map(p -> p.getFileName().toString())).as("no temporary file left").containsOnly("report.html");
    }
  }

  @Test
  void shouldPrintEverySectionAsATableWithATakeaway() {
    Run text = run(SMALL);
    assertThat(text.exitCode()).as(text.err()).isZero();
    assertThat(text.out()).contains("1. Membership changes on the ring", "2. Balance of the base ring",
        "3. Realised shares of weights 1:2:4", "4. Virtual nodes per node (V)",
        "5. Placement schemes on the same keys");
    assertThat(count(text.out(), "\n  => ")).isEqualTo(5);
    assertThat(text.out()).doesNotContain("MISMATCH");
    assertThat(text.err()).as("--quiet").isEmpty();
  }

  @Test
  void shouldBeDeterministicForASeedApartFromTimings() throws IOException {
    JsonNode again = JSON.readTree(run(with(SMALL, "--json")).out());
    assertThat(withoutTimings(again)).isEqualTo(withoutTimings(json));
    JsonNode otherSeed = JSON.readTree(run(with(SMALL, "--json", "--seed", "7")).out());
    assertThat(otherSeed.path("workload").path("exampleKey")).isNotEqualTo(json.path("workload").path("exampleKey"));
  }

  @Test
  void shouldRejectBadOptionsWithOneLineExitCode2AndNoFile(@TempDir Path dir) throws IOException {
    Path html = dir.resolve("r.html");
    String[][] bad = {
      {"--nodes", "0"}, {"--nodes", "1"}, {"--keys", "-1"}, {"--keys", "0"}, {"--zones", "0"}, {"--zones", "13"},
      {"--vnodes", "0"}, {"--replicas", "12"}, {"--replicas", "0"}, {"--partitions", "0"}, {"--zipf", "-1"},
      {"--value-sigma", "9"}, {"--value-median", "0"}
    };
    for (String[] option : bad) {
      Run r = run(with(smallWith(option[0], option[1]), "--report", html.toString()));
      assertThat(r.exitCode()).as("%s %s", option[0], option[1]).isEqualTo(Ringshift.EXIT_BAD_INPUT);
      assertThat(r.err().lines()).as("%s %s", option[0], option[1]).hasSize(1)
          .allMatch(line -> line.contains(option[0] + " was " + option[1]));
      assertThat(r.out()).isEmpty();
    }
    assertThat(run(smallWith("--nodes", "abc")).exitCode()).isEqualTo(Ringshift.EXIT_BAD_INPUT);
    try (var files = Files.list(dir)) {
      assertThat(files).as("nothing written").isEmpty();
    }
  }

  @Test
  void shouldFitDefaultZonesAndReplicasToASmallFleetButTakeExplicitValuesAsGiven() throws IOException {
    Run small = run("simulate", "--nodes", "2", "--keys", "1000", "--quiet", "--json");
    assertThat(small.exitCode()).as(small.err()).isZero();
    JsonNode p = JSON.readTree(small.out()).path("parameters");
    assertThat(p.path("zones").asInt()).isEqualTo(2);
    assertThat(p.path("replicas").asInt()).isEqualTo(1);
    Run explicit = run("simulate", "--nodes", "2", "--zones", "3", "--keys", "1000", "--quiet");
    assertThat(explicit.exitCode()).isEqualTo(Ringshift.EXIT_BAD_INPUT);
    assertThat(explicit.err()).contains("--zones was 3");
  }

  @Test
  void shouldRejectMoreTokensThanTheRunCanHold() {
    Run r = run("simulate", "--nodes", "1000", "--vnodes", "4096", "--quiet");
    assertThat(r.exitCode()).isEqualTo(Ringshift.EXIT_BAD_INPUT);
    assertThat(r.err().lines()).hasSize(1).allMatch(line -> line.contains("--vnodes was 4096")
        && line.contains("4,096,000 tokens"));
  }

  @Test
  void shouldRejectAnUnwritableReportPathBeforeRunning(@TempDir Path dir) throws IOException {
    for (Path bad : List.of(dir.resolve("missing").resolve("r.html"), dir)) {
      Run r = run(with(SMALL, "--report", bad.toString()));
      assertThat(r.exitCode()).as(bad.toString()).isEqualTo(Ringshift.EXIT_BAD_INPUT);
      assertThat(r.err().lines()).hasSize(1).allMatch(line -> line.contains("--report was " + bad));
      assertThat(r.out()).as("fails before the run").isEmpty();
    }
    try (var files = Files.list(dir)) {
      assertThat(files).as("nothing written").isEmpty();
    }
  }

  private static JsonNode withoutTimings(JsonNode root) {
    ObjectNode copy = root.deepCopy();
    copy.remove("runtime");
    for (JsonNode row : copy.path("vnodeSweep").path("rows")) {
      ((ObjectNode) row).remove(List.of("buildMillis", "lookupNanos"));
    }
    for (JsonNode row : copy.path("schemes").path("rows")) {
      ((ObjectNode) row).remove("lookupNanos");
    }
    // Takeaways quote timings too.
    ((ObjectNode) copy.path("vnodeSweep")).remove("takeaway");
    ((ObjectNode) copy.path("schemes")).remove("takeaway");
    return copy;
  }

  private static List<String> names(JsonNode array, String field) {
    List<String> names = new ArrayList<>();
    array.forEach(n -> names.add(n.path(field).asText()));
    return names;
  }

  private static int count(String text, String regex) {
    Matcher m = Pattern.compile(regex).matcher(text);
    int n = 0;
    while (m.find()) {
      n++;
    }
    return n;
  }
}
