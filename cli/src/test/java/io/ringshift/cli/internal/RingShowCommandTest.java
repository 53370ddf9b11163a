package io.ringshift.cli.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.ringshift.ring.Member;
import io.ringshift.ring.MemberState;
import io.ringshift.ring.RingSnapshot;
import io.ringshift.client.RingClient;
import io.ringshift.protocol.PublishedSnapshot;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.Arrays;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class RingShowCommandTest {
  @TempDir Path dir;

  @Test
  void shouldReadTheRingFileNodesAndClientsPersist() throws Exception {
    RingSnapshot ring = Fixtures.ring(6, 3).clusterId("persisted").epoch(4).build();
    Path file = dir.resolve("ring-snapshot.bin");
    RingClient.writePersistFile(file, PublishedSnapshot.unsigned(ring, null, List.of()),
        Instant.parse("2026-12-02T01:00:00Z"));

    Cli.Result show = Cli.run("ring", "show", file.toString());
    assertThat(show.exitCode()).as(show.toString()).isZero();
    JsonNode json = new ObjectMapper().readTree(show.stdout());
    assertThat(json.get("cluster").asText()).isEqualTo("persisted");
    assertThat(json.get("epoch").asLong()).isEqualTo(4);
    assertThat(json.get("checksum").asText()).isEqualTo(ring.checksumHex());

    Cli.Result lookup = Cli.run("user:42\n".getBytes(StandardCharsets.UTF_8), "ring", "lookup", "--snapshot",
        file.toString());
    assertThat(lookup.exitCode()).as(lookup.toString()).isZero();
    assertThat(lookup.stdout()).startsWith("user:42\t" + String.join(",", ring.replicasOf("user:42").ids()));
  }

  @Test
  void shouldNameTheFileWhenAPersistedRingFileIsBroken() throws Exception {
    RingSnapshot ring = Fixtures.ring(6, 3).build();
    Path file = dir.resolve("ring-snapshot.bin");
    RingClient.writePersistFile(file, PublishedSnapshot.unsigned(ring, null, List.of()), Instant.EPOCH);
    byte[] bytes = Files.readAllBytes(file);
    Files.write(file, Arrays.copyOf(bytes, bytes.length - 10));

    Cli.Result show = Cli.run("ring", "show", file.toString());
    assertThat(show.exitCode()).isEqualTo(2);
    assertThat(show.stderr()).startsWith("ringshift: cold-start file " + file);
  }

  @Test
  void shouldPrintParametersMembersAndRealisedShares() throws Exception {
    RingSnapshot ring = Fixtures.ring(5, 3)
        .clusterId("c1")
        .epoch(9)
        .addMember(new Member("node-heavy", "az-2", 2.0, MemberState.FILLING))
        .build();
    Path file = Fixtures.snapshot(dir.resolve("ring.snapshot"), ring);

    Cli.Result result = Cli.run("ring", "show", file.toString());

    assertThat(result.exitCode()).as(result.toString()).isZero();
    JsonNode json = new ObjectMapper().readTree(result.stdout());
    assertThat(fieldNames(json)).containsExactly("cluster", "epoch", "checksum", "hash", "policy", "vnodes",
        "replicas", "memberCount", "zones", "tokenCount", "snapshotBytes", "members", "underReplicated");
    assertThat(json.get("cluster").asText()).isEqualTo("c1");
    assertThat(json.get("epoch").asLong()).isEqualTo(9);
    assertThat(json.get("checksum").asText()).isEqualTo(ring.checksumHex());
    assertThat(json.get("hash").asText()).isEqualTo("xxh3-64/seed=0/utf-8");
    assertThat(json.get("policy").asText()).isEqualTo(RingSnapshot.POLICY_ID);
    assertThat(json.get("vnodes").asInt()).isEqualTo(256);
    assertThat(json.get("replicas").asInt()).isEqualTo(3);
    assertThat(json.get("tokenCount").asInt()).isEqualTo(7 * 256);
    assertThat(json.get("zones").toString()).isEqualTo("[\"az-1\",\"az-2\",\"az-3\"]");
    assertThat(json.get("underReplicated").size()).isZero();
    assertThat(result.stdout()).endsWith("\"underReplicated\": []\n}\n");

    JsonNode members = json.get("members");
    assertThat(members.size()).isEqualTo(6);
    JsonNode heavy = members.get(5);
    assertThat(heavy.get("id").asText()).isEqualTo("node-heavy");
    assertThat(heavy.get("state").asText()).isEqualTo("FILLING");
    assertThat(heavy.get("weight").asDouble()).isEqualTo(2.0);
    assertThat(heavy.get("tokens").asInt()).isEqualTo(512);
    assertThat(heavy.get("weightShare").asDouble()).isCloseTo(2.0 / 7, within(1e-12));
    double keyspace = 0;
    double replica = 0;
    for (JsonNode m : members) {
      keyspace += m.get("keyspaceShare").asDouble();
      replica += m.get("replicaShare").asDouble();
    }
    assertThat(keyspace).as("primary shares cover the keyspace once").isCloseTo(1.0, within(1e-9));
    assertThat(replica).as("replica shares cover it R times").isCloseTo(3.0, within(1e-9));
    assertThat(heavy.get("keyspaceShare").asDouble()).as("share near weight share at V=256")
        .isCloseTo(2.0 / 7, within(0.05));
  }

  @Test
  void shouldReportUnderReplicatedRangesWithTheReason() throws Exception {
    Path file = Fixtures.snapshot(dir.resolve("ring.snapshot"), Fixtures.ring(2, 2).vnodes(8).build());

    Cli.Result result = Cli.run("ring", "show", file.toString());

    assertThat(result.exitCode()).as(result.toString()).isZero();
    JsonNode under = new ObjectMapper().readTree(result.stdout()).get("underReplicated");
    assertThat(under.size()).isEqualTo(1);
    assertThat(under.get(0).get("reason").asText()).isEqualTo("FEWER_NODES_THAN_REPLICAS");
    assertThat(under.get(0).get("ranges").asInt()).isEqualTo(16);
    assertThat(under.get(0).get("keyspaceFraction").asDouble()).isEqualTo(1.0);
    assertThat(under.get(0).get("detail").asText()).isEqualTo("3 replicas requested but only 2 nodes");
  }

  @Test
  void shouldEscapeNonAsciiSoOutputIsTheSameInAnyLocale() {
    Path file = Fixtures.snapshot(dir.resolve("ring.snapshot"),
        RingSnapshot.builder().addMember("nœud-1", "zone-é").build());

    Cli.Result result = Cli.run("ring", "show", file.toString());

    assertThat(result.exitCode()).as(result.toString()).isZero();
    assertThat(result.stdout()).contains("\"id\": \"n\\u0153ud-1\"").matches("\\p{ASCII}*");
  }

  @Test
  void shouldPrintTheSnapshotJsonByteForByte() {
    RingSnapshot ring = Fixtures.ring(5, 3).clusterId("c1").epoch(9).vnodes(16)
        .addMember(new Member("node-heavy", "az-2", 2.0, MemberState.FILLING))
        .addMember(new Member("n\u0153ud-light", "zone-\u00e9", 0.5, MemberState.ACTIVE))
        .build();
    Path file = Fixtures.snapshot(dir.resolve("ring.snapshot"), ring);

    Cli.Result result = Cli.run("ring", "show", file.toString());

    assertThat(result.exitCode()).as(result.toString()).isZero();
    Golden.assertMatches("ring-show.json", result.stdout());
  }

  @Test
  void shouldPrintTheSnapshotJsonOfAnUnderReplicatedRingByteForByte() {
    Path file = Fixtures.snapshot(dir.resolve("ring.snapshot"), Fixtures.ring(2, 2).vnodes(4).build());

    Cli.Result result = Cli.run("ring", "show", file.toString());

    assertThat(result.exitCode()).as(result.toString()).isZero();
    Golden.assertMatches("ring-show-under-replicated.json", result.stdout());
  }

  private static List<String> fieldNames(JsonNode node) {
    List<String> names = new ArrayList<>();
    node.fieldNames().forEachRemaining(names::add);
    return names;
  }
}
