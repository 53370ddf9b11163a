package io.ringshift.storage;

import static io.ringshift.storage.TestKeys.bytes;
import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.ringshift.ring.RingRange;
import java.io.ByteArrayOutputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Assertions;
import org.junit.jupiter.api.Test;

/**
 * The storage contract through the network: {@code RemoteStore} -> HTTP on loopback -> {@code NodeServer} ->
 * {@code RocksStore}. Every contract test runs here exactly as against the local store; the tests below are about
 * the network itself.
 */
class RemoteStoreTest extends StoreContractTest {
  private Store rocks;
  private NodeServer server;
  private Store remote;

  @Override
  Store openStore(Path dataDir) {
    rocks = RocksStore.open(dataDir, NODE, ZONE);
    server = NodeServer.start(rocks, new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
    remote = RemoteStore.connectAdmin(server.adminHostPort(), server.adminSecret(), Duration.ofSeconds(10));
    return remote;
  }

  @Override
  void closeStore() {
    if (remote != null) {
      remote.close();
      server.close();
      rocks.close();
      remote = null;
    }
  }

  @Override
  int fenceRounds() {
    return 4;
  }

  @Test
  void shouldNameTheAddressOfANodeThatIsNotThere() throws IOException {
    int port;
    try (ServerSocket probe = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      port = probe.getLocalPort();
    }
    Store nobody = RemoteStore.connect("127.0.0.1:" + port, Duration.ofSeconds(2));

    assertThatThrownBy(nobody::info).isInstanceOf(StoreException.Unavailable.class)
        .hasMessageContaining("the node at 127.0.0.1:" + port + " is unreachable (GET /health): connection refused")
        .satisfies(e -> assertThat(((StoreException) e).retriable()).isTrue());
    assertThatThrownBy(() -> nobody.scan(RingRange.whole(), null)).isInstanceOf(StoreException.Unavailable.class)
        .hasMessageContaining("127.0.0.1:" + port);
  }

  @Test
  void shouldBeUnavailableOnceTheNodeStops() {
    put("a", "1");
    String address = server.adminHostPort();
    server.close();

    assertThatThrownBy(() -> store.get(bytes("a"))).isInstanceOf(StoreException.Unavailable.class)
        .hasMessageContaining("the node at " + address + " is unreachable");
  }

  @Test
  void shouldBeUnavailableOnceTheNodesStoreCloses() {
    rocks.close();

    assertThatThrownBy(() -> store.put(bytes("a"), bytes("1"), 0)).isInstanceOf(StoreException.Unavailable.class)
        .hasMessageContaining("the node at " + server.adminHostPort() + ": the store of node-1")
        .hasMessageContaining("is closed");
  }

  @Test
  void shouldEndItsOwnStreamsWhenTheClientCloses() {
    put("a", "1");
    put("b", "2");
    RangeScan scan = store.scan(RingRange.whole(), null);
    ChangeFeed feed = store.changes(RingRange.whole(), 0);

    remote.close();

    assertThatThrownBy(scan::hasNext).isInstanceOf(StoreException.Unavailable.class)
        .hasMessageContaining("was closed while this stream was open");
    assertThatThrownBy(feed::hasNext).isInstanceOf(StoreException.Unavailable.class);
    assertThatThrownBy(() -> remote.get(bytes("a"))).isInstanceOf(StoreException.Unavailable.class)
        .hasMessageContaining("is closed");
    assertThat(rocks.get(bytes("a"))).as("the node is not affected").isPresent();
  }

  /**
   * A node that drops a connection without answering (as the JDK server does with a keep-alive connection it closed
   * for idleness just as a request left) is asked once more on a new connection; twice is unavailable. An apply is
   * a POST, which the JDK client never repeats by itself. A client's put is never repeated: it may have landed.
   */
  @Test
  void shouldRetryAMigrationCallOnceButNeverAClientWriteWhenTheConnectionBreaks() throws Exception {
    String answer = "{\"sequence\":9}";
    AtomicInteger connections = new AtomicInteger();
    AtomicReference<IOException> nodeFailure = new AtomicReference<>();
    ServerSocket flaky = new ServerSocket(0, 10, InetAddress.getLoopbackAddress());
    try {
      Thread node = new Thread(() -> {
        while (!flaky.isClosed()) {
          try (Socket s = flaky.accept()) {
            s.getInputStream().read(new byte[4096]);
            if (connections.getAndIncrement() == 1) {
              s.getOutputStream().write(("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: "
                  + answer.length() + "\r\nConnection: close\r\n\r\n" + answer).getBytes(UTF_8));
            }
          } catch (IOException e) {
            if (!flaky.isClosed()) {
              nodeFailure.set(e);
            }
          }
        }
      }, "flaky-node");
      node.start();
      Store client = RemoteStore.connect("127.0.0.1:" + flaky.getLocalPort(), Duration.ofSeconds(5));

      assertThat(client.apply(List.of())).as("dropped once, answered on the second connection").isEqualTo(9);
      assertThat(connections).hasValue(2);
      assertThatThrownBy(() -> client.apply(List.of())).as("dropped twice")
          .isInstanceOf(StoreException.Unavailable.class)
          .hasMessageContaining("the node at 127.0.0.1:" + flaky.getLocalPort() + " is unreachable (POST /v1/apply)");
      assertThat(connections).hasValue(4);
      assertThatThrownBy(() -> client.put(bytes("k"), bytes("v"), 1)).as("a client write is not repeated")
          .isInstanceOf(StoreException.Unavailable.class)
          .hasMessageContaining("is unreachable (POST /v1/writes)");
      assertThat(connections).hasValue(5);
      flaky.close();
      node.join(10_000);
      assertThat(nodeFailure).as("the fake node itself").hasNullValue();
    } finally {
      flaky.close();
    }
  }

  /**
   * The JDK client never times out a body that stops arriving (JDK-8258397): a node that sends the headers and a
   * first frame of a scan, then stalls without closing its connection, must not block the reader forever. With a
   * 1 s timeout the pending read is aborted about a second later, naming the node and the idle time.
   */
  @Test
  void shouldAbortAStreamWhoseNodeStallsWithoutClosingTheConnection() throws Exception {
    Entry first = Entry.of(bytes("a"), bytes("1"));
    ByteArrayOutputStream frame = new ByteArrayOutputStream();
    try (DataOutputStream out = new DataOutputStream(frame)) {
      out.writeInt(1 + 8 + 4 + first.key().length + 4 + first.value().length);
      out.writeByte(1);
      out.writeLong(first.position());
      out.writeInt(first.key().length);
      out.write(first.key());
      out.writeInt(first.value().length);
      out.write(first.value());
    }
    CountDownLatch testDone = new CountDownLatch(1);
    AtomicReference<Exception> nodeFailure = new AtomicReference<>();
    try (ServerSocket stalling = new ServerSocket(0, 10, InetAddress.getLoopbackAddress())) {
      Thread node = new Thread(() -> {
        try (Socket s = stalling.accept()) {
          s.getInputStream().read(new byte[4096]);
          OutputStream out = s.getOutputStream();
          out.write(("HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\nTransfer-Encoding: chunked\r\n"
              + "Ringshift-Sequence: 7\r\n\r\n" + Integer.toHexString(frame.size()) + "\r\n").getBytes(UTF_8));
          out.write(frame.toByteArray());
          out.write("\r\n".getBytes(UTF_8));
          out.flush();
          testDone.await(30, TimeUnit.SECONDS);
        } catch (IOException | InterruptedException e) {
          nodeFailure.set(e);
        }
      }, "stalling-node");
      node.start();
      String address = "127.0.0.1:" + stalling.getLocalPort();
      Store client = RemoteStore.connect(address, Duration.ofSeconds(1));
      try {
        RangeScan scan = client.scan(RingRange.whole(), null);
        assertThat(scan.sequence()).isEqualTo(7);
        assertThat(scan.next()).isEqualTo(first);
        long started = System.nanoTime();

        Assertions.assertTimeoutPreemptively(Duration.ofSeconds(5), () -> assertThatThrownBy(scan::next)
            .isInstanceOf(StoreException.Unavailable.class)
            .hasMessageContaining("the stream from the node at " + address + " (GET /v1/scan) stalled: no data "
                + "arrived for 1000 ms"));
        assertThat(Duration.ofNanos(System.nanoTime() - started)).as("aborted after the timeout, not long after")
            .isBetween(Duration.ofMillis(900), Duration.ofMillis(3_000));
        assertThatThrownBy(scan::hasNext).as("the stream stays aborted").isInstanceOf(StoreException.Unavailable.class)
            .hasMessageContaining("no data arrived for 1000 ms");
        scan.close();
      } finally {
        client.close();
        testDone.countDown();
        node.join(10_000);
      }
      assertThat(nodeFailure).as("the fake node itself").hasNullValue();
    }
  }

  /**
   * Only time spent waiting inside a read counts: a reader that pauses between items longer than the timeout (a
   * throttled copy) keeps its stream, even though the node, blocked by the full connection, sent nothing meanwhile.
   */
  @Test
  void shouldNotAbortAStreamWhoseReaderPausesLongerThanTheTimeout() throws InterruptedException {
    List<Entry> entries = new ArrayList<>();
    byte[] value = new byte[1024];
    for (int i = 0; i < 4_000; i++) {
      entries.add(Entry.of(bytes("k" + i), value));
    }
    rocks.apply(entries);
    Store slowReader = RemoteStore.connectAdmin(server.adminHostPort(), server.adminSecret(), Duration.ofMillis(200));
    try (RangeScan scan = slowReader.scan(RingRange.whole(), null)) {
      int read = 0;
      for (int pause = 0; pause < 2; pause++) {
        scan.next();
        read++;
        assertThat(new CountDownLatch(1).await(600, TimeUnit.MILLISECONDS))
            .as("a deliberate pause of three timeouts").isFalse();
      }
      while (scan.hasNext()) {
        scan.next();
        read++;
      }
      assertThat(read).as("the whole 4 MB range despite the pauses").isEqualTo(4_000);
    } finally {
      slowReader.close();
    }
  }

  /**
   * A node from before the ownership check answers retry-with-epoch without a {@code reason}: that is a fence's
   * answer. A reason the client does not know is an error, not a guess.
   */
  @Test
  void shouldReadARetryWithEpochWithoutAReasonAsAFencesAnswer() throws Exception {
    List<String> answers = List.of(
        "{\"error\":\"retry-with-epoch\",\"epoch\":8,\"start\":\"0000000000000010\",\"end\":\"0000000000000020\","
            + "\"message\":\"fenced\"}",
        "{\"error\":\"retry-with-epoch\",\"epoch\":8,\"reason\":\"moon-phase\",\"start\":\"0000000000000010\","
            + "\"end\":\"0000000000000020\",\"message\":\"?\"}");
    AtomicReference<IOException> nodeFailure = new AtomicReference<>();
    try (ServerSocket older = new ServerSocket(0, 10, InetAddress.getLoopbackAddress())) {
      Thread node = new Thread(() -> {
        for (String answer : answers) {
          try (Socket s = older.accept()) {
            s.getInputStream().read(new byte[4096]);
            s.getOutputStream().write(("HTTP/1.1 409 Conflict\r\nContent-Type: application/json\r\n"
                + "Content-Length: " + answer.length() + "\r\nConnection: close\r\n\r\n" + answer).getBytes(UTF_8));
          } catch (IOException e) {
            nodeFailure.set(e);
          }
        }
      }, "older-node");
      node.start();
      String address = "127.0.0.1:" + older.getLocalPort();
      // An older node answers one write per request (and a batch with 404 unknown-path, BatchedWritesTest).
      try (Store client = RemoteStore.connect(address, Duration.ofSeconds(5), RemoteStore.WriteMode.ONE_PER_REQUEST)) {

        assertThat(client.put(bytes("k"), bytes("v"), 7)).isEqualTo(new WriteResult.RetryWithEpoch(8,
            RingRange.of(0x10, 0x20), WriteResult.Reason.FENCED));
        assertThatThrownBy(() -> client.put(bytes("k"), bytes("v"), 7)).isInstanceOf(StoreException.class)
            .hasMessage("the node at " + address + " answered retry-with-epoch with an unknown reason moon-phase; "
                + "expected fenced or not-a-replica");
      }
      node.join(10_000);
      assertThat(nodeFailure).as("the fake node itself").hasNullValue();
    }
  }

  /**
   * A load body is whole only with its END frame: a body that stops after its entries (a sender that died in the
   * middle of a chunk) or counts them wrong is refused, and nothing of it is loaded, ingested or written.
   */
  @Test
  void shouldRefuseALoadBodyWithoutItsEndFrameAndLoadNothing() throws Exception {
    List<Entry> entries = loadEntries("copied", RingRange.whole(), 700);
    byte[] cutOff = NodeServerTest.frames(entries.toArray(Entry[]::new));
    ByteArrayOutputStream frames = new ByteArrayOutputStream();
    DataOutputStream out = new DataOutputStream(frames);
    out.write(cutOff);
    out.writeInt(9);
    out.writeByte(3);
    out.writeLong(699);
    byte[] miscounted = frames.toByteArray();
    long before = store.latestSequence();
    java.net.http.HttpClient http = java.net.http.HttpClient.newHttpClient();
    for (byte[] body : List.of(cutOff, miscounted)) {
      java.net.http.HttpResponse<String> answer = http.send(java.net.http.HttpRequest.newBuilder(
              java.net.URI.create("http://" + server.adminHostPort() + "/v1/load"))
          .header("Authorization", server.adminSecret().authorization())
          .POST(java.net.http.HttpRequest.BodyPublishers.ofByteArray(body)).build(),
          java.net.http.HttpResponse.BodyHandlers.ofString());
      assertThat(answer.statusCode()).as(answer.body()).isEqualTo(400);
      assertThat(answer.body()).contains(body == cutOff
          ? "load body ended after 700 entries without its END frame"
          : "its END frame counts 699 entries but 700 came before it");
    }
    assertThat(store.latestSequence()).isEqualTo(before);
    assertThat(store.digest(RingRange.whole()).keys()).isZero();
  }

  /**
   * A node from before bulk loads answers {@code POST /v1/load} with 404 unknown-path: the client asks once, with an
   * empty load, and from then on sends a load's entries to that node in batched applies.
   */
  @Test
  void shouldLoadThroughAppliesOnANodeThatServesNoLoads() throws Exception {
    List<String> requests = java.util.Collections.synchronizedList(new ArrayList<>());
    com.sun.net.httpserver.HttpServer older = com.sun.net.httpserver.HttpServer.create(
        new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
    older.createContext("/", exchange -> {
      String path = exchange.getRequestURI().getPath();
      requests.add(exchange.getRequestMethod() + " " + path);
      exchange.getRequestBody().readAllBytes();
      boolean apply = path.equals("/v1/apply");
      byte[] body = (apply ? "{\"sequence\":7}" : "{\"error\":\"unknown-path\",\"message\":\"no endpoint "
          + path + "\"}").getBytes(UTF_8);
      exchange.sendResponseHeaders(apply ? 200 : 404, body.length);
      exchange.getResponseBody().write(body);
      exchange.close();
    });
    older.start();
    try (Store client = RemoteStore.connect("127.0.0.1:" + older.getAddress().getPort(), Duration.ofSeconds(5))) {
      List<Entry> entries = loadEntries("copied", RingRange.whole(), 300);
      assertThat(client.load(entries.iterator())).isEqualTo(new LoadResult(300, bytesOf(entries), false, 7));
      assertThat(client.load(entries.iterator())).isEqualTo(new LoadResult(300, bytesOf(entries), false, 7));
    } finally {
      older.stop(0);
    }
    assertThat(requests).as("one question, then 1 MiB applies").startsWith("POST /v1/load", "POST /v1/apply")
        .containsOnlyOnce("POST /v1/load").hasSize(1 + 2 * 3);
  }

  @Test
  void shouldRefuseAnAddressThatIsNotHostAndPort() {
    for (String bad : new String[] {"", "localhost", "localhost:0", "localhost:70000", "http://x:1/path", "a b:1"}) {
      assertThatThrownBy(() -> RemoteStore.connect(bad, Duration.ofSeconds(1)))
          .as("'%s'", bad).isInstanceOf(StoreException.BadRequest.class);
    }
    assertThatThrownBy(() -> RemoteStore.connect("localhost:1", Duration.ZERO))
        .isInstanceOf(StoreException.BadRequest.class).hasMessageContaining("timeout PT0S must be positive");
  }
}
