package io.ringshift.storage;

import com.sun.net.httpserver.HttpServer;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.ringshift.storage.internal.http.HandlerPool;
import io.ringshift.storage.internal.http.NodeHandler;
import io.ringshift.storage.internal.http.NodeMetrics;
import java.io.IOException;
import java.net.BindException;
import java.net.InetSocketAddress;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * Serves a {@link Store} over the node's HTTP/1.1 API (docs/storage.md, "The HTTP API"), on the JDK's own HTTP
 * server with a pool of handler threads sized by its load (up to a maximum) shared by its two listeners (docs/storage.md, "Two listeners"): the
 * <b>client port</b> serves {@code /health} and the key API ({@code GET}/{@code PUT}/{@code DELETE /v1/keys/KEY}),
 * and the <b>admin listener</b> serves every endpoint (scans, change feeds, apply, digests, fences, range deletes)
 * to requests that carry the admin secret ({@link AdminSecret}). {@link RemoteStore} is its client.
 *
 * <p>Guarantees: scans and change feeds stream in bounded memory, paced by the client; a malformed request gets
 * a 4xx answer with a message and never stops the server; {@link #close()} stops serving and ends the streams in
 * progress. The server does not own the store: close the store after the server.
 */
public final class NodeServer implements AutoCloseable {
  /**
   * Most handler threads by default: every open scan or feed holds one while it streams. Threads start as requests
   * need them and end after {@value #IDLE_SECONDS} s idle, so a quiet node holds none.
   */
  public static final int DEFAULT_THREADS = 32;
  /** How long a handler thread waits for a request before it ends. */
  static final int IDLE_SECONDS = 30;

  static {
    // The JDK server writes a response's headers and body separately; without TCP_NODELAY Nagle's algorithm holds
    // the body back until the client's delayed ACK, about 40 ms per small answer on Linux. Read once, when the
    // server classes load; a value given on the command line wins.
    if (System.getProperty("sun.net.httpserver.nodelay") == null) {
      System.setProperty("sun.net.httpserver.nodelay", "true");
    }
  }

  private final HttpServer server;
  private final HttpServer admin;
  private final ThreadPoolExecutor handlers;
  private final InetSocketAddress address;
  private final InetSocketAddress adminAddress;
  private final AdminSecret secret;
  private final NodeMetrics metrics;

  private NodeServer(HttpServer server, HttpServer admin, ThreadPoolExecutor handlers, AdminSecret secret,
      NodeMetrics metrics) {
    this.server = server;
    this.admin = admin;
    this.handlers = handlers;
    this.address = server.getAddress();
    this.adminAddress = admin.getAddress();
    this.secret = secret;
    this.metrics = metrics;
  }

  /**
   * Serves {@code store} on {@code bind} (port 0 picks a free port) with {@link #DEFAULT_THREADS} threads, and its
   * admin listener on a free port of the same address with a new random secret ({@link #adminSecret()}): for tests
   * and embedding.
   */
  public static NodeServer start(Store store, InetSocketAddress bind) {
    return start(store, bind, DEFAULT_THREADS);
  }

  /** As {@link #start(Store, InetSocketAddress)}, with {@code threads} handler threads. */
  public static NodeServer start(Store store, InetSocketAddress bind, int threads) {
    if (bind == null) {
      throw new IllegalArgumentException("a node server needs a store and an address to bind");
    }
    return start(store, bind, new InetSocketAddress(bind.getAddress(), 0), AdminSecret.generate(), threads);
  }

  /**
   * Serves {@code store}: the client port on {@code bind}, the admin listener on {@code adminBind} (port 0 picks a
   * free one), which answers only requests that carry {@code secret}; {@code threads} handler threads serve both.
   *
   * @throws StoreException when an address cannot be bound; its cause is a {@link BindException} when the port is
   *     already in use
   * @throws IllegalArgumentException for a null store, address or secret, the same address for both listeners, or
   *     fewer than 1 thread
   */
  public static NodeServer start(Store store, InetSocketAddress bind, InetSocketAddress adminBind, AdminSecret secret,
      int threads) {
    return start(store, bind, adminBind, secret, threads, new SimpleMeterRegistry());
  }

  /**
   * As {@link #start(Store, InetSocketAddress, InetSocketAddress, AdminSecret, int)}, with the node's meters
   * (writes, reads, refusals by reason, fences held, range deletes: docs/metrics.md) on {@code registry}; they are
   * removed from it when the server closes.
   */
  public static NodeServer start(Store store, InetSocketAddress bind, InetSocketAddress adminBind, AdminSecret secret,
      int threads, MeterRegistry registry) {
    if (store == null || bind == null || adminBind == null) {
      throw new IllegalArgumentException("a node server needs a store and an address to bind for each listener");
    }
    if (secret == null) {
      throw new IllegalArgumentException("a node server needs the admin secret of its admin listener");
    }
    if (bind.getPort() != 0 && bind.equals(adminBind)) {
      throw new IllegalArgumentException("the client port and the admin listener were both " + describe(bind)
          + "; they must be different ports");
    }
    if (threads < 1) {
      throw new IllegalArgumentException("threads was " + threads + "; a node server needs at least 1");
    }
    if (registry == null) {
      throw new IllegalArgumentException("a node server needs a meter registry for its meters");
    }
    HttpServer server = bind(bind, "the client port");
    HttpServer admin;
    try {
      admin = bind(adminBind, "the admin listener");
    } catch (StoreException e) {
      server.stop(0);
      throw e;
    }
    ThreadPoolExecutor handlers = HandlerPool.create("ringshift-node-http", threads, IDLE_SECONDS, TimeUnit.SECONDS);
    NodeMetrics metrics = new NodeMetrics(registry, store);
    server.createContext("/", new NodeHandler(store, NodeHandler.Listener.CLIENT, secret,
        () -> admin.getAddress().getPort(), metrics));
    admin.createContext("/", new NodeHandler(store, NodeHandler.Listener.ADMIN, secret,
        () -> server.getAddress().getPort(), metrics));
    server.setExecutor(handlers);
    admin.setExecutor(handlers);
    server.start();
    admin.start();
    return new NodeServer(server, admin, handlers, secret, metrics);
  }

  private static HttpServer bind(InetSocketAddress bind, String what) {
    try {
      return HttpServer.create(bind, 128);
    } catch (BindException e) {
      throw new StoreException("cannot serve " + what + " on " + describe(bind) + ": the port is already in use ("
          + e.getMessage() + ")", e);
    } catch (IOException e) {
      throw new StoreException("cannot serve " + what + " on " + describe(bind) + ": " + e.getMessage(), e);
    }
  }

  private static String describe(InetSocketAddress a) {
    return (a.getAddress() == null ? a.getHostString() : a.getAddress().getHostAddress()) + ":" + a.getPort();
  }

  /** The port the server listens on (the one picked when started on port 0). */
  public int port() {
    return address.getPort();
  }

  /** The address the server listens on. */
  public InetSocketAddress address() {
    return address;
  }

  /** {@code host:port} of the client port, as {@link RemoteStore#connect} takes it. */
  public String hostPort() {
    return hostPort(address);
  }

  /** The port of the admin listener. */
  public int adminPort() {
    return adminAddress.getPort();
  }

  /** {@code host:port} of the admin listener, as {@link RemoteStore#connectAdmin} takes it. */
  public String adminHostPort() {
    return hostPort(adminAddress);
  }

  /** The secret the admin listener checks. */
  public AdminSecret adminSecret() {
    return secret;
  }

  private static String hostPort(InetSocketAddress a) {
    String host = a.getAddress().getHostAddress();
    return (host.contains(":") ? "[" + host + "]" : host) + ":" + a.getPort();
  }

  /**
   * Stops accepting requests, closes every connection (ending the streams in progress) and waits up to 10 s for
   * the handler threads to finish. Idempotent.
   */
  /** Handler threads alive now: they start as requests need them and end when idle. */
  int handlerThreads() {
    return handlers.getPoolSize();
  }

  @Override
  public void close() {
    server.stop(0);
    admin.stop(0);
    metrics.close();
    handlers.shutdownNow();
    try {
      if (!handlers.awaitTermination(10, TimeUnit.SECONDS)) {
        throw new StoreException("the node server on " + hostPort() + " did not stop its handlers within 10 s");
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  @Override
  public String toString() {
    return "NodeServer[" + hostPort() + ", admin " + adminHostPort() + "]";
  }
}
