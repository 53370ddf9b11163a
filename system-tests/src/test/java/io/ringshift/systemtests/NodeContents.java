package io.ringshift.systemtests;

import io.ringshift.localplane.LocalNodes;
import io.ringshift.ring.RingHash;
import io.ringshift.ring.RingRange;
import io.ringshift.storage.Entry;
import io.ringshift.storage.RangeScan;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;

/** What a storage node holds, read over its HTTP API as any client would. */
final class NodeContents {
  private NodeContents() {}

  /**
   * Everything node {@code id} holds, read with one streamed scan of the whole ring: key (UTF-8) to value. Checks
   * on the way that the node stores each key at the position the ring gives it.
   */
  static Map<String, byte[]> of(LocalNodes nodes, String id) {
    Map<String, byte[]> contents = new HashMap<>();
    try (RangeScan scan = nodes.admin(id).scan(RingRange.whole(), null)) {
      while (scan.hasNext()) {
        Entry e = scan.next();
        long ringPosition = RingHash.xxh3().hash(e.key(), 0, e.key().length);
        if (e.position() != ringPosition) {
          throw new AssertionError(String.format("node %s holds key %s at position %016x, but the ring places it at "
              + "%016x", id, new String(e.key(), StandardCharsets.UTF_8), e.position(), ringPosition));
        }
        if (!e.isDeletion()) {
          contents.put(new String(e.key(), StandardCharsets.UTF_8), e.value());
        }
      }
    }
    return contents;
  }

  /** How many keys node {@code id} holds in {@code range}. */
  static long keysIn(LocalNodes nodes, String id, RingRange range) {
    return nodes.admin(id).digest(range).keys();
  }
}
