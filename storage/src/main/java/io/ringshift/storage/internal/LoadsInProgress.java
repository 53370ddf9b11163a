package io.ringshift.storage.internal;

import io.ringshift.ring.RingRange;
import io.ringshift.storage.Entry;
import io.ringshift.storage.StoreException;
import java.util.Iterator;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The bulk loads a store is taking in, so that a fence aborts those it meets.
 *
 * <p>Why: a copy's load can be read whole by the node and then wait (a RocksDB write stall) past the worker's deadline;
 * the worker gives up, copies the rest again, catches up, fences, verifies, and the epoch is published, and only then
 * does the old load land, putting the snapshot's older values back over newer ones on a replica clients read. A copy
 * fences its target before it verifies, and no load of a copy is in flight by then, so a fence is where a load must
 * stop: {@link #fenced} tells every load in progress, and the load checks, under the store's write lock right before
 * each write or ingest ({@link Ticket#checkNotAborted}), whether a fence asked for since it began meets its entries
 * (from the first to the last, in ring order). So it lands before the fence (and the verification sees it) or not at
 * all. A fence counts whether it was new or already there (a copy that fences again for a second verification).
 */
public final class LoadsInProgress {
  private final Set<Ticket> open = ConcurrentHashMap.newKeySet();

  /** One load in progress: the positions of its entries so far (in scan order, from its range's start). */
  public final class Ticket implements AutoCloseable {
    private volatile boolean any;
    private volatile long first;
    private volatile long last;
    /** The fences asked for since the load began: range and epoch. */
    private final java.util.List<String> fences = new java.util.concurrent.CopyOnWriteArrayList<>();
    private final java.util.List<RingRange> fencedRanges = new java.util.concurrent.CopyOnWriteArrayList<>();

    private Ticket() {}

    /** {@code entries}, recording each entry's position as it is read. */
    public Iterator<Entry> track(Iterator<Entry> entries) {
      return new Iterator<>() {
        @Override
        public boolean hasNext() {
          return entries.hasNext();
        }

        @Override
        public Entry next() {
          Entry e = entries.next();
          saw(e.position());
          return e;
        }
      };
    }

    private void saw(long position) {
      if (!any) {
        first = position;
        any = true;
      }
      last = position;
    }

    /**
     * Throws when a fence asked for since the load began meets its entries; call under the store's write lock, right
     * before the load writes.
     *
     * @throws StoreException.Unavailable naming the fence (retriable: a copy that still runs copies from its checkpoint)
     */
    public void checkNotAborted() {
      if (!any) {
        return;
      }
      RingRange span = RingRange.of(first - 1, last);
      for (int i = 0; i < fencedRanges.size(); i++) {
        if (fencedRanges.get(i).intersects(span)) {
          throw new StoreException.Unavailable("the load was aborted: " + fences.get(i) + " was fenced while it was "
              + "in progress (a copy verifies only after it fenced its target, so this load's copy had given up on "
              + "it); nothing of it is written after the fence", null);
        }
      }
    }

    @Override
    public void close() {
      open.remove(this);
    }
  }

  /** Registers a load; close the ticket when the load ends. */
  public Ticket open() {
    Ticket t = new Ticket();
    open.add(t);
    return t;
  }

  /** A fence of {@code range} at {@code epoch} was asked for: every load in progress learns of it. */
  public void fenced(RingRange range, long epoch) {
    for (Ticket t : open) {
      t.fences.add("the range " + range + " (epoch " + epoch + ")");
      t.fencedRanges.add(range);
    }
  }
}
