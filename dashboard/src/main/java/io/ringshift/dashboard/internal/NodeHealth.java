package io.ringshift.dashboard.internal;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;

/**
 * What the storage nodes say of themselves: each node's {@code GET /health} on its client port (docs/storage.md),
 * asked in parallel with a short timeout. A node that does not answer in time, or answers an error, is down.
 */
public final class NodeHealth {
  static final Duration TIMEOUT = Duration.ofSeconds(1);
  private static final ObjectMapper JSON = new ObjectMapper();

  /**
   * One node's answer.
   *
   * @param up whether it answered 200 in time
   * @param ringEpoch the epoch of the ring it routes by, -1 when it has none or does not say
   * @param error why it counts as down
   */
  public record Report(boolean up, String zone, long keys, int fences, long ringEpoch, String error) {
    static Report down(String error) {
      return new Report(false, null, 0, 0, -1, error);
    }
  }

  private final HttpClient client = HttpClient.newBuilder().connectTimeout(TIMEOUT).build();
  private final Map<String, String> nodes;
  private final Map<String, Report> latest = new ConcurrentHashMap<>();

  /** @param nodes the client port ({@code host:port}) of each node */
  public NodeHealth(Map<String, String> nodes) {
    this.nodes = Map.copyOf(nodes);
  }

  /** Asks every node once, waiting at most about the timeout, and keeps the answers. */
  public Map<String, Report> probe() {
    Map<String, CompletableFuture<Report>> asked = new ConcurrentHashMap<>();
    nodes.forEach((id, address) -> asked.put(id, ask(address)));
    asked.forEach((id, answer) -> latest.put(id, answer.join()));
    return Map.copyOf(latest);
  }

  /** The latest answers, by node id. */
  public Map<String, Report> latest() {
    return Map.copyOf(latest);
  }

  private CompletableFuture<Report> ask(String address) {
    HttpRequest request = HttpRequest.newBuilder(URI.create("http://" + address + "/health")).timeout(TIMEOUT)
        .GET().build();
    return client.sendAsync(request, HttpResponse.BodyHandlers.ofString())
        .thenApply(NodeHealth::parse)
        .exceptionally(e -> Report.down(e.getCause() == null ? e.toString() : e.getCause().toString()));
  }

  static Report parse(HttpResponse<String> response) {
    if (response.statusCode() != 200) {
      return Report.down("GET /health answered " + response.statusCode());
    }
    try {
      JsonNode body = JSON.readTree(response.body());
      return new Report(true, body.path("zone").asText(null), body.path("keys").asLong(),
          body.path("fences").asInt(), body.path("ringEpoch").asLong(-1), null);
    } catch (java.io.IOException e) {
      return Report.down("GET /health answered no JSON: " + e.getMessage());
    }
  }
}
