package io.ringshift.storage.internal;

import io.ringshift.storage.Entry;
import io.ringshift.storage.RangeScan;
import java.util.List;
import java.util.NoSuchElementException;
import org.rocksdb.ReadOptions;
import org.rocksdb.RocksIterator;
import org.rocksdb.Slice;
import org.rocksdb.Snapshot;

/**
 * A scan of key spans at a RocksDB snapshot, read lazily: one entry in memory at a time, tombstones included. Every step takes the
 * store's lifecycle read lock, so a store closed under a scan makes the scan fail cleanly instead of touching
 * freed native memory.
 */
final class RocksScan implements RangeScan, Releasable {
  private final RocksDbStore store;
  private final Snapshot snapshot;
  /** Read once: the snapshot's native handle is gone after the scan ends. */
  private final long sequence;
  private final List<KeySpans.Span> spans;
  private int spanIndex;
  private ReadOptions readOptions;
  private Slice upperBound;
  private RocksIterator iterator;
  private Entry next;
  private boolean finished;
  private volatile boolean released;

  RocksScan(RocksDbStore store, Snapshot snapshot, List<KeySpans.Span> spans) {
    this.store = store;
    this.snapshot = snapshot;
    this.sequence = snapshot.getSequenceNumber();
    this.spans = spans;
  }

  @Override
  public long sequence() {
    return sequence;
  }

  @Override
  public boolean hasNext() {
    if (next != null) {
      return true;
    }
    if (finished) {
      return false;
    }
    next = store.guarded(this::advance);
    return next != null;
  }

  @Override
  public Entry next() {
    if (!hasNext()) {
      throw new NoSuchElementException("the scan has no more entries");
    }
    Entry e = next;
    next = null;
    return e;
  }

  /** The next entry of the remaining spans, or null at the end (which releases the snapshot at once). */
  private Entry advance() throws org.rocksdb.RocksDBException {
    if (released) {
      throw new IllegalStateException("the scan is closed");
    }
    while (spanIndex < spans.size()) {
      if (iterator == null) {
        openSpan(spans.get(spanIndex));
      }
      if (iterator.isValid()) {
        byte[] dataKey = iterator.key();
        Entry e = StoredValues.decode(DataKeys.position(dataKey), DataKeys.key(dataKey), iterator.value());
        iterator.next();
        return e;
      }
      iterator.status();
      closeSpan();
      spanIndex++;
    }
    finished = true;
    release();
    return null;
  }

  private void openSpan(KeySpans.Span span) {
    readOptions = new ReadOptions().setSnapshot(snapshot).setFillCache(false);
    if (span.high() != null) {
      upperBound = new Slice(span.high());
      readOptions.setIterateUpperBound(upperBound);
    }
    iterator = store.newDataIterator(readOptions);
    iterator.seek(span.low());
  }

  private void closeSpan() {
    if (iterator != null) {
      iterator.close();
      iterator = null;
    }
    if (readOptions != null) {
      readOptions.close();
      readOptions = null;
    }
    if (upperBound != null) {
      upperBound.close();
      upperBound = null;
    }
  }

  @Override
  public void close() {
    store.release(this);
  }

  /** Frees the iterator and the snapshot; the caller holds the store's lifecycle lock. */
  @Override
  public void release() {
    if (!released) {
      released = true;
      closeSpan();
      store.releaseSnapshot(snapshot);
      store.forget(this);
    }
  }
}
