package io.ringshift.worker;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Where each storage node listens: node id to {@code host:port}. Static: read from a file with lines
 * {@code node-id host:port} ({@code #} starts a comment, blank lines are skipped) and/or given one by one.
 * Immutable; a node id appears once.
 */
public final class NodeDirectory {
  private static final Pattern ADDRESS = Pattern.compile("(\\[[0-9a-fA-F:.]+]|[A-Za-z0-9._-]+):(\\d{1,5})");
  private static final Pattern NODE_ID = Pattern.compile("[^\\s=#]+");

  /** A node's network address. */
  public record Address(String host, int port) {
    /** @throws IllegalArgumentException for a blank host or a port outside 1..65535 */
    public Address {
      Objects.requireNonNull(host, "host");
      if (host.isBlank()) {
        throw new IllegalArgumentException("host was blank; give a host name or an IP address");
      }
      if (port < 1 || port > 65_535) {
        throw new IllegalArgumentException("port was " + port + "; it must be between 1 and 65535");
      }
    }

    /**
     * Parses {@code host:port} (IPv6 in brackets).
     *
     * @throws IllegalArgumentException naming the text and the expected form
     */
    public static Address parse(String text) {
      Matcher m = ADDRESS.matcher(text.strip());
      if (!m.matches()) {
        throw new IllegalArgumentException("address was \"" + text + "\"; write HOST:PORT, for example "
            + "127.0.0.1:7001");
      }
      return new Address(m.group(1), Integer.parseInt(m.group(2)));
    }

    @Override
    public String toString() {
      return host + ":" + port;
    }
  }

  private final Map<String, Address> nodes;

  private NodeDirectory(Map<String, Address> nodes) {
    this.nodes = Collections.unmodifiableMap(new TreeMap<>(nodes));
  }

  /** A directory of exactly these nodes. */
  public static NodeDirectory of(Map<String, Address> nodes) {
    nodes.keySet().forEach(NodeDirectory::checkId);
    return new NodeDirectory(nodes);
  }

  public static NodeDirectory empty() {
    return new NodeDirectory(Map.of());
  }

  /**
   * Reads a nodes file: one {@code node-id host:port} per line.
   *
   * @throws IllegalArgumentException naming the file, the line and the rule it breaks (a malformed line, a node
   *     listed twice)
   * @throws UncheckedIOException when the file cannot be read
   */
  public static NodeDirectory read(Path file) {
    List<String> lines;
    try {
      lines = Files.readAllLines(file, StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read the nodes file " + file + ": " + e.getMessage(), e);
    }
    return parse(lines, file.toString());
  }

  /** {@link #read} on lines already read; {@code origin} names them in errors. */
  public static NodeDirectory parse(List<String> lines, String origin) {
    NodeDirectory directory = empty();
    for (int i = 0; i < lines.size(); i++) {
      String line = lines.get(i);
      int hash = line.indexOf('#');
      String content = (hash >= 0 ? line.substring(0, hash) : line).strip();
      if (content.isEmpty()) {
        continue;
      }
      String[] parts = content.split("\\s+");
      String where = origin + " line " + (i + 1);
      if (parts.length != 2) {
        throw new IllegalArgumentException(where + " was \"" + line.strip() + "\"; each line is NODE-ID HOST:PORT, "
            + "for example: node-1 127.0.0.1:7001");
      }
      try {
        directory = directory.with(parts[0], Address.parse(parts[1]));
      } catch (IllegalArgumentException e) {
        throw new IllegalArgumentException(where + ": " + e.getMessage(), e);
      }
    }
    return directory;
  }

  /**
   * This directory and one more node.
   *
   * @throws IllegalArgumentException when the id is malformed or already listed
   */
  public NodeDirectory with(String nodeId, Address address) {
    checkId(nodeId);
    Objects.requireNonNull(address, "address");
    if (nodes.containsKey(nodeId)) {
      throw new IllegalArgumentException("node " + nodeId + " was listed twice (" + nodes.get(nodeId) + " and "
          + address + "); give each node one address");
    }
    Map<String, Address> next = new TreeMap<>(nodes);
    next.put(nodeId, address);
    return new NodeDirectory(next);
  }

  /** Every node, sorted by id. */
  public Map<String, Address> nodes() {
    return nodes;
  }

  public Optional<Address> address(String nodeId) {
    return Optional.ofNullable(nodes.get(nodeId));
  }

  private static void checkId(String nodeId) {
    Objects.requireNonNull(nodeId, "nodeId");
    if (!NODE_ID.matcher(nodeId).matches()) {
      throw new IllegalArgumentException("node id was \"" + nodeId + "\"; it must be non-empty without spaces, "
          + "'=' or '#'");
    }
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof NodeDirectory d && nodes.equals(d.nodes);
  }

  @Override
  public int hashCode() {
    return nodes.hashCode();
  }

  @Override
  public String toString() {
    return nodes.toString();
  }
}
