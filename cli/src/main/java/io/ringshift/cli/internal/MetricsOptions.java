package io.ringshift.cli.internal;

import io.ringshift.cli.BadInputException;
import java.io.IOException;
import java.net.BindException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import picocli.CommandLine.Option;

/**
 * {@code --metrics-port} and {@code --metrics-host} of the role commands ({@code orchestrator}, {@code worker},
 * {@code publisher}, {@code node}): without a port there is no endpoint (docs/metrics.md).
 */
public final class MetricsOptions {
  @Option(names = "--metrics-port", paramLabel = "PORT",
      description = "Serve the process's metrics for Prometheus on http://HOST:PORT/metrics (0 picks a free port, "
          + "printed on the banner line; default: no metrics endpoint). docs/metrics.md lists them.")
  private Integer port;

  @Option(names = "--metrics-host", paramLabel = "HOST",
      description = "The address the metrics endpoint listens on (default 0.0.0.0: every interface); needs "
          + "--metrics-port.")
  private String host;

  /**
   * Checks the options and, with a port, starts the endpoint.
   *
   * @throws BadInputException naming the bad value and the rule, or the port that is in use
   */
  public MetricsEndpoint start() {
    if (port == null) {
      if (host != null) {
        throw new BadInputException("--metrics-host " + host + " needs --metrics-port: without a port there is no "
            + "metrics endpoint");
      }
      return MetricsEndpoint.disabled();
    }
    if (port < 0 || port > 65535) {
      throw new BadInputException("--metrics-port was " + port + "; it must be 0 to 65535 (0 picks a free port)");
    }
    String name = host == null ? "0.0.0.0" : host;
    InetAddress address;
    try {
      address = InetAddress.getByName(name);
    } catch (UnknownHostException e) {
      throw new BadInputException("--metrics-host was \"" + name + "\"; it must be an IP address or a host name of "
          + "this machine (unknown host)", e);
    }
    try {
      return MetricsEndpoint.start(name, new InetSocketAddress(address, port));
    } catch (BindException e) {
      throw new BadInputException("--metrics-port " + port + " on " + name + " cannot be used (" + e.getMessage()
          + "); stop what uses it or give another --metrics-port (0 picks a free one)", e);
    } catch (IOException e) {
      throw new BadInputException("--metrics-host " + name + " port " + port + " cannot be served: "
          + e.getMessage(), e);
    }
  }
}
