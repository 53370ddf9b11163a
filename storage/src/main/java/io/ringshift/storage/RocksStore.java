package io.ringshift.storage;

import io.ringshift.storage.internal.RocksDbStore;
import java.nio.file.Path;
import java.time.Duration;

/**
 * The reference {@link Store}, on RocksDB (the engine Kafka Streams ships), in one data directory per node
 * (docs/storage.md).
 *
 * <p>What it guarantees beyond the SPI: sequence numbers are RocksDB's own, offsets in its write-ahead log; the
 * change feed reads that log back and reaches at least {@link Options#walRetention()} into the past (and at most
 * {@link Options#walSizeLimitMb()} of archived log), across restarts; the node id and zone are recorded on first
 * open and checked on every later one; data, sequence numbers and fences survive a restart. A write is in the
 * log before it is acknowledged; without {@link Options#syncWrites()} it survives a crash of the process, with
 * it also a crash of the machine.
 */
public final class RocksStore {
  private RocksStore() {}

  /**
   * How a store keeps its log.
   *
   * @param walRetention how long the write-ahead log is kept for the change feed after its data is flushed (at
   *     least 1 s); a feed further back gets {@link StoreException.FeedUnavailable}
   * @param walSizeLimitMb the most archived log kept, in MB, whatever its age (0: no size limit)
   * @param syncWrites whether each write waits for the log to reach the disk (fsync)
   */
  public record Options(Duration walRetention, long walSizeLimitMb, boolean syncWrites) {
    /** Six hours and at most 4 GiB of log, no fsync per write. */
    public static Options defaults() {
      return new Options(Duration.ofHours(6), 4096, false);
    }

    public Options withWalRetention(Duration retention) {
      return new Options(retention, walSizeLimitMb, syncWrites);
    }

    public Options withWalSizeLimitMb(long megabytes) {
      return new Options(walRetention, megabytes, syncWrites);
    }

    public Options withSyncWrites(boolean sync) {
      return new Options(walRetention, walSizeLimitMb, sync);
    }
  }

  /**
   * Opens the store of node {@code nodeId} in {@code zone} in {@code dataDir}, creating it when the directory is
   * empty or absent, with {@link Options#defaults()}.
   *
   * @throws StoreException.BadRequest when the node id or zone is blank or has control characters, the directory
   *     is a file, belongs to another node or zone, holds a database that is not a ringshift store, or is open in
   *     another process or store
   * @throws StoreException when RocksDB cannot open it (permissions, a corrupt database)
   */
  public static Store open(Path dataDir, String nodeId, String zone) {
    return open(dataDir, nodeId, zone, Options.defaults());
  }

  /** As {@link #open(Path, String, String)}, with explicit options. */
  public static Store open(Path dataDir, String nodeId, String zone, Options options) {
    if (options == null) {
      throw new StoreException.BadRequest("options are missing; use RocksStore.Options.defaults()");
    }
    return RocksDbStore.open(dataDir, nodeId, zone, options.walRetention(), options.walSizeLimitMb(),
        options.syncWrites());
  }
}
