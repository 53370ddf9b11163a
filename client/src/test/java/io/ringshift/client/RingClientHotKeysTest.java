package io.ringshift.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.ringshift.client.internal.SnapshotFile;
import io.ringshift.protocol.PublishedSnapshot;
import io.ringshift.protocol.SigningKey;
import io.ringshift.protocol.TrustedKeys;
import io.ringshift.ring.Member;
import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Hot keys and bounded-load reads on a client routing by a persist file (no Kafka): the sketch names the hottest
 * keys of a Zipf stream in order, the gauges report their shares, and bounded-load reads spread a hot key over its
 * replicas where first-replica reads pile it on its primary.
 */
class RingClientHotKeysTest {
  private static final SigningKey PUBLISHER = SigningKey.generate();
  private static final long SEED = Long.getLong("ringshift.seed", System.nanoTime());

  @TempDir Path dir;
  private final MeterRegistry registry = new SimpleMeterRegistry();
  private final List<RingClient> clients = new ArrayList<>();
  private Path file;
  private String nowhere;

  @BeforeEach
  void setUp() throws IOException {
    System.out.println("RingClientHotKeysTest: seed " + SEED + " (replay with -Dringshift.seed=" + SEED + ")");
    file = dir.resolve("snapshot.bin");
    PublishedSnapshot snapshot = TestSnapshots.chain(PUBLISHER, 6).get(5);
    SnapshotFile.write(file, TestSnapshots.encode(snapshot), 1_700_000_000_000L);
    try (ServerSocket socket = new ServerSocket(0)) {
      nowhere = "127.0.0.1:" + socket.getLocalPort();
    }
  }

  @AfterEach
  void close() {
    clients.forEach(RingClient::close);
  }

  private RingClient start(UnaryOperator<RingClientConfig.Builder> options) {
    RingClient client = new RingClient(options.apply(RingClientConfig.builder()
        .bootstrapServers(nowhere).clusterId(TestSnapshots.CLUSTER)
        .trustedKeys(TrustedKeys.of(PUBLISHER.publicKey())).persistFile(file).meterRegistry(registry)).build());
    clients.add(client);
    return client.start();
  }

  /** Key ranks drawn from Zipf s = 1 over {@code keys} keys. */
  private static int[] zipf(Random random, int keys, int draws) {
    double[] cumulative = new double[keys];
    double sum = 0;
    for (int k = 0; k < keys; k++) {
      sum += 1.0 / (k + 1);
      cumulative[k] = sum;
    }
    int[] out = new int[draws];
    for (int i = 0; i < draws; i++) {
      double u = random.nextDouble() * sum;
      int lo = 0;
      int hi = keys - 1;
      while (lo < hi) {
        int mid = (lo + hi) >>> 1;
        if (cumulative[mid] < u) {
          lo = mid + 1;
        } else {
          hi = mid;
        }
      }
      out[i] = lo;
    }
    return out;
  }

  @Test
  void shouldNameTheHottestKeysOfAZipfStreamInOrderAndReportTheirShares() {
    RingClient client = start(b -> b.trackHotKeys(64));
    int draws = 400_000;
    int[] ranks = zipf(new Random(SEED), 10_000, draws);
    for (int rank : ranks) {
      client.placement("user:" + rank);
    }
    List<HotKey> top = client.hotKeys(5);
    assertThat(top).extracting(HotKey::keyText).containsExactly("user:0", "user:1", "user:2", "user:3", "user:4");
    // Zipf s = 1 over 10,000 keys: the hottest takes 1 / H(10000) = 10.2% of the lookups.
    assertThat(top.get(0).share()).isBetween(0.09, 0.115);
    assertThat(top.get(0).share() - top.get(0).maxOvercount()).isLessThanOrEqualTo(top.get(0).share());
    double gauge = registry.get("ringshift.client.hot.key.share").tag("rank", "1").gauge().value();
    assertThat(gauge).isBetween(0.09, 0.115);
    assertThat(registry.get("ringshift.client.hot.key.share").gauges()).hasSize(5);
  }

  @Test
  void shouldRefuseHotKeysWhenTrackingIsOffAndBadSettings() {
    RingClient client = start(b -> b);
    assertThatThrownBy(() -> client.hotKeys(5)).isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("trackHotKeys(64)");
    assertThat(registry.find("ringshift.client.hot.key.share").gauges()).isEmpty();
    assertThatThrownBy(() -> start(b -> b.boundedLoadReads(1.0))).hasMessage("readBalanceFactor was 1.0; it must be "
        + "0 (reads from the first read-eligible replica) or a number > 1 (bounded-load reads, for example 1.25)");
    assertThatThrownBy(() -> start(b -> b.trackHotKeys(-1))).hasMessage("hotKeyCapacity was -1; it must be 0 (off) "
        + "to 4096 counters");
  }

  @Test
  void shouldSpreadAHotKeysReadsOverItsReplicasWithBoundedLoad() {
    Map<String, Integer> firstReplica = reads(start(b -> b), "first replica");
    Map<String, Integer> bounded = reads(start(b -> b.boundedLoadReads(1.25)), "bounded load");
    int total = firstReplica.values().stream().mapToInt(Integer::intValue).sum();
    double mean = total / 9.0;
    int maxFirst = firstReplica.values().stream().mapToInt(Integer::intValue).max().orElseThrow();
    int maxBounded = bounded.values().stream().mapToInt(Integer::intValue).max().orElseThrow();
    assertThat(maxFirst / mean).as("the hot key's primary, first replica reads").isGreaterThan(2.5);
    // The hot key is 30% of the reads: over 3 of 9 nodes it needs 0.9x the mean per replica on top of the rest.
    assertThat(maxBounded / mean).as("bounded load").isLessThan(1.6);
  }

  /** Reads 90,000 keys, 30% of them one hot key, and counts the reads each node got. */
  private Map<String, Integer> reads(RingClient client, String what) {
    Random random = new Random(SEED);
    Map<String, Integer> counts = new HashMap<>();
    for (int i = 0; i < 90_000; i++) {
      String key = random.nextDouble() < 0.3 ? "hot" : "user:" + random.nextInt(1_000_000);
      Member m = client.readReplica(key);
      counts.merge(m.id(), 1, Integer::sum);
    }
    System.out.println("RingClientHotKeysTest " + what + ": reads per node " + new java.util.TreeMap<>(counts));
    return counts;
  }
}
