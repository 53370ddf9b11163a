package io.ringshift.cli.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.ringshift.ring.NodeMovement;
import io.ringshift.ring.RingDiff;
import io.ringshift.ring.RingSnapshot;
import java.nio.file.Path;
import java.util.Locale;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class RingDiffCommandTest {
  @TempDir Path dir;

  private final RingSnapshot before = Fixtures.ring(6, 3).build();
  private final RingSnapshot after = Fixtures.ring(6, 3).epoch(1).addMember("node-007", "az-1").build();

  @Test
  void shouldSummariseAJoinAgainstTheIdeal() {
    Cli.Result result = Cli.run("ring", "diff", from().toString(), to().toString());

    RingDiff diff = before.diffTo(after);
    assertThat(result.exitCode()).as(result.toString()).isZero();
    String[] lines = result.stdout().split("\n");
    assertThat(lines[0]).isEqualTo("cluster default: epoch 0 -> 1, 6 -> 7 members, 3 -> 3 replicas");
    assertThat(lines[1]).isEqualTo("  from checksum " + before.checksumHex());
    assertThat(lines[2]).isEqualTo("  to checksum   " + after.checksumHex());
    assertThat(lines[3]).isEqualTo("changed ranges      " + diff.changes().size());
    assertThat(lines[4]).startsWith("keyspace changed    " + percent(diff.changedFraction()));
    assertThat(lines[5]).isEqualTo(String.format(Locale.ROOT, "replica data moved  %s  ideal %s  ratio %.3f",
        percent(diff.movedReplicaFraction()), percent(diff.idealMovedFraction()),
        diff.movedReplicaFraction() / diff.idealMovedFraction()));
    assertThat(lines[6]).isEqualTo("primaries moved     " + percent(diff.primaryMovedFraction()));
    assertThat(lines[7]).startsWith("per node (percent of the keyspace; ideal = ");
    assertThat(lines[8].trim().split("  +")).containsExactly(
        "node", "gained", "ideal gain", "lost", "ideal loss", "primary gained", "primary lost");
    assertThat(lines).hasSize(9 + diff.perNode().size());
    for (int i = 9; i < lines.length; i++) {
      String[] columns = lines[i].trim().split(" +");
      NodeMovement m = diff.perNode().get(columns[0]);
      assertThat(columns).as(lines[i]).containsExactly(m.nodeId(), percent(m.gained()), percent(m.idealGained()),
          percent(m.lost()), percent(m.idealLost()), percent(m.primaryGained()), percent(m.primaryLost()));
    }
    // A join moves keys only to the joining node: it is the only one that gains, and the only one that should.
    assertThat(lines[lines.length - 1]).startsWith("  node-007  ");
    assertThat(diff.perNode().get("node-007").idealGained()).isCloseTo(3 / 7.0, within(1e-12));
    for (int i = 9; i < lines.length - 1; i++) {
      String[] columns = lines[i].trim().split(" +");
      assertThat(columns[1]).as("gained: %s", lines[i]).isEqualTo("0.0000%");
      assertThat(columns[2]).as("ideal gain: %s", lines[i]).isEqualTo("0.0000%");
      assertThat(columns[5]).as("primary gained: %s", lines[i]).isEqualTo("0.0000%");
    }
  }

  @Test
  void shouldPrintTheSameFiguresAsJson() throws Exception {
    Cli.Result result = Cli.run("ring", "diff", "--json", from().toString(), to().toString());

    RingDiff diff = before.diffTo(after);
    assertThat(result.exitCode()).as(result.toString()).isZero();
    JsonNode json = new ObjectMapper().readTree(result.stdout());
    assertThat(json.get("cluster").asText()).isEqualTo("default");
    assertThat(json.get("fromEpoch").asLong()).isZero();
    assertThat(json.get("toEpoch").asLong()).isEqualTo(1);
    assertThat(json.get("fromChecksum").asText()).isEqualTo(before.checksumHex());
    assertThat(json.get("toChecksum").asText()).isEqualTo(after.checksumHex());
    assertThat(json.get("changedRanges").asInt()).isEqualTo(diff.changes().size());
    assertThat(json.get("changedFraction").asDouble()).isEqualTo(diff.changedFraction());
    assertThat(json.get("movedReplicaFraction").asDouble()).isEqualTo(diff.movedReplicaFraction());
    assertThat(json.get("primaryMovedFraction").asDouble()).isEqualTo(diff.primaryMovedFraction());
    assertThat(json.get("idealMovedFraction").asDouble()).isCloseTo(1.0 / 7, within(1e-12));
    assertThat(json.get("ratio").asDouble())
        .isEqualTo(diff.movedReplicaFraction() / diff.idealMovedFraction());
    JsonNode joined = json.get("perNode").get(json.get("perNode").size() - 1);
    assertThat(joined.get("id").asText()).isEqualTo("node-007");
    assertThat(joined.get("gained").asDouble()).isEqualTo(diff.perNode().get("node-007").gained());
    assertThat(joined.get("lost").asDouble()).isZero();
    assertThat(joined.get("primaryGained").asDouble()).isCloseTo(1.0 / 7, within(0.05));
  }

  @Test
  void shouldSayNothingMovesForIdenticalMembership() throws Exception {
    Path same = Fixtures.snapshot(dir.resolve("same.snapshot"), before.toBuilder().epoch(1).build());

    Cli.Result text = Cli.run("ring", "diff", from().toString(), same.toString());
    Cli.Result json = Cli.run("ring", "diff", "--json", from().toString(), same.toString());

    assertThat(text.exitCode()).as(text.toString()).isZero();
    assertThat(text.stdout()).contains("changed ranges      0\n")
        .contains("replica data moved  0.0000%  ideal 0.0000%  ratio n/a (ideal is 0)\n")
        .endsWith("per node: no node gains or loses anything\n");
    assertThat(new ObjectMapper().readTree(json.stdout()).get("ratio").isNull()).isTrue();
  }

  @Test
  void shouldPrintTheDiffJsonByteForByte() {
    Path same = Fixtures.snapshot(dir.resolve("same.snapshot"), before.toBuilder().epoch(1).build());

    Cli.Result join = Cli.run("ring", "diff", "--json", from().toString(), to().toString());
    Cli.Result nothing = Cli.run("ring", "diff", "--json", from().toString(), same.toString());

    assertThat(join.exitCode()).as(join.toString()).isZero();
    Golden.assertMatches("ring-diff.json", join.stdout());
    assertThat(nothing.exitCode()).as(nothing.toString()).isZero();
    Golden.assertMatches("ring-diff-nothing-moves.json", nothing.stdout());
  }

  private Path from() {
    return Fixtures.snapshot(dir.resolve("from.snapshot"), before);
  }

  private Path to() {
    return Fixtures.snapshot(dir.resolve("to.snapshot"), after);
  }

  private static String percent(double fraction) {
    return String.format(Locale.ROOT, "%.4f%%", 100 * fraction);
  }
}
