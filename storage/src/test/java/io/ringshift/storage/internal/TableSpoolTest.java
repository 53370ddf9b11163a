package io.ringshift.storage.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.rocksdb.Options;
import org.rocksdb.RocksDB;
import org.rocksdb.SstFileReader;
import org.rocksdb.TableProperties;

class TableSpoolTest {
  static {
    RocksDB.loadLibrary();
  }

  @TempDir Path dir;

  @Test
  void shouldWriteTablesOfLargeBlocksSplitAtAKeyThatDoesNotFollow() throws Exception {
    Random random = new Random(7);
    byte[] value = new byte[1000];
    try (TableSpool spool = new TableSpool(dir, 64L << 20)) {
      // 2,000 keys at the top of the key space, then 1,000 at the bottom (a range that wraps).
      for (long k : new long[] {1_000_000, 0}) {
        for (long i = 0; i < (k == 0 ? 1_000 : 2_000); i++) {
          random.nextBytes(value);
          spool.add(ByteBuffer.allocate(8).putLong(k + i).array(), value.clone());
        }
      }
      List<TableSpool.Table> tables = spool.finish();

      assertThat(tables).as("two files, in key order, their spans disjoint").hasSize(2);
      assertThat(tables.get(0).first()).isEqualTo(ByteBuffer.allocate(8).putLong(0).array());
      assertThat(tables.get(1).last()).isEqualTo(ByteBuffer.allocate(8).putLong(1_001_999).array());
      TableProperties props = properties(tables.get(1).path());
      assertThat(props.getNumEntries()).isEqualTo(2_000);
      // 32 KiB blocks of about 1 KB entries: about 31 entries a block, not the 4 of RocksDB's default 4 KiB.
      assertThat(props.getNumEntries() / props.getNumDataBlocks())
          .as("entries per data block (%d blocks)", props.getNumDataBlocks())
          .isBetween(25L, 35L);
    }
    try (var files = Files.list(dir)) {
      assertThat(files).as("files left after close").isEmpty();
    }
  }

  @Test
  void shouldSayWhenTheFilesOverlap() throws Exception {
    try (TableSpool spool = new TableSpool(dir, 64L << 20)) {
      spool.add(new byte[] {5}, new byte[] {1});
      spool.add(new byte[] {9}, new byte[] {1});
      spool.add(new byte[] {7}, new byte[] {1}); // does not follow 9: a second file, which overlaps the first
      assertThat(spool.finish()).as("overlapping files cannot be placed without sequence numbers").isNull();
      assertThat(spool.tables()).hasSize(2);
    }
  }

  private static TableProperties properties(Path file) throws Exception {
    try (Options options = new Options(); SstFileReader reader = new SstFileReader(options)) {
      reader.open(file.toString());
      return reader.getTableProperties();
    }
  }
}
