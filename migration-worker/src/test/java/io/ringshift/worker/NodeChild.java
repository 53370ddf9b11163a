package io.ringshift.worker;

import io.ringshift.storage.AdminSecret;
import io.ringshift.storage.Entry;
import io.ringshift.storage.NodeServer;
import io.ringshift.storage.RocksStore;
import io.ringshift.storage.Store;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

/**
 * A storage node in a child JVM: a RocksDB store served over HTTP on free ports of 127.0.0.1. Arguments: data
 * directory, node id, keys to write first, value bytes, the admin secret file. Prints {@code PORT <n>} (the admin
 * listener's port, which a worker uses) once it serves, then runs until killed.
 */
public final class NodeChild {
  private NodeChild() {}

  public static void main(String[] args) throws InterruptedException {
    Store store = RocksStore.open(Path.of(args[0]), args[1], "az-1");
    int keys = Integer.parseInt(args[2]);
    byte[] value = new byte[Integer.parseInt(args[3])];
    Random random = new Random(42);
    List<Entry> batch = new ArrayList<>();
    for (int i = 0; i < keys; i++) {
      random.nextBytes(value);
      batch.add(Entry.of(("key-" + i).getBytes(StandardCharsets.UTF_8), value.clone()));
      if (batch.size() == 1000 || i == keys - 1) {
        store.apply(batch);
        batch.clear();
      }
    }
    NodeServer server = NodeServer.start(store, new InetSocketAddress("127.0.0.1", 0),
        new InetSocketAddress("127.0.0.1", 0), AdminSecret.read(Path.of(args[4])), NodeServer.DEFAULT_THREADS);
    System.out.println("PORT " + server.adminPort());
    System.out.flush();
    Thread.currentThread().join(); // until the test kills this JVM
  }
}
