package io.ringshift.storage;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.ringshift.ring.RingRange;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A node's meters follow what its two listeners answer (docs/metrics.md). */
class NodeMetricsTest {
  private static final Duration TIMEOUT = Duration.ofSeconds(10);

  @TempDir Path dir;
  private final MeterRegistry registry = new SimpleMeterRegistry();
  private Store store;
  private NodeServer server;
  private Store client;
  private Store admin;

  @BeforeEach
  void start() {
    store = RocksStore.open(dir.resolve("node"), "node-1", "az-1");
    InetAddress loopback = InetAddress.getLoopbackAddress();
    server = NodeServer.start(store, new InetSocketAddress(loopback, 0), new InetSocketAddress(loopback, 0),
        AdminSecret.of("0123456789abcdef-metrics-secret"), 4, registry);
    client = RemoteStore.connect(server.hostPort(), TIMEOUT);
    admin = RemoteStore.connectAdmin(server.adminHostPort(), server.adminSecret(), TIMEOUT);
  }

  @AfterEach
  void stop() {
    client.close();
    admin.close();
    server.close();
    store.close();
  }

  private double count(String name, String tag, String value) {
    return registry.get(name).tag(tag, value).counter().count();
  }

  @Test
  void shouldCountWritesReadsAndAppliedEntries() {
    client.put(bytes("a"), bytes("1"), 3);
    client.put(bytes("b"), bytes("2"), 3);
    client.delete(bytes("a"), 3);
    client.get(bytes("b"));
    client.get(bytes("a"));
    client.get(bytes("never-written"));
    admin.apply(java.util.List.of(Entry.of(bytes("c"), bytes("3")), Entry.of(bytes("d"), bytes("4"))));

    assertThat(count("ringshift.node.writes", "op", "put")).isEqualTo(2);
    assertThat(count("ringshift.node.writes", "op", "delete")).isEqualTo(1);
    assertThat(count("ringshift.node.reads", "result", "hit")).isEqualTo(1);
    assertThat(count("ringshift.node.reads", "result", "miss")).isEqualTo(2);
    assertThat(registry.get("ringshift.node.applied.entries").counter().count()).isEqualTo(2);
  }

  @Test
  void shouldCountFencesHeldAndWritesTheyRefuseByReason() {
    assertThat(registry.get("ringshift.node.fences").gauge().value()).isZero();
    admin.fence(RingRange.whole(), 5);
    assertThat(registry.get("ringshift.node.fences").gauge().value()).isEqualTo(1);

    WriteResult refused = client.put(bytes("a"), bytes("1"), 4);

    assertThat(refused).isInstanceOf(WriteResult.RetryWithEpoch.class);
    assertThat(count("ringshift.node.refusals", "reason", "fenced")).isEqualTo(1);
    assertThat(count("ringshift.node.writes", "op", "put")).isZero();
    admin.unfence(RingRange.whole(), 5);
    assertThat(registry.get("ringshift.node.fences").gauge().value()).isZero();
  }

  @Test
  void shouldCountRangeDeletesAndTheKeysTheyRemove() {
    client.put(bytes("a"), bytes("1"), 0);
    client.put(bytes("b"), bytes("2"), 0);

    admin.deleteRange(RingRange.whole(), 1);

    assertThat(registry.get("ringshift.node.range.deletes").counter().count()).isEqualTo(1);
    assertThat(registry.get("ringshift.node.range.deleted.keys").counter().count()).isEqualTo(2);
  }

  @Test
  void shouldCountRefusedRequestsByTheirErrorCode() throws Exception {
    Store wrongSecret = RemoteStore.connectAdmin(server.adminHostPort(), AdminSecret.of("a-wrong-secret-of-16+chars"),
        TIMEOUT);
    assertThatThrownBy(() -> wrongSecret.fences()).isInstanceOf(StoreException.class);
    wrongSecret.close();
    HttpClient http = HttpClient.newHttpClient();
    int status = http.send(HttpRequest.newBuilder(URI.create("http://" + server.hostPort() + "/v1/scan?start=0&end=0"))
        .build(), HttpResponse.BodyHandlers.discarding()).statusCode();
    int bad = http.send(HttpRequest.newBuilder(URI.create("http://" + server.hostPort() + "/v1/keys/zz?epoch=1"))
        .PUT(HttpRequest.BodyPublishers.ofString("x")).build(), HttpResponse.BodyHandlers.discarding()).statusCode();

    assertThat(status).isEqualTo(404);
    assertThat(bad).isEqualTo(400);
    assertThat(count("ringshift.node.refusals", "reason", "unauthorized")).isEqualTo(1);
    assertThat(count("ringshift.node.refusals", "reason", "admin-endpoint")).isEqualTo(1);
    assertThat(count("ringshift.node.refusals", "reason", "bad-request")).isEqualTo(1);
    assertThat(count("ringshift.node.errors", "code", "internal")).isZero();
  }

  @Test
  void shouldRegisterEveryReasonUpFrontAndRemoveTheMetersOnClose() {
    assertThat(registry.get("ringshift.node.refusals").counters()).hasSize(11);
    assertThat(registry.get("ringshift.node.errors").counters()).hasSize(2);

    server.close();

    assertThat(registry.getMeters()).isEmpty();
  }

  private static byte[] bytes(String s) {
    return s.getBytes(UTF_8);
  }
}
