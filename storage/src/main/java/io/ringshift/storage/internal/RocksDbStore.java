package io.ringshift.storage.internal;

import static java.nio.charset.StandardCharsets.UTF_8;

import io.ringshift.ring.RingRange;
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
import java.io.IOException;
import java.nio.file.Files;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Lock;
import java.util.concurrent.locks.ReentrantLock;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import java.util.function.LongSupplier;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.rocksdb.ColumnFamilyDescriptor;
import org.rocksdb.ColumnFamilyHandle;
import org.rocksdb.ColumnFamilyOptions;
import org.rocksdb.DBOptions;
import org.rocksdb.IngestExternalFileOptions;
import org.rocksdb.InfoLogLevel;
import org.rocksdb.Options;
import org.rocksdb.ReadOptions;
import org.rocksdb.RocksDB;
import org.rocksdb.RocksDBException;
import org.rocksdb.RocksIterator;
import org.rocksdb.Snapshot;
import org.rocksdb.SstFileReader;
import org.rocksdb.SstFileReaderIterator;
import org.rocksdb.Status;
import org.rocksdb.TransactionLogIterator;
import org.rocksdb.WriteBatch;
import org.rocksdb.WriteOptions;

/**
 * The RocksDB store (docs/storage.md).
 *
 * <p>Design note. Three column families: {@code data} holds {@code position ++ key -> kind ++ version ++ value}
 * ({@link StoredValues}: store format 2, which keeps deletions as versioned tombstones), {@code meta} the node's
 * identity, the fences and an index of the tombstones by the time they arrived (what the purge of expired ones
 * reads), {@code default} nothing. Sequence numbers are RocksDB's own, so a write's
 * sequence is an offset in the write-ahead log, which the change feed reads back ({@link WalFeed}).
 *
 * <p>All writes (client puts and deletes, applies, fences, range deletes) go through one mutex, {@code writeLock}.
 * That makes two things exact that RocksDB alone leaves open: the sequence number a write returns is the one it
 * got (read right after the write, before anyone else writes), and a fence is atomic with respect to writes: it
 * is taken under the same mutex, after every write in flight finished and before the next one checks the fences,
 * so every acknowledged write of an older epoch has a sequence at or below the fence's position and every later
 * one is refused. RocksDB serialises its write path (the write-ahead log) anyway, so the mutex costs little
 * throughput; reads, scans, digests and feeds take no part in it. Under the same mutex a write reads what the store
 * holds for its key and writes only where it supersedes it (max-version-wins, {@link Entry#supersedes}).
 *
 * <p>A second lock, {@code lifecycle}, guards the native handles: every call into RocksDB holds its read side,
 * {@link #close()} takes its write side and first releases the scans and feeds still open, so a store closed
 * under a reader fails that reader with {@link StoreException.Unavailable} instead of crashing the JVM.
 */
public final class RocksDbStore implements Store {
  static {
    RocksDB.loadLibrary();
  }

  private static final byte[] DATA_FAMILY = "data".getBytes(UTF_8);
  private static final byte[] META_FAMILY = "meta".getBytes(UTF_8);
  private static final byte[] NODE_ID = "node.id".getBytes(UTF_8);
  private static final byte[] ZONE = "node.zone".getBytes(UTF_8);
  private static final byte[] INCARNATION = "store.incarnation".getBytes(UTF_8);
  private static final byte[] FORMAT = "format".getBytes(UTF_8);
  private static final byte[] FORMAT_1 = "ringshift-store/1".getBytes(UTF_8);
  private static final byte[] FORMAT_2 = "ringshift-store/2".getBytes(UTF_8);
  /** The sequence number from which the log holds format-2 values: a feed must start at or after it. */
  private static final byte[] FORMAT_SINCE = "format.since".getBytes(UTF_8);
  /** The last data key an interrupted upgrade to format 2 rewrote. */
  private static final byte[] UPGRADE_CURSOR = "format.upgrade.cursor".getBytes(UTF_8);
  /** The tombstone index: {@code tomb/ ++ arrival millis ++ data key -> version}. */
  private static final byte[] TOMB_PREFIX = "tomb/".getBytes(UTF_8);
  /** How long a tombstone is kept by default: far longer than any transition and its grace period. */
  public static final Duration DEFAULT_TOMBSTONE_RETENTION = Duration.ofHours(24);
  /** The shortest tombstone retention a store accepts. */
  public static final Duration MIN_TOMBSTONE_RETENTION = Duration.ofMinutes(1);
  private static final byte[] FENCE_PREFIX = "fence/".getBytes(UTF_8);
  private static final int MAX_NAME_LENGTH = 255;
  /** Live WAL beyond which RocksDB flushes and rolls to a new WAL file: what a feed's seek reads at most. */
  static final long MAX_WAL_FILE_BYTES = 4L << 20;
  /** Keys per write batch of a range delete: bounded batches keep other writers waiting only briefly. */
  private static final int DELETE_BATCH_KEYS = 10_000;
  /** Key and value bytes per write batch of a load that goes through the write path. */
  private static final long LOAD_BATCH_BYTES = 1L << 20;
  /**
   * A load smaller than this goes through the write path: an ingest syncs its file and the store's manifest, which
   * costs more than writing a small batch, and many small files would pile up in the bottom level.
   */
  static final long MIN_INGEST_BYTES = 4L << 20;
  /** Largest table file a load writes (RocksDB's own target file size). */
  static final long LOAD_FILE_BYTES = 64L << 20;
  /** Where a load writes its table files, inside the data dir (an ingest links them: same file system). */
  static final String LOAD_DIR = "bulk-load";

  private final Path dataDir;
  private final String nodeId;
  private final String zone;
  private volatile String incarnation;
  private final Duration walRetention;
  private final long walSizeLimitMb;
  private final DBOptions dbOptions;
  private final ColumnFamilyOptions familyOptions;
  private final WriteOptions writeOptions;
  private final RocksDB db;
  private final List<ColumnFamilyHandle> handles;
  private final ColumnFamilyHandle data;
  private final ColumnFamilyHandle meta;
  private final ReentrantReadWriteLock lifecycle = new ReentrantReadWriteLock();
  private final ReentrantLock writeLock = new ReentrantLock();
  private final Set<Releasable> open = ConcurrentHashMap.newKeySet();
  private volatile FenceSet fences = FenceSet.EMPTY;
  private volatile boolean closed;
  /** The loads in progress: a fence aborts those it meets ({@link LoadsInProgress}). */
  private final LoadsInProgress loads = new LoadsInProgress();
  private final Duration tombstoneRetention;
  private final LongSupplier millis;
  private final HybridClock clock;
  /** The first sequence number of format 2 in the log: a feed from before it is unavailable. */
  private volatile long formatSince;
  private ScheduledExecutorService purger;

  private RocksDbStore(Path dataDir, String nodeId, String zone, Duration walRetention, long walSizeLimitMb,
      Duration tombstoneRetention, LongSupplier millis, DBOptions dbOptions, ColumnFamilyOptions familyOptions,
      WriteOptions writeOptions, RocksDB db, List<ColumnFamilyHandle> handles) {
    this.tombstoneRetention = tombstoneRetention;
    this.millis = millis;
    this.clock = HybridClock.of("node/" + nodeId, millis);
    this.dataDir = dataDir;
    this.nodeId = nodeId;
    this.zone = zone;
    this.walRetention = walRetention;
    this.walSizeLimitMb = walSizeLimitMb;
    this.dbOptions = dbOptions;
    this.familyOptions = familyOptions;
    this.writeOptions = writeOptions;
    this.db = db;
    this.handles = handles;
    this.data = handles.get(1);
    this.meta = handles.get(2);
  }

  /**
   * Opens (or creates) the store in {@code dataDir} for {@code nodeId} in {@code zone}.
   *
   * @throws StoreException.BadRequest for a bad node id or zone, a data dir that is a file, holds another node's
   *     store or a database that is not a ringshift store, or is in use by another process or store
   * @throws StoreException when RocksDB cannot open the directory
   */
  public static RocksDbStore open(Path dataDir, String nodeId, String zone, Duration walRetention,
      long walSizeLimitMb, boolean syncWrites) {
    RocksDbStore store = open(dataDir, nodeId, zone, walRetention, walSizeLimitMb, syncWrites,
        DEFAULT_TOMBSTONE_RETENTION, System::currentTimeMillis);
    store.startPurging(Duration.ofMinutes(1));
    return store;
  }

  /**
   * As {@link #open(Path, String, String, Duration, long, boolean)}, keeping tombstones for {@code tombstoneRetention}
   * on the clock {@code millis}, without the background purge ({@link #purgeTombstones} purges).
   */
  public static RocksDbStore open(Path dataDir, String nodeId, String zone, Duration walRetention,
      long walSizeLimitMb, boolean syncWrites, Duration tombstoneRetention, LongSupplier millis) {
    name("node id", nodeId);
    if (tombstoneRetention == null || tombstoneRetention.compareTo(MIN_TOMBSTONE_RETENTION) < 0) {
      throw new StoreException.BadRequest("tombstone retention " + tombstoneRetention + " is too short; it must be at "
          + "least " + MIN_TOMBSTONE_RETENTION + " and longer than any transition and its grace period");
    }
    name("zone", zone);
    if (dataDir == null) {
      throw new StoreException.BadRequest("data dir is missing; give the directory the node keeps its store in");
    }
    if (walRetention == null || walRetention.toSeconds() < 1) {
      throw new StoreException.BadRequest("WAL retention " + walRetention + " is too short; it must be at least 1 s");
    }
    if (walSizeLimitMb < 0) {
      throw new StoreException.BadRequest("WAL size limit " + walSizeLimitMb + " MB is negative; give 0 (no size "
          + "limit) or more");
    }
    Path dir = dataDir.toAbsolutePath().normalize();
    if (Files.exists(dir) && !Files.isDirectory(dir)) {
      throw new StoreException.BadRequest("data dir " + dir + " is a file; give a directory (created if absent)");
    }
    try {
      Files.createDirectories(dir);
    } catch (IOException e) {
      throw new StoreException("cannot create data dir " + dir + ": " + e, e);
    }
    checkFamilies(dir);

    DBOptions dbOptions = new DBOptions()
        .setCreateIfMissing(true)
        .setCreateMissingColumnFamilies(true)
        // The change feed reads the write-ahead log: keep it after flushes, up to the retention.
        .setWalTtlSeconds(walRetention.toSeconds())
        .setWalSizeLimitMB(walSizeLimitMb)
        // A feed starts with getUpdatesSince, which finds the WAL file holding its sequence number and then reads
        // that file from its start: its cost grows with the file (about 2 ms per MiB here, 100 ms at the 64 MiB a
        // memtable lets a WAL file grow to), and every catch-up pass and every caught-up task's tail pays it. Past
        // this many bytes of live WAL, RocksDB flushes and starts a new file, so a seek reads at most a few MiB.
        .setMaxTotalWalSize(MAX_WAL_FILE_BYTES)
        .setInfoLogLevel(InfoLogLevel.WARN_LEVEL)
        .setKeepLogFileNum(3)
        .setMaxLogFileSize(16L * 1024 * 1024);
    ColumnFamilyOptions familyOptions = new ColumnFamilyOptions();
    WriteOptions writeOptions = new WriteOptions().setSync(syncWrites);
    List<ColumnFamilyHandle> handles = new ArrayList<>();
    RocksDB db;
    try {
      db = RocksDB.open(dbOptions, dir.toString(), List.of(
          new ColumnFamilyDescriptor(RocksDB.DEFAULT_COLUMN_FAMILY, familyOptions),
          new ColumnFamilyDescriptor(DATA_FAMILY, familyOptions),
          new ColumnFamilyDescriptor(META_FAMILY, familyOptions)), handles);
    } catch (RocksDBException e) {
      writeOptions.close();
      familyOptions.close();
      dbOptions.close();
      if (isLockHeld(e)) {
        throw new StoreException.BadRequest("data dir " + dir + " is in use: another process, or another store in "
            + "this one, has it open (" + e.getMessage() + ")");
      }
      throw new StoreException("cannot open the RocksDB store in " + dir + ": " + e.getMessage(), e);
    }
    RocksDbStore store = new RocksDbStore(dir, nodeId, zone, walRetention, walSizeLimitMb, tombstoneRetention, millis,
        dbOptions, familyOptions, writeOptions, db, handles);
    try {
      store.claimIdentity();
      store.upgradeFormat();
      store.fences = store.loadFences();
      store.deleteLoadLeftovers();
      return store;
    } catch (RuntimeException e) {
      store.close();
      throw e;
    } catch (RocksDBException e) {
      store.close();
      throw new StoreException("cannot read the store in " + dir + ": " + e.getMessage(), e);
    }
  }

  static void name(String what, String name) {
    if (name == null || name.isBlank()) {
      throw new StoreException.BadRequest(what + " is missing or blank; give a name of 1 to " + MAX_NAME_LENGTH
          + " characters");
    }
    if (name.length() > MAX_NAME_LENGTH || name.chars().anyMatch(Character::isISOControl)) {
      throw new StoreException.BadRequest(String.format(Locale.ROOT,
          "%s '%s' is not allowed; a name is 1 to %d characters without control characters", what,
          name.length() > 40 ? name.substring(0, 40) + "..." : name, MAX_NAME_LENGTH));
    }
  }

  /** Refuses a directory that holds a RocksDB database without the store's column families. */
  private static void checkFamilies(Path dir) {
    if (!Files.exists(dir.resolve("CURRENT"))) {
      return;
    }
    List<byte[]> families;
    try (Options options = new Options()) {
      families = RocksDB.listColumnFamilies(options, dir.toString());
    } catch (RocksDBException e) {
      throw new StoreException("cannot read the column families of " + dir + ": " + e.getMessage(), e);
    }
    boolean hasData = families.stream().anyMatch(f -> Arrays.equals(f, DATA_FAMILY));
    boolean hasMeta = families.stream().anyMatch(f -> Arrays.equals(f, META_FAMILY));
    if (!hasData || !hasMeta) {
      throw new StoreException.BadRequest("data dir " + dir + " holds a RocksDB database that is not a ringshift "
          + "store (column families " + families.stream().map(f -> new String(f, UTF_8))
          .collect(Collectors.joining(", ", "[", "]")) + "); give an empty directory or a node's own data dir");
    }
  }

  private static boolean isLockHeld(RocksDBException e) {
    String m = String.valueOf(e.getMessage()).toLowerCase(Locale.ROOT);
    return m.contains("lock");
  }

  /** Records the node id and zone in a new store; refuses a store that belongs to another node. */
  private void claimIdentity() throws RocksDBException {
    byte[] storedId = db.get(meta, NODE_ID);
    if (storedId == null) {
      incarnation = java.util.UUID.randomUUID().toString();
      try (WriteBatch batch = new WriteBatch(); WriteOptions sync = new WriteOptions().setSync(true)) {
        batch.put(meta, FORMAT, FORMAT_2);
        batch.put(meta, FORMAT_SINCE, longBytes(0));
        batch.put(meta, NODE_ID, nodeId.getBytes(UTF_8));
        batch.put(meta, ZONE, zone.getBytes(UTF_8));
        batch.put(meta, INCARNATION, incarnation.getBytes(UTF_8));
        db.write(sync, batch);
      }
      return;
    }
    String storedNode = new String(storedId, UTF_8);
    byte[] storedZoneBytes = db.get(meta, ZONE);
    String storedZone = storedZoneBytes == null ? "?" : new String(storedZoneBytes, UTF_8);
    if (!storedNode.equals(nodeId) || !storedZone.equals(zone)) {
      throw new StoreException.BadRequest(String.format(
          "data dir %s belongs to node '%s' in zone '%s', not to node '%s' in zone '%s'; give each node its own "
              + "data dir", dataDir, storedNode, storedZone, nodeId, zone));
    }
    byte[] storedIncarnation = db.get(meta, INCARNATION);
    if (storedIncarnation == null) {
      // A store created before incarnations: it draws one now, and keeps it.
      storedIncarnation = java.util.UUID.randomUUID().toString().getBytes(UTF_8);
      try (WriteOptions sync = new WriteOptions().setSync(true)) {
        db.put(meta, sync, INCARNATION, storedIncarnation);
      }
    }
    incarnation = new String(storedIncarnation, UTF_8);
  }

  /**
   * Brings a store of format 1 (values without versions) to format 2 in place: every value is rewritten as a live
   * entry of {@link Version#ZERO}, in batches that each record how far they got, so an upgrade a crash interrupted
   * resumes where it stopped. The log from before the upgrade's end holds format-1 values: a feed that starts there
   * is {@link StoreException.FeedUnavailable} (its copy starts again from a new scan).
   */
  private void upgradeFormat() throws RocksDBException {
    byte[] format = db.get(meta, FORMAT);
    if (format == null || Arrays.equals(format, FORMAT_1)) {
      byte[] cursor = db.get(meta, UPGRADE_CURSOR);
      try (ReadOptions options = new ReadOptions().setFillCache(false); RocksIterator it = db.newIterator(data, options)) {
        if (cursor == null) {
          it.seekToFirst();
        } else {
          it.seek(cursor);
          if (it.isValid() && Arrays.equals(it.key(), cursor)) {
            it.next();
          }
        }
        while (it.isValid()) {
          try (WriteBatch batch = new WriteBatch()) {
            byte[] last = null;
            for (int n = 0; n < DELETE_BATCH_KEYS && it.isValid(); n++, it.next()) {
              last = it.key();
              batch.put(data, last, StoredValues.encode(it.value(), Version.ZERO));
            }
            batch.put(meta, UPGRADE_CURSOR, last);
            db.write(writeOptions, batch);
          }
        }
        it.status();
      }
      try (WriteBatch batch = new WriteBatch(); WriteOptions sync = new WriteOptions().setSync(true)) {
        batch.put(meta, FORMAT_SINCE, longBytes(db.getLatestSequenceNumber() + 1));
        batch.put(meta, FORMAT, FORMAT_2);
        batch.delete(meta, UPGRADE_CURSOR);
        db.write(sync, batch);
      }
    } else if (!Arrays.equals(format, FORMAT_2)) {
      throw new StoreException.BadRequest("data dir " + dataDir + " holds a store of format '"
          + new String(format, UTF_8) + "', which this version does not know (it reads ringshift-store/1 and "
          + "ringshift-store/2); run the version that wrote it");
    }
    byte[] since = db.get(meta, FORMAT_SINCE);
    formatSince = since == null ? 0 : DataKeys.getLong(since, 0);
  }

  private static byte[] longBytes(long v) {
    byte[] out = new byte[8];
    DataKeys.putLong(out, 0, v);
    return out;
  }

  private FenceSet loadFences() throws RocksDBException {
    List<Fence> loaded = new ArrayList<>();
    try (ReadOptions options = new ReadOptions(); RocksIterator it = db.newIterator(meta, options)) {
      for (it.seek(FENCE_PREFIX); it.isValid() && startsWith(it.key(), FENCE_PREFIX); it.next()) {
        byte[] k = it.key();
        int o = FENCE_PREFIX.length;
        RingRange range = RingRange.of(DataKeys.getLong(k, o), DataKeys.getLong(k, o + 8));
        loaded.add(new Fence(range, DataKeys.getLong(k, o + 16), DataKeys.getLong(it.value(), 0)));
      }
      it.status();
    }
    return FenceSet.of(loaded);
  }

  private static boolean startsWith(byte[] bytes, byte[] prefix) {
    return bytes.length >= prefix.length && Arrays.equals(bytes, 0, prefix.length, prefix, 0, prefix.length);
  }

  private static byte[] fenceKey(RingRange range, long epoch) {
    byte[] k = Arrays.copyOf(FENCE_PREFIX, FENCE_PREFIX.length + 24);
    DataKeys.putLong(k, FENCE_PREFIX.length, range.start());
    DataKeys.putLong(k, FENCE_PREFIX.length + 8, range.end());
    DataKeys.putLong(k, FENCE_PREFIX.length + 16, epoch);
    return k;
  }

  // ---- the SPI

  @Override
  public NodeInfo info() {
    return guarded(() -> new NodeInfo(nodeId, zone, db.getLatestSequenceNumber(),
        db.getLongProperty(data, "rocksdb.estimate-num-keys"), incarnation));
  }

  @Override
  public long latestSequence() {
    return guarded(db::getLatestSequenceNumber);
  }

  @Override
  public WriteResult put(byte[] key, byte[] value, long epoch, Version version) {
    Checks.put(key, value, epoch, version);
    return write(key, value, epoch, version);
  }

  @Override
  public WriteResult delete(byte[] key, long epoch, Version version) {
    Checks.delete(key, epoch, version);
    return write(key, null, epoch, version);
  }

  @Override
  public WriteResult put(byte[] key, byte[] value, long epoch) {
    Checks.put(key, value, epoch);
    return write(key, value, epoch, null);
  }

  @Override
  public WriteResult delete(byte[] key, long epoch) {
    Checks.delete(key, epoch);
    return write(key, null, epoch, null);
  }

  /** A client write at {@code version}, or at a version of the store's own clock when it is null. */
  private WriteResult write(byte[] key, byte[] value, long epoch, Version version) {
    long position = Entry.positionOf(key);
    byte[] dataKey = DataKeys.encode(position, key);
    return guarded(() -> {
      writeLock.lock();
      try {
        Fence fence = fences.refusing(position, epoch);
        if (fence != null) {
          return new WriteResult.RetryWithEpoch(fence.epoch(), fence.range());
        }
        Entry stored = storedEntry(dataKey, db.get(data, dataKey));
        if (stored != null) {
          // A write the node stamps must land above what the key holds, even when that came from a writer whose
          // clock runs ahead and the node restarted since (its clock starts from its own time).
          clock.observe(stored.version());
        }
        Entry incoming = new Entry(position, key, value, version == null ? clock.next() : version);
        clock.observe(incoming.version());
        try (WriteBatch batch = new WriteBatch()) {
          if (addIfNewer(batch, dataKey, incoming, stored, millis.getAsLong())) {
            db.write(writeOptions, batch);
          }
        }
        return new WriteResult.Applied(db.getLatestSequenceNumber());
      } finally {
        writeLock.unlock();
      }
    });
  }

  private static Entry storedEntry(byte[] dataKey, byte[] stored) {
    return stored == null ? null : StoredValues.decode(DataKeys.position(dataKey), DataKeys.key(dataKey), stored);
  }

  /**
   * Adds {@code incoming} to {@code batch} where it supersedes {@code stored} (null: nothing stored), with its entry
   * in the tombstone index when it is a tombstone; false when it does not supersede, adding nothing.
   */
  private boolean addIfNewer(WriteBatch batch, byte[] dataKey, Entry incoming, Entry stored, long now)
      throws RocksDBException {
    if (!incoming.supersedes(stored)) {
      return false;
    }
    // The index entry first: the data write is the batch's last operation, so the sequence number a write answers
    // with (the store's latest) is the one the change feed reports it at.
    if (incoming.isDeletion()) {
      batch.put(meta, tombstoneKey(now, dataKey), incoming.version().toBytes());
    }
    batch.put(data, dataKey, StoredValues.encode(incoming));
    return true;
  }

  private static byte[] tombstoneKey(long arrivalMillis, byte[] dataKey) {
    byte[] out = new byte[TOMB_PREFIX.length + 8 + dataKey.length];
    System.arraycopy(TOMB_PREFIX, 0, out, 0, TOMB_PREFIX.length);
    DataKeys.putLong(out, TOMB_PREFIX.length, arrivalMillis);
    System.arraycopy(dataKey, 0, out, TOMB_PREFIX.length + 8, dataKey.length);
    return out;
  }

  @Override
  public Optional<byte[]> get(byte[] key) {
    Checks.key(key);
    byte[] dataKey = DataKeys.encode(Entry.positionOf(key), key);
    return guarded(() -> {
      byte[] stored = db.get(data, dataKey);
      return Optional.ofNullable(stored == null ? null : StoredValues.value(stored));
    });
  }

  /**
   * Deletes the tombstones that arrived more than the tombstone retention ago (and were not overwritten since), at
   * most {@code max} of them; returns how many. The background purge calls it every minute.
   */
  public long purgeTombstones(int max) {
    long cutoff = millis.getAsLong() - tombstoneRetention.toMillis();
    byte[] end = tombstoneKey(Math.max(0, cutoff), new byte[0]);
    return guarded(() -> {
      long purged = 0;
      try (ReadOptions options = new ReadOptions(); RocksIterator it = db.newIterator(meta, options)) {
        it.seek(TOMB_PREFIX);
        while (purged < max && it.isValid() && startsWith(it.key(), TOMB_PREFIX)
            && Arrays.compareUnsigned(it.key(), end) < 0) {
          writeLock.lock();
          try (WriteBatch batch = new WriteBatch()) {
            for (int n = 0; n < DELETE_BATCH_KEYS && purged < max && it.isValid()
                && startsWith(it.key(), TOMB_PREFIX) && Arrays.compareUnsigned(it.key(), end) < 0; n++, it.next()) {
              byte[] indexKey = it.key();
              byte[] dataKey = Arrays.copyOfRange(indexKey, TOMB_PREFIX.length + 8, indexKey.length);
              byte[] stored = db.get(data, dataKey);
              if (stored != null && StoredValues.isTombstone(stored)
                  && Arrays.equals(StoredValues.version(stored).toBytes(), it.value())) {
                batch.delete(data, dataKey);
                purged++;
              }
              batch.delete(meta, indexKey);
            }
            db.write(writeOptions, batch);
          } finally {
            writeLock.unlock();
          }
        }
        it.status();
      }
      return purged;
    });
  }

  private void startPurging(Duration period) {
    purger = Executors.newSingleThreadScheduledExecutor(r -> {
      Thread t = new Thread(r, "ringshift-tombstone-purge-" + nodeId);
      t.setDaemon(true);
      return t;
    });
    purger.scheduleWithFixedDelay(() -> {
      try {
        while (purgeTombstones(100_000) == 100_000) {
          // more expired tombstones wait: go on
        }
      } catch (RuntimeException e) {
        // A closed store, or a RocksDB failure that the next write will report: the next round tries again.
      }
    }, period.toMillis(), period.toMillis(), TimeUnit.MILLISECONDS);
  }

  @Override
  public RangeScan scan(RingRange range, Cursor after) {
    Checks.range(range);
    Checks.cursor(range, after);
    List<KeySpans.Span> spans = after == null ? KeySpans.of(range) : KeySpans.after(range, after);
    return openScan(spans);
  }

  private RocksScan openScan(List<KeySpans.Span> spans) {
    return guarded(() -> {
      RocksScan scan = new RocksScan(this, db.getSnapshot(), spans);
      open.add(scan);
      return scan;
    });
  }

  @Override
  public ChangeFeed changesIn(List<RingRange> ranges, long afterSequence) {
    Checks.ranges(ranges);
    Checks.sequence("afterSequence", afterSequence);
    PositionSet positions = PositionSet.of(ranges);
    return guarded(() -> {
      long latest = db.getLatestSequenceNumber();
      if (afterSequence > latest) {
        throw new StoreException.FeedUnavailable(String.format(Locale.ROOT,
            "afterSequence %d is beyond the latest sequence %d of %s: it comes from another store or an earlier "
                + "store in this data dir; copy the range again from a new scan", afterSequence, latest, nodeId));
      }
      if (afterSequence + 1 < formatSince) {
        throw new StoreException.FeedUnavailable(String.format(Locale.ROOT,
            "the change feed of %s needs sequence %d, but the store was upgraded to format 2 at sequence %d and "
                + "the log before that holds values without versions: copy the range again from a new scan", nodeId,
            afterSequence + 1, formatSince));
      }
      WalFeed feed = new WalFeed(this, positions, data.getID(), afterSequence, latest);
      open.add(feed);
      return feed;
    });
  }

  @Override
  public long apply(List<Entry> entries) {
    Checks.entries(entries);
    return guarded(() -> {
      if (entries.isEmpty()) {
        return db.getLatestSequenceNumber();
      }
      writeLock.lock();
      try {
        applyNewer(entries, null);
        return db.getLatestSequenceNumber();
      } finally {
        writeLock.unlock();
      }
    });
  }

  /**
   * Writes, as one batch of the load {@code ticket} (null: no load), each of {@code entries} that supersedes what the
   * store holds for its key, or an earlier entry of the same batch; the caller holds the write lock.
   */
  private void applyNewer(List<Entry> entries, LoadsInProgress.Ticket ticket) throws RocksDBException {
    List<byte[]> dataKeys = new ArrayList<>(entries.size());
    for (Entry e : entries) {
      dataKeys.add(DataKeys.encode(e.position(), e.key()));
    }
    List<byte[]> stored = db.multiGetAsList(java.util.Collections.nCopies(dataKeys.size(), data), dataKeys);
    HashMap<ByteBuffer, Entry> written = new HashMap<>();
    long now = millis.getAsLong();
    try (WriteBatch batch = new WriteBatch()) {
      for (int i = 0; i < entries.size(); i++) {
        byte[] dataKey = dataKeys.get(i);
        ByteBuffer k = ByteBuffer.wrap(dataKey);
        Entry before = written.containsKey(k) ? written.get(k) : storedEntry(dataKey, stored.get(i));
        Entry e = entries.get(i);
        clock.observe(e.version());
        if (addIfNewer(batch, dataKey, e, before, now)) {
          written.put(k, e);
        }
      }
      if (batch.count() > 0) {
        write(batch, ticket);
      }
    }
  }

  /** Writes {@code batch} through the write path; returns its sequence number. */
  private long write(WriteBatch batch) throws RocksDBException {
    return write(batch, null);
  }

  /** Writes {@code batch} of the load {@code ticket} (null: no load), unless a fence aborted the load. */
  private long write(WriteBatch batch, LoadsInProgress.Ticket ticket) throws RocksDBException {
    writeLock.lock();
    try {
      if (ticket != null) {
        ticket.checkNotAborted();
      }
      db.write(writeOptions, batch);
      return db.getLatestSequenceNumber();
    } finally {
      writeLock.unlock();
    }
  }

  /**
   * Design note. A load first holds up to {@link #MIN_INGEST_BYTES} in memory: a smaller one is written through
   * the write path. A larger one is spooled into table files of up to {@link #LOAD_FILE_BYTES} as it arrives
   * ({@link TableSpool}) and, once the last entry was read and checked, ingested with global sequence numbers
   * refused, blocking flushes refused and snapshot consistency off. With those options RocksDB ingests a file only
   * where no key of the store (in the memtable or any level, tombstones included) lies between the file's first
   * and last key, and then places it in the lowest level it fits, with sequence number 0: it takes no sequence
   * number, so the write-ahead log the change feeds read has no gap. Where some key does lie there (a client wrote
   * to a range being filled, a range delete left tombstones), RocksDB refuses with InvalidArgument and the files are
   * read back and written through the write path instead, so the result is the same either way. Snapshot
   * consistency is off because every scan and digest holds a snapshot, and with it on RocksDB would need a sequence
   * number whenever one is open; an ingested key is then visible to a snapshot taken before the ingest, which only
   * a scan of the loaded range itself could notice, and nothing scans a range while a copy fills it.
   */
  @Override
  public LoadResult load(Iterator<Entry> entries) {
    try (LoadsInProgress.Ticket ticket = loads.open()) {
      return load(entries, ticket);
    }
  }

  private LoadResult load(Iterator<Entry> entries, LoadsInProgress.Ticket ticket) {
    LoadEntries checked = new LoadEntries(ticket.track(entries));
    List<Entry> head = new ArrayList<>();
    while (checked.bytes() < MIN_INGEST_BYTES && checked.hasNext()) {
      head.add(checked.next());
    }
    if (checked.bytes() < MIN_INGEST_BYTES) {
      Iterator<Entry> small = head.iterator();
      long sequence = guarded(() -> applyInBatches(small, ticket));
      return new LoadResult(checked.count(), checked.bytes(), false, sequence);
    }
    try (TableSpool spool = new TableSpool(dataDir.resolve(LOAD_DIR), LOAD_FILE_BYTES)) {
      List<TableSpool.Table> tables;
      // The tombstones of the load: an ingest puts them in the data, and the index of tombstones then gets them too.
      List<byte[]> tombstones = new ArrayList<>();
      try {
        for (Entry e : head) {
          spool(spool, e, tombstones);
        }
        head = null;
        while (checked.hasNext()) {
          spool(spool, checked.next(), tombstones);
        }
        tables = spool.finish();
      } catch (RocksDBException e) {
        throw failure(e);
      }
      boolean ingested = tables != null && ingest(tables, ticket);
      if (ingested) {
        indexTombstones(tombstones);
      } else {
        for (TableSpool.Table t : spool.tables()) {
          writeTable(t.path(), ticket);
        }
      }
      return new LoadResult(checked.count(), checked.bytes(), ingested, latestSequence());
    }
  }

  private void spool(TableSpool spool, Entry e, List<byte[]> tombstones) throws RocksDBException {
    byte[] dataKey = DataKeys.encode(e.position(), e.key());
    spool.add(dataKey, StoredValues.encode(e));
    if (e.isDeletion()) {
      tombstones.add(dataKey);
      tombstones.add(e.version().toBytes());
    }
    clock.observe(e.version());
  }

  /** Adds the ingested tombstones (data key, version, in pairs) to the tombstone index. */
  private void indexTombstones(List<byte[]> tombstones) {
    long now = millis.getAsLong();
    for (int from = 0; from < tombstones.size(); from += 2 * DELETE_BATCH_KEYS) {
      List<byte[]> part = tombstones.subList(from, Math.min(tombstones.size(), from + 2 * DELETE_BATCH_KEYS));
      guarded(() -> {
        try (WriteBatch batch = new WriteBatch()) {
          for (int i = 0; i < part.size(); i += 2) {
            batch.put(meta, tombstoneKey(now, part.get(i)), part.get(i + 1));
          }
          write(batch);
        }
        return null;
      });
    }
  }

  /**
   * Ingests {@code tables} taking no sequence number; false when RocksDB would need one (some key lies between). Under
   * the write lock, after checking that no fence aborted the load: a load lands before a fence, or not at all.
   */
  private boolean ingest(List<TableSpool.Table> tables, LoadsInProgress.Ticket ticket) {
    List<String> paths = tables.stream().map(t -> t.path().toString()).toList();
    return guarded(() -> {
      writeLock.lock();
      try (IngestExternalFileOptions options = new IngestExternalFileOptions()) {
        ticket.checkNotAborted();
        options.setMoveFiles(true).setSnapshotConsistency(false).setAllowGlobalSeqNo(false)
            .setAllowBlockingFlush(false);
        db.ingestExternalFile(data, paths, options);
        return true;
      } catch (RocksDBException e) {
        if (e.getStatus() != null && e.getStatus().getCode() == Status.Code.InvalidArgument) {
          return false;
        }
        throw e;
      } finally {
        writeLock.unlock();
      }
    });
  }

  /**
   * Applies a load's entries through the write path, max-version-wins, in batches of about {@link #LOAD_BATCH_BYTES}
   * and at most {@link #DELETE_BATCH_KEYS} keys, so other writers wait at most one batch; returns the last sequence
   * number.
   */
  private long applyInBatches(Iterator<Entry> entries, LoadsInProgress.Ticket ticket) throws RocksDBException {
    while (entries.hasNext()) {
      List<Entry> batch = new ArrayList<>();
      long batchBytes = 0;
      while (entries.hasNext() && batch.size() < DELETE_BATCH_KEYS && batchBytes < LOAD_BATCH_BYTES) {
        Entry e = entries.next();
        batch.add(e);
        batchBytes += e.size();
      }
      writeLock.lock();
      try {
        ticket.checkNotAborted();
        applyNewer(batch, ticket);
      } finally {
        writeLock.unlock();
      }
    }
    return db.getLatestSequenceNumber();
  }

  /** Writes a spooled table file of the load {@code ticket} through the write path, in bounded batches. */
  private void writeTable(Path table, LoadsInProgress.Ticket ticket) {
    guarded(() -> {
      try (Options options = new Options(); SstFileReader reader = new SstFileReader(options);
          ReadOptions read = new ReadOptions(); SstFileReaderIterator it = openTable(reader, read, table)) {
        applyInBatches(new Iterator<>() {
          @Override
          public boolean hasNext() {
            if (!it.isValid()) {
              try {
                it.status();
              } catch (RocksDBException e) {
                throw failure(e);
              }
            }
            return it.isValid();
          }

          @Override
          public Entry next() {
            byte[] dataKey = it.key();
            Entry e = StoredValues.decode(DataKeys.position(dataKey), DataKeys.key(dataKey), it.value());
            it.next();
            return e;
          }
        }, ticket);
      }
      return null;
    });
  }

  private static SstFileReaderIterator openTable(SstFileReader reader, ReadOptions read, Path table)
      throws RocksDBException {
    reader.open(table.toString());
    SstFileReaderIterator it = reader.newIterator(read);
    it.seekToFirst();
    return it;
  }

  /** Deletes table files a load left behind when the process stopped in the middle of it. */
  private void deleteLoadLeftovers() {
    Path dir = dataDir.resolve(LOAD_DIR);
    if (!Files.isDirectory(dir)) {
      return;
    }
    try (Stream<Path> files = Files.list(dir)) {
      for (Path f : (Iterable<Path>) files::iterator) {
        Files.deleteIfExists(f);
      }
    } catch (IOException e) {
      throw new StoreException("cannot delete the leftovers of a load in " + dir + ": " + e, e);
    }
  }

  @Override
  public RangeDigest digest(RingRange range) {
    Checks.range(range);
    RangeDigester digester = new RangeDigester();
    try (RocksScan scan = openScan(KeySpans.of(range))) {
      while (scan.hasNext()) {
        Entry e = scan.next();
        if (!e.isDeletion()) {
          digester.add(e.key(), e.version(), e.value());
        }
      }
      return digester.result(scan.sequence());
    }
  }

  @Override
  public Fence fence(RingRange range, long epoch) {
    Checks.range(range);
    Checks.epoch(epoch);
    return guarded(() -> {
      Fence fence;
      writeLock.lock();
      try {
        // A load still in progress over the range is one its copy gave up on (a copy verifies only after it fenced its
        // target): it must not land after this point, over what the verification compares and clients then read.
        loads.fenced(range, epoch);
        fence = fences.find(range, epoch);
        if (fence == null) {
          // Every write before this point has returned; every write after it sees the new fence set.
          fence = new Fence(range, epoch, db.getLatestSequenceNumber());
          byte[] position = new byte[8];
          DataKeys.putLong(position, 0, fence.position());
          try (WriteOptions unsynced = new WriteOptions()) {
            db.put(meta, unsynced, fenceKey(range, epoch), position);
          }
          fences = fences.with(fence);
        }
      } finally {
        writeLock.unlock();
      }
      syncAfterUnlock();
      return fence;
    });
  }

  @Override
  public List<Fence> fences() {
    return guarded(() -> fences.all());
  }

  @Override
  public void unfence(RingRange range, long epoch) {
    Checks.range(range);
    Checks.epoch(epoch);
    guarded(() -> {
      writeLock.lock();
      try {
        Fence existing = fences.find(range, epoch);
        if (existing != null) {
          try (WriteOptions unsynced = new WriteOptions()) {
            db.delete(meta, unsynced, fenceKey(range, epoch));
          }
          fences = fences.without(existing);
        }
      } finally {
        writeLock.unlock();
      }
      syncAfterUnlock();
      return null;
    });
  }

  @Override
  public long deleteRange(RingRange range, long epoch) {
    Checks.range(range);
    Checks.epoch(epoch);
    long deleted = 0;
    try (RocksScan scan = openScan(KeySpans.of(range))) {
      List<Entry> chunk = new ArrayList<>(DELETE_BATCH_KEYS);
      while (scan.hasNext()) {
        chunk.add(scan.next());
        if (chunk.size() == DELETE_BATCH_KEYS) {
          deleted += deleteKeys(chunk);
          chunk.clear();
        }
      }
      deleted += deleteKeys(chunk);
    }
    return deleted;
  }

  private int deleteKeys(List<Entry> entries) {
    if (entries.isEmpty()) {
      return 0;
    }
    return guarded(() -> {
      try (WriteBatch batch = new WriteBatch()) {
        for (Entry e : entries) {
          batch.delete(data, DataKeys.encode(e.position(), e.key()));
        }
        write(batch);
      }
      return entries.size();
    });
  }

  @Override
  public void close() {
    closed = true;
    if (purger != null) {
      purger.shutdownNow();
    }
    Lock exclusive = lifecycle.writeLock();
    exclusive.lock();
    try {
      if (!db.isOwningHandle()) {
        return;
      }
      for (Releasable r : List.copyOf(open)) {
        r.release();
      }
      open.clear();
      for (ColumnFamilyHandle h : handles) {
        h.close();
      }
      db.close();
      writeOptions.close();
      familyOptions.close();
      dbOptions.close();
    } finally {
      exclusive.unlock();
    }
  }

  @Override
  public String toString() {
    return "RocksStore[" + nodeId + " in " + zone + ", " + dataDir + "]";
  }

  // ---- for the scans and feeds

  /** A RocksDB call that may fail. */
  @FunctionalInterface
  interface RocksCall<T> {
    T call() throws RocksDBException;
  }

  /**
   * Makes a fence or its lift durable before the caller learns of it, whatever --sync-writes says: a fence lost to a
   * machine crash after the worker saw its position would let the source take old-epoch writes again after the range
   * was VERIFIED, and a lifted fence that came back would refuse writes its lift let through. The record went into the
   * write-ahead log under the write lock, unsynced; the log is synced here, after the lock is released, so the node's
   * writes go on during the fsync (a synced write under the lock held every write of the node for the fsync: with
   * 700-odd fences per change, and the writes of a transition stage going on through them, that was the largest
   * latency of the application's writes during a change). A crash before the sync ends loses a fence no one has seen.
   */
  private void syncAfterUnlock() throws RocksDBException {
    db.syncWal();
  }

  /** Runs {@code call} while the store is open, mapping RocksDB's failures to {@link StoreException}. */
  <T> T guarded(RocksCall<T> call) {
    Lock shared = lifecycle.readLock();
    shared.lock();
    try {
      if (closed) {
        throw new StoreException.Unavailable("the store of " + nodeId + " in " + dataDir + " is closed", null);
      }
      return call.call();
    } catch (RocksDBException e) {
      throw failure(e);
    } finally {
      shared.unlock();
    }
  }

  private StoreException failure(RocksDBException e) {
    Status status = e.getStatus();
    String code = status == null ? "" : " (" + status.getCodeString() + ")";
    return new StoreException("RocksDB failed in " + dataDir + code + ": " + e.getMessage(), e);
  }

  RocksIterator newDataIterator(ReadOptions options) {
    return db.newIterator(data, options);
  }

  void releaseSnapshot(Snapshot snapshot) {
    db.releaseSnapshot(snapshot);
  }

  TransactionLogIterator logSince(long sequence) throws RocksDBException {
    return db.getUpdatesSince(sequence);
  }

  /** Releases a scan or feed its owner closes; a no-op once the store itself released it. */
  void release(Releasable r) {
    Lock shared = lifecycle.readLock();
    shared.lock();
    try {
      if (open.contains(r)) {
        r.release();
      }
    } finally {
      shared.unlock();
    }
  }

  void forget(Releasable r) {
    open.remove(r);
  }

  String nodeId() {
    return nodeId;
  }

  String retentionDescription() {
    String size = walSizeLimitMb == 0 ? "" : " or " + walSizeLimitMb + " MB, whichever is less";
    return "the log for " + walRetention.toSeconds() + " s" + size;
  }
}
