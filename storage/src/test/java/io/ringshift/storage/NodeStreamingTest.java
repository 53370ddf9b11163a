package io.ringshift.storage;

import static io.ringshift.storage.TestKeys.bytes;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.ringshift.ring.RingRange;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A range far larger than anything the client or the server would buffer: the server reads the store only as
 * fast as the client reads the stream, so a 1 GiB range streams in the same bounded memory as this one.
 */
class NodeStreamingTest {
  private static final int VALUE_BYTES = 64 * 1024;
  private static final int KEYS = 2048;
  private static final long RANGE_BYTES = (long) KEYS * VALUE_BYTES;
  /** What may be in flight between the store and a reader that stopped: socket buffers and stream buffers. */
  private static final long READ_AHEAD_BOUND = 32L * 1024 * 1024;

  @TempDir static Path dir;
  private static Store rocks;

  private CountingStore counting;
  private NodeServer server;
  private Store remote;

  @BeforeAll
  static void writeARangeOf128MiB() {
    rocks = RocksStore.open(dir.resolve("node"), "node-1", "az-1");
    byte[] value = new byte[VALUE_BYTES];
    new Random(1).nextBytes(value);
    List<Entry> batch = new ArrayList<>();
    for (int i = 0; i < KEYS; i++) {
      batch.add(Entry.of(bytes("big-" + i), value));
      if (batch.size() == 64) {
        rocks.apply(batch);
        batch.clear();
      }
    }
  }

  @AfterAll
  static void closeTheStore() {
    rocks.close();
  }

  @BeforeEach
  void serve() {
    counting = new CountingStore(rocks);
    server = NodeServer.start(counting, new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
    remote = RemoteStore.connectAdmin(server.adminHostPort(), server.adminSecret(), Duration.ofSeconds(10));
  }

  @AfterEach
  void stop() {
    remote.close();
    server.close();
  }

  @Test
  void shouldReadTheStoreOnlyAsFastAsTheClientReadsTheStream() {
    try (RangeScan scan = remote.scan(RingRange.whole(), null)) {
      scan.next();
      long ahead = awaitServerStalled();

      System.out.printf("reader paused after 1 entry: the server read %.1f MiB of the %d MiB range ahead%n",
          ahead / 1048576.0, RANGE_BYTES >> 20);
      assertThat(ahead).as("bytes the server read ahead of a paused reader").isLessThan(READ_AHEAD_BOUND)
          .isLessThan(RANGE_BYTES / 4);

      long started = System.nanoTime();
      long entries = 1;
      long bytes = VALUE_BYTES + 8;
      while (scan.hasNext()) {
        bytes += scan.next().size();
        entries++;
      }
      double seconds = (System.nanoTime() - started) / 1e9;
      System.out.printf("streamed the rest of the range, %d MiB, in %.2f s: %.0f MiB/s over loopback%n",
          bytes >> 20, seconds, (bytes >> 20) / seconds);
      assertThat(entries).isEqualTo(KEYS);
      assertThat(counting.scannedBytes()).isEqualTo(bytes);
    }
  }

  @Test
  void shouldFailAStreamCutOffByTheNodeInsteadOfEndingIt() {
    try (RangeScan scan = remote.scan(RingRange.whole(), null)) {
      scan.next();
      awaitServerStalled();

      server.close();

      assertThatThrownBy(() -> {
        while (scan.hasNext()) {
          scan.next();
        }
      }).as("a cut-off stream is an error, never a short range").isInstanceOf(StoreException.Unavailable.class)
          .hasMessageContaining(server.adminHostPort());
    }
  }

  /** Waits until the server stopped reading the store (two looks 100 ms apart agree) and returns how far it read. */
  private long awaitServerStalled() {
    AtomicLong last = new AtomicLong(-1);
    await("the server stops reading when the reader stops").atMost(Duration.ofSeconds(20))
        .pollInterval(Duration.ofMillis(100))
        .until(() -> counting.scannedBytes() == last.getAndSet(counting.scannedBytes()));
    return counting.scannedBytes();
  }
}
