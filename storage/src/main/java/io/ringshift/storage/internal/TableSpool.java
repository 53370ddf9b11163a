package io.ringshift.storage.internal;

import io.ringshift.storage.StoreException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.UUID;
import org.rocksdb.BlockBasedTableConfig;
import org.rocksdb.EnvOptions;
import org.rocksdb.Options;
import org.rocksdb.RocksDBException;
import org.rocksdb.SstFileWriter;

/**
 * Writes the entries of a load into sorted table files (RocksDB {@code SstFileWriter}) in a directory beside the
 * store's own files, for {@code ingestExternalFile}.
 *
 * <p>A table file takes keys in strictly increasing order: a key that does not follow the last one (the scan of a
 * range that wraps past the top of the ring starts again at the bottom) ends the file and starts the next, and so
 * does a file reaching {@code fileBytes}. {@link #finish} says whether the files' key spans are disjoint, which
 * RocksDB needs to place them with no sequence number. {@link #close} deletes whatever files are left.
 */
final class TableSpool implements AutoCloseable {
  /**
   * Data block size of a load's files: 32 KiB, not the 4 KiB of the files RocksDB writes itself. Building a file
   * costs per block (a compression call, an index entry, a checksum, a write to the file), and with 1 KB values
   * a 4 KiB block holds four entries: in a measurement of {@code SstFileWriter} alone (200 MB of 1 KB values,
   * Snappy, as the store's own files), 32 KiB blocks took about a third less CPU. A point read of a loaded key
   * reads a 32 KiB block instead of 4 KiB until compaction rewrites the file; a scan reads fewer, larger blocks.
   */
  static final long BLOCK_BYTES = 32L << 10;

  /** A finished file and the smallest and largest key in it. */
  record Table(Path path, byte[] first, byte[] last) {}

  private final Path dir;
  private final long fileBytes;
  private final String prefix = UUID.randomUUID().toString();
  private final List<Table> tables = new ArrayList<>();
  private final EnvOptions envOptions = new EnvOptions();
  private final BlockBasedTableConfig table = new BlockBasedTableConfig().setBlockSize(BLOCK_BYTES);
  private final Options options = new Options().setTableFormatConfig(table);
  private SstFileWriter writer;
  private Path path;
  private byte[] first;
  private byte[] last;
  private long bytes;

  TableSpool(Path dir, long fileBytes) {
    this.dir = dir;
    this.fileBytes = fileBytes;
    try {
      Files.createDirectories(dir);
    } catch (IOException e) {
      close();
      throw new StoreException("cannot create the load directory " + dir + ": " + e, e);
    }
  }

  void add(byte[] key, byte[] value) throws RocksDBException {
    if (writer != null && (bytes >= fileBytes || Arrays.compareUnsigned(key, last) <= 0)) {
      finishFile();
    }
    if (writer == null) {
      path = dir.resolve(prefix + "-" + tables.size() + ".sst");
      writer = new SstFileWriter(envOptions, options);
      writer.open(path.toString());
      first = key;
      bytes = 0;
    }
    writer.put(key, value);
    last = key;
    bytes += key.length + value.length;
  }

  /**
   * Finishes the last file; returns the files in key order, or null when their key spans overlap (keys given out
   * of order across files, or one key twice), which an ingest without sequence numbers cannot place.
   */
  List<Table> finish() throws RocksDBException {
    if (writer != null) {
      finishFile();
    }
    List<Table> sorted = new ArrayList<>(tables);
    sorted.sort(Comparator.comparing(Table::first, Arrays::compareUnsigned));
    for (int i = 1; i < sorted.size(); i++) {
      if (Arrays.compareUnsigned(sorted.get(i - 1).last(), sorted.get(i).first()) >= 0) {
        return null;
      }
    }
    return sorted;
  }

  /** Every file written, finished or not yet ingested, in the order written. */
  List<Table> tables() {
    return List.copyOf(tables);
  }

  private void finishFile() throws RocksDBException {
    SstFileWriter w = writer;
    writer = null;
    // Listed before finishing, so that close() deletes a file that failed to finish too.
    tables.add(new Table(path, first, last));
    try {
      w.finish();
    } finally {
      w.close();
    }
  }

  @Override
  public void close() {
    if (writer != null) {
      writer.close();
      writer = null;
      tables.add(new Table(path, first, last));
    }
    for (Table t : tables) {
      try {
        Files.deleteIfExists(t.path());
      } catch (IOException e) {
        // The next open of the store deletes leftovers in the load directory.
      }
    }
    options.close();
    envOptions.close();
  }
}
