package io.ringshift.storage.internal;

import static java.nio.charset.StandardCharsets.UTF_8;

import io.ringshift.ring.RingRange;
import io.ringshift.storage.ChangeFeed;
import io.ringshift.storage.Entry;
import io.ringshift.storage.Fence;
import io.ringshift.storage.LoadResult;
import io.ringshift.storage.RangeDigest;
import io.ringshift.storage.RangeScan;
import io.ringshift.storage.Store;
import io.ringshift.storage.StoreException;
import io.ringshift.storage.WriteResult;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.Lock;
import java.util.concurrent.locks.ReentrantLock;
import java.util.concurrent.locks.ReentrantReadWriteLock;
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
 * <p>Design note. Three column families: {@code data} holds {@code position ++ key -> value}, {@code meta} the
 * node's identity and the fences, {@code default} nothing. Sequence numbers are RocksDB's own, so a write's
 * sequence is an offset in the write-ahead log, which the change feed reads back ({@link WalFeed}).
 *
 * <p>All writes (client puts and deletes, applies, fences, range deletes) go through one mutex, {@code writeLock}.
 * That makes two things exact that RocksDB alone leaves open: the sequence number a write returns is the one it
 * got (read right after the write, before anyone else writes), and a fence is atomic with respect to writes: it
 * is taken under the same mutex, after every write in flight finished and before the next one checks the fences,
 * so every acknowledged write of an older epoch has a sequence at or below the fence's position and every later
 * one is refused. RocksDB serialises its write path (the write-ahead log) anyway, so the mutex costs little
 * throughput; reads, scans, digests and feeds take no part in it.
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
  private static final byte[] FORMAT_VERSION = "ringshift-store/1".getBytes(UTF_8);
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

  private RocksDbStore(Path dataDir, String nodeId, String zone, Duration walRetention, long walSizeLimitMb,
      DBOptions dbOptions, ColumnFamilyOptions familyOptions, WriteOptions writeOptions, RocksDB db,
      List<ColumnFamilyHandle> handles) {
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
    name("node id", nodeId);
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
    RocksDbStore store = new RocksDbStore(dir, nodeId, zone, walRetention, walSizeLimitMb, dbOptions, familyOptions,
        writeOptions, db, handles);
    try {
      store.claimIdentity();
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
        batch.put(meta, FORMAT, FORMAT_VERSION);
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
  public WriteResult put(byte[] key, byte[] value, long epoch) {
    Checks.key(key);
    Checks.value(value);
    Checks.epoch(epoch);
    return write(key, value, epoch);
  }

  @Override
  public WriteResult delete(byte[] key, long epoch) {
    Checks.key(key);
    Checks.epoch(epoch);
    return write(key, null, epoch);
  }

  private WriteResult write(byte[] key, byte[] value, long epoch) {
    long position = Entry.positionOf(key);
    byte[] dataKey = DataKeys.encode(position, key);
    return guarded(() -> {
      writeLock.lock();
      try {
        Fence fence = fences.refusing(position, epoch);
        if (fence != null) {
          return new WriteResult.RetryWithEpoch(fence.epoch(), fence.range());
        }
        if (value == null) {
          db.delete(data, writeOptions, dataKey);
        } else {
          db.put(data, writeOptions, dataKey, value);
        }
        return new WriteResult.Applied(db.getLatestSequenceNumber());
      } finally {
        writeLock.unlock();
      }
    });
  }

  @Override
  public Optional<byte[]> get(byte[] key) {
    Checks.key(key);
    byte[] dataKey = DataKeys.encode(Entry.positionOf(key), key);
    return guarded(() -> Optional.ofNullable(db.get(data, dataKey)));
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
      try (WriteBatch batch = new WriteBatch()) {
        for (Entry e : entries) {
          byte[] dataKey = DataKeys.encode(e.position(), e.key());
          if (e.isDeletion()) {
            batch.delete(data, dataKey);
          } else {
            batch.put(data, dataKey, e.value());
          }
        }
        return write(batch);
      }
    });
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
      long sequence = guarded(() -> writePuts(ticket, batch -> {
        if (!small.hasNext()) {
          return -1;
        }
        Entry e = small.next();
        batch.put(data, DataKeys.encode(e.position(), e.key()), e.value());
        return e.size();
      }));
      return new LoadResult(checked.count(), checked.bytes(), false, sequence);
    }
    try (TableSpool spool = new TableSpool(dataDir.resolve(LOAD_DIR), LOAD_FILE_BYTES)) {
      List<TableSpool.Table> tables;
      try {
        for (Entry e : head) {
          spool.add(DataKeys.encode(e.position(), e.key()), e.value());
        }
        head = null;
        while (checked.hasNext()) {
          Entry e = checked.next();
          spool.add(DataKeys.encode(e.position(), e.key()), e.value());
        }
        tables = spool.finish();
      } catch (RocksDBException e) {
        throw failure(e);
      }
      boolean ingested = tables != null && ingest(tables, ticket);
      if (!ingested) {
        for (TableSpool.Table t : spool.tables()) {
          writeTable(t.path(), ticket);
        }
      }
      return new LoadResult(checked.count(), checked.bytes(), ingested, latestSequence());
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

  /** Adds the next put of a load to {@code batch}: its key and value bytes, or -1 when there is none left. */
  @FunctionalInterface
  private interface NextPut {
    long addTo(WriteBatch batch) throws RocksDBException;
  }

  /**
   * Writes a load's puts through the write path in batches of about {@link #LOAD_BATCH_BYTES} and at most
   * {@link #DELETE_BATCH_KEYS} keys, so other writers wait at most one batch; returns the last sequence number.
   */
  private long writePuts(LoadsInProgress.Ticket ticket, NextPut next) throws RocksDBException {
    long sequence = db.getLatestSequenceNumber();
    boolean more = true;
    while (more) {
      try (WriteBatch batch = new WriteBatch()) {
        long batchBytes = 0;
        for (int n = 0; n < DELETE_BATCH_KEYS && batchBytes < LOAD_BATCH_BYTES; n++) {
          long added = next.addTo(batch);
          if (added < 0) {
            more = false;
            break;
          }
          batchBytes += added;
        }
        if (batch.count() > 0) {
          sequence = write(batch, ticket);
        }
      }
    }
    return sequence;
  }

  /** Writes a spooled table file of the load {@code ticket} through the write path, in bounded batches. */
  private void writeTable(Path table, LoadsInProgress.Ticket ticket) {
    guarded(() -> {
      try (Options options = new Options(); SstFileReader reader = new SstFileReader(options);
          ReadOptions read = new ReadOptions(); SstFileReaderIterator it = openTable(reader, read, table)) {
        writePuts(ticket, batch -> {
          if (!it.isValid()) {
            it.status();
            return -1;
          }
          byte[] key = it.key();
          byte[] value = it.value();
          batch.put(data, key, value);
          it.next();
          return key.length + value.length;
        });
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
        digester.add(e.key(), e.value());
      }
      return digester.result(scan.sequence());
    }
  }

  @Override
  public Fence fence(RingRange range, long epoch) {
    Checks.range(range);
    Checks.epoch(epoch);
    return guarded(() -> {
      writeLock.lock();
      try {
        // A load still in progress over the range is one its copy gave up on (a copy verifies only after it fenced its
        // target): it must not land after this point, over what the verification compares and clients then read.
        loads.fenced(range, epoch);
        Fence existing = fences.find(range, epoch);
        if (existing != null) {
          return existing;
        }
        // Every write before this point has returned; every write after it sees the new fence set.
        Fence fence = new Fence(range, epoch, db.getLatestSequenceNumber());
        byte[] position = new byte[8];
        DataKeys.putLong(position, 0, fence.position());
        // Always synced, whatever --sync-writes says: a fence lost to a machine crash after the worker saw its
        // position would let the source take old-epoch writes again after the range was VERIFIED. Fences are rare.
        try (WriteOptions sync = new WriteOptions().setSync(true)) {
          db.put(meta, sync, fenceKey(range, epoch), position);
        }
        fences = fences.with(fence);
        return fence;
      } finally {
        writeLock.unlock();
      }
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
          try (WriteOptions sync = new WriteOptions().setSync(true)) {
            db.delete(meta, sync, fenceKey(range, epoch));
          }
          fences = fences.without(existing);
        }
        return null;
      } finally {
        writeLock.unlock();
      }
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
