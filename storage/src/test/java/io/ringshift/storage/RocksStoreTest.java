package io.ringshift.storage;

import static io.ringshift.storage.TestKeys.bytes;
import static io.ringshift.storage.TestKeys.text;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.ringshift.ring.RingRange;
import io.ringshift.storage.internal.RocksDbStore;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.rocksdb.ColumnFamilyDescriptor;
import org.rocksdb.ColumnFamilyHandle;
import org.rocksdb.DBOptions;
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
    Version first = Version.of(1_767_225_600_000L, 0, 1);
    Version second = Version.of(1_767_225_600_000L, 1, 1);
    store.put(bytes("apple"), bytes("red"), 0, first);
    store.put(bytes("banana"), bytes("yellow"), 0, second);

    RangeDigest digest = store.digest(RingRange.whole());

    assertThat(HexFormat.of().formatHex(digest.digest())).isEqualTo("53f65a95174735fc68e4aaa2a38967de");
    assertThat(digest.keys()).isEqualTo(2);
    assertThat(digest.bytes()).isEqualTo(20);
    assertThat(digest.digest()).isEqualTo(referenceDigest(Map.of("apple", bytes("red"), "banana", bytes("yellow")),
        Map.of("apple", first, "banana", second), RingRange.whole()));
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

  /**
   * Writes a store of format 1 (values without versions) as the version before versions left it, with {@code upgraded}
   * of its keys already rewritten to format 2 and the cursor of an upgrade a crash interrupted there (0: none began).
   */
  static void writeFormat1Store(Path dir, Map<String, String> contents, int upgraded) throws Exception {
    List<byte[]> families = List.of(RocksDB.DEFAULT_COLUMN_FAMILY, bytes("data"), bytes("meta"));
    List<ColumnFamilyHandle> handles = new ArrayList<>();
    try (DBOptions options = new DBOptions().setCreateIfMissing(true).setCreateMissingColumnFamilies(true);
        RocksDB db = RocksDB.open(options, dir.toString(), families.stream()
            .map(ColumnFamilyDescriptor::new).toList(), handles)) {
      db.put(handles.get(2), bytes("format"), bytes("ringshift-store/1"));
      db.put(handles.get(2), bytes("node.id"), bytes(NODE));
      db.put(handles.get(2), bytes("node.zone"), bytes(ZONE));
      db.put(handles.get(2), bytes("store.incarnation"), bytes("before-versions"));
      List<byte[]> dataKeys = new ArrayList<>();
      for (Map.Entry<String, String> e : contents.entrySet()) {
        byte[] key = bytes(e.getKey());
        byte[] dataKey = ByteBuffer.allocate(8 + key.length).putLong(Entry.positionOf(key)).put(key).array();
        db.put(handles.get(1), dataKey, bytes(e.getValue()));
        dataKeys.add(dataKey);
      }
      dataKeys.sort(Arrays::compareUnsigned);
      for (int i = 0; i < upgraded; i++) {
        byte[] stored = db.get(handles.get(1), dataKeys.get(i));
        db.put(handles.get(1), dataKeys.get(i), ByteBuffer.allocate(21 + stored.length).put((byte) 1)
            .put(new byte[20]).put(stored).array());
      }
      if (upgraded > 0) {
        db.put(handles.get(2), bytes("format.upgrade.cursor"), dataKeys.get(upgraded - 1));
      }
      handles.forEach(ColumnFamilyHandle::close);
    }
  }

  @Test
  void shouldUpgradeAStoreOfFormat1InPlaceEvenAfterAnInterruptedUpgrade() throws Exception {
    Map<String, String> contents = new LinkedHashMap<>();
    for (int i = 0; i < 25_000; i++) {
      contents.put("old-" + i, "value-" + i);
    }
    for (int upgraded : new int[] {0, 12_345}) {
      Path old = dir.resolve("format-1-" + upgraded);
      writeFormat1Store(old, contents, upgraded);

      try (Store upgradedStore = RocksStore.open(old, NODE, ZONE)) {
        assertThat(upgradedStore.get(bytes("old-7"))).as("cut at %d", upgraded).hasValue(bytes("value-7"));
        Map<String, Entry> held = new HashMap<>();
        try (RangeScan scan = upgradedStore.scan(RingRange.whole(), null)) {
          scan.forEachRemaining(e -> held.put(text(e.key()), e));
        }
        assertThat(held).as("cut at %d: every key, once", upgraded).hasSize(contents.size());
        contents.forEach((k, v) -> assertThat(held.get(k)).isEqualTo(Entry.of(bytes(k), bytes(v), Version.ZERO)));
        assertThat(upgradedStore.info().incarnation()).isEqualTo("before-versions");
        assertThatThrownBy(() -> upgradedStore.changes(RingRange.whole(), 0))
            .as("the log from before the upgrade holds values without versions")
            .isInstanceOf(StoreException.FeedUnavailable.class).hasMessageContaining("upgraded to format 2");
        long after = upgradedStore.latestSequence();
        upgradedStore.put(bytes("old-7"), bytes("new"), 0);
        assertThat(upgradedStore.get(bytes("old-7"))).as("a write of a client of before versions wins")
            .hasValue(bytes("new"));
        assertThat(upgradedStore.changes(RingRange.whole(), after).next().entry().value()).isEqualTo(bytes("new"));
      }
      try (Store reopened = RocksStore.open(old, NODE, ZONE)) {
        assertThat(reopened.get(bytes("old-8"))).as("an upgraded store opens as format 2").hasValue(bytes("value-8"));
        assertThat(reopened.digest(RingRange.whole()).keys()).isEqualTo(contents.size());
      }
    }
  }

  @Test
  void shouldRefuseAStoreOfAnUnknownFormat() throws Exception {
    closeStore();
    try (RocksDbStore raw = RocksDbStore.open(dataDir(), NODE, ZONE, Duration.ofHours(1), 0, false)) {
      assertThat(raw.info().nodeId()).isEqualTo(NODE);
    }
    List<ColumnFamilyHandle> handles = new ArrayList<>();
    try (DBOptions options = new DBOptions();
        RocksDB db = RocksDB.open(options, dataDir().toString(), Stream.of(RocksDB.DEFAULT_COLUMN_FAMILY,
            bytes("data"), bytes("meta")).map(ColumnFamilyDescriptor::new).toList(), handles)) {
      db.put(handles.get(2), bytes("format"), bytes("ringshift-store/9"));
      handles.forEach(ColumnFamilyHandle::close);
    }

    assertThatThrownBy(() -> RocksStore.open(dataDir(), NODE, ZONE)).isInstanceOf(StoreException.BadRequest.class)
        .hasMessageContaining("holds a store of format 'ringshift-store/9', which this version does not know");
    store = openStore(dir.resolve("fresh"));
  }

  @Test
  void shouldPurgeATombstoneOnlyAfterItsRetentionAndNeverANewerWrite() {
    closeStore();
    AtomicLong now = new AtomicLong(1_000_000);
    // Keys outside the range loaded below, so that the load is ingested.
    String gone = outsideLoaded("gone");
    String back = outsideLoaded("back");
    String later = outsideLoaded("later");
    try (RocksDbStore clocked = RocksDbStore.open(dataDir(), NODE, ZONE, Duration.ofHours(1), 0, false,
        Duration.ofMinutes(10), now::get)) {
      clocked.delete(bytes(gone), 0, Version.of(50, 0, 1));
      clocked.delete(bytes(back), 0, Version.of(50, 0, 1));
      now.addAndGet(Duration.ofMinutes(5).toMillis());
      clocked.put(bytes(back), bytes("written after its deletion"), 0, Version.of(60, 0, 1));
      clocked.delete(bytes(later), 0, Version.of(70, 0, 1));
      List<Entry> load = new ArrayList<>(loadEntries("ingested", LOADED, 700));
      for (int i = 0; i < 50; i++) {
        Entry e = load.get(i * 10);
        load.set(i * 10, new Entry(e.position(), e.key(), null, Version.of(80, 0, 1)));
      }
      assertThat(clocked.load(load.iterator()).ingested()).as("a load with tombstones, ingested").isTrue();

      assertThat(clocked.purgeTombstones(1_000)).as("nothing is older than 10 minutes").isZero();
      now.addAndGet(Duration.ofMinutes(6).toMillis());
      assertThat(clocked.purgeTombstones(1_000)).as("the first deletion only: 'back' was written again").isEqualTo(1);
      assertThat(scanned(clocked)).doesNotContainKey("gone").containsKeys(back, later);
      assertThat(clocked.get(bytes(back))).hasValue(bytes("written after its deletion"));

      now.addAndGet(Duration.ofMinutes(5).toMillis());
      assertThat(clocked.purgeTombstones(1_000)).as("the later deletion and the 50 loaded ones").isEqualTo(51);
      assertThat(scanned(clocked).values()).noneMatch(Entry::isDeletion);
      assertThat(clocked.digest(RingRange.whole()).keys()).isEqualTo(1 + 650);
    }
    store = openStore(dataDir());
  }

  private static String outsideLoaded(String prefix) {
    for (int i = 0; ; i++) {
      if (!LOADED.contains(Entry.positionOf(bytes(prefix + i)))) {
        return prefix + i;
      }
    }
  }

  private static Map<String, Entry> scanned(Store s) {
    Map<String, Entry> out = new HashMap<>();
    try (RangeScan scan = s.scan(RingRange.whole(), null)) {
      scan.forEachRemaining(e -> out.put(text(e.key()), e));
    }
    return out;
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
