package io.ringshift.storage;

import static io.ringshift.storage.TestKeys.bytes;
import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.sun.net.httpserver.HttpServer;
import io.ringshift.ring.RingRange;
import io.ringshift.storage.internal.http.HttpStoreClient;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Batched client writes (docs/storage.md, "Batched writes"): {@code POST /v1/writes} on the client port as any HTTP
 * client sees it, and the group commit of {@link RemoteStore}: concurrent writes to one node share a request, each
 * answered on its own, and a node without the endpoint gets one request per write.
 */
class BatchedWritesTest {
  private static final HttpClient HTTP = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

  @TempDir Path dir;
  private Store rocks;
  private Store store;
  private NodeServer server;

  @BeforeEach
  void start() {
    rocks = RocksStore.open(dir.resolve("node"), "node-7", "az-2");
    // node-7 is no member of the ring of epoch 5: a write of an older epoch is refused as not-a-replica.
    store = OwnershipCheckedStore.wrap(rocks, () -> Rings.EPOCH_5);
    server = NodeServer.start(store, new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 8);
  }

  @AfterEach
  void stop() {
    server.close();
    rocks.close();
  }

  @Test
  void shouldAnswerEachWriteOfABatchOnTheClientPortAsItsOwnRequestWouldBeAnswered() throws Exception {
    byte[] body = writes(new Write(5, bytes("a"), bytes("1")), new Write(4, bytes("b"), bytes("2")),
        new Write(Long.MAX_VALUE, bytes("c"), bytes("3")), new Write(5, bytes("a"), null),
        new Write(6, bytes("d"), bytes("4")));

    HttpResponse<byte[]> answer = post(server.hostPort(), body);

    assertThat(answer.statusCode()).isEqualTo(200);
    assertThat(answer.headers().firstValue("Content-Type")).hasValue("application/x-ringshift-frames");
    DataInputStream in = new DataInputStream(new ByteArrayInputStream(answer.body()));
    long applied = readApplied(in);
    RingRange range = Rings.rangeOf(Rings.EPOCH_5, "b");
    // RESULT outcome 2: retry, not a replica, at the ring's epoch 5 with the key's range.
    assertThat(in.readInt()).isEqualTo(1 + 1 + 24);
    assertThat(in.readByte()).isEqualTo((byte) 6);
    assertThat(in.readByte()).isEqualTo((byte) 2);
    assertThat(in.readLong()).isEqualTo(5);
    assertThat(in.readLong()).isEqualTo(range.start());
    assertThat(in.readLong()).isEqualTo(range.end());
    // RESULT outcome 3: failed as the single write would have: 409 epoch-ahead with its message.
    int length = in.readInt();
    assertThat(in.readByte()).isEqualTo((byte) 6);
    assertThat(in.readByte()).isEqualTo((byte) 3);
    assertThat(in.readInt()).isEqualTo(409);
    byte[] code = new byte[in.readUnsignedByte()];
    in.readFully(code);
    assertThat(new String(code, UTF_8)).isEqualTo("epoch-ahead");
    byte[] message = new byte[length - 1 - 1 - 4 - 1 - code.length];
    in.readFully(message);
    assertThat(new String(message, UTF_8)).contains("routes by the ring of epoch 5, and only epochs up to 6");
    assertThat(readApplied(in)).isGreaterThan(applied);
    assertThat(readApplied(in)).isGreaterThan(applied);
    // END counting the five writes.
    assertThat(in.readInt()).isEqualTo(9);
    assertThat(in.readByte()).isEqualTo((byte) 3);
    assertThat(in.readLong()).isEqualTo(5);
    assertThat(in.available()).isZero();

    assertThat(rocks.get(bytes("a"))).as("put, then deleted in order").isEmpty();
    assertThat(rocks.get(bytes("b"))).isEmpty();
    assertThat(rocks.get(bytes("c"))).isEmpty();
    assertThat(rocks.get(bytes("d"))).hasValueSatisfying(v -> assertThat(v).isEqualTo(bytes("4")));
  }

  @Test
  void shouldRefuseAMalformedOrOversizedBatchWhole() throws Exception {
    long latest = rocks.latestSequence();
    byte[] good = writes(new Write(5, bytes("a"), bytes("1")));
    byte[] cut = java.util.Arrays.copyOf(good, good.length - 1);
    List<Write> many = new ArrayList<>();
    for (int i = 0; i <= 1024; i++) {
      many.add(new Write(5, bytes("k" + i), bytes("v")));
    }
    ByteArrayOutputStream withEnd = new ByteArrayOutputStream();
    withEnd.write(good);
    DataOutputStream end = new DataOutputStream(withEnd);
    end.writeInt(9);
    end.writeByte(3);
    end.writeLong(1);

    expect(post(server.hostPort(), cut), 400, "writes body: malformed frame at byte 0: the input ends inside the "
        + "frame; nothing was written");
    expect(post(server.hostPort(), writes(many.toArray(Write[]::new))), 400, "a writes body of more than 1024 "
        + "writes; a batch holds at most 1024: split it; nothing was written");
    expect(post(server.hostPort(), withEnd.toByteArray()), 400, "writes body frame 1 is EndFrame; a writes body "
        + "holds WRITE frames only");
    HttpResponse<byte[]> get = HTTP.send(HttpRequest.newBuilder(URI.create("http://" + server.hostPort()
        + "/v1/writes")).GET().build(), HttpResponse.BodyHandlers.ofByteArray());
    assertThat(get.statusCode()).isEqualTo(405);

    assertThat(rocks.latestSequence()).isEqualTo(latest);
    assertThat(rocks.get(bytes("a"))).isEmpty();
  }

  @Test
  void shouldSendConcurrentWritesToOneNodeTogetherAndAnswerEachOnItsOwn() throws Exception {
    // The node's store holds every write until released: one batch in flight (the first write), while 23 more wait
    // and then go together in the next.
    CountDownLatch release = new CountDownLatch(1);
    AtomicInteger held = new AtomicInteger();
    Store slow = new ForwardingStore(store) {
      @Override
      public WriteResult put(byte[] key, byte[] value, long epoch) {
        held.incrementAndGet();
        try {
          release.await(30, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
        return super.put(key, value, epoch);
      }
    };
    ExecutorService writers = Executors.newFixedThreadPool(24);
    try (NodeServer node = NodeServer.start(slow, new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 8);
        Store remote = RemoteStore.connect(node.hostPort(), Duration.ofSeconds(30))) {
      HttpStoreClient client = (HttpStoreClient) remote;
      List<Future<WriteResult>> results = new ArrayList<>();
      results.add(writers.submit(() -> remote.put(bytes("k0"), bytes("v0"), 5)));
      Awaitility.await("the first write held on the node").atMost(Duration.ofSeconds(10))
          .until(() -> held.get() == 1);
      for (int i = 1; i < 24; i++) {
        int n = i;
        results.add(writers.submit(() -> remote.put(bytes("k" + n), bytes("v" + n), n % 2 == 0 ? 5 : 4)));
      }
      Awaitility.await("23 writes waiting for a batch").atMost(Duration.ofSeconds(10))
          .until(() -> client.batchStats()[2] == 23);
      release.countDown();

      for (int n = 0; n < 24; n++) {
        int i = n;
        WriteResult r = results.get(i).get(30, TimeUnit.SECONDS);
        if (i % 2 == 1) {
          assertThat(r).as("write %d, of epoch 4", i).isInstanceOfSatisfying(WriteResult.RetryWithEpoch.class,
              retry -> assertThat(retry.reason()).isEqualTo(WriteResult.Reason.NOT_A_REPLICA));
          assertThat(rocks.get(bytes("k" + i))).isEmpty();
        } else {
          assertThat(r).as("write %d", i).isInstanceOf(WriteResult.Applied.class);
          assertThat(rocks.get(bytes("k" + i))).hasValueSatisfying(v -> assertThat(v).isEqualTo(bytes("v" + i)));
        }
      }
      long[] stats = client.batchStats();
      assertThat(stats[1]).isEqualTo(24);
      assertThat(stats[0]).as("batches for 24 writes: the first, then the 23 that waited together").isEqualTo(2);
    } finally {
      writers.shutdownNow();
    }
  }

  @Test
  void shouldAnswerEveryWriteOfManyConcurrentCallersWithItsOwnResult() throws Exception {
    long seed = Seeds.seed("BatchedWritesTest");
    ExecutorService writers = Executors.newFixedThreadPool(16);
    try (Store remote = RemoteStore.connect(server.hostPort(), Duration.ofSeconds(30))) {
      List<Future<?>> done = new ArrayList<>();
      for (int t = 0; t < 16; t++) {
        int thread = t;
        done.add(writers.submit(() -> {
          java.util.Random random = new java.util.Random(seed + thread);
          for (int i = 0; i < 200; i++) {
            byte[] key = bytes("t" + thread + "-" + i);
            boolean current = random.nextInt(4) != 0;
            boolean delete = random.nextInt(8) == 0;
            WriteResult r = delete ? remote.delete(key, current ? 5 : 4)
                : remote.put(key, bytes("v" + i), current ? 5 : 4);
            assertThat(r).as("seed %d, %s", seed, new String(key, UTF_8))
                .isInstanceOf(current ? WriteResult.Applied.class : WriteResult.RetryWithEpoch.class);
            assertThat(rocks.get(key).isPresent()).as("seed %d, %s", seed, new String(key, UTF_8))
                .isEqualTo(current && !delete);
          }
          return null;
        }));
      }
      for (Future<?> f : done) {
        f.get(60, TimeUnit.SECONDS);
      }
      long[] stats = ((HttpStoreClient) remote).batchStats();
      assertThat(stats[1]).isEqualTo(16 * 200);
      assertThat(stats[2]).as("nothing left waiting").isZero();
    } finally {
      writers.shutdownNow();
    }
  }

  @Test
  void shouldGiveEachWriteOfAFailedBatchTheFailure() throws Exception {
    Store remote = RemoteStore.connect(server.hostPort(), Duration.ofSeconds(5));
    server.close();

    assertThatThrownBy(() -> remote.put(bytes("k"), bytes("v"), 5)).isInstanceOf(StoreException.Unavailable.class)
        .hasMessageContaining("the node at " + server.hostPort() + " is unreachable (POST /v1/writes)");
    assertThatThrownBy(() -> remote.put(null, bytes("v"), 5)).isInstanceOf(StoreException.BadRequest.class);
  }

  @Test
  void shouldWriteOneKeyPerRequestToANodeThatServesNoBatches() throws Exception {
    // A node from before batched writes: /v1/writes is an unknown path, a PUT is applied.
    List<String> requests = new java.util.concurrent.CopyOnWriteArrayList<>();
    HttpServer old = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
    old.createContext("/", exchange -> {
      requests.add(exchange.getRequestMethod() + " " + exchange.getRequestURI().getPath());
      exchange.getRequestBody().readAllBytes();
      boolean put = exchange.getRequestURI().getPath().startsWith("/v1/keys/");
      byte[] answer = (put ? "{\"applied\":true,\"sequence\":7}" : "{\"error\":\"unknown-path\",\"message\":\"no "
          + "endpoint\"}").getBytes(UTF_8);
      exchange.sendResponseHeaders(put ? 200 : 404, answer.length);
      exchange.getResponseBody().write(answer);
      exchange.close();
    });
    old.start();
    try (Store remote = RemoteStore.connect("127.0.0.1:" + old.getAddress().getPort(), Duration.ofSeconds(5))) {
      assertThat(remote.put(bytes("k"), bytes("v"), 5)).isEqualTo(new WriteResult.Applied(7));
      assertThat(remote.put(bytes("k"), bytes("w"), 5)).isEqualTo(new WriteResult.Applied(7));

      assertThat(requests).containsExactly("POST /v1/writes", "PUT /v1/keys/6b", "PUT /v1/keys/6b");
    } finally {
      old.stop(0);
    }
    try (Store unbatched = RemoteStore.connect(server.hostPort(), Duration.ofSeconds(5),
        RemoteStore.WriteMode.ONE_PER_REQUEST)) {
      assertThat(unbatched.put(bytes("k"), bytes("v"), 5)).isInstanceOf(WriteResult.Applied.class);
      assertThat(((HttpStoreClient) unbatched).batchStats()[0]).isZero();
    }
  }

  private record Write(long epoch, byte[] key, byte[] value) {}

  private static byte[] writes(Write... writes) throws IOException {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    DataOutputStream out = new DataOutputStream(bytes);
    for (Write w : writes) {
      out.writeInt(1 + 8 + 4 + w.key().length + 4 + (w.value() == null ? 0 : w.value().length));
      out.writeByte(5);
      out.writeLong(w.epoch());
      out.writeInt(w.key().length);
      out.write(w.key());
      out.writeInt(w.value() == null ? -1 : w.value().length);
      if (w.value() != null) {
        out.write(w.value());
      }
    }
    return bytes.toByteArray();
  }

  /** Reads a RESULT frame of outcome 0 (applied): its sequence. */
  private static long readApplied(DataInputStream in) throws IOException {
    assertThat(in.readInt()).isEqualTo(1 + 1 + 8);
    assertThat(in.readByte()).isEqualTo((byte) 6);
    assertThat(in.readByte()).isEqualTo((byte) 0);
    return in.readLong();
  }

  private static HttpResponse<byte[]> post(String hostPort, byte[] body) throws Exception {
    return HTTP.send(HttpRequest.newBuilder(URI.create("http://" + hostPort + "/v1/writes"))
        .timeout(Duration.ofSeconds(10)).POST(HttpRequest.BodyPublishers.ofByteArray(body)).build(),
        HttpResponse.BodyHandlers.ofByteArray());
  }

  private static void expect(HttpResponse<byte[]> answer, int status, String message) {
    String body = new String(answer.body(), UTF_8);
    assertThat(answer.statusCode()).as(body).isEqualTo(status);
    assertThat(body).contains("\"error\":\"bad-request\"").contains(message);
  }
}
