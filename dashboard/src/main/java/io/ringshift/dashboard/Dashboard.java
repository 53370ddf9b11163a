package io.ringshift.dashboard;

import io.ringshift.dashboard.internal.StateFeed;
import io.ringshift.dashboard.internal.WebServer;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.BindException;
import java.net.InetSocketAddress;

/**
 * A live web dashboard of a control plane (docs/operations.md, "The dashboard"): one page, served from this jar with
 * its script and style (no CDN, no network), that draws the published ring as a circle of token ranges coloured by
 * node and zone (and the ring of the epoch in flight inside it, what moves marked), the epochs as a timeline, the
 * epoch in flight with its tasks by state, progress, rate, ETA and why tasks wait, the workers' throttles and caps,
 * the nodes with their health, data and fences, and the epoch each client reports. The page updates by server-sent
 * events as the topics change, without reloading. It reads the topics and the nodes' {@code /health}; it changes
 * nothing.
 */
public final class Dashboard implements AutoCloseable {
  private final StateFeed feed;
  private final WebServer server;

  private Dashboard(StateFeed feed, WebServer server) {
    this.feed = feed;
    this.server = server;
  }

  /**
   * Connects to the control plane's topics and serves the page.
   *
   * @throws IllegalArgumentException when the port is in use (the message names it)
   * @throws io.ringshift.orchestrator.admin.AdminException when Kafka does not answer or the topics are missing
   */
  public static Dashboard start(DashboardConfig config) {
    StateFeed feed = new StateFeed(config);
    try {
      WebServer server = WebServer.start(new InetSocketAddress(config.bindHost(), config.port()), feed,
          config.cluster());
      return new Dashboard(feed, server);
    } catch (BindException e) {
      feed.close();
      throw new IllegalArgumentException("port " + config.port() + " on " + config.bindHost() + " is in use; give "
          + "another --port (0 picks a free one)", e);
    } catch (IOException e) {
      feed.close();
      throw new UncheckedIOException("the dashboard cannot listen on " + config.bindHost() + ":" + config.port()
          + ": " + e.getMessage(), e);
    }
  }

  /** The page's address, {@code http://127.0.0.1:8080/}. */
  public String url() {
    InetSocketAddress a = server.address();
    return "http://" + a.getHostString() + ":" + a.getPort() + "/";
  }

  @Override
  public void close() {
    server.close();
    feed.close();
  }
}
