package io.ringshift.cli.internal;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.jvm.ClassLoaderMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmGcMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmMemoryMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmThreadMetrics;
import io.micrometer.core.instrument.binder.system.ProcessorMetrics;
import io.micrometer.core.instrument.binder.system.UptimeMetrics;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.io.IOException;
import java.io.OutputStream;
import java.net.BindException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * The {@code /metrics} endpoint of a role process (docs/metrics.md): a Prometheus registry with the JVM's binders,
 * which the role registers its meters on, served as the Prometheus text format by the JDK's HTTP server on one
 * thread. {@link #disabled()} is the registry of a process without the endpoint: the role keeps its meters, nobody
 * reads them.
 */
public final class MetricsEndpoint implements AutoCloseable {
  static {
    // The JDK server writes a response's headers and body separately; without TCP_NODELAY Nagle's algorithm holds
    // the body back until the scraper's delayed ACK, about 40 ms per scrape on Linux (measured: a 50 ms median
    // against 20 ms). Read once, when the server classes load, which may be here, before a node's own server; a
    // value given on the command line wins.
    if (System.getProperty("sun.net.httpserver.nodelay") == null) {
      System.setProperty("sun.net.httpserver.nodelay", "true");
    }
  }

  /** The Prometheus text exposition format, version 0.0.4. */
  static final String CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

  private final MeterRegistry registry;
  private final HttpServer server;
  private final ExecutorService thread;
  private final JvmGcMetrics gc;
  private final String url;

  private MetricsEndpoint(MeterRegistry registry, HttpServer server, ExecutorService thread, JvmGcMetrics gc,
      String url) {
    this.registry = registry;
    this.server = server;
    this.thread = thread;
    this.gc = gc;
    this.url = url;
  }

  /** No endpoint: a registry nobody scrapes. */
  public static MetricsEndpoint disabled() {
    return new MetricsEndpoint(new SimpleMeterRegistry(), null, null, null, null);
  }

  /**
   * Serves {@code GET /metrics} on {@code bind} (port 0 picks a free one).
   *
   * @param host how the URL names the host (as given on the command line)
   * @throws BindException when the port is in use
   * @throws IOException when the address cannot be bound otherwise
   */
  public static MetricsEndpoint start(String host, InetSocketAddress bind) throws IOException {
    PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    HttpServer server = HttpServer.create(bind, 16);
    new ClassLoaderMetrics().bindTo(registry);
    new JvmMemoryMetrics().bindTo(registry);
    JvmGcMetrics gc = new JvmGcMetrics();
    gc.bindTo(registry);
    new JvmThreadMetrics().bindTo(registry);
    new ProcessorMetrics().bindTo(registry);
    new UptimeMetrics().bindTo(registry);
    server.createContext("/metrics", exchange -> serve(exchange, registry));
    server.createContext("/", exchange -> answer(exchange, 404, "no endpoint " + exchange.getRequestURI().getPath()
        + "; this port serves GET /metrics (docs/metrics.md)\n"));
    ExecutorService thread = Executors.newSingleThreadExecutor(r -> {
      Thread t = new Thread(r, "ringshift-metrics-http");
      t.setDaemon(true);
      return t;
    });
    server.setExecutor(thread);
    server.start();
    String h = host.contains(":") ? "[" + host + "]" : host;
    return new MetricsEndpoint(registry, server, thread, gc,
        "http://" + h + ":" + server.getAddress().getPort() + "/metrics");
  }

  private static void serve(HttpExchange exchange, PrometheusMeterRegistry registry) throws IOException {
    if (!exchange.getRequestMethod().equals("GET") && !exchange.getRequestMethod().equals("HEAD")) {
      exchange.getResponseHeaders().set("Allow", "GET, HEAD");
      answer(exchange, 405, exchange.getRequestMethod() + " is not allowed on /metrics; use GET\n");
      return;
    }
    byte[] body = registry.scrape().getBytes(StandardCharsets.UTF_8);
    exchange.getResponseHeaders().set("Content-Type", CONTENT_TYPE);
    boolean head = exchange.getRequestMethod().equals("HEAD");
    exchange.sendResponseHeaders(200, head ? -1 : body.length);
    try (OutputStream out = exchange.getResponseBody()) {
      if (!head) {
        out.write(body);
      }
    }
  }

  private static void answer(HttpExchange exchange, int status, String text) throws IOException {
    byte[] body = text.getBytes(StandardCharsets.UTF_8);
    exchange.getResponseHeaders().set("Content-Type", "text/plain; charset=utf-8");
    exchange.sendResponseHeaders(status, body.length);
    try (OutputStream out = exchange.getResponseBody()) {
      out.write(body);
    }
  }

  /** Where the role registers its meters. */
  public MeterRegistry registry() {
    return registry;
  }

  /** The port it listens on; -1 when disabled. */
  public int port() {
    return server == null ? -1 : server.getAddress().getPort();
  }

  /** For the command's banner line: {@code "; metrics at http://HOST:PORT/metrics"}, or nothing when disabled. */
  public String banner() {
    return url == null ? "" : "; metrics at " + url;
  }

  /** Stops serving and releases the JVM binders. Idempotent. */
  @Override
  public void close() {
    if (server != null) {
      server.stop(0);
      thread.shutdownNow();
      gc.close();
    }
    registry.close();
  }
}
