package io.ringshift.cli.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code --metrics-port} and {@code --metrics-host} of the role commands, and the endpoint they start. */
class MetricsOptionsTest {
  private static final HttpClient HTTP = HttpClient.newHttpClient();

  @TempDir Path dir;

  private static HttpResponse<String> send(String method, String url) throws Exception {
    return HTTP.send(HttpRequest.newBuilder(URI.create(url)).method(method, HttpRequest.BodyPublishers.noBody())
        .build(), HttpResponse.BodyHandlers.ofString());
  }

  @Test
  void shouldServeTheRegistryInThePrometheusTextFormatWithTheJvmMeters() throws Exception {
    try (MetricsEndpoint endpoint = MetricsEndpoint.start("127.0.0.1",
        new InetSocketAddress(InetAddress.getLoopbackAddress(), 0))) {
      Counter.builder("ringshift.test.things").register(endpoint.registry()).increment(3);
      String url = "http://127.0.0.1:" + endpoint.port() + "/metrics";
      assertThat(endpoint.banner()).isEqualTo("; metrics at " + url);

      HttpResponse<String> scrape = send("GET", url);

      assertThat(scrape.statusCode()).isEqualTo(200);
      assertThat(scrape.headers().firstValue("Content-Type")).hasValue(MetricsEndpoint.CONTENT_TYPE);
      assertThat(scrape.body()).contains("# TYPE ringshift_test_things_total counter", "ringshift_test_things_total 3.0",
          "jvm_memory_used_bytes", "jvm_threads_live_threads", "process_uptime_seconds", "system_cpu_count");
      assertThat(send("POST", url).statusCode()).isEqualTo(405);
      assertThat(send("GET", "http://127.0.0.1:" + endpoint.port() + "/other").statusCode()).isEqualTo(404);
    }
  }

  @Test
  void shouldHaveNoEndpointWithoutAPort() {
    try (MetricsEndpoint endpoint = MetricsEndpoint.disabled()) {
      assertThat(endpoint.port()).isEqualTo(-1);
      assertThat(endpoint.banner()).isEmpty();
      assertThat(endpoint.registry()).isInstanceOf(SimpleMeterRegistry.class);
    }
  }

  private Cli.Result worker(String... metrics) {
    java.util.List<String> all = new java.util.ArrayList<>(java.util.List.of("worker", "--node", "n=h:1",
        "--node-secret-file", Fixtures.write(dir.resolve("admin.secret"), "0123456789abcdef0123456789abcdef\n")
            .toString(), "--bootstrap", "127.0.0.1:9", "--timeout", "1"));
    all.addAll(java.util.List.of(metrics));
    return Cli.run(all.toArray(String[]::new));
  }

  @Test
  void shouldRefuseBadMetricsOptionsNamingTheValueAndTheRule() throws Exception {
    Cli.Result port = worker("--metrics-port", "70000");
    assertThat(port.exitCode()).as(port.toString()).isEqualTo(2);
    assertThat(port.stderr()).isEqualTo("ringshift: --metrics-port was 70000; it must be 0 to 65535 (0 picks a free "
        + "port)\n");
    assertThat(worker("--metrics-port", "-1").stderr()).startsWith("ringshift: --metrics-port was -1;");
    assertThat(worker("--metrics-port", "ninety").stderr())
        .startsWith("ringshift: Invalid value for option '--metrics-port': 'ninety' is not an int");
    assertThat(worker("--metrics-host", "127.0.0.1").stderr()).isEqualTo("ringshift: --metrics-host 127.0.0.1 needs "
        + "--metrics-port: without a port there is no metrics endpoint\n");
    assertThat(worker("--metrics-port", "0", "--metrics-host", "no-such-host.invalid").stderr())
        .startsWith("ringshift: --metrics-host was \"no-such-host.invalid\"; it must be an IP address or a host name");
    try (ServerSocket taken = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      Cli.Result inUse = worker("--metrics-port", String.valueOf(taken.getLocalPort()), "--metrics-host", "127.0.0.1");
      assertThat(inUse.exitCode()).isEqualTo(2);
      assertThat(inUse.stderr()).startsWith("ringshift: --metrics-port " + taken.getLocalPort() + " on 127.0.0.1 "
          + "cannot be used (");
    }
  }

  @Test
  void shouldOfferTheOptionsOnEveryRoleCommand() {
    for (String command : new String[] {"orchestrator", "worker", "publisher", "node"}) {
      Cli.Result help = Cli.run(command, "--help");
      assertThat(help.stdout()).as(command).contains("--metrics-port=PORT", "--metrics-host=HOST");
    }
  }
}
