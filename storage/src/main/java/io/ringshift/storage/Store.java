package io.ringshift.storage;

import io.ringshift.ring.RingRange;
import java.util.List;
import java.util.Optional;

/**
 * A node's store as migration sees it: the storage SPI (docs/architecture.md, "Data flow"). The
 * reference implementation is RocksDB ({@code RocksStore}); {@code RemoteStore} is the same SPI over a node's
 * network API, so a worker drives a local and a remote store alike.
 *
 * <p>Keys are kept in token order: a key is stored under its 8-byte big-endian ring position
 * ({@link Entry#positionOf}: XXH3-64 of the key bytes, unsigned) followed by the key, so a ring range is a key range. Every write gets a
 * sequence number that is a real offset in the store's log, increasing; scans, digests and fences are taken
 * at a sequence number, and the change feed is read after one.
 *
 * <p>Limits: a key is 1 to {@link #MAX_KEY_BYTES} bytes, a value at most {@link #MAX_VALUE_BYTES}, an epoch and a
 * sequence number are {@code >= 0}, one {@link #apply} carries at most {@link #MAX_APPLY_ENTRIES} entries and
 * {@link #MAX_APPLY_BYTES} key plus value bytes; anything else is refused with {@link StoreException.BadRequest},
 * whose message names the value and the rule, and changes nothing.
 *
 * <p>Implementations are thread safe. Every method may throw {@link StoreException}; its subclasses say
 * whether a retry can help.
 */
public interface Store extends AutoCloseable {

  /** Largest key a store accepts. */
  int MAX_KEY_BYTES = 16 * 1024;
  /** Largest value a store accepts. */
  int MAX_VALUE_BYTES = 4 * 1024 * 1024;
  /** Most key plus value bytes one {@link #apply} carries (64 MiB): a copy sends its range in batches. */
  int MAX_APPLY_BYTES = 64 * 1024 * 1024;
  /** Most entries one {@link #apply} carries. */
  int MAX_APPLY_ENTRIES = 1_000_000;
  /** Most ranges one change feed of several ranges ({@link #changesIn(List, long)}) follows. */
  int MAX_FEED_RANGES = 4096;
  /** Most key plus value bytes one {@link #load} carries (1 GiB): a copy loads its range in chunks. */
  long MAX_LOAD_BYTES = 1L << 30;

  /** Who the store is and where its log is. */
  NodeInfo info();

  /**
   * The sequence number of the last write in the store's log. A new store starts near 0 (its own records, such as
   * its identity and fences, take sequence numbers too); it never goes down, across restarts included.
   */
  long latestSequence();

  /**
   * Writes {@code value} under {@code key} at {@code version} for a client of ring epoch {@code epoch}: refused with
   * {@link WriteResult.RetryWithEpoch} when a fence covers the key for that epoch, answered
   * {@link WriteResult.Applied} otherwise. The store keeps the write only where it {@linkplain Entry#supersedes
   * supersedes} what the store holds for the key (max-version-wins); a write of a lower version is answered applied
   * too and changes nothing, because a later write (or a deletion) won. Sending the same write again, to the same
   * node or to another replica, is therefore always safe.
   */
  WriteResult put(byte[] key, byte[] value, long epoch, Version version);

  /**
   * Deletes {@code key} at {@code version} for a client of ring epoch {@code epoch}, with the rules of
   * {@link #put(byte[], byte[], long, Version)}: the store keeps a tombstone of that version for at least its
   * tombstone retention, so that an older write arriving later does not bring the key back.
   */
  WriteResult delete(byte[] key, long epoch, Version version);

  /**
   * As {@link #put(byte[], byte[], long, Version)} at a version the store stamps from its own {@link HybridClock}:
   * for a writer that sends no version (one that predates versions).
   */
  WriteResult put(byte[] key, byte[] value, long epoch);

  /** As {@link #delete(byte[], long, Version)} at a version the store stamps from its own clock. */
  WriteResult delete(byte[] key, long epoch);

  /** The value of {@code key}, if the store holds one (a tombstone is no value). Reads are never fenced. */
  Optional<byte[]> get(byte[] key);

  /**
   * Opens a consistent scan of {@code range} in token order, tombstones included (as deletions with their versions: a
   * copy carries them, so that an older write reaching the target later loses), at the store's current sequence
   * number (which
   * {@link RangeScan#sequence()} reports: the watermark W of a copy). When {@code after} is not null the scan
   * starts strictly after that (position, key) cursor, so a resumed copy continues where it stopped; a cursor
   * with an empty key starts at its position itself (every key there included). The cursor's position must lie
   * in {@code range}. The caller must close the scan.
   */
  RangeScan scan(RingRange range, Cursor after);

  /**
   * The writes to keys in {@code range} with a sequence number above {@code afterSequence}, in log order, up
   * to the sequence number the feed reports when it ends ({@link ChangeFeed#upTo()}). Deletions come as
   * entries with a null value: a client's deletion with its version, a range delete (and the purge of an expired
   * tombstone) as a deletion of {@link Version#ZERO}. Each write comes with the entry it wrote; a write a higher
   * version had superseded wrote nothing and does not come. The caller must close the feed.
   *
   * @throws StoreException.FeedUnavailable when the log no longer reaches back to {@code afterSequence} (older
   *     than the store's log retention), or {@code afterSequence} is beyond the store's latest sequence (it came
   *     from another store): the caller must copy the range again from a new scan
   */
  default ChangeFeed changes(RingRange range, long afterSequence) {
    io.ringshift.storage.internal.Checks.range(range);
    return changesIn(List.of(range), afterSequence);
  }

  /**
   * As {@link #changes(RingRange, long)} for the writes to keys in any of {@code ranges} (1 to
   * {@link #MAX_FEED_RANGES}; they may overlap, and each write comes once): one pass over the log for many
   * ranges, which is how a worker follows every range it copied from this node while they wait for their fence,
   * instead of one pass per range.
   */
  ChangeFeed changesIn(List<RingRange> ranges, long afterSequence);

  /**
   * Applies copied entries (and deletions), each where it {@linkplain Entry#supersedes supersedes} what the store
   * holds for its key (max-version-wins, so copies, catch-up and client writes commute): no epoch and no fence
   * check, because they come from the range's old owner. Idempotent: applying the same entries again gives the same
   * contents.
   * Every entry's position must equal its key's ring position ({@code RingHash.xxh3()} of the key); a batch
   * with any bad entry is refused whole.
   *
   * @return the sequence number of the last write (the latest sequence for an empty list)
   */
  long apply(List<Entry> entries);

  /**
   * Loads the entries of a snapshot copy in bulk (values and the tombstones a scan carries), in any number up to
   * {@link #MAX_LOAD_BYTES}, read from
   * {@code entries} as they come, so a chunk of any size is never all in memory. The store ends with the same
   * contents as {@link #apply} of the same entries would give it, but may get there without its write path:
   * RocksDB writes the entries into sorted table files and ingests them (the way TiKV and CockroachDB move range
   * snapshots), which writes each byte once, with no write-ahead log, memtable, flush or compaction. It does that
   * only where none of the keys between the load's smallest and largest key is present in the store, not even as
   * a deletion (a range a copy just cleared, that no client writes to): such a load takes no sequence number and
   * does not appear in the change feed, so a range being loaded must not be a copy's source at the same time,
   * which the protocol guarantees (a target is no source until verified). Otherwise the entries go through the
   * write path, as by {@link #apply}, and appear in the feed.
   *
   * <p>A {@link #fence} asked for while a load is in progress aborts the load when the fenced range meets its entries
   * (from the first to the last, in ring order), with {@link StoreException.Unavailable}: a load lands before such a
   * fence or not at all. A copy fences its target before it verifies, so a load its copy gave up on (the node read it
   * and then stalled past the copy's deadline) can never land over what the verification compared and clients then
   * read.
   *
   * <p>Every entry is checked as {@link #apply} checks it, and a deletion of {@link Version#ZERO} is refused; a bad
   * entry, or an iterator
   * that throws, fails the load before anything of it is written. The default applies the entries in batches as
   * they come (a store without a bulk path): there, the batches before a bad entry stay applied.
   */
  default LoadResult load(java.util.Iterator<Entry> entries) {
    io.ringshift.storage.internal.LoadEntries checked = new io.ringshift.storage.internal.LoadEntries(entries);
    List<Entry> batch = new java.util.ArrayList<>();
    long batchBytes = 0;
    long sequence = -1;
    while (checked.hasNext()) {
      Entry e = checked.next();
      batch.add(e);
      batchBytes += e.size();
      if (batchBytes >= (1 << 20) || batch.size() >= 1000) {
        sequence = apply(batch);
        batch = new java.util.ArrayList<>();
        batchBytes = 0;
      }
    }
    if (!batch.isEmpty()) {
      sequence = apply(batch);
    }
    return new LoadResult(checked.count(), checked.bytes(), false,
        checked.count() == 0 ? latestSequence() : sequence);
  }

  /**
   * An order-independent digest of the live keys in {@code range}, their versions and values (tombstones are not
   * counted), at a consistent snapshot taken at the store's
   * current sequence number ({@link RangeDigest#sequence()}).
   */
  RangeDigest digest(RingRange range);

  /**
   * Fences {@code range} for writers of epochs below {@code epoch} and records the position. Atomic with respect
   * to writes: a write that is in flight when the fence is asked for either completes before it, at a sequence
   * number at or below the fence's position, or is refused. Idempotent: a second call with the same range and
   * epoch returns the first fence. Fences survive a restart.
   */
  Fence fence(RingRange range, long epoch);

  /** The fences in force, oldest first. */
  List<Fence> fences();

  /** Lifts the fence of {@code range} at {@code epoch} (a superseded plan); nothing happens if there is none. */
  void unfence(RingRange range, long epoch);

  /**
   * Deletes every key in {@code range}, tombstones included, for epoch {@code epoch}: a CLEANUP task of that epoch, after the range's new
   * owners are verified and the grace period is over, or a copy of that epoch clearing its target before it starts.
   * Not fenced, and not atomic: a key written into the range while it runs may survive. Idempotent. Each deleted key
   * appears in the change feed as a deletion. A node that routes by a ring (an {@link OwnershipCheckedStore})
   * refuses it with {@link StoreException.Refused}, deleting nothing more, when its ring is of epoch {@code epoch} or
   * later and makes the node a replica of part of the range: that epoch's copy of the range must stay (a copy of an
   * epoch clears its target only before the epoch is published).
   *
   * @return how many keys were deleted
   */
  long deleteRange(RingRange range, long epoch);

  /** Releases the store (a remote store: its connections; a local store: the database). */
  @Override
  void close();

  /**
   * Where a resumed scan continues: strictly after this (position, key), in the range's token order. An empty key
   * means "at this position, every key included".
   */
  record Cursor(long position, byte[] key) {
    /** A cursor that resumes at {@code position} itself: every key stored at that position is scanned again. */
    public static Cursor atPosition(long position) {
      return new Cursor(position, new byte[0]);
    }

    /** The cursor just after {@code entry}: a scan resumed there continues with the entry that followed it. */
    public static Cursor after(Entry entry) {
      return new Cursor(entry.position(), entry.key());
    }
  }

  /**
   * A node's identity and the state of its log.
   *
   * @param keys the number of live keys, an estimate (RocksDB's {@code rocksdb.estimate-num-keys})
   * @param incarnation an id the store drew when it was created, kept across restarts: a node restarted on an
   *     empty (wiped or new) data dir has another one, so a replica verified under one incarnation and now reporting
   *     another has lost what it held
   */
  record NodeInfo(String nodeId, String zone, long latestSequence, long keys, String incarnation) {}
}
