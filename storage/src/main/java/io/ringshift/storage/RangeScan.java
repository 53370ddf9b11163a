package io.ringshift.storage;

import java.util.Iterator;

/** A consistent scan of a range in token order (see {@link Store#scan}); close it to release the snapshot. */
public interface RangeScan extends Iterator<Entry>, AutoCloseable {

  /** The store's sequence number the scan reads at: every write up to it is visible, none after it. */
  long sequence();

  @Override
  void close();
}
