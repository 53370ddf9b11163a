package io.ringshift.storage;

import static io.ringshift.storage.TestKeys.bytes;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.ringshift.ring.RingRange;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HexFormat;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.rocksdb.Options;
import org.rocksdb.RocksDB;

/** The storage contract against a {@code RocksStore} called directly, and what only a local store can show. */
class RocksStoreTest extends StoreContractTest {
  private Store opened;

  @Override
  Store openStore(Path dataDir) {
    opened = RocksStore.open(dataDir, NODE, ZONE);
    return opened;
  }

  @Override
  void closeStore() {
    if (opened != null) {
      opened.close();
      opened = null;
    }
  }

  @Override
  int fenceRounds() {
    return 20;
  }

  /**
   * Protocol review of e5d1a4e: a load the node had read whole could wait (a RocksDB write stall) past the worker's
   * deadline and land after the copy was fenced and VERIFIED, putting older values back on a published replica. A fence
   * of a range aborts every load in progress that meets it: it lands before the fence or not at all. Here the fence
   * comes after the load's last entry was read, as the worker's verification would after giving up on it. On the store
   * itself: over HTTP the node begins the load only when the body's first bytes arrive, which a test cannot order
   * against the fence (the node passes the load and the fence to this same store).
   */
  @Test
  void shouldAbortALoadInProgressThatAFenceMeets() {
    for (int size : new int[] {700, 10}) { // bulk (ingested) and small (written)
      List<Entry> entries = loadEntries("late-" + size, LOADED, size);
      long before = store.latestSequence();
      Iterator<Entry> fencedAtTheEnd = new Iterator<>() {
        private int i;

        @Override
        public boolean hasNext() {
          if (i == entries.size()) {
            store.fence(LOADED, 5);
          }
          return i < entries.size();
        }

        @Override
        public Entry next() {
          return entries.get(i++);
        }
      };

      assertThatThrownBy(() -> store.load(fencedAtTheEnd)).as("a load of %d entries", size)
          .isInstanceOf(StoreException.Unavailable.class).hasMessageContaining("the load was aborted")
          .hasMessageContaining("was fenced while it was in progress");

      assertThat(store.digest(LOADED).keys()).as("nothing of the load of %d entries landed", size).isZero();
      assertThat(changes(LOADED, before)).as("nothing written through the write path either").isEmpty();
      store.unfence(LOADED, 5);
    }
    List<Entry> elsewhere = loadEntries("elsewhere", LOADED, 700);
    store.fence(RingRange.of(LOADED.end(), LOADED.end() + 1000), 5);
    assertThat(store.load(elsewhere.iterator()).entries()).as("a fence that meets no entry of the load").isEqualTo(700);
    assertThat(store.digest(LOADED).keys()).isEqualTo(700);
  }

  /**
   * A feed's seek (getUpdatesSince) reads the WAL file that holds its sequence number from the start: with the 64 MiB
   * a memtable lets a WAL file grow to, every catch-up pass read up to 64 MiB (about 100 ms). The store rolls the WAL
   * every few MiB instead.
   */
  @Test
  void shouldRollTheWriteAheadLogEveryFewMegabytesSoThatAFeedSeekReadsLittle() throws Exception {
    Path dir = Files.createTempDirectory("ringshift-wal-roll-");
    try {
      Store store = RocksStore.open(dir, NODE, ZONE);
      byte[] value = new byte[300];
      for (int i = 0; i < 80_000; i++) {
        value[0] = (byte) i;
        store.put(bytes("key-" + i), value.clone(), 1);
      }
      store.close();
      List<Long> sizes = new java.util.ArrayList<>();
      for (Path d : List.of(dir, dir.resolve("archive"))) {
        if (Files.isDirectory(d)) {
          try (var files = Files.list(d)) {
            files.filter(f -> f.getFileName().toString().endsWith(".log")).forEach(f -> sizes.add(f.toFile().length()));
          }
        }
      }
      assertThat(sizes).as("WAL file sizes after 24 MB of writes").hasSizeGreaterThanOrEqualTo(3)
          .allMatch(size -> size <= 8L << 20);
    } finally {
      try (var walk = Files.walk(dir)) {
        walk.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
      }
    }
  }

  @Test
  void shouldMatchTheDigestTestVectorOfTheDocs() {
    put("apple", "red");
    put("banana", "yellow");

    RangeDigest digest = store.digest(RingRange.whole());

    assertThat(HexFormat.of().formatHex(digest.digest())).isEqualTo("ad09a57fa07002ca25727acc16a6896c");
    assertThat(digest.keys()).isEqualTo(2);
    assertThat(digest.bytes()).isEqualTo(20);
    assertThat(digest.digest()).isEqualTo(referenceDigest(Map.of("apple", bytes("red"), "banana", bytes("yellow")),
        RingRange.whole()));
  }

  @Test
  void shouldRefuseTheDataDirOfAnotherNode() {
    closeStore();

    assertThatThrownBy(() -> RocksStore.open(dataDir(), "node-2", ZONE))
        .isInstanceOf(StoreException.BadRequest.class)
        .hasMessageContaining("belongs to node 'node-1' in zone 'az-1', not to node 'node-2' in zone 'az-1'");
    assertThatThrownBy(() -> RocksStore.open(dataDir(), NODE, "az-2"))
        .isInstanceOf(StoreException.BadRequest.class)
        .hasMessageContaining("not to node 'node-1' in zone 'az-2'");
    store = openStore(dataDir());
    assertThat(store.info().nodeId()).as("the refusals changed nothing").isEqualTo(NODE);
  }

  @Test
  void shouldKeepItsIncarnationAcrossRestartsAndDrawANewOneOnAnEmptyDataDir() throws Exception {
    String first = store.info().incarnation();
    closeStore();
    store = openStore(dataDir());
    String restarted = store.info().incarnation();
    closeStore();
    Path wiped = dir.resolve("wiped");
    store = openStore(wiped);
    String onEmpty = store.info().incarnation();

    assertThat(first).isNotBlank();
    assertThat(restarted).as("same data dir, same incarnation").isEqualTo(first);
    assertThat(onEmpty).as("an empty data dir under the same node id").isNotBlank().isNotEqualTo(first);
  }

  @Test
  void shouldRefuseADataDirInUse() {
    assertThatThrownBy(() -> RocksStore.open(dataDir(), NODE, ZONE))
        .isInstanceOf(StoreException.BadRequest.class)
        .hasMessageContaining("data dir " + dataDir().toAbsolutePath() + " is in use");
  }

  @Test
  void shouldRefuseADatabaseThatIsNotARingshiftStore() throws Exception {
    Path other = dir.resolve("other");
    try (Options options = new Options().setCreateIfMissing(true);
        RocksDB db = RocksDB.open(options, other.toString())) {
      db.put(bytes("someone"), bytes("else"));
    }

    assertThatThrownBy(() -> RocksStore.open(other, NODE, ZONE))
        .isInstanceOf(StoreException.BadRequest.class)
        .hasMessageContaining("holds a RocksDB database that is not a ringshift store (column families [default])");
  }

  @Test
  void shouldRefuseBadIdentitiesAndDirectories() throws Exception {
    Path file = Files.writeString(dir.resolve("a-file"), "x");

    assertThatThrownBy(() -> RocksStore.open(dir.resolve("n"), " ", ZONE))
        .isInstanceOf(StoreException.BadRequest.class).hasMessageContaining("node id is missing or blank");
    assertThatThrownBy(() -> RocksStore.open(dir.resolve("n"), "node\n1", ZONE))
        .isInstanceOf(StoreException.BadRequest.class).hasMessageContaining("without control characters");
    assertThatThrownBy(() -> RocksStore.open(file, NODE, ZONE))
        .isInstanceOf(StoreException.BadRequest.class).hasMessageContaining("is a file");
    assertThatThrownBy(() -> RocksStore.open(dir.resolve("n"), NODE, ZONE,
        RocksStore.Options.defaults().withWalSizeLimitMb(-1)))
        .isInstanceOf(StoreException.BadRequest.class).hasMessageContaining("WAL size limit -1 MB is negative");
  }

  @Test
  void shouldFailOpenScansAndFeedsCleanlyWhenTheStoreCloses() {
    for (int i = 0; i < 10; i++) {
      put("k" + i, "v");
    }
    RangeScan scan = store.scan(RingRange.whole(), null);
    ChangeFeed feed = store.changes(RingRange.whole(), 0);
    scan.next();

    store.close();

    assertThatThrownBy(scan::hasNext).isInstanceOf(StoreException.Unavailable.class).hasMessageContaining("closed")
        .satisfies(e -> assertThat(((StoreException) e).retriable()).isTrue());
    assertThatThrownBy(feed::hasNext).isInstanceOf(StoreException.Unavailable.class);
    scan.close();
    feed.close();
    assertThatThrownBy(() -> store.get(bytes("k1"))).isInstanceOf(StoreException.Unavailable.class);
    store.close();
  }

  @Test
  void shouldReleaseAScanClosedBeforeItsEnd() {
    for (int i = 0; i < 10; i++) {
      put("k" + i, "v");
    }
    RangeScan scan = store.scan(RingRange.whole(), null);
    scan.next();
    scan.close();
    scan.close();

    assertThatThrownBy(scan::hasNext).isInstanceOf(IllegalStateException.class).hasMessageContaining("closed");
    assertThat(List.of(store.digest(RingRange.whole()).keys())).containsExactly(10L);
  }
}
