package io.ringshift.benchmarks;

import io.ringshift.client.RingClient;
import io.ringshift.client.RingClientConfig;
import io.ringshift.ring.RingSnapshot;
import io.ringshift.protocol.PublishedSnapshot;
import io.ringshift.protocol.SigningKey;
import io.ringshift.protocol.TrustedKeys;
import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * One placement lookup of a 16-byte key through {@link RingClient#placement(byte[])} against the ring's own
 * {@link RingSnapshot#replicasOf(byte[])}, in one run, at the reference size (120 nodes x 256 tokens, R = 3):
 * what the client's volatile read and per-range {@code Placement} table cost on top of the ring.
 *
 * <p>Keys cycle through 4,096 random keys as in {@link LookupBenchmark}. The client routes from a signed
 * snapshot in its persist file (cold start) with its bootstrap servers on a closed port; its Kafka thread gives
 * up after one failed metadata call and waits an hour before retrying, so it stays idle during the run.
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(1)
@State(Scope.Thread)
public class ClientLookupBenchmark {
  @Param({"ringClient", "replicasOf"})
  public String impl;

  private byte[][] keys;
  private int next;
  private RingSnapshot ring;
  private RingClient client;
  private Path dir;
  private LookupBenchmark.Lookup lookup;

  @Setup(Level.Trial)
  public void setUp() throws IOException, InterruptedException {
    SplittableRandom random = new SplittableRandom(42);
    keys = new byte[LookupBenchmark.KEY_COUNT][];
    for (int i = 0; i < keys.length; i++) {
      keys[i] = new byte[16];
      random.nextBytes(keys[i]);
    }
    ring = Rings.referenceBuilder(LookupBenchmark.NODES, LookupBenchmark.VNODES).epoch(1).build();
    SigningKey key = SigningKey.generate();
    dir = Files.createTempDirectory("ringshift-client-bench");
    Path file = dir.resolve("snapshot.bin");
    RingClient.writePersistFile(file, PublishedSnapshot.unsigned(ring, null, List.of()).signedBy(key),
        Instant.now());
    String closedPort;
    try (ServerSocket socket = new ServerSocket(0)) {
      closedPort = "127.0.0.1:" + socket.getLocalPort();
    }
    client = new RingClient(RingClientConfig.builder()
        .bootstrapServers(closedPort).clusterId(ring.clusterId())
        .trustedKeys(TrustedKeys.of(key.publicKey())).persistFile(file)
        .requestTimeout(Duration.ofSeconds(1)).retryBackoff(Duration.ofHours(1))
        .consumerProperty("reconnect.backoff.max.ms", "60000")
        .noParticipation() // lookups only, no Kafka: nothing to report to
        .build()).start();
    if (!client.awaitEpoch(1, Duration.ZERO)) {
      throw new IllegalStateException("the client did not route from its persist file " + file);
    }
    // Each impl runs in its own fork, so this call is monomorphic there.
    switch (impl) {
      case "ringClient":
        lookup = client::placement;
        break;
      case "replicasOf":
        lookup = ring::replicasOf;
        break;
      default:
        throw new IllegalArgumentException("impl was " + impl + "; see @Param for the known impls");
    }
  }

  @TearDown(Level.Trial)
  public void tearDown() throws IOException {
    client.close();
    TempDirs.delete(dir);
  }

  @Benchmark
  public Object lookup() {
    return lookup.lookup(keys[next++ & (LookupBenchmark.KEY_COUNT - 1)]);
  }
}
