package io.ringshift.storage.internal;

import io.ringshift.storage.Change;
import io.ringshift.storage.ChangeFeed;
import io.ringshift.storage.Entry;
import io.ringshift.storage.StoreException;
import io.ringshift.storage.Version;
import java.util.ArrayDeque;
import java.util.NoSuchElementException;
import org.rocksdb.RocksDBException;
import org.rocksdb.TransactionLogIterator;
import org.rocksdb.WriteBatch;

/**
 * The change feed read from RocksDB's own write-ahead log ({@code getUpdatesSince}), kept after flushes by the
 * WAL archive (docs/storage.md, "Sequence numbers and the change feed").
 *
 * <p>Design note. RocksDB numbers every operation of a write batch: a batch at sequence {@code s} with {@code n}
 * operations holds {@code s .. s+n-1}. {@code getUpdatesSince(x)} starts at the batch that holds {@code x}, so the
 * feed replays a batch's operations and skips those at or below the caller's sequence; it stops at the latest
 * sequence read when the feed opened ({@link #upTo()}). The log reaches back to {@code x} exactly when the first
 * batch it returns starts at or before {@code x}; a later first batch (or none) means the archive was purged past
 * {@code x}, which is {@link StoreException.FeedUnavailable}. Operations on other column families (identity and
 * fence records) take sequence numbers but are not data, so they are skipped. One batch is in memory at a time,
 * bounded by the apply limit.
 */
final class WalFeed implements ChangeFeed, Releasable {
  private final RocksDbStore store;
  private final PositionSet positions;
  private final int dataFamily;
  private final long upTo;
  private final ArrayDeque<Change> pending = new ArrayDeque<>();
  private final BatchReader reader = new BatchReader();
  /** The next sequence number the feed needs from the log. */
  private long next;
  private TransactionLogIterator log;
  private volatile boolean released;

  WalFeed(RocksDbStore store, PositionSet positions, int dataFamily, long afterSequence, long upTo) {
    this.store = store;
    this.positions = positions;
    this.dataFamily = dataFamily;
    this.next = afterSequence + 1;
    this.upTo = upTo;
  }

  @Override
  public long upTo() {
    return upTo;
  }

  @Override
  public boolean hasNext() {
    if (!pending.isEmpty()) {
      return true;
    }
    if (next > upTo) {
      return false;
    }
    store.guarded(() -> {
      while (pending.isEmpty() && next <= upTo) {
        readBatch();
      }
      if (next > upTo) {
        release();
      }
      return null;
    });
    return !pending.isEmpty();
  }

  @Override
  public Change next() {
    if (!hasNext()) {
      throw new NoSuchElementException("the change feed has no more changes up to " + upTo);
    }
    return pending.poll();
  }

  private void readBatch() throws RocksDBException {
    if (released) {
      throw new IllegalStateException("the change feed is closed");
    }
    if (log == null || !log.isValid()) {
      reopen();
    }
    TransactionLogIterator.BatchResult batch = log.getBatch();
    long first = batch.sequenceNumber();
    if (first > next) {
      throw gap(first);
    }
    try (WriteBatch operations = batch.writeBatch()) {
      reader.start(first);
      operations.iterate(reader);
      next = Math.max(next, first + operations.count());
    }
    log.next();
  }

  /** Opens the log at {@link #next}, the first time or when the iterator reached the end of what it saw. */
  private void reopen() throws RocksDBException {
    if (log != null) {
      log.status();
      log.close();
      log = null;
    }
    log = store.logSince(next);
    if (!log.isValid()) {
      log.status();
      throw gap(-1);
    }
  }

  private StoreException.FeedUnavailable gap(long firstRetained) {
    String where = firstRetained < 0 ? "no longer holds it" : "starts at sequence " + firstRetained;
    return new StoreException.FeedUnavailable(String.format(
        "the change feed of %s needs sequence %d, but the retained log %s; it keeps %s: copy the range again "
            + "from a new scan", store.nodeId(), next, where, store.retentionDescription()));
  }

  @Override
  public void close() {
    store.release(this);
  }

  @Override
  public void release() {
    if (!released) {
      released = true;
      reader.close();
      if (log != null) {
        log.close();
        log = null;
      }
      store.forget(this);
    }
  }

  /** Turns one write batch's operations into the feed's changes, numbering them as RocksDB does. */
  private final class BatchReader extends WriteBatch.Handler {
    private long sequence;

    void start(long batchSequence) {
      sequence = batchSequence;
    }

    private void operation(int family, byte[] dataKey, byte[] value) {
      long s = sequence++;
      if (family != dataFamily || s < next || s > upTo) {
        return;
      }
      long position = DataKeys.position(dataKey);
      if (positions.contains(position)) {
        // A RocksDB delete is a range delete or a purge of an expired tombstone: a deletion of version 0, which
        // removes nothing a versioned write put there.
        Entry e = value == null ? new Entry(position, DataKeys.key(dataKey), null, Version.ZERO)
            : StoredValues.decode(position, DataKeys.key(dataKey), value);
        pending.add(new Change(s, e));
      }
    }

    @Override
    public void put(int family, byte[] key, byte[] value) {
      operation(family, key, value);
    }

    @Override
    public void put(byte[] key, byte[] value) {
      operation(0, key, value);
    }

    @Override
    public void delete(int family, byte[] key) {
      operation(family, key, null);
    }

    @Override
    public void delete(byte[] key) {
      operation(0, key, null);
    }

    @Override
    public void singleDelete(int family, byte[] key) {
      operation(family, key, null);
    }

    @Override
    public void singleDelete(byte[] key) {
      operation(0, key, null);
    }

    // The store never writes the operations below to its data; each still takes a sequence number.
    @Override
    public void merge(int family, byte[] key, byte[] value) {
      sequence++;
    }

    @Override
    public void merge(byte[] key, byte[] value) {
      sequence++;
    }

    @Override
    public void deleteRange(int family, byte[] beginKey, byte[] endKey) {
      sequence++;
    }

    @Override
    public void deleteRange(byte[] beginKey, byte[] endKey) {
      sequence++;
    }

    @Override
    public void putBlobIndex(int family, byte[] key, byte[] value) {
      sequence++;
    }

    @Override
    public void logData(byte[] blob) {
      // A log-only annotation: no sequence number.
    }

    @Override
    public void markBeginPrepare() {
      // Transaction markers take no sequence number and the store uses no transactions.
    }

    @Override
    public void markEndPrepare(byte[] xid) {
      // See markBeginPrepare.
    }

    @Override
    public void markNoop(boolean emptyBatch) {
      // See markBeginPrepare.
    }

    @Override
    public void markRollback(byte[] xid) {
      // See markBeginPrepare.
    }

    @Override
    public void markCommit(byte[] xid) {
      // See markBeginPrepare.
    }

    @Override
    public void markCommitWithTimestamp(byte[] xid, byte[] timestamp) {
      // See markBeginPrepare.
    }
  }
}
