package io.ringshift.cli.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.ringshift.ring.Member;
import io.ringshift.ring.MemberState;
import io.ringshift.ring.RingSnapshot;
import io.ringshift.protocol.RingSnapshotCodec;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class RingBuildCommandTest {
  @TempDir Path dir;

  @Test
  void shouldWriteASnapshotOfExactlyTheRingTheLibraryBuilds() throws IOException {
    Path members = Fixtures.write(dir.resolve("members.json"), Fixtures.membersJson(6, 3));
    Path out = dir.resolve("ring.snapshot");

    Cli.Result result = Cli.run("ring", "build", "--members", members.toString(), "--out", out.toString());

    RingSnapshot expected = Fixtures.ring(6, 3).build();
    assertThat(result.exitCode()).as(result.toString()).isZero();
    assertThat(result.stdout()).isEqualTo("wrote " + out + ": cluster default, epoch 0, 6 members in 3 zones, "
        + "1536 tokens, 3 replicas, " + Files.size(out) + " bytes, checksum " + expected.checksumHex() + "\n");
    assertThat(result.stderr()).isEmpty();
    assertThat(Files.readAllBytes(out)).isEqualTo(new RingSnapshotCodec().encode(expected));
  }

  @Test
  void shouldApplyOptionsAndOptionalMemberFields() throws IOException {
    Path members = Fixtures.write(dir.resolve("members.json"), "[\n"
        + "  {\"id\": \"node-001\", \"zone\": \"az-1\", \"weight\": 2},\n"
        + "  {\"id\": \"node-002\", \"zone\": \"az-2\", \"weight\": 0.5, \"state\": \"FILLING\"},\n"
        + "  {\"id\": \"node-003\", \"zone\": \"az-3\", \"state\": \"ACTIVE\", \"weight\": null}\n"
        + "]");
    Path out = dir.resolve("ring.snapshot");

    Cli.Result result = Cli.run("ring", "build", "--members", members.toString(), "--vnodes", "64",
        "--replicas", "2", "--epoch", "17", "--cluster", "eu-west", "--out", out.toString());

    assertThat(result.exitCode()).as(result.toString()).isZero();
    RingSnapshot ring = new RingSnapshotCodec().decode(Files.readAllBytes(out));
    assertThat(ring.clusterId()).isEqualTo("eu-west");
    assertThat(ring.epoch()).isEqualTo(17);
    assertThat(ring.vnodes()).isEqualTo(64);
    assertThat(ring.replicas()).isEqualTo(2);
    assertThat(ring.members()).containsExactly(
        new Member("node-001", "az-1", 2.0, MemberState.ACTIVE),
        new Member("node-002", "az-2", 0.5, MemberState.FILLING),
        new Member("node-003", "az-3", 1.0, MemberState.ACTIVE));
    assertThat(ring.tokenCount()).isEqualTo(128 + 32 + 64);
  }

  @Test
  void shouldReplaceAnExistingSnapshotAndLeaveNoTemporaryFile() throws IOException {
    Path members = Fixtures.write(dir.resolve("members.json"), Fixtures.membersJson(4, 2));
    Path out = Fixtures.write(dir.resolve("ring.snapshot"), "old content");

    Cli.Result result = Cli.run("ring", "build", "--members", members.toString(), "--out", out.toString());

    assertThat(result.exitCode()).as(result.toString()).isZero();
    assertThat(new RingSnapshotCodec().decode(Files.readAllBytes(out)).memberCount()).isEqualTo(4);
    try (Stream<Path> files = Files.list(dir)) {
      assertThat(files.map(p -> p.getFileName().toString())).containsExactlyInAnyOrder("members.json",
          "ring.snapshot");
    }
  }

  @Test
  void shouldBuildButWarnWhenZonesAreShort() throws IOException {
    Path members = Fixtures.write(dir.resolve("members.json"), Fixtures.membersJson(4, 2));
    Path out = dir.resolve("ring.snapshot");

    Cli.Result result = Cli.run("ring", "build", "--members", members.toString(), "--out", out.toString());

    assertThat(result.exitCode()).as(result.toString()).isZero();
    assertThat(result.stderr()).isEqualTo("ringshift: warning: under-replicated: 3 replicas requested but only 2 "
        + "zones [az-1, az-2] (1024 ranges, 100.0% of the keyspace)\n");
    assertThat(out).exists();
  }
}
