package io.ringshift.storage;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.ringshift.ring.RingRange;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 11, defect 6: one port used to serve both clients and administration without authentication, so anyone who
 * could PUT could also wipe the node ({@code DELETE /v1/range}), bypass the fences ({@code POST /v1/apply}), lift
 * them ({@code DELETE /v1/fences}) or fence every write away. Now the client port serves health and the key API
 * only, and the admin listener answers only requests that carry the admin secret; every refusal changes nothing.
 */
class NodeListenersTest {
  private static final HttpClient HTTP = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

  @TempDir Path dir;
  private Store store;
  private NodeServer server;
  private AdminSecret secret;

  @BeforeEach
  void start() {
    store = RocksStore.open(dir.resolve("node"), "node-7", "az-2");
    secret = AdminSecret.of("0123456789abcdef-the-fleet-secret");
    InetAddress loopback = InetAddress.getLoopbackAddress();
    server = NodeServer.start(store, new InetSocketAddress(loopback, 0), new InetSocketAddress(loopback, 0), secret,
        4);
    store.put(bytes("kept"), bytes("v1"), 0);
  }

  @AfterEach
  void stop() {
    server.close();
    store.close();
  }

  private record Answer(int status, String body, HttpResponse<byte[]> response) {}

  private static Answer send(String hostPort, String method, String path, byte[] body, String authorization)
      throws Exception {
    HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("http://" + hostPort + path))
        .timeout(Duration.ofSeconds(10))
        .method(method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofByteArray(body));
    if (authorization != null) {
      request.header("Authorization", authorization);
    }
    HttpResponse<byte[]> response = HTTP.send(request.build(), HttpResponse.BodyHandlers.ofByteArray());
    return new Answer(response.statusCode(), new String(response.body(), UTF_8), response);
  }

  /** What the issue listed, each as a client could send it. */
  private static final List<String[]> ADMIN_CALLS = List.of(
      new String[] {"DELETE", "/v1/range?start=0&end=0&epoch=0"},
      new String[] {"POST", "/v1/apply"},
      new String[] {"POST", "/v1/load"},
      new String[] {"DELETE", "/v1/fences?start=0&end=0&epoch=5"},
      new String[] {"POST", "/v1/fences?start=0&end=0&epoch=1"},
      new String[] {"GET", "/v1/scan?start=0&end=0"},
      new String[] {"GET", "/v1/changes?start=0&end=0&after=0"},
      new String[] {"GET", "/v1/digest?start=0&end=0"},
      new String[] {"GET", "/v1/fences"});

  @Test
  void shouldRefuseEveryMigrationAndAdminEndpointOnTheClientPortNamingTheAdminListenerAndChangeNothing()
      throws Exception {
    store.fence(RingRange.whole(), 5);
    long sequence = store.latestSequence();
    for (String[] call : ADMIN_CALLS) {
      Answer a = send(server.hostPort(), call[0], call[1], call[0].equals("POST") ? new byte[8] : null, null);

      assertThat(a.status()).as("%s %s", call[0], call[1]).isEqualTo(404);
      assertThat(a.body()).contains("\"error\":\"admin-endpoint\"",
          "is not served on the client port: it is a migration and admin endpoint, served on the node's admin "
              + "listener (port " + server.adminPort() + ")");
    }
    // Even with the secret: the client port does not serve them.
    assertThat(send(server.hostPort(), "DELETE", "/v1/range?start=0&end=0&epoch=0", null, secret.authorization())
        .status()).isEqualTo(404);
    assertThat(store.get(bytes("kept"))).as("nothing deleted").isPresent();
    assertThat(store.fences()).as("the fence stays").hasSize(1);
    assertThat(store.latestSequence()).isEqualTo(sequence);
  }

  @Test
  void shouldServeHealthAndTheKeyApiOnTheClientPort() throws Exception {
    assertThat(send(server.hostPort(), "GET", "/health", null, null).body()).contains("\"nodeId\":\"node-7\"");
    Answer put = send(server.hostPort(), "PUT", "/v1/keys/" + hex("k") + "?epoch=0", bytes("v"), null);
    assertThat(put.status()).as(put.body()).isEqualTo(200);
    assertThat(send(server.hostPort(), "GET", "/v1/keys/" + hex("k"), null, null).body()).isEqualTo("v");
    assertThat(send(server.hostPort(), "DELETE", "/v1/keys/" + hex("k") + "?epoch=0", null, null).status())
        .isEqualTo(200);

    Store client = RemoteStore.connect(server.hostPort(), Duration.ofSeconds(5));
    assertThat(client.put(bytes("c"), bytes("1"), 0)).isInstanceOf(WriteResult.Applied.class);
    assertThat(client.get(bytes("c"))).isPresent();
    assertThatThrownBy(() -> client.digest(RingRange.whole())).isInstanceOf(StoreException.Unauthorized.class)
        .hasMessageContaining("served on the node's admin listener (port " + server.adminPort() + ")");
    client.close();
  }

  @Test
  void shouldAnswerOnlyRequestsWithTheAdminSecretOnTheAdminListenerAndChangeNothingOtherwise() throws Exception {
    long sequence = store.latestSequence();
    for (String authorization : new String[] {null, "Bearer not-the-secret-at-all", "Basic "
        + java.util.Base64.getEncoder().encodeToString(("x:" + "0123456789abcdef-the-fleet-secret").getBytes(UTF_8)),
        secret.authorization() + "x"}) {
      for (String[] call : ADMIN_CALLS) {
        Answer a = send(server.adminHostPort(), call[0], call[1], call[0].equals("POST") ? new byte[8] : null,
            authorization);

        assertThat(a.status()).as("%s %s with %s", call[0], call[1], authorization).isEqualTo(401);
        assertThat(a.body()).contains("\"error\":\"unauthorized\"", "refused, nothing changed",
            authorization == null ? "carried no admin secret" : "carried a wrong admin secret");
        assertThat(a.response().headers().firstValue("WWW-Authenticate")).hasValue(
            "Bearer realm=\"ringshift-node-admin\"");
      }
      assertThat(send(server.adminHostPort(), "PUT", "/v1/keys/" + hex("x") + "?epoch=0", bytes("v"), authorization)
          .status()).isEqualTo(401);
    }
    assertThat(store.get(bytes("kept"))).isPresent();
    assertThat(store.get(bytes("x"))).isEmpty();
    assertThat(store.fences()).isEmpty();
    assertThat(store.latestSequence()).isEqualTo(sequence);

    Store unauthenticated = RemoteStore.connect(server.adminHostPort(), Duration.ofSeconds(5));
    assertThatThrownBy(() -> unauthenticated.deleteRange(RingRange.whole(), 0))
        .isInstanceOf(StoreException.Unauthorized.class).hasMessageContaining("carried no admin secret");
    Store wrong = RemoteStore.connectAdmin(server.adminHostPort(), AdminSecret.generate(), Duration.ofSeconds(5));
    assertThatThrownBy(wrong::info).isInstanceOf(StoreException.Unauthorized.class)
        .hasMessageContaining("carried a wrong admin secret");
    assertThat(((StoreException) org.assertj.core.api.Assertions.catchThrowable(wrong::info)).retriable()).isFalse();

    Store admin = RemoteStore.connectAdmin(server.adminHostPort(), secret, Duration.ofSeconds(5));
    assertThat(admin.digest(RingRange.whole()).keys()).isEqualTo(1);
    assertThat(admin.fence(RingRange.whole(), 3).epoch()).isEqualTo(3);
    assertThat(admin.deleteRange(RingRange.whole(), 0)).isEqualTo(1);
    unauthenticated.close();
    wrong.close();
    admin.close();
  }

  @Test
  void shouldRefuseTheSameAddressForBothListenersAndAMissingSecret() {
    InetSocketAddress taken = server.address();
    assertThatThrownBy(() -> NodeServer.start(store, taken, taken, secret, 1))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("they must be different ports");
    assertThatThrownBy(() -> NodeServer.start(store, new InetSocketAddress(InetAddress.getLoopbackAddress(), 0),
        new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), null, 1))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("admin secret");
    assertThatThrownBy(() -> NodeServer.start(store, new InetSocketAddress(InetAddress.getLoopbackAddress(), 0),
        new InetSocketAddress(InetAddress.getLoopbackAddress(), server.adminPort()), secret, 1))
        .isInstanceOf(StoreException.class).hasMessageContaining("cannot serve the admin listener on")
        .hasMessageContaining("already in use");
  }

  @Test
  void shouldKeepSecretsToTheRulesAndNeverShowThem() throws Exception {
    assertThatThrownBy(() -> AdminSecret.of("short")).isInstanceOf(IllegalArgumentException.class)
        .hasMessage("the admin secret has 5 characters; it must have 16 to 512 (a node writes one of 32 random bytes "
            + "in base64url when none is given)");
    assertThatThrownBy(() -> AdminSecret.of("with a space inside it")).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("not printable ASCII (code 32 at position 5)");
    AdminSecret generated = AdminSecret.generate();
    assertThat(generated.toString()).isEqualTo("AdminSecret[43 characters, not shown]");
    assertThat(generated.authorization()).startsWith("Bearer ").hasSize(7 + 43);

    Path file = dir.resolve("secrets").resolve("admin.secret");
    AdminSecret created = AdminSecret.readOrCreate(file);
    assertThat(AdminSecret.readOrCreate(file)).as("kept once written").isEqualTo(created);
    assertThat(AdminSecret.read(file)).isEqualTo(created);
    assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(file))).isEqualTo("rw-------");
    Files.writeString(dir.resolve("bad.secret"), "tooshort\n");
    assertThatThrownBy(() -> AdminSecret.read(dir.resolve("bad.secret"))).isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith("admin secret file " + dir.resolve("bad.secret") + ": the admin secret has 8 "
            + "characters");
    assertThatThrownBy(() -> AdminSecret.read(dir.resolve("absent"))).isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith("cannot read the admin secret file " + dir.resolve("absent"));
  }

  private static byte[] bytes(String s) {
    return s.getBytes(UTF_8);
  }

  private static String hex(String s) {
    return java.util.HexFormat.of().formatHex(bytes(s));
  }
}
