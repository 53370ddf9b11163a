package io.ringshift.worker.archfixture;

import io.ringshift.storage.NodeServer;
import io.ringshift.storage.RocksStore;
import java.net.InetSocketAddress;
import java.nio.file.Path;

/**
 * A worker class that opens a RocksDB store and serves it: the storage node's server side outside the CLI.
 *
 * <p>A deliberate violation for {@code io.ringshift.checks.ArchitectureRulesTest}, which imports it on its own; the
 * production rules never see it (test classes are not imported).
 */
public final class StartsNode {
  private StartsNode() {}

  public static NodeServer start(Path dataDir, InetSocketAddress address) {
    return NodeServer.start(RocksStore.open(dataDir, "node-1", "az-1"), address);
  }
}
