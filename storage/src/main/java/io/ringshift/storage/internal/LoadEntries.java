package io.ringshift.storage.internal;

import io.ringshift.storage.Entry;
import io.ringshift.storage.Store;
import java.util.Iterator;

/**
 * The entries of a load, each checked as it is read ({@link Checks#loadEntry}) and the total held to
 * {@link Store#MAX_LOAD_BYTES}, counted as they go: what every {@link Store#load} reads its entries through.
 */
public final class LoadEntries implements Iterator<Entry> {
  private final Iterator<Entry> entries;
  private long count;
  private long bytes;

  public LoadEntries(Iterator<Entry> entries) {
    if (entries == null) {
      throw new io.ringshift.storage.StoreException.BadRequest("entries are missing; load takes an iterator of "
          + "entries (it may be empty)");
    }
    this.entries = entries;
  }

  @Override
  public boolean hasNext() {
    return entries.hasNext();
  }

  /** The next entry, checked; a bad one, or one past the load's byte limit, is refused naming its index. */
  @Override
  public Entry next() {
    Entry e = entries.next();
    Checks.loadEntry(count, e);
    bytes += e.size();
    if (bytes > Store.MAX_LOAD_BYTES) {
      throw Checks.loadTooLarge(count, bytes);
    }
    count++;
    return e;
  }

  /** Entries read so far. */
  public long count() {
    return count;
  }

  /** Their key plus value bytes. */
  public long bytes() {
    return bytes;
  }
}
