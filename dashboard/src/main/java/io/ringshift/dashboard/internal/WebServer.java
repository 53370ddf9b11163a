package io.ringshift.dashboard.internal;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The dashboard's HTTP server (the JDK's): the page and its script and style from the jar, the state of a cluster as
 * JSON ({@code /api/state}), the geometry of its rings ({@code /api/ring}) and a stream of server-sent events that
 * sends the state each time it changes ({@code /api/events}). Every handler reads only; nothing here changes the
 * control plane.
 */
public final class WebServer implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(WebServer.class);
  /** Event streams open at once; each holds a thread while its page is open. */
  static final int MAX_STREAMS = 32;
  /** A comment on an idle stream this often, so proxies and browsers keep it open. */
  static final long KEEPALIVE_MILLIS = 15_000;
  private static final Map<String, String> STATIC = Map.of(
      "/", "index.html", "/index.html", "index.html", "/app.js", "app.js", "/app.css", "app.css");
  private static final Map<String, String> TYPES = Map.of(
      "html", "text/html; charset=utf-8", "js", "text/javascript; charset=utf-8", "css", "text/css; charset=utf-8");

  private final HttpServer server;
  private final ExecutorService executor;
  private final StateFeed feed;
  private final String defaultCluster;
  private final AtomicInteger streams = new AtomicInteger();
  private volatile boolean open = true;

  private WebServer(HttpServer server, ExecutorService executor, StateFeed feed, String defaultCluster) {
    this.server = server;
    this.executor = executor;
    this.feed = feed;
    this.defaultCluster = defaultCluster;
  }

  /** Serves on {@code bind}; port 0 picks a free one. @throws IOException when it cannot listen there */
  public static WebServer start(InetSocketAddress bind, StateFeed feed, String defaultCluster) throws IOException {
    HttpServer server = HttpServer.create(bind, 64);
    ExecutorService executor = new ThreadPoolExecutor(4, MAX_STREAMS + 8, 60, TimeUnit.SECONDS,
        new SynchronousQueue<>(), r -> {
          Thread t = new Thread(r, "ringshift-dashboard-http");
          t.setDaemon(true);
          return t;
        }, new ThreadPoolExecutor.CallerRunsPolicy());
    WebServer web = new WebServer(server, executor, feed, defaultCluster);
    server.createContext("/", web::handle);
    server.setExecutor(executor);
    server.start();
    return web;
  }

  public InetSocketAddress address() {
    return server.getAddress();
  }

  private void handle(HttpExchange exchange) throws IOException {
    try (exchange) {
      String path = exchange.getRequestURI().getPath();
      if (!"GET".equals(exchange.getRequestMethod())) {
        send(exchange, 405, "text/plain; charset=utf-8", bytes(exchange.getRequestMethod() + " is not allowed; the "
            + "dashboard only reads (GET)"));
        return;
      }
      String cluster = query(exchange.getRequestURI(), "cluster", defaultCluster);
      switch (path) {
        case "/api/state" -> {
          StateFeed.Snapshot s = feed.snapshot(cluster);
          if (s == null) {
            send(exchange, 503, "application/json", bytes("{\"error\":\"the topics are being read\"}"));
          } else {
            send(exchange, 200, "application/json", s.json());
          }
        }
        case "/api/ring" -> {
          byte[] ring = feed.ring(cluster);
          send(exchange, ring == null ? 404 : 200, "application/json", ring == null
              ? bytes("{\"error\":\"cluster " + json(cluster) + " has no published ring yet\"}") : ring);
        }
        case "/api/events" -> events(exchange, cluster);
        default -> {
          String file = STATIC.get(path);
          if (file == null) {
            send(exchange, 404, "text/plain; charset=utf-8", bytes("no page " + path + "; the dashboard is at /"));
          } else {
            asset(exchange, file);
          }
        }
      }
    } catch (IOException e) {
      LOG.debug("a dashboard request ended early: {}", e.toString());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (RuntimeException e) {
      LOG.warn("a dashboard request failed", e);
      try {
        send(exchange, 500, "text/plain; charset=utf-8", bytes("the dashboard failed: " + e));
      } catch (IOException | RuntimeException ignored) {
        LOG.debug("could not report the failure: the response had started");
      }
    }
  }

  /** Sends the state now and each time it changes, as server-sent events named {@code state}. */
  private void events(HttpExchange exchange, String cluster) throws IOException, InterruptedException {
    if (streams.incrementAndGet() > MAX_STREAMS) {
      streams.decrementAndGet();
      send(exchange, 503, "text/plain; charset=utf-8", bytes("too many dashboard pages open (" + MAX_STREAMS
          + "); close one"));
      return;
    }
    try {
      exchange.getResponseHeaders().set("Content-Type", "text/event-stream; charset=utf-8");
      exchange.getResponseHeaders().set("Cache-Control", "no-store");
      exchange.sendResponseHeaders(200, 0);
      OutputStream out = exchange.getResponseBody();
      out.write(bytes("retry: 2000\n\n"));
      out.flush();
      long version = -1;
      while (open) {
        StateFeed.Snapshot s = feed.awaitNewer(cluster, version, KEEPALIVE_MILLIS);
        if (s != null && s.version() > version) {
          version = s.version();
          out.write(bytes("event: state\ndata: "));
          out.write(s.json());
          out.write(bytes("\n\n"));
        } else {
          out.write(bytes(": keepalive\n\n"));
        }
        out.flush();
      }
    } finally {
      streams.decrementAndGet();
    }
  }

  private void asset(HttpExchange exchange, String file) throws IOException {
    try (InputStream in = WebServer.class.getResourceAsStream("/io/ringshift/dashboard/static/" + file)) {
      if (in == null) {
        throw new IllegalStateException("the dashboard's " + file + " is missing from its jar");
      }
      String type = TYPES.get(file.substring(file.lastIndexOf('.') + 1));
      send(exchange, 200, type, in.readAllBytes());
    }
  }

  private static void send(HttpExchange exchange, int status, String type, byte[] body) throws IOException {
    exchange.getResponseHeaders().set("Content-Type", type);
    exchange.getResponseHeaders().set("Cache-Control", "no-store");
    exchange.sendResponseHeaders(status, body.length);
    exchange.getResponseBody().write(body);
  }

  static String query(URI uri, String name, String fallback) {
    String raw = uri.getRawQuery();
    if (raw == null) {
      return fallback;
    }
    for (String pair : raw.split("&")) {
      int eq = pair.indexOf('=');
      if (eq > 0 && pair.substring(0, eq).equals(name)) {
        String value = URLDecoder.decode(pair.substring(eq + 1), StandardCharsets.UTF_8);
        return value.isBlank() ? fallback : value;
      }
    }
    return fallback;
  }

  private static String json(String s) {
    return s.replace("\\", "\\\\").replace("\"", "\\\"");
  }

  private static byte[] bytes(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  @Override
  public void close() {
    open = false;
    server.stop(0);
    executor.shutdownNow();
  }
}
