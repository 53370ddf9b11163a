package io.ringshift.storage;

import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicLong;

/** A store that counts the key and value bytes its scans hand out: how far a server has read ahead. */
final class CountingStore implements Store {
  private final Store delegate;
  private final AtomicLong scannedBytes = new AtomicLong();

  CountingStore(Store delegate) {
    this.delegate = delegate;
  }

  long scannedBytes() {
    return scannedBytes.get();
  }

  @Override
  public RangeScan scan(RingRange range, Cursor after) {
    RangeScan scan = delegate.scan(range, after);
    return new RangeScan() {
      @Override
      public long sequence() {
        return scan.sequence();
      }

      @Override
      public boolean hasNext() {
        return scan.hasNext();
      }

      @Override
      public Entry next() {
        Entry e = scan.next();
        scannedBytes.addAndGet(e.size());
        return e;
      }

      @Override
      public void close() {
        scan.close();
      }
    };
  }

  @Override
  public NodeInfo info() {
    return delegate.info();
  }

  @Override
  public long latestSequence() {
    return delegate.latestSequence();
  }

  @Override
  public WriteResult put(byte[] key, byte[] value, long epoch) {
    return delegate.put(key, value, epoch);
  }

  @Override
  public WriteResult delete(byte[] key, long epoch) {
    return delegate.delete(key, epoch);
  }

  @Override
  public Optional<byte[]> get(byte[] key) {
    return delegate.get(key);
  }

  @Override
  public ChangeFeed changes(RingRange range, long afterSequence) {
    return delegate.changes(range, afterSequence);
  }

  @Override
  public long apply(List<Entry> entries) {
    return delegate.apply(entries);
  }

  @Override
  public RangeDigest digest(RingRange range) {
    return delegate.digest(range);
  }

  @Override
  public Fence fence(RingRange range, long epoch) {
    return delegate.fence(range, epoch);
  }

  @Override
  public List<Fence> fences() {
    return delegate.fences();
  }

  @Override
  public void unfence(RingRange range, long epoch) {
    delegate.unfence(range, epoch);
  }

  @Override
  public long deleteRange(RingRange range) {
    return delegate.deleteRange(range);
  }

  @Override
  public void close() {
    delegate.close();
  }
}
