package io.ringshift.devkit.internal;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.util.Optional;

/** Free-port selection and busy-port detection on the loopback address the broker binds. */
public final class Ports {
  /** The broker listens and advertises on this address only: it is for this machine's processes. */
  public static final String HOST = "127.0.0.1";

  private Ports() {}

  /**
   * A port that was free a moment ago. Another process can take it before the broker binds it; callers that
   * chose it this way retry with a new one when the bind fails.
   */
  public static int freePort() {
    try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getByName(HOST))) {
      return socket.getLocalPort();
    } catch (IOException e) {
      throw new UncheckedIOException("no free port on " + HOST, e);
    }
  }

  /**
   * Why {@code port} cannot be bound right now ("Address already in use", "Permission denied"), or empty when
   * it can: binds it the way the broker will (with SO_REUSEADDR, so sockets lingering in TIME_WAIT do not
   * count) and lets it go.
   */
  public static Optional<String> bindProblem(int port) {
    try (ServerSocket socket = new ServerSocket()) {
      socket.setReuseAddress(true);
      socket.bind(new InetSocketAddress(InetAddress.getByName(HOST), port), 1);
      return Optional.empty();
    } catch (IOException e) {
      return Optional.of(String.valueOf(e.getMessage()));
    }
  }
}
