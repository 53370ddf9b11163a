package io.ringshift.storage;

import io.ringshift.ring.RingRange;
import java.util.concurrent.atomic.AtomicLong;

/** A store that counts the key and value bytes its scans hand out: how far a server has read ahead. */
final class CountingStore extends ForwardingStore {
  private final AtomicLong scannedBytes = new AtomicLong();

  CountingStore(Store delegate) {
    super(delegate);
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
}
