package io.ringshift.storage;

import java.util.Iterator;

/** The writes to a range after a sequence number, in log order (see {@link Store#changes}). */
public interface ChangeFeed extends Iterator<Change>, AutoCloseable {

  /**
   * The sequence number the feed reads up to: once the iterator is exhausted, every write to the range up to
   * it has been returned. Known when the feed opens.
   */
  long upTo();

  @Override
  void close();
}
