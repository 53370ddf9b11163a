package io.ringshift.cli.archfixture;

import io.ringshift.storage.NodeServer;
import io.ringshift.storage.RocksStore;
import java.net.InetSocketAddress;
import java.nio.file.Path;

/**
 * A CLI class that opens a RocksDB store and serves it, as `ringshift node` does: allowed.
 *
 * <p>A fixture of {@code io.ringshift.checks.ArchitectureRulesTest}, which imports it on its own; the
 * production rules never see it (test classes are not imported).
 */
public final class StartsNode {
  private StartsNode() {}

  public static NodeServer start(Path dataDir, InetSocketAddress address) {
    return NodeServer.start(RocksStore.open(dataDir, "node-1", "az-1"), address);
  }
}
