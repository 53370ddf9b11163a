package io.ringshift.storage;

import com.sun.net.httpserver.HttpServer;
import io.ringshift.storage.internal.http.NodeHandler;
import java.io.IOException;
import java.net.BindException;
import java.net.InetSocketAddress;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Serves a {@link Store} over the node's HTTP/1.1 API (docs/storage.md, "The HTTP API"), on the JDK's own HTTP
 * server with a fixed pool of handler threads. {@link RemoteStore} is its client.
 *
 * <p>Guarantees: scans and change feeds stream in bounded memory, paced by the client; a malformed request gets
 * a 4xx answer with a message and never stops the server; {@link #close()} stops serving and ends the streams in
 * progress. The server does not own the store: close the store after the server.
 */
public final class NodeServer implements AutoCloseable {
  /** Handler threads by default: every open scan or feed holds one while it streams. */
  public static final int DEFAULT_THREADS = 32;

  static {
    // The JDK server writes a response's headers and body separately; without TCP_NODELAY Nagle's algorithm holds
    // the body back until the client's delayed ACK, about 40 ms per small answer on Linux. Read once, when the
    // server classes load; a value given on the command line wins.
    if (System.getProperty("sun.net.httpserver.nodelay") == null) {
      System.setProperty("sun.net.httpserver.nodelay", "true");
    }
  }

  private final HttpServer server;
  private final ExecutorService handlers;
  private final InetSocketAddress address;

  private NodeServer(HttpServer server, ExecutorService handlers) {
    this.server = server;
    this.handlers = handlers;
    this.address = server.getAddress();
  }

  /** Serves {@code store} on {@code bind} (port 0 picks a free port) with {@link #DEFAULT_THREADS} threads. */
  public static NodeServer start(Store store, InetSocketAddress bind) {
    return start(store, bind, DEFAULT_THREADS);
  }

  /**
   * Serves {@code store} on {@code bind} with {@code threads} handler threads.
   *
   * @throws StoreException when the address cannot be bound; its cause is a {@link BindException} when the port is
   *     already in use
   * @throws IllegalArgumentException for a null store or address, or fewer than 1 thread
   */
  public static NodeServer start(Store store, InetSocketAddress bind, int threads) {
    if (store == null || bind == null) {
      throw new IllegalArgumentException("a node server needs a store and an address to bind");
    }
    if (threads < 1) {
      throw new IllegalArgumentException("threads was " + threads + "; a node server needs at least 1");
    }
    HttpServer server;
    try {
      server = HttpServer.create(bind, 128);
    } catch (BindException e) {
      throw new StoreException("cannot serve on " + describe(bind) + ": the port is already in use ("
          + e.getMessage() + ")", e);
    } catch (IOException e) {
      throw new StoreException("cannot serve on " + describe(bind) + ": " + e.getMessage(), e);
    }
    AtomicInteger count = new AtomicInteger();
    ThreadPoolExecutor handlers = new ThreadPoolExecutor(threads, threads, 60, TimeUnit.SECONDS,
        new LinkedBlockingQueue<>(), r -> {
          Thread t = new Thread(r, "ringshift-node-http-" + count.incrementAndGet());
          t.setDaemon(true);
          return t;
        });
    server.createContext("/", new NodeHandler(store));
    server.setExecutor(handlers);
    server.start();
    return new NodeServer(server, handlers);
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

  /** {@code host:port} as {@link RemoteStore#connect} takes it. */
  public String hostPort() {
    String host = address.getAddress().getHostAddress();
    return (host.contains(":") ? "[" + host + "]" : host) + ":" + address.getPort();
  }

  /**
   * Stops accepting requests, closes every connection (ending the streams in progress) and waits up to 10 s for
   * the handler threads to finish. Idempotent.
   */
  @Override
  public void close() {
    server.stop(0);
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
    return "NodeServer[" + hostPort() + "]";
  }
}
