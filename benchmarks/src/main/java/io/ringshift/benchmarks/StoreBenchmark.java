package io.ringshift.benchmarks;

import static java.nio.charset.StandardCharsets.UTF_8;

import io.ringshift.ring.RingRange;
import io.ringshift.storage.Change;
import io.ringshift.storage.ChangeFeed;
import io.ringshift.storage.Entry;
import io.ringshift.storage.RocksStore;
import io.ringshift.storage.Store;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;
import org.openjdk.jmh.infra.Blackhole;
import org.rocksdb.ColumnFamilyDescriptor;
import org.rocksdb.ColumnFamilyHandle;
import org.rocksdb.ColumnFamilyOptions;
import org.rocksdb.DBOptions;
import org.rocksdb.ReadOptions;
import org.rocksdb.RocksDB;
import org.rocksdb.RocksDBException;
import org.rocksdb.RocksIterator;
import org.rocksdb.WriteBatch;
import org.rocksdb.WriteOptions;

/**
 * The storage node's write path and change feed (docs/storage.md, "Measured"). {@code putWithChangelogFamily} and
 * {@code readChangelogFamily} measure the design the store does not use (a changelog column family written in the
 * same batch as the data) against the one it uses (the change feed read back from RocksDB's own write-ahead log).
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 3, time = 3)
@Measurement(iterations = 5, time = 3)
@Fork(1)
@State(Scope.Benchmark)
public class StoreBenchmark {
  /** Bytes per written value. */
  @Param({"100", "4096"})
  public int valueBytes;

  /** Changes one feed read returns. */
  static final int FEED_CHANGES = 100_000;
  private static final int KEY_SPACE = 1 << 20;

  private Path dir;
  private Store store;
  private byte[][] keys;
  private byte[] value;
  private int next;
  private long feedFrom;

  private Changelog changelog;

  @Setup(Level.Trial)
  public void setUp() throws Exception {
    dir = Files.createTempDirectory("ringshift-store-bench");
    store = RocksStore.open(dir.resolve("writes"), "bench", "az-1");
    keys = new byte[KEY_SPACE][];
    for (int i = 0; i < KEY_SPACE; i++) {
      keys[i] = ("user:" + i).getBytes(UTF_8);
    }
    value = new byte[valueBytes];
    new Random(1).nextBytes(value);
    feedFrom = store.latestSequence();
    for (int i = 0; i < FEED_CHANGES; i++) {
      store.put(keys[i], value, 0);
    }
    changelog = new Changelog(dir.resolve("changelog"));
    for (int i = 0; i < FEED_CHANGES; i++) {
      changelog.put(keys[i], value);
    }
  }

  @TearDown(Level.Trial)
  public void tearDown() throws IOException {
    store.close();
    changelog.close();
    TempDirs.delete(dir);
  }

  /** A client write through the store (the WAL is the change log). */
  @Benchmark
  public Object put() {
    return store.put(keys[next++ & (KEY_SPACE - 1)], value, 0);
  }

  /** The same write in the alternative design: the data and a changelog record in one batch. */
  @Benchmark
  public long putWithChangelogFamily() throws RocksDBException {
    return changelog.put(keys[next++ & (KEY_SPACE - 1)], value);
  }

  /** Reading 100,000 changes of the whole ring from the write-ahead log. */
  @Benchmark
  @OperationsPerInvocation(FEED_CHANGES)
  public void readFeedFromWal(Blackhole bh) {
    try (ChangeFeed feed = store.changes(RingRange.whole(), feedFrom)) {
      for (int i = 0; i < FEED_CHANGES; i++) {
        Change c = feed.next();
        bh.consume(c);
      }
    }
  }

  /** Reading 100,000 changes from the changelog family. */
  @Benchmark
  @OperationsPerInvocation(FEED_CHANGES)
  public void readChangelogFamily(Blackhole bh) {
    changelog.read(FEED_CHANGES, bh);
  }

  /**
   * The design not taken: a {@code changelog} column family keyed by sequence number, written in the same batch
   * as the data under the same write lock (the batch's sequence is predicted as latest + 1), and read with an
   * iterator from a sequence.
   */
  static final class Changelog implements AutoCloseable {
    private final DBOptions options = new DBOptions().setCreateIfMissing(true).setCreateMissingColumnFamilies(true);
    private final ColumnFamilyOptions familyOptions = new ColumnFamilyOptions();
    private final WriteOptions writeOptions = new WriteOptions();
    private final List<ColumnFamilyHandle> handles = new ArrayList<>();
    private final RocksDB db;
    private final ReentrantLock lock = new ReentrantLock();

    Changelog(Path path) throws RocksDBException {
      db = RocksDB.open(options, path.toString(), List.of(
          new ColumnFamilyDescriptor(RocksDB.DEFAULT_COLUMN_FAMILY, familyOptions),
          new ColumnFamilyDescriptor("data".getBytes(UTF_8), familyOptions),
          new ColumnFamilyDescriptor("changelog".getBytes(UTF_8), familyOptions)), handles);
    }

    long put(byte[] key, byte[] value) throws RocksDBException {
      long position = Entry.positionOf(key);
      byte[] dataKey = ByteBuffer.allocate(8 + key.length).putLong(position).put(key).array();
      lock.lock();
      try (WriteBatch batch = new WriteBatch()) {
        long sequence = db.getLatestSequenceNumber() + 1;
        batch.put(handles.get(1), dataKey, value);
        byte[] record = ByteBuffer.allocate(1 + 4 + dataKey.length + value.length).put((byte) 1)
            .putInt(dataKey.length).put(dataKey).put(value).array();
        batch.put(handles.get(2), ByteBuffer.allocate(8).putLong(sequence).array(), record);
        db.write(writeOptions, batch);
        return sequence;
      } finally {
        lock.unlock();
      }
    }

    void read(int count, Blackhole bh) {
      try (ReadOptions read = new ReadOptions(); RocksIterator it = db.newIterator(handles.get(2), read)) {
        it.seekToFirst();
        for (int i = 0; i < count && it.isValid(); i++, it.next()) {
          ByteBuffer record = ByteBuffer.wrap(it.value());
          record.get();
          byte[] dataKey = new byte[record.getInt()];
          record.get(dataKey);
          byte[] v = new byte[record.remaining()];
          record.get(v);
          long position = ByteBuffer.wrap(dataKey).getLong();
          bh.consume(new Change(ByteBuffer.wrap(it.key()).getLong(),
              new Entry(position, java.util.Arrays.copyOfRange(dataKey, 8, dataKey.length), v)));
        }
      }
    }

    @Override
    public void close() {
      handles.forEach(ColumnFamilyHandle::close);
      db.close();
      writeOptions.close();
      familyOptions.close();
      options.close();
    }
  }
}
