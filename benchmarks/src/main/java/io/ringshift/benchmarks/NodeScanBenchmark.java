package io.ringshift.benchmarks;

import static java.nio.charset.StandardCharsets.UTF_8;

import io.ringshift.ring.RingRange;
import io.ringshift.storage.Entry;
import io.ringshift.storage.NodeServer;
import io.ringshift.storage.RangeScan;
import io.ringshift.storage.RemoteStore;
import io.ringshift.storage.RocksStore;
import io.ringshift.storage.Store;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Scanning a 64 MiB range (1,024 values of 64 KiB) in the node's own process, and through its HTTP API on loopback
 * as a migration worker reads a source (docs/storage.md, "Measured"). Time per scan; MiB/s = 64 / seconds.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Warmup(iterations = 5, time = 3)
@Measurement(iterations = 5, time = 3)
@Fork(1)
@State(Scope.Benchmark)
public class NodeScanBenchmark {
  static final int KEYS = 1024;
  static final int VALUE_BYTES = 64 * 1024;

  private Path dir;
  private Store store;
  private NodeServer server;
  private Store remote;

  @Setup(Level.Trial)
  public void setUp() throws IOException {
    dir = Files.createTempDirectory("ringshift-scan-bench");
    store = RocksStore.open(dir.resolve("node"), "bench-scan", "az-1");
    byte[] value = new byte[VALUE_BYTES];
    new Random(2).nextBytes(value);
    List<Entry> batch = new ArrayList<>();
    for (int i = 0; i < KEYS; i++) {
      batch.add(Entry.of(("big-" + i).getBytes(UTF_8), value));
      if (batch.size() == 64) {
        store.apply(batch);
        batch.clear();
      }
    }
    server = NodeServer.start(store, new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
    remote = RemoteStore.connectAdmin(server.adminHostPort(), server.adminSecret(), Duration.ofSeconds(30));
  }

  @TearDown(Level.Trial)
  public void tearDown() throws IOException {
    remote.close();
    server.close();
    store.close();
    TempDirs.delete(dir);
  }

  @Benchmark
  public long scanLocal() {
    return drain(store);
  }

  @Benchmark
  public long scanOverHttp() {
    return drain(remote);
  }

  private static long drain(Store s) {
    long bytes = 0;
    try (RangeScan scan = s.scan(RingRange.whole(), null)) {
      while (scan.hasNext()) {
        bytes += scan.next().size();
      }
    }
    return bytes;
  }
}
