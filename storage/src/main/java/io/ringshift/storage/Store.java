package io.ringshift.storage;

import java.util.List;
import java.util.Optional;

/**
 * A node's store as migration sees it: the storage SPI (DESIGN.md, "Data plane used for migration"). The
 * reference implementation is RocksDB ({@code RocksStore}); {@code RemoteStore} is the same SPI over a node's
 * network API, so a worker drives a local and a remote store alike.
 *
 * <p>Keys are kept in token order: a key is stored under its 8-byte big-endian ring position
 * ({@code RingHash.position(key)}) followed by the key, so a ring range is a key range. Every write gets a
 * sequence number that is a real offset in the store's log, increasing; scans, digests and fences are taken
 * at a sequence number, and the change feed is read after one.
 *
 * <p>Limits: a key is 1 to {@link #MAX_KEY_BYTES} bytes, a value at most {@link #MAX_VALUE_BYTES}; anything
 * else is refused with {@link StoreException.BadRequest} and changes nothing.
 *
 * <p>Implementations are thread safe. Every method may throw {@link StoreException}; its subclasses say
 * whether a retry can help.
 */
public interface Store extends AutoCloseable {

  /** Largest key a store accepts. */
  int MAX_KEY_BYTES = 16 * 1024;
  /** Largest value a store accepts. */
  int MAX_VALUE_BYTES = 4 * 1024 * 1024;

  /** Who the store is and where its log is. */
  NodeInfo info();

  /** The sequence number of the last write in the store's log (0 for an empty store). */
  long latestSequence();

  /**
   * Writes {@code value} under {@code key} for a client of ring epoch {@code epoch}: refused with
   * {@link WriteResult.RetryWithEpoch} when a fence covers the key for that epoch, applied otherwise.
   */
  WriteResult put(byte[] key, byte[] value, long epoch);

  /** Deletes {@code key} for a client of ring epoch {@code epoch}, with the same fence rule as {@link #put}. */
  WriteResult delete(byte[] key, long epoch);

  /** The value of {@code key}, if the store holds it. Reads are never fenced. */
  Optional<byte[]> get(byte[] key);

  /**
   * Opens a consistent scan of {@code range} in token order, at the store's current sequence number (which
   * {@link RangeScan#sequence()} reports: the watermark W of a copy). When {@code after} is not null the scan
   * starts strictly after that (position, key) cursor, so a resumed copy continues where it stopped. The
   * caller must close the scan.
   */
  RangeScan scan(RingRange range, Cursor after);

  /**
   * The writes to keys in {@code range} with a sequence number above {@code afterSequence}, in log order, up
   * to the sequence number the feed reports when it ends ({@link ChangeFeed#upTo()}). Deletions come as
   * entries with a null value. The caller must close the feed.
   *
   * @throws StoreException.FeedUnavailable when the log no longer reaches back to {@code afterSequence}: the
   *     caller must copy the range again from a new scan
   */
  ChangeFeed changes(RingRange range, long afterSequence);

  /**
   * Applies copied entries (and deletions), in order, as they are: no epoch and no fence check, because they
   * come from the range's old owner. Idempotent: applying the same entries again gives the same contents.
   * Every entry's position must equal {@code RingHash.position(key)}.
   *
   * @return the sequence number of the last write
   */
  long apply(List<Entry> entries);

  /** An order-independent digest of the live keys in {@code range}, at the store's current sequence number. */
  RangeDigest digest(RingRange range);

  /**
   * Fences {@code range} for writers of epochs below {@code epoch} and records the position. Idempotent: a
   * second call with the same range and epoch returns the first fence.
   */
  Fence fence(RingRange range, long epoch);

  /** The fences in force, oldest first. */
  List<Fence> fences();

  /** Lifts the fence of {@code range} at {@code epoch} (a superseded plan); nothing happens if there is none. */
  void unfence(RingRange range, long epoch);

  /**
   * Deletes every key in {@code range}: a CLEANUP task, after the range's new owners are verified and the
   * grace period is over. Idempotent.
   *
   * @return how many keys were deleted
   */
  long deleteRange(RingRange range);

  /** Releases the store (a remote store: its connections; a local store: the database). */
  @Override
  void close();

  /** Where a resumed scan continues: strictly after this key, in token order. */
  record Cursor(long position, byte[] key) {}

  /** A node's identity and the state of its log. */
  record NodeInfo(String nodeId, String zone, long latestSequence, long keys) {}
}
