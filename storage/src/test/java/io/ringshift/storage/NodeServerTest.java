package io.ringshift.storage;

import static io.ringshift.storage.TestKeys.bytes;
import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.ringshift.ring.RingRange;
import io.ringshift.ring.RingSnapshot;
import java.io.ByteArrayOutputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.BindException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HexFormat;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The node's HTTP API as any HTTP client (curl) sees it: the documented answers, and malformed requests that get
 * a 4xx and a message while the server keeps serving.
 */
class NodeServerTest {
  private static final HttpClient HTTP = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

  @TempDir Path dir;
  private Store store;
  private NodeServer server;

  @BeforeEach
  void start() {
    store = RocksStore.open(dir.resolve("node"), "node-7", "az-2");
    server = NodeServer.start(store, new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
  }

  @AfterEach
  void stop() {
    server.close();
    store.close();
  }

  private record Answer(int status, String body, HttpResponse<byte[]> response) {}

  private Answer send(String method, String path, byte[] body) throws IOException, InterruptedException {
    return send(server, method, path, body);
  }

  private static Answer send(NodeServer server, String method, String path, byte[] body)
      throws IOException, InterruptedException {
    HttpRequest request = HttpRequest.newBuilder(URI.create("http://" + server.adminHostPort() + path))
        .header("Authorization", server.adminSecret().authorization())
        .timeout(Duration.ofSeconds(10))
        .method(method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofByteArray(body))
        .build();
    HttpResponse<byte[]> response = HTTP.send(request, HttpResponse.BodyHandlers.ofByteArray());
    return new Answer(response.statusCode(), new String(response.body(), UTF_8), response);
  }

  private Answer get(String path) throws IOException, InterruptedException {
    return send("GET", path, null);
  }

  @Test
  void shouldServeRequestsOneAfterAnotherOnOneHandlerThreadNotOnePerRequest() throws Exception {
    for (int i = 0; i < 40; i++) {
      assertThat(get("/health").status()).isEqualTo(200);
    }
    // A fixed pool of 32 starts a thread for each of its first 32 requests and keeps them all.
    assertThat(server.handlerThreads()).isLessThanOrEqualTo(4);
  }

  @Test
  void shouldAnswerHealthWithTheNodesIdentityAndLatestSequence() throws Exception {
    store.put(bytes("k"), bytes("v"), 0);

    Answer health = get("/health");

    assertThat(health.status()).isEqualTo(200);
    assertThat(health.response().headers().firstValue("Content-Type")).hasValue("application/json; charset=utf-8");
    assertThat(health.body()).isEqualTo("{\"nodeId\":\"node-7\",\"zone\":\"az-2\",\"latestSequence\":"
        + store.latestSequence() + ",\"keys\":" + store.info().keys() + ",\"incarnation\":\""
        + store.info().incarnation() + "\",\"fences\":0,\"api\":\"v1\"}\n");
  }

  /** A node that follows a ring says which epoch it routes by, and how many fences it holds: what a dashboard shows. */
  @Test
  void shouldReportTheRingEpochItRoutesByAndItsFencesInHealth() throws Exception {
    store.fence(RingRange.of(0, 1000), 6);
    try (NodeServer checked = NodeServer.start(OwnershipCheckedStore.wrap(store, () -> Rings.EPOCH_5),
        new InetSocketAddress(InetAddress.getLoopbackAddress(), 0))) {
      Answer health = send(checked, "GET", "/health", null);
      assertThat(health.body()).contains("\"fences\":1,\"ringEpoch\":5,\"api\":\"v1\"");
    }
    try (NodeServer unchecked = NodeServer.start(OwnershipCheckedStore.wrap(store, () -> null),
        new InetSocketAddress(InetAddress.getLoopbackAddress(), 0))) {
      assertThat(send(unchecked, "GET", "/health", null).body()).contains("\"ringEpoch\":-1");
    }
  }

  /**
   * A range delete names its epoch; a node whose ring is later and makes it a replica of the range refuses it with
   * 409 and deletes nothing, and the remote store reports {@code Refused}.
   */
  @Test
  void shouldRefuseARangeDeleteOfAnEarlierEpochThatWouldDeleteWhatTheNodesRingMakesItReplicate() throws Exception {
    RingSnapshot ring = Rings.EPOCH_5.toBuilder().addMember("node-7", "az-2").build();
    String kept = Rings.key(k -> ring.replicasOf(bytes(k)).contains("node-7"));
    store.apply(List.of(Entry.of(bytes(kept), bytes("v"))));
    RingRange range = RingRange.of(ring.rangeStart(ring.rangeOf(ring.position(bytes(kept)))),
        ring.rangeEnd(ring.rangeOf(ring.position(bytes(kept)))));
    String query = String.format("start=%016x&end=%016x", range.start(), range.end());
    try (NodeServer checked = NodeServer.start(OwnershipCheckedStore.wrap(store, () -> ring),
        new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
        Store remote = RemoteStore.connectAdmin(checked.adminHostPort(), checked.adminSecret(), Duration.ofSeconds(10))) {

      Answer noEpoch = send(checked, "DELETE", "/v1/range?" + query, null);
      Answer refused = send(checked, "DELETE", "/v1/range?" + query + "&epoch=4", null);

      expect(noEpoch, 400, "bad-request", "epoch");
      expect(refused, 409, "refused", "range delete of " + range + " for epoch 4 refused, nothing deleted: this node "
          + "(node-7) routes by the ring of epoch 5");
      assertThatThrownBy(() -> remote.deleteRange(range, 4)).isInstanceOf(StoreException.Refused.class)
          .hasMessageContaining("that epoch's copy must stay");
      assertThat(store.get(bytes(kept))).as("nothing deleted").isPresent();
      assertThatThrownBy(() -> remote.deleteRange(range, 5)).as("nor of the ring's own epoch")
          .isInstanceOf(StoreException.Refused.class);
      assertThat(remote.deleteRange(range, 6)).as("a later epoch's").isEqualTo(1);
    }
  }

  @Test
  void shouldServeKeysAsPlainHttp() throws Exception {
    String key = "/v1/keys/" + HexFormat.of().formatHex(bytes("user:42"));

    Answer put = send("PUT", key + "?epoch=3", bytes("hello"));
    Answer read = get(key);
    Answer missing = get("/v1/keys/00");

    assertThat(put.status()).isEqualTo(200);
    assertThat(put.body()).isEqualTo("{\"applied\":true,\"sequence\":" + store.latestSequence() + "}\n");
    assertThat(read.status()).isEqualTo(200);
    assertThat(read.body()).isEqualTo("hello");
    assertThat(missing.status()).isEqualTo(404);
    assertThat(missing.body()).contains("\"error\":\"no-such-key\"", "holds no key 0x00");
  }

  @Test
  void shouldAnswerAFencedWriteWith409AndTheEpochAndRange() throws Exception {
    store.fence(RingRange.whole(), 8);

    Answer refused = send("DELETE", "/v1/keys/6b?epoch=7", null);

    assertThat(refused.status()).isEqualTo(409);
    assertThat(refused.body()).isEqualTo("{\"error\":\"retry-with-epoch\",\"epoch\":8,\"reason\":\"fenced\","
        + "\"start\":\"0000000000000000\",\"end\":\"0000000000000000\",\"message\":\"the key's range "
        + "(0000000000000000, 0000000000000000] is fenced for epochs below 8; refresh the ring to that epoch and write "
        + "to the owners it names\"}\n");
  }

  @Test
  void shouldAnswerAStaleWriteForARangeTheNodeDoesNotReplicateWith409AndTheRingsEpoch() throws Exception {
    // node-7 is no member of the ring of epoch 5: it replicates nothing there.
    RingRange range = Rings.rangeOf(Rings.EPOCH_5, "k");
    try (NodeServer checked = NodeServer.start(OwnershipCheckedStore.wrap(store, () -> Rings.EPOCH_5),
        new InetSocketAddress(InetAddress.getLoopbackAddress(), 0))) {

      Answer refused = send(checked, "PUT", "/v1/keys/6b?epoch=4", bytes("v"));
      Answer current = send(checked, "PUT", "/v1/keys/6b?epoch=5", bytes("v"));

      assertThat(refused.status()).isEqualTo(409);
      assertThat(refused.body()).isEqualTo(String.format("{\"error\":\"retry-with-epoch\",\"epoch\":5,"
          + "\"reason\":\"not-a-replica\",\"start\":\"%016x\",\"end\":\"%016x\",\"message\":\"this node is "
          + "not a replica of the key's range %s in the ring of epoch 5 it routes by; refresh the ring to that epoch "
          + "and write to the replicas it names\"}\n", range.start(), range.end(), range));
      assertThat(current.status()).isEqualTo(200);
    }
  }

  /** A write tagged far beyond the node's ring (epoch 2^63 - 1) is answered 409 epoch-ahead, and nothing is written. */
  @Test
  void shouldRefuseAWriteEpochMoreThanOneAheadOfTheNodesRingWith409() throws Exception {
    try (NodeServer checked = NodeServer.start(OwnershipCheckedStore.wrap(store, () -> Rings.EPOCH_5),
        new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
        Store remote = RemoteStore.connectAdmin(checked.adminHostPort(), checked.adminSecret(), Duration.ofSeconds(10))) {

      Answer refused = send(checked, "PUT", "/v1/keys/6b?epoch=" + Long.MAX_VALUE, bytes("v"));
      Answer fence = send(checked, "POST", "/v1/fences?start=0&end=0&epoch=" + Long.MAX_VALUE, null);

      expect(refused, 409, "epoch-ahead", "routes by the ring of epoch 5, and only epochs up to 6");
      expect(fence, 409, "epoch-ahead", "fence of ");
      assertThatThrownBy(() -> remote.put(bytes("k"), bytes("v"), 9)).isInstanceOf(StoreException.EpochAhead.class)
          .hasMessageContaining("at epoch 9 refused");
      assertThat(store.get(bytes("k"))).isEmpty();
      assertThat(store.fences()).isEmpty();
    }
  }

  @Test
  void shouldAnswerAFeedTheLogNoLongerHoldsWith410() throws Exception {
    Answer gone = get("/v1/changes?start=0&end=0&after=" + (store.latestSequence() + 5));

    assertThat(gone.status()).isEqualTo(410);
    assertThat(gone.body()).contains("\"error\":\"feed-unavailable\"", "copy the range again");
  }

  @Test
  void shouldRefuseMalformedRequestsWithAMessageAndKeepServing() throws Exception {
    expect(get("/v2/anything"), 404, "unknown-path", "no endpoint GET /v2/anything");
    expect(send("POST", "/health", null), 405, "method-not-allowed", "POST is not allowed on /health; use GET");
    expect(send("PATCH", "/v1/keys/6b", null), 405, "method-not-allowed", "use GET, PUT, DELETE");
    expect(get("/v1/keys/zz"), 400, "bad-request", "key 'zz' is not hex");
    expect(get("/v1/keys/abc"), 400, "bad-request", "key 'abc' is not hex; give an even number of hex digits");
    expect(get("/v1/keys/"), 400, "bad-request", "key is empty (0 bytes); a key must be 1 to 16384 bytes");
    expect(send("PUT", "/v1/keys/6b", bytes("v")), 400, "bad-request", "parameter 'epoch' is missing");
    expect(send("PUT", "/v1/keys/6b?epoch=soon", bytes("v")), 400, "bad-request", "epoch 'soon' is not a number");
    expect(send("PUT", "/v1/keys/6b?epoch=1&ttl=5", bytes("v")), 400, "bad-request", "unknown parameter 'ttl'");
    expect(send("PUT", "/v1/keys/6b?epoch=1&epoch=2", bytes("v")), 400, "bad-request", "'epoch' is given twice");
    expect(send("PUT", "/v1/keys/6b?epoch=1", new byte[Store.MAX_VALUE_BYTES + 10]), 400, "bad-request",
        "value is 4194314 bytes; a value must be at most 4194304 bytes");
    expect(get("/v1/scan?start=xyz&end=1"), 400, "bad-request", "start 'xyz' is not a ring position");
    expect(get("/v1/scan?start=1&end=12345678901234567"), 400, "bad-request", "end '12345678901234567' is not a "
        + "ring position; give 1 to 16 hex digits");
    expect(get("/v1/scan?start=1&end=2&afterPosition=1"), 400, "bad-request", "a cursor needs both");
    expect(get("/v1/digest?start=1"), 400, "bad-request", "parameter 'end' is missing");
    expect(send("POST", "/v1/changes?after=0", new byte[15]), 400, "bad-request", "a ranges body of 15 bytes; it "
        + "holds 1 to 4096 ranges of 16 bytes each (start and end, big-endian)");
    expect(send("POST", "/v1/changes?after=0", null), 400, "bad-request", "a ranges body of 0 bytes");
    expect(send("POST", "/v1/changes?after=0", new byte[16 * 4097]), 400, "bad-request", "a ranges body of more "
        + "than 65536 bytes");
    expect(send("POST", "/v1/changes", new byte[16]), 400, "bad-request", "parameter 'after' is missing");
    expect(send("PUT", "/v1/changes?after=0", new byte[16]), 405, "method-not-allowed", "use GET, POST");

    assertThat(get("/health").status()).as("still serving").isEqualTo(200);
  }

  @Test
  void shouldSurviveRequestsNoHttpClientWouldSend() throws Exception {
    assertThat(raw("GET /v1/changes?start=1&end=2&after=%zz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"))
        .as("the JDK server refuses a malformed URI itself").startsWith("HTTP/1.1 400").contains("URISyntaxException");
    assertThat(raw("GET /v1/scan?start=0&end=0&afterPosition=1&afterKey=zz HTTP/1.1\r\nHost: x\r\n"
        + "Authorization: " + server.adminSecret().authorization() + "\r\nConnection: close\r\n\r\n"))
        .startsWith("HTTP/1.1 400").contains("afterKey 'zz' is not hex");
    assertThat(raw("PUT /v1/keys/6b?epoch=1 HTTP/1.1\r\nHost: x\r\nContent-Length: -5\r\n"
        + "Connection: close\r\n\r\n")).as("the JDK server refuses a negative length itself").startsWith("HTTP/1.1 ");
    raw("\u0000\u0001 garbage that is no request at all\r\n\r\n");
    raw("GET /health HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\nshort");

    assertThat(get("/health").status()).as("still serving").isEqualTo(200);
  }

  /** Sends bytes as they are on a fresh connection and returns whatever comes back before the server closes it. */
  private String raw(String request) throws IOException {
    try (Socket socket = new Socket(InetAddress.getLoopbackAddress(), server.adminPort())) {
      socket.setSoTimeout(2_000);
      socket.getOutputStream().write(request.getBytes(UTF_8));
      socket.shutdownOutput();
      ByteArrayOutputStream answer = new ByteArrayOutputStream();
      byte[] buffer = new byte[4096];
      try {
        for (int n = socket.getInputStream().read(buffer); n >= 0; n = socket.getInputStream().read(buffer)) {
          answer.write(buffer, 0, n);
        }
      } catch (SocketTimeoutException | SocketException e) {
        answer.write(("[" + e.getClass().getSimpleName() + "]").getBytes(UTF_8));
      }
      return answer.toString(UTF_8);
    }
  }

  @Test
  void shouldRefuseMalformedApplyBodiesAndWriteNothing() throws Exception {
    long latest = store.latestSequence();
    byte[] good = frames(Entry.of(bytes("a"), bytes("1")));
    byte[] truncated = java.util.Arrays.copyOf(good, good.length - 1);
    ByteArrayOutputStream huge = new ByteArrayOutputStream();
    new DataOutputStream(huge).writeInt(Integer.MAX_VALUE);
    ByteArrayOutputStream end = new ByteArrayOutputStream();
    DataOutputStream endFrame = new DataOutputStream(end);
    endFrame.writeInt(9);
    endFrame.writeByte(3);
    endFrame.writeLong(0);

    expect(send("POST", "/v1/apply", truncated), 400, "bad-request", "apply body: malformed frame at byte 0: the "
        + "input ends inside the frame");
    expect(send("POST", "/v1/apply", huge.toByteArray()), 400, "bad-request", "length 2147483647 is outside 1..");
    expect(send("POST", "/v1/apply", end.toByteArray()), 400, "bad-request", "apply body frame 0 is EndFrame; an "
        + "apply body holds ENTRY frames only");
    expect(send("POST", "/v1/apply", frames(new Entry(1, bytes("a"), bytes("1")))), 400, "bad-request",
        "entry 0: position 0000000000000001 is not the ring position");

    expect(send("POST", "/v1/load", truncated), 400, "bad-request", "load body: malformed frame at byte 0: the "
        + "input ends inside the frame");
    ByteArrayOutputStream deletion = new ByteArrayOutputStream();
    DataOutputStream deletionFrame = new DataOutputStream(deletion);
    deletionFrame.writeInt(1 + 8 + 4 + 1 + 4);
    deletionFrame.writeByte(1);
    deletionFrame.writeLong(Entry.positionOf(bytes("a")));
    deletionFrame.writeInt(1);
    deletionFrame.write(bytes("a"));
    deletionFrame.writeInt(-1);
    expect(send("POST", "/v1/load", deletion.toByteArray()), 400, "bad-request", "entry 0 of a load is a deletion");
    expect(send("POST", "/v1/load?extra=1", end.toByteArray()), 400, "bad-request", "extra");

    assertThat(store.latestSequence()).isEqualTo(latest);
    Answer loaded = send("POST", "/v1/load", java.util.Arrays.copyOf(end.toByteArray(), 13));
    assertThat(loaded.body()).isEqualTo("{\"sequence\":" + latest + ",\"entries\":0,\"bytes\":0,\"ingested\":false}\n");
    Answer applied = send("POST", "/v1/apply", good);
    assertThat(applied.status()).isEqualTo(200);
    assertThat(applied.body()).isEqualTo("{\"sequence\":" + store.latestSequence() + "}\n");
  }

  @Test
  void shouldKeepServingAfterAClientDropsAStreamHalfway() throws Exception {
    byte[] value = new byte[64 * 1024];
    for (int i = 0; i < 256; i++) {
      store.put(bytes("k" + i), value, 0);
    }
    HttpRequest scan = HttpRequest.newBuilder(URI.create("http://" + server.adminHostPort() + "/v1/scan?start=0&end=0"))
        .header("Authorization", server.adminSecret().authorization()).build();
    HttpResponse<InputStream> response = HTTP.send(scan, HttpResponse.BodyHandlers.ofInputStream());
    assertThat(response.headers().firstValue("Ringshift-Sequence")).hasValue(Long.toString(store.latestSequence()));
    try (InputStream body = response.body()) {
      assertThat(body.readNBytes(1000)).hasSize(1000);
    }

    for (int i = 0; i < 3; i++) {
      assertThat(get("/health").status()).isEqualTo(200);
      Store remote = RemoteStore.connectAdmin(server.adminHostPort(), server.adminSecret(), Duration.ofSeconds(5));
      assertThat(remote.digest(RingRange.whole()).keys()).isEqualTo(256);
    }
  }

  @Test
  void shouldRefuseAPortInUseNamingIt() {
    assertThatThrownBy(() -> NodeServer.start(store, server.address()))
        .isInstanceOf(StoreException.class)
        .hasMessageContaining("cannot serve the client port on 127.0.0.1:" + server.port() + ": the port is already "
            + "in use")
        .hasCauseInstanceOf(BindException.class);
  }

  private static void expect(Answer answer, int status, String error, String message) {
    assertThat(answer.status()).as(answer.body()).isEqualTo(status);
    assertThat(answer.body()).contains("\"error\":\"" + error + "\"").contains(message);
  }

  /** The ENTRY frames of {@code entries}, as a body of {@code POST /v1/apply} or {@code /v1/load} holds them. */
  static byte[] frames(Entry... entries) throws IOException {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    DataOutputStream out = new DataOutputStream(bytes);
    for (Entry e : entries) {
      out.writeInt(1 + 8 + 4 + e.key().length + 4 + e.value().length);
      out.writeByte(1);
      out.writeLong(e.position());
      out.writeInt(e.key().length);
      out.write(e.key());
      out.writeInt(e.value().length);
      out.write(e.value());
    }
    return bytes.toByteArray();
  }
}
