package io.ringshift.cli.internal.control;

import static org.assertj.core.api.Assertions.assertThat;

import io.ringshift.protocol.RecordSerdes;
import io.ringshift.schemas.avro.HotKeyShare;
import io.ringshift.schemas.avro.HotKeysReport;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The hot-key lines of {@code ringshift status}: recent reports of the cluster, weighed by their lookups. */
class HotKeysSectionTest {
  private static final long NOW = 1_800_000_000_000L;

  @Test
  void shouldMergeTheRecentReportsOfTheClusterWeighedByTheirLookups() {
    List<byte[]> values = List.of(
        report("c1", "web-1", 100_000, NOW - 5_000, share("user:0", 0.20, 0.01)),
        report("c1", "web-2", 300_000, NOW - 60_000, share("user:0", 0.05, 0.0), share("user:9", 0.10, 0.002)),
        report("c1", "gone", 900_000, NOW - HotKeysSection.RECENT.toMillis() - 1, share("old", 0.9, 0)),
        report("c2", "other", 900_000, NOW, share("elsewhere", 0.9, 0)),
        "not a report".getBytes(StandardCharsets.UTF_8));
    assertThat(HotKeysSection.lines("c1", values, NOW)).containsExactly(
        "hot keys   share of the lookups of 2 clients (reports of the last 10 min; at most this much overcount)",
        "             8.75%  (0.25%)  user:0",
        "             7.50%  (0.15%)  user:9");
  }

  @Test
  void shouldGiveTheMergedHotKeysForStatusJson() {
    List<byte[]> values = List.of(
        report("c1", "web-1", 100_000, NOW - 5_000, share("user:0", 0.20, 0.01)),
        report("c1", "web-2", 300_000, NOW - 60_000, share("user:0", 0.05, 0.0), share("user:9", 0.10, 0.002)));
    HotKeysSection.HotKeysJson json = HotKeysSection.json("c1", values, NOW);
    assertThat(json.clients()).isEqualTo(2);
    assertThat(json.windowMinutes()).isEqualTo(10);
    assertThat(json.keys()).extracting(HotKeysSection.HotKeyJson::key).containsExactly("user:0", "user:9");
    assertThat(json.keys().get(0).share()).isCloseTo(0.0875, org.assertj.core.data.Offset.offset(1e-9));
    assertThat(json.keys().get(0).maxOvercount()).isCloseTo(0.0025, org.assertj.core.data.Offset.offset(1e-9));
    assertThat(HotKeysSection.json("c1", List.of(), NOW)).isEqualTo(HotKeysSection.HotKeysJson.NONE);
    assertThat(HotKeysSection.json("c1", List.of(report("c1", "quiet", 10, NOW)), NOW).clients())
        .as("a client that reported no keys still counts").isEqualTo(1);
  }

  @Test
  void shouldShowNothingWithoutRecentReports() {
    assertThat(HotKeysSection.lines("c1", List.of(), NOW)).isEmpty();
    assertThat(HotKeysSection.lines("c1", List.of(report("c1", "idle", 0, NOW)), NOW)).isEmpty();
  }

  private static HotKeyShare share(String key, double share, double overcount) {
    return new HotKeyShare(ByteBuffer.wrap(key.getBytes(StandardCharsets.UTF_8)), share, overcount);
  }

  private static byte[] report(String cluster, String client, long lookups, long at, HotKeyShare... keys) {
    return RecordSerdes.hotKeysReport().serialize(HotKeysReport.newBuilder().setClusterId(cluster)
        .setClientId(client).setLookups(lookups).setKeys(List.of(keys)).setTimestampMillis(at).build());
  }
}
