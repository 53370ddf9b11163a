package io.ringshift.systemtests;

import io.ringshift.localplane.LocalNodes;
import io.ringshift.ring.RingSnapshot;
import io.ringshift.storage.Entry;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

/** The keys and values of the pipeline IT, and loading them into the replicas a ring names. */
public final class LoadedData {
  public static final int MIN_VALUE_BYTES = 100;
  public static final int MAX_VALUE_BYTES = 1000;
  private static final int BATCH = 2000;

  private LoadedData() {}

  public static String key(int i) {
    return String.format("key-%07d", i);
  }

  /** A value of 100 to 1,000 random bytes. */
  public static byte[] value(Random random) {
    byte[] value = new byte[MIN_VALUE_BYTES + random.nextInt(MAX_VALUE_BYTES - MIN_VALUE_BYTES + 1)];
    random.nextBytes(value);
    return value;
  }

  /**
   * Writes {@code count} keys into every replica {@code ring} names for them, in batches through the nodes' bulk
   * apply (as a restore would, without an epoch), and returns key to value. The store refuses an entry whose
   * position is not the ring hash of its key, so this also checks that the ring and the store position keys alike.
   */
  public static Map<String, byte[]> load(LocalNodes nodes, RingSnapshot ring, int count, Random random) {
    Map<String, byte[]> data = new LinkedHashMap<>();
    Map<String, List<Entry>> byNode = new HashMap<>();
    for (int i = 0; i < count; i++) {
      String key = key(i);
      byte[] keyBytes = key.getBytes(StandardCharsets.UTF_8);
      byte[] value = value(random);
      data.put(key, value);
      Entry entry = new Entry(ring.position(keyBytes), keyBytes, value);
      for (String node : ring.replicasOf(keyBytes).ids()) {
        List<Entry> batch = byNode.computeIfAbsent(node, n -> new ArrayList<>());
        batch.add(entry);
        if (batch.size() == BATCH) {
          nodes.admin(node).apply(batch);
          batch.clear();
        }
      }
    }
    byNode.forEach((node, batch) -> {
      if (!batch.isEmpty()) {
        nodes.admin(node).apply(batch);
      }
    });
    return data;
  }

  /** Bytes of keys plus values. */
  public static long bytes(Map<String, byte[]> data) {
    long bytes = 0;
    for (Map.Entry<String, byte[]> e : data.entrySet()) {
      bytes += e.getKey().length() + e.getValue().length;
    }
    return bytes;
  }
}
