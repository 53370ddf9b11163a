package io.ringshift.storage.internal;

import io.ringshift.ring.RingRange;
import io.ringshift.storage.Change;
import io.ringshift.storage.ChangeFeed;
import io.ringshift.storage.Entry;
import io.ringshift.storage.Fence;
import io.ringshift.storage.HybridClock;
import io.ringshift.storage.LoadResult;
import io.ringshift.storage.RangeDigest;
import io.ringshift.storage.RangeScan;
import io.ringshift.storage.Store;
import io.ringshift.storage.StoreException;
import io.ringshift.storage.Version;
import io.ringshift.storage.WriteResult;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.NavigableMap;
import java.util.NoSuchElementException;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.function.LongSupplier;

/**
 * The durable state of an in-memory store ({@code MemoryStore}): data in token order, the change log with its sequence
 * numbers, the fences, the node's identity. It outlives the store objects opened on it, as a data directory outlives
 * the RocksDB instances opened on it: a store that is closed and opened again on the same state has everything a
 * write was acknowledged for. Every method is synchronized: a store is used from many threads in tests, and a call is
 * atomic (a fence and a write never interleave, as under RocksDbStore's write lock).
 *
 * <p>It keeps RocksDbStore's semantics where the contract test can see them: a write takes one sequence number per key
 * (a batch of n, n in a row), a fence and an unfence each take one in the node's own records (not in the feed), a load
 * of at least {@link #MIN_INGEST_BYTES} is "ingested" taking no sequence number where no key of the store, deleted ones
 * included, lies between its first and last key, and the change log can be cut ({@link #purgeLog}) as a log retention
 * would, after which a feed further back is {@link StoreException.FeedUnavailable}.
 */
public final class MemoryStoreState {
  /** As RocksDbStore: a load below this goes through the write path. */
  static final long MIN_INGEST_BYTES = 4L << 20;

  private final String nodeId;
  private final String zone;
  private final String incarnation;
  /** Every entry by data key, tombstones included (format 2: a deletion is kept as a versioned tombstone). */
  private final TreeMap<byte[], Entry> data = new TreeMap<>(Arrays::compareUnsigned);
  /**
   * Keys removed for good since the state began, by a range delete or a purge (RocksDB keeps their delete markers until
   * compaction): they stop an ingest.
   */
  private final TreeSet<byte[]> deleted = new TreeSet<>(Arrays::compareUnsigned);
  /** When each tombstone arrived, by data key, on {@link #millis}: what the purge of expired ones reads. */
  private final HashMap<ByteBuffer, Long> tombstoneArrivals = new HashMap<>();
  private final LongSupplier millis;
  private final Duration tombstoneRetention;
  private final HybridClock clock;
  /** The data writes, in log order, from {@link #logStart}. */
  private final ArrayList<Change> log = new ArrayList<>();
  private long logStart = 1;
  private long sequence;
  private FenceSet fences = FenceSet.EMPTY;
  private final LoadsInProgress loads = new LoadsInProgress();

  public MemoryStoreState(String nodeId, String zone, String incarnation) {
    this(nodeId, zone, incarnation, System::currentTimeMillis, RocksDbStore.DEFAULT_TOMBSTONE_RETENTION);
  }

  /** A state whose clock (the node's own versions, tombstone arrivals) is {@code millis}. */
  public MemoryStoreState(String nodeId, String zone, String incarnation, LongSupplier millis,
      Duration tombstoneRetention) {
    RocksDbStore.name("node id", nodeId);
    RocksDbStore.name("zone", zone);
    this.millis = millis;
    this.tombstoneRetention = tombstoneRetention;
    this.clock = HybridClock.of("node/" + nodeId, millis);
    this.nodeId = nodeId;
    this.zone = zone;
    this.incarnation = incarnation;
    this.sequence = 1; // the store's own identity record, as a new RocksDB store writes one
  }

  public String nodeId() {
    return nodeId;
  }

  public String zone() {
    return zone;
  }

  public synchronized Store.NodeInfo info() {
    return new Store.NodeInfo(nodeId, zone, sequence, data.size() - tombstoneArrivals.size(), incarnation);
  }

  public synchronized long latestSequence() {
    return sequence;
  }

  /** A client write at {@code version}, or at a version of the node's own clock when it is null. */
  public synchronized WriteResult write(byte[] key, byte[] value, long epoch, Version version) {
    long position = Entry.positionOf(key);
    Fence fence = fences.refusing(position, epoch);
    if (fence != null) {
      return new WriteResult.RetryWithEpoch(fence.epoch(), fence.range());
    }
    if (version == null) {
      Entry stored = data.get(DataKeys.encode(position, key));
      if (stored != null) {
        clock.observe(stored.version()); // a stamped write lands above what the key holds, as RocksDbStore's
      }
    }
    writeIfNewer(new Entry(position, key, value, version == null ? clock.next() : version));
    return new WriteResult.Applied(sequence);
  }

  /** Writes {@code e} where it supersedes what the state holds for its key (max-version-wins). */
  private void writeIfNewer(Entry e) {
    clock.observe(e.version());
    byte[] dataKey = DataKeys.encode(e.position(), e.key());
    if (!e.supersedes(data.get(dataKey))) {
      return;
    }
    sequence++;
    data.put(dataKey, e);
    if (e.isDeletion()) {
      tombstoneArrivals.put(ByteBuffer.wrap(dataKey), millis.getAsLong());
    } else {
      tombstoneArrivals.remove(ByteBuffer.wrap(dataKey));
    }
    log.add(new Change(sequence, e));
  }

  /** Removes {@code dataKey} for good (a range delete, a purge): a deletion of version 0 in the log. */
  private void remove(byte[] dataKey) {
    sequence++;
    data.remove(dataKey);
    tombstoneArrivals.remove(ByteBuffer.wrap(dataKey));
    deleted.add(dataKey);
    log.add(new Change(sequence, new Entry(DataKeys.position(dataKey), DataKeys.key(dataKey), null, Version.ZERO)));
  }

  public synchronized Optional<byte[]> get(byte[] key) {
    Entry e = data.get(DataKeys.encode(Entry.positionOf(key), key));
    return Optional.ofNullable(e == null ? null : e.value());
  }

  /** The entry of {@code key}, a tombstone included, if the state holds one. */
  public synchronized Optional<Entry> entry(byte[] key) {
    return Optional.ofNullable(data.get(DataKeys.encode(Entry.positionOf(key), key)));
  }

  /**
   * Removes the tombstones that arrived more than the tombstone retention ago; returns how many. The simulation and
   * tests call it; a node's RocksDB store purges on its own.
   */
  public synchronized long purgeTombstones() {
    long cutoff = millis.getAsLong() - tombstoneRetention.toMillis();
    List<byte[]> expired = new ArrayList<>();
    tombstoneArrivals.forEach((k, at) -> {
      if (at < cutoff) {
        expired.add(k.array());
      }
    });
    expired.sort(Arrays::compareUnsigned);
    expired.forEach(this::remove);
    return expired.size();
  }

  /** The entries of {@code spans}, tombstones included, in order, copied now: a scan's snapshot. */
  private List<Entry> entriesOf(List<KeySpans.Span> spans) {
    List<Entry> out = new ArrayList<>();
    for (KeySpans.Span span : spans) {
      NavigableMap<byte[], Entry> part = span.high() == null ? data.tailMap(span.low(), true)
          : data.subMap(span.low(), true, span.high(), false);
      out.addAll(part.values());
    }
    return out;
  }

  private static List<Entry> live(List<Entry> entries) {
    return entries.stream().filter(e -> !e.isDeletion()).toList();
  }

  /** A consistent scan: the entries as they are now, and the sequence number they are at. */
  public synchronized Snapshot scan(RingRange range, Store.Cursor after) {
    List<KeySpans.Span> spans = after == null ? KeySpans.of(range) : KeySpans.after(range, after);
    return new Snapshot(entriesOf(spans), sequence);
  }

  /** What a scan read: its entries and sequence number. */
  public record Snapshot(List<Entry> entries, long sequence) {}

  /** The changes of {@code ranges} after {@code afterSequence} up to the latest, as a feed would read them. */
  public synchronized Feed changes(List<RingRange> ranges, long afterSequence) {
    if (afterSequence > sequence) {
      throw new StoreException.FeedUnavailable(String.format(Locale.ROOT,
          "afterSequence %d is beyond the latest sequence %d of %s: it comes from another store or an earlier "
              + "store in this data dir; copy the range again from a new scan", afterSequence, sequence, nodeId));
    }
    PositionSet positions = PositionSet.of(ranges);
    long needed = afterSequence + 1;
    if (needed < logStart) {
      throw new StoreException.FeedUnavailable(String.format(Locale.ROOT,
          "the change feed of %s needs sequence %d, but the retained log starts at sequence %d; it keeps the log "
              + "since it was last cut: copy the range again from a new scan", nodeId, needed, logStart));
    }
    List<Change> out = new ArrayList<>();
    int from = firstIndexAfter(afterSequence);
    for (int i = from; i < log.size(); i++) {
      Change c = log.get(i);
      if (positions.contains(c.entry().position())) {
        out.add(c);
      }
    }
    return new Feed(out, sequence);
  }

  private int firstIndexAfter(long after) {
    int lo = 0;
    int hi = log.size();
    while (lo < hi) {
      int mid = (lo + hi) >>> 1;
      if (log.get(mid).sequence() <= after) {
        lo = mid + 1;
      } else {
        hi = mid;
      }
    }
    return lo;
  }

  /** What a feed read: its changes and the sequence it reads up to. */
  public record Feed(List<Change> changes, long upTo) {}

  public synchronized long apply(List<Entry> entries) {
    for (Entry e : entries) {
      writeIfNewer(e);
    }
    return sequence;
  }

  public synchronized RangeDigest digest(RingRange range) {
    RangeDigester digester = new RangeDigester();
    for (Entry e : live(entriesOf(KeySpans.of(range)))) {
      digester.add(e.key(), e.version(), e.value());
    }
    return digester.result(sequence);
  }

  public synchronized Fence fence(RingRange range, long epoch) {
    loads.fenced(range, epoch);
    Fence existing = fences.find(range, epoch);
    if (existing != null) {
      return existing;
    }
    Fence fence = new Fence(range, epoch, sequence);
    sequence++; // the fence's own record
    fences = fences.with(fence);
    return fence;
  }

  public synchronized List<Fence> fences() {
    return fences.all();
  }

  public synchronized void unfence(RingRange range, long epoch) {
    Fence existing = fences.find(range, epoch);
    if (existing != null) {
      sequence++;
      fences = fences.without(existing);
    }
  }

  public synchronized long deleteRange(RingRange range) {
    List<Entry> all = entriesOf(KeySpans.of(range));
    for (Entry e : all) {
      remove(DataKeys.encode(e.position(), e.key()));
    }
    return all.size();
  }

  /** Registers a load in progress (a fence aborts those it meets). */
  public LoadsInProgress.Ticket openLoad() {
    return loads.open();
  }

  /**
   * Ends a load whose entries were all read and checked: ingests them, taking no sequence number, when they are at
   * least {@link #MIN_INGEST_BYTES} and no key of the store (deleted ones included) lies between the first and the
   * last; otherwise writes them. Refused, writing nothing, when a fence aborted the load.
   */
  public synchronized LoadResult finishLoad(LoadsInProgress.Ticket ticket, List<Entry> entries, long bytes) {
    ticket.checkNotAborted();
    if (entries.isEmpty()) {
      return new LoadResult(0, 0, false, sequence);
    }
    boolean ingest = bytes >= MIN_INGEST_BYTES && nothingBetween(entries);
    if (ingest) {
      for (Entry e : entries) {
        byte[] dataKey = DataKeys.encode(e.position(), e.key());
        if (!e.supersedes(data.get(dataKey))) {
          continue; // a key the load carries twice: the higher version stays, as RocksDB's write path keeps it
        }
        data.put(dataKey, e);
        clock.observe(e.version());
        if (e.isDeletion()) {
          tombstoneArrivals.put(ByteBuffer.wrap(dataKey), millis.getAsLong());
        }
      }
    } else {
      entries.forEach(this::writeIfNewer);
    }
    return new LoadResult(entries.size(), bytes, ingest, sequence);
  }

  /** Whether no key of the store, deleted ones included, lies between the load's first and last key (as RocksDB). */
  private boolean nothingBetween(List<Entry> entries) {
    // A load of a wrapping range starts over at the bottom: RocksDB then gets a file per run; each run is checked.
    int runStart = 0;
    for (int i = 1; i <= entries.size(); i++) {
      if (i == entries.size() || Long.compareUnsigned(entries.get(i).position(), entries.get(i - 1).position()) < 0) {
        byte[] low = DataKeys.encode(entries.get(runStart).position(), entries.get(runStart).key());
        byte[] high = DataKeys.encode(entries.get(i - 1).position(), entries.get(i - 1).key());
        if (!data.subMap(low, true, high, true).isEmpty() || !deleted.subSet(low, true, high, true).isEmpty()) {
          return false;
        }
        runStart = i;
      }
    }
    return true;
  }

  /** Cuts the change log: a feed that needs a sequence before now is {@link StoreException.FeedUnavailable}. */
  public synchronized void purgeLog() {
    log.clear();
    logStart = sequence + 1;
  }

  /** Cuts the change log to at most its last {@code keep} data writes (a log retention). */
  public synchronized void retainLog(int keep) {
    if (log.size() > keep) {
      int drop = log.size() - keep;
      logStart = log.get(drop).sequence();
      log.subList(0, drop).clear();
    }
  }

  /** The live entries of the whole ring, in token order (for checks). */
  public synchronized List<Entry> contents() {
    return live(entriesOf(KeySpans.of(RingRange.whole())));
  }

  /** A snapshot's entries as a {@link RangeScan}. */
  public static RangeScan scanOf(Snapshot snapshot, Runnable onClose, Runnable checkOpen) {
    Iterator<Entry> it = snapshot.entries().iterator();
    return new RangeScan() {
      @Override
      public long sequence() {
        return snapshot.sequence();
      }

      @Override
      public boolean hasNext() {
        checkOpen.run();
        return it.hasNext();
      }

      @Override
      public Entry next() {
        checkOpen.run();
        if (!it.hasNext()) {
          throw new NoSuchElementException("the scan has no more entries");
        }
        return it.next();
      }

      @Override
      public void close() {
        onClose.run();
      }
    };
  }

  /** A feed's changes as a {@link ChangeFeed}. */
  public static ChangeFeed feedOf(Feed feed, Runnable onClose, Runnable checkOpen) {
    Iterator<Change> it = feed.changes().iterator();
    return new ChangeFeed() {
      @Override
      public long upTo() {
        return feed.upTo();
      }

      @Override
      public boolean hasNext() {
        checkOpen.run();
        return it.hasNext();
      }

      @Override
      public Change next() {
        checkOpen.run();
        if (!it.hasNext()) {
          throw new NoSuchElementException("the change feed has no more changes up to " + feed.upTo());
        }
        return it.next();
      }

      @Override
      public void close() {
        onClose.run();
      }
    };
  }

  /** For messages. */
  @Override
  public String toString() {
    return "MemoryStoreState[" + nodeId + ", " + zone + ", sequence " + sequence + ", " + data.size() + " keys, "
        + fences.all().size() + " fences]";
  }

  /** Keys present, for tests. */
  Set<byte[]> keys() {
    return data.keySet();
  }
}
