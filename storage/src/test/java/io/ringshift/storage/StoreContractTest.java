package io.ringshift.storage;

import static io.ringshift.storage.TestKeys.bytes;
import static io.ringshift.storage.TestKeys.inTokenOrder;
import static io.ringshift.storage.TestKeys.position;
import static io.ringshift.storage.TestKeys.text;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.dynatrace.hash4j.hashing.Hashing;
import io.ringshift.ring.RingRange;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.Stream;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The storage SPI's contract, run against every way to reach a store: {@link RocksStoreTest} calls a
 * {@code RocksStore} directly, {@link RemoteStoreTest} the same store through {@code NodeServer} and
 * {@code RemoteStore} over loopback HTTP. Each test starts from a new, empty store of node-1 in az-1.
 */
abstract class StoreContractTest {
  static final String NODE = "node-1";
  static final String ZONE = "az-1";
  private static final long MAX = -1L;

  @TempDir Path dir;

  Store store;

  /** Opens the store under test on {@code dataDir}, as node-1 in az-1. */
  abstract Store openStore(Path dataDir);

  /** Closes everything {@link #openStore} opened (idempotent). */
  abstract void closeStore();

  /** Rounds of the fence property test: each is a few thousand writes on this transport. */
  abstract int fenceRounds();

  Path dataDir() {
    return dir.resolve("node-1");
  }

  @BeforeEach
  void openEmptyStore() {
    store = openStore(dataDir());
  }

  @AfterEach
  void closeTheStore() {
    closeStore();
  }

  void reopen() {
    closeStore();
    store = openStore(dataDir());
  }

  /**
   * Restarts the node after its archived write-ahead log was purged, as RocksDB does when the retention ends. A
   * first restart flushes the data to table files and archives the log it recovered from; deleting the archive
   * then leaves the data and drops its log.
   */
  void restartAfterLogRetentionEnds() throws IOException {
    reopen();
    closeStore();
    Path archive = dataDir().resolve("archive");
    try (Stream<Path> logs = Files.list(archive)) {
      for (Path log : logs.toList()) {
        Files.delete(log);
      }
    }
    store = openStore(dataDir());
  }

  long putAt(String key, String value, long epoch) {
    WriteResult result = store.put(bytes(key), bytes(value), epoch);
    assertThat(result).as("put %s at epoch %d", key, epoch).isInstanceOf(WriteResult.Applied.class);
    return ((WriteResult.Applied) result).sequence();
  }

  long put(String key, String value) {
    return putAt(key, value, 0);
  }

  /**
   * A version above every version a store's own clock stamps today (year 2096): what a copy of a later write carries in
   * the tests that apply over the store's own writes.
   */
  static final Version LATER = Version.of(4_000_000_000_000L, 0, 77);

  /** The live keys a scan reads (a scan carries tombstones too). */
  List<String> scanKeys(RingRange range, Store.Cursor after) {
    try (RangeScan scan = store.scan(range, after)) {
      List<String> keys = new ArrayList<>();
      scan.forEachRemaining(e -> {
        if (!e.isDeletion()) {
          keys.add(text(e.key()));
        }
      });
      return keys;
    }
  }

  List<Change> changes(RingRange range, long after) {
    try (ChangeFeed feed = store.changes(range, after)) {
      List<Change> all = new ArrayList<>();
      feed.forEachRemaining(all::add);
      return all;
    }
  }

  String value(String key) {
    return store.get(bytes(key)).map(TestKeys::text).orElse(null);
  }

  // ---- writes, reads, identity

  @Test
  void shouldPutGetAndDeleteWithIncreasingSequenceNumbers() {
    long before = store.latestSequence();
    long first = put("apple", "red");
    long second = put("banana", "yellow");
    long overwrite = put("apple", "green");

    assertThat(first).isGreaterThan(before);
    assertThat(second).isGreaterThan(first);
    assertThat(overwrite).isGreaterThan(second);
    assertThat(value("apple")).isEqualTo("green");
    assertThat(value("cherry")).isNull();

    WriteResult deleted = store.delete(bytes("apple"), 0);
    assertThat(deleted).isInstanceOf(WriteResult.Applied.class);
    assertThat(((WriteResult.Applied) deleted).sequence()).isGreaterThan(overwrite);
    assertThat(value("apple")).isNull();
    assertThat(store.latestSequence()).isEqualTo(((WriteResult.Applied) deleted).sequence());
    assertThat(store.delete(bytes("never-written"), 0)).as("deleting an absent key is a write too")
        .isInstanceOf(WriteResult.Applied.class);
  }

  @Test
  void shouldStoreBinaryKeysAndValuesAtTheLimits() {
    byte[] longest = new byte[Store.MAX_KEY_BYTES];
    Arrays.fill(longest, (byte) 0xFF);
    byte[] biggest = new byte[Store.MAX_VALUE_BYTES];
    new Random(7).nextBytes(biggest);
    byte[] smallest = {0};

    assertThat(store.put(longest, biggest, 0)).isInstanceOf(WriteResult.Applied.class);
    assertThat(store.put(smallest, new byte[0], 0)).isInstanceOf(WriteResult.Applied.class);

    assertThat(store.get(longest)).hasValueSatisfying(v -> assertThat(v).isEqualTo(biggest));
    assertThat(store.get(smallest)).hasValueSatisfying(v -> assertThat(v).isEmpty());
  }

  @Test
  void shouldReportItsIdentityAndLatestSequence() {
    put("a", "1");
    put("b", "2");

    Store.NodeInfo info = store.info();

    assertThat(info.nodeId()).isEqualTo(NODE);
    assertThat(info.zone()).isEqualTo(ZONE);
    assertThat(info.latestSequence()).isEqualTo(store.latestSequence());
    assertThat(info.keys()).isBetween(0L, 2L);
  }

  // ---- scans

  @Test
  void shouldScanExactlyTheKeysOfARangeInTokenOrder() {
    List<String> keys = inTokenOrder("k", 200);
    keys.forEach(k -> put(k, "v-" + k));
    RingRange range = RingRange.of(position(keys.get(50)), position(keys.get(150)));

    try (RangeScan scan = store.scan(range, null)) {
      List<Entry> entries = new ArrayList<>();
      scan.forEachRemaining(entries::add);

      assertThat(entries).extracting(e -> text(e.key())).as("start excluded, end included")
          .containsExactlyElementsOf(keys.subList(51, 151));
      assertThat(entries).allSatisfy(e -> {
        assertThat(e.position()).isEqualTo(Entry.positionOf(e.key()));
        assertThat(text(e.value())).isEqualTo("v-" + text(e.key()));
      });
      assertThat(scan.sequence()).isEqualTo(store.latestSequence());
    }
  }

  @Test
  void shouldScanAWrappingRangeFromItsStartPastTheTopOfTheRing() {
    List<String> keys = inTokenOrder("k", 200);
    keys.forEach(k -> put(k, "v"));
    RingRange wrapping = RingRange.of(position(keys.get(150)), position(keys.get(50)));

    List<String> expected = new ArrayList<>(keys.subList(151, 200));
    expected.addAll(keys.subList(0, 51));
    assertThat(wrapping.wraps()).isTrue();
    assertThat(scanKeys(wrapping, null)).containsExactlyElementsOf(expected);
  }

  @Test
  void shouldScanTheWholeRingFromJustAfterItsStart() {
    List<String> keys = inTokenOrder("k", 120);
    keys.forEach(k -> put(k, "v"));
    long x = position(keys.get(70));

    List<String> expected = new ArrayList<>(keys.subList(71, 120));
    expected.addAll(keys.subList(0, 71));
    assertThat(scanKeys(RingRange.of(x, x), null)).containsExactlyElementsOf(expected);
    assertThat(scanKeys(RingRange.whole(), null)).containsExactlyInAnyOrderElementsOf(keys);
    assertThat(scanKeys(RingRange.of(MAX, MAX), null)).as("(MAX, MAX] is the whole ring too")
        .containsExactlyElementsOf(keys);
  }

  @Test
  void shouldScanRangesThatTouchTheTopOfTheRing() {
    List<String> keys = inTokenOrder("k", 100);
    keys.forEach(k -> put(k, "v"));

    assertThat(scanKeys(RingRange.of(position(keys.get(60)), MAX), null)).as("(p, MAX]")
        .containsExactlyElementsOf(keys.subList(61, 100));
    assertThat(scanKeys(RingRange.of(MAX, position(keys.get(10))), null)).as("(MAX, p] wraps to [0, p]")
        .containsExactlyElementsOf(keys.subList(0, 11));
    assertThat(scanKeys(RingRange.of(0, position(keys.get(10))), null)).as("(0, p]")
        .containsExactlyElementsOf(keys.subList(0, 11));
  }

  @Test
  void shouldResumeAScanAfterACursorAcrossTheTopOfTheRing() {
    List<String> keys = inTokenOrder("k", 60);
    keys.forEach(k -> put(k, "v"));
    RingRange wrapping = RingRange.of(position(keys.get(40)), position(keys.get(20)));
    List<String> all = scanKeys(wrapping, null);
    assertThat(all).hasSize(40);

    for (int stop = 0; stop < all.size(); stop++) {
      byte[] last = bytes(all.get(stop));
      List<String> rest = scanKeys(wrapping, new Store.Cursor(Entry.positionOf(last), last));
      assertThat(rest).as("resumed after entry %d", stop).containsExactlyElementsOf(all.subList(stop + 1, all.size()));
    }
    String middle = all.get(25);
    assertThat(scanKeys(wrapping, Store.Cursor.atPosition(position(middle))))
        .as("a cursor with an empty key resumes at its position itself")
        .containsExactlyElementsOf(all.subList(25, all.size()));
  }

  @Test
  void shouldScanAtASnapshotWhileWritesContinue() {
    List<String> keys = inTokenOrder("k", 300);
    keys.forEach(k -> put(k, "old"));
    long before = store.latestSequence();

    List<String> seen = new ArrayList<>();
    try (RangeScan scan = store.scan(RingRange.whole(), null)) {
      assertThat(scan.sequence()).isEqualTo(before);
      seen.add(text(scan.next().value()));
      for (int i = 0; i < keys.size(); i++) {
        if (i % 3 == 0) {
          store.delete(bytes(keys.get(i)), 0);
        } else {
          put(keys.get(i), "new");
        }
        put("added-" + i, "new");
      }
      scan.forEachRemaining(e -> seen.add(text(e.key()).startsWith("added-") ? "added" : text(e.value())));
    }

    assertThat(seen).as("the scan reads the store as it was at its sequence").hasSize(300).containsOnly("old");
    assertThat(scanKeys(RingRange.whole(), null)).as("a new scan sees the writes").hasSize(200 + 300);
  }

  // ---- the change feed

  @Test
  void shouldFeedTheChangesOfARangeInLogOrder() {
    List<String> keys = inTokenOrder("k", 100);
    keys.forEach(k -> put(k, "v0"));
    RingRange range = RingRange.of(position(keys.get(30)), position(keys.get(60)));
    long after = store.latestSequence();

    Map<Long, String> expected = new LinkedHashMap<>();
    Random random = new Random(11);
    for (int i = 0; i < 200; i++) {
      String key = keys.get(random.nextInt(keys.size()));
      long sequence;
      String written;
      if (random.nextInt(4) == 0) {
        sequence = ((WriteResult.Applied) store.delete(bytes(key), 0)).sequence();
        written = key + "=deleted";
      } else {
        written = key + "=v" + i;
        sequence = put(key, "v" + i);
      }
      if (range.contains(position(key))) {
        expected.put(sequence, written);
      }
    }
    String applied = keys.get(45);
    long appliedAt = store.apply(List.of(Entry.of(bytes(applied), bytes("copied"), LATER),
        Entry.of(bytes(keys.get(5)), bytes("outside"), LATER)));
    expected.put(appliedAt - 1, applied + "=copied");

    try (ChangeFeed feed = store.changes(range, after)) {
      assertThat(feed.upTo()).isEqualTo(store.latestSequence());
      Map<Long, String> fed = new LinkedHashMap<>();
      feed.forEachRemaining(c -> fed.put(c.sequence(),
          text(c.entry().key()) + "=" + (c.entry().isDeletion() ? "deleted" : text(c.entry().value()))));
      assertThat(fed).containsExactlyEntriesOf(expected);
    }
    List<Change> fromMiddle = changes(range, appliedAt - 2);
    assertThat(fromMiddle).extracting(Change::sequence).as("a feed starts strictly after its sequence, "
        + "even inside a batch").containsExactly(appliedAt - 1);
    assertThat(fromMiddle.get(0).entry().position()).isEqualTo(position(applied));
  }

  @Test
  void shouldFeedTheChangesOfSeveralRangesInOnePassEachChangeOnce() {
    List<String> keys = inTokenOrder("m", 120);
    keys.forEach(k -> put(k, "v0"));
    long after = store.latestSequence();
    // Three ranges: two that overlap, one that wraps through 0, and what lies between them left out.
    RingRange first = RingRange.of(position(keys.get(10)), position(keys.get(30)));
    RingRange overlapping = RingRange.of(position(keys.get(20)), position(keys.get(40)));
    RingRange wrapping = RingRange.of(position(keys.get(100)), position(keys.get(5)));
    List<RingRange> ranges = List.of(first, overlapping, wrapping);

    Map<Long, String> expected = new LinkedHashMap<>();
    Random random = new Random(12);
    for (int i = 0; i < 300; i++) {
      String key = keys.get(random.nextInt(keys.size()));
      long sequence = put(key, "w" + i);
      if (ranges.stream().anyMatch(r -> r.contains(position(key)))) {
        expected.put(sequence, key + "=w" + i);
      }
    }

    try (ChangeFeed feed = store.changesIn(ranges, after)) {
      assertThat(feed.upTo()).isEqualTo(store.latestSequence());
      Map<Long, String> fed = new LinkedHashMap<>();
      feed.forEachRemaining(c -> assertThat(fed.put(c.sequence(), text(c.entry().key()) + "="
          + text(c.entry().value()))).as("each change once").isNull());
      assertThat(fed).as("the changes of the three ranges, in log order").containsExactlyEntriesOf(expected);
    }
    List<Change> single = changes(overlapping, after);
    try (ChangeFeed feed = store.changesIn(List.of(overlapping), after)) {
      List<Change> fed = new ArrayList<>();
      feed.forEachRemaining(fed::add);
      assertThat(fed).extracting(Change::sequence).as("a feed of one range in a list is that range's feed")
          .isEqualTo(single.stream().map(Change::sequence).toList()).isNotEmpty();
    }
  }

  @Test
  void shouldRefuseAFeedOfNoRangesOrTooManyNamingTheRule() {
    long latest = store.latestSequence();
    List<RingRange> tooMany = new ArrayList<>();
    for (int i = 0; i <= Store.MAX_FEED_RANGES; i++) {
      tooMany.add(RingRange.of(i * 10L, i * 10L + 5));
    }

    refused(() -> store.changesIn(List.of(), 0), "ranges are missing; give 1 to 4096 ring ranges");
    refused(() -> store.changesIn(tooMany, 0), "4097 ranges; a change feed follows at most 4096 ranges");
    refused(() -> store.changesIn(Arrays.asList(RingRange.of(1, 2), null), 0), "range 1 is missing");
    refused(() -> store.changesIn(List.of(RingRange.of(1, 2)), -1), "afterSequence -1 is negative");
    assertThat(store.latestSequence()).isEqualTo(latest);
  }

  @Test
  void shouldEndAFeedAtTheLatestSequenceItSawWhenItOpened() {
    put("a", "1");
    long after = store.latestSequence();
    put("b", "2");
    long upTo = store.latestSequence();

    try (ChangeFeed feed = store.changes(RingRange.whole(), after)) {
      put("c", "3");
      List<Change> fed = new ArrayList<>();
      feed.forEachRemaining(fed::add);
      assertThat(feed.upTo()).isEqualTo(upTo);
      assertThat(fed).extracting(c -> text(c.entry().key())).containsExactly("b");
    }
    try (ChangeFeed empty = store.changes(RingRange.whole(), store.latestSequence())) {
      assertThat(empty.hasNext()).isFalse();
      assertThat(empty.upTo()).isEqualTo(store.latestSequence());
    }
  }

  @Test
  void shouldRefuseAFeedAfterASequenceTheStoreHasNotWritten() {
    long latest = store.latestSequence();

    assertThatThrownBy(() -> store.changes(RingRange.whole(), latest + 100))
        .isInstanceOf(StoreException.FeedUnavailable.class)
        .hasMessageContaining("afterSequence " + (latest + 100))
        .hasMessageContaining("latest sequence " + latest);
  }

  @Test
  void shouldKeepDataSequencesFencesAndTheFeedAcrossARestart() {
    long first = put("a", "1");
    long second = put("b", "2");
    long third = ((WriteResult.Applied) store.delete(bytes("a"), 0)).sequence();
    Fence fence = store.fence(RingRange.of(1, 2), 5);
    long latest = store.latestSequence();

    reopen();

    assertThat(store.latestSequence()).isEqualTo(latest);
    assertThat(value("b")).isEqualTo("2");
    assertThat(value("a")).isNull();
    assertThat(store.fences()).containsExactly(fence);
    assertThat(store.info().nodeId()).isEqualTo(NODE);
    List<Change> fed = changes(RingRange.whole(), first - 1);
    assertThat(fed).extracting(Change::sequence).containsExactly(first, second, third);
    assertThat(fed.get(2).entry().isDeletion()).isTrue();
    assertThat(put("c", "3")).as("sequence numbers continue").isGreaterThan(latest);
  }

  @Test
  void shouldRefuseAFeedThatTheRetainedLogNoLongerReaches() throws IOException {
    long first = put("a", "1");
    put("b", "2");
    long latest = store.latestSequence();

    restartAfterLogRetentionEnds();

    assertThatThrownBy(() -> changes(RingRange.whole(), first - 1))
        .isInstanceOf(StoreException.FeedUnavailable.class)
        .hasMessageContaining("needs sequence " + first)
        .hasMessageContaining("copy the range again");
    assertThat(value("a")).as("the data outlives its log").isEqualTo("1");
    assertThat(changes(RingRange.whole(), latest)).isEmpty();
    long third = put("c", "3");
    assertThat(changes(RingRange.whole(), latest)).extracting(Change::sequence).containsExactly(third);
  }

  // ---- fences

  @Test
  void shouldRefuseOlderEpochWritesToAFencedRange() {
    List<String> keys = inTokenOrder("k", 40);
    keys.forEach(k -> putAt(k, "v", 3));
    RingRange range = RingRange.of(position(keys.get(10)), position(keys.get(20)));
    String inside = keys.get(15);
    String outside = keys.get(25);
    long beforeFence = store.latestSequence();

    Fence fence = store.fence(range, 5);

    assertThat(fence.range()).isEqualTo(range);
    assertThat(fence.epoch()).isEqualTo(5);
    assertThat(fence.position()).isGreaterThanOrEqualTo(beforeFence);
    WriteResult.RetryWithEpoch retry = new WriteResult.RetryWithEpoch(5, range);
    assertThat(store.put(bytes(inside), bytes("late"), 4)).isEqualTo(retry);
    assertThat(store.delete(bytes(inside), 0)).isEqualTo(retry);
    assertThat(store.put(bytes(keys.get(20)), bytes("late"), 4)).as("the range's end is fenced").isEqualTo(retry);
    assertThat(store.put(bytes(keys.get(10)), bytes("x"), 4)).as("the range's start is not")
        .isInstanceOf(WriteResult.Applied.class);
    assertThat(value(inside)).as("a refused write changes nothing").isEqualTo("v");
    assertThat(store.put(bytes(outside), bytes("x"), 4)).isInstanceOf(WriteResult.Applied.class);
    assertThat(store.put(bytes(inside), bytes("epoch-5"), 5)).as("the fence's own epoch passes")
        .isInstanceOf(WriteResult.Applied.class);
    assertThat(store.put(bytes(inside), bytes("epoch-6"), 6)).isInstanceOf(WriteResult.Applied.class);
    assertThat(value(inside)).isEqualTo("epoch-6");

    store.apply(List.of(Entry.of(bytes(inside), bytes("applied"), LATER)));
    assertThat(value(inside)).as("apply is migration's own write: not fenced").isEqualTo("applied");
    assertThat(store.get(bytes(inside))).as("reads are never fenced").isPresent();
  }

  @Test
  void shouldAnswerWithTheHighestEpochOfTheFencesThatCoverAKey() {
    String key = "fenced-twice";
    long p = position(key);
    RingRange narrow = RingRange.of(p - 1, p);
    RingRange wide = RingRange.of(p - 1000, p + 1000);
    store.fence(narrow, 4);
    store.fence(wide, 7);

    assertThat(store.put(bytes(key), bytes("v"), 3)).isEqualTo(new WriteResult.RetryWithEpoch(7, wide));
    assertThat(store.put(bytes(key), bytes("v"), 5)).isEqualTo(new WriteResult.RetryWithEpoch(7, wide));
    assertThat(store.put(bytes(key), bytes("v"), 7)).isInstanceOf(WriteResult.Applied.class);
  }

  @Test
  void shouldKeepAFenceIdempotentUntilItIsLifted() {
    RingRange range = RingRange.of(100, 200);
    Fence first = store.fence(range, 5);
    put("moves-the-log-on", "x");

    Fence again = store.fence(range, 5);
    long latest = store.latestSequence();
    Fence other = store.fence(RingRange.of(300, 400), 5);

    assertThat(again).isEqualTo(first);
    assertThat(other.position()).isEqualTo(latest);
    assertThat(store.fences()).containsExactly(first, other);

    reopen();
    assertThat(store.fence(range, 5)).as("idempotent across a restart").isEqualTo(first);
    store.unfence(range, 5);
    store.unfence(range, 5);
    store.unfence(RingRange.of(7, 8), 1);
    assertThat(store.fences()).containsExactly(other);
    reopen();
    assertThat(store.fences()).as("lifting persists").containsExactly(other);
  }

  /**
   * The fence property: writers of the old and the new epoch race a fence. Every acknowledged write of an older
   * epoch to the range has a sequence at or below the fence's position, every later one is refused with the
   * fence's epoch and range, writes of the fence's epoch and outside the range always pass, and every
   * acknowledged write is in the change feed at exactly the sequence it was given.
   */
  @Test
  void shouldFenceAtomicallyWhileWritersRaceIt() throws Exception {
    long seed = Seeds.seed(getClass().getSimpleName() + ".shouldFenceAtomicallyWhileWritersRaceIt");
    Random random = new Random(seed);
    ExecutorService writers = Executors.newFixedThreadPool(4);
    try {
      for (int round = 0; round < fenceRounds(); round++) {
        fenceRound(round, random.nextLong(), writers);
      }
    } finally {
      writers.shutdownNow();
      assertThat(writers.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
    }
  }

  private record Attempt(String key, String value, long epoch, WriteResult result) {}

  private void fenceRound(int round, long seed, ExecutorService writers) throws Exception {
    String context = "round " + round + " (seed " + seed + ")";
    Random random = new Random(seed);
    long start = random.nextLong();
    // A quarter to three quarters of the ring, so both sides of the fence see many writes to it.
    long length = (1L << 62) + (random.nextLong() >>> 2) + (random.nextLong() >>> 2);
    RingRange range = RingRange.of(start, start + length);
    long fenceEpoch = 10L + round;
    int perWriter = 250;
    int afterFence = 50;
    int writerCount = 4;
    CountDownLatch halfway = new CountDownLatch(writerCount * perWriter / 2);
    AtomicBoolean fenced = new AtomicBoolean();
    long from = store.latestSequence();
    List<Future<List<Attempt>>> work = new ArrayList<>();
    for (int w = 0; w < writerCount; w++) {
      long writerSeed = random.nextLong();
      int writer = w;
      work.add(writers.submit(() -> {
        Random r = new Random(writerSeed);
        List<Attempt> attempts = new ArrayList<>();
        // At least perWriter writes, and at least afterFence more once the fence is known to be up.
        int stopAt = Integer.MAX_VALUE;
        for (int i = 0; i < perWriter || i < stopAt; i++) {
          if (stopAt == Integer.MAX_VALUE && fenced.get()) {
            stopAt = i + afterFence;
          }
          String key = "r" + round + "-k" + r.nextInt(400);
          long epoch = r.nextInt(5) == 0 ? fenceEpoch + r.nextInt(2) : fenceEpoch - 1 - r.nextInt(3);
          String value = r.nextInt(8) == 0 ? null : "w" + writer + "-" + i;
          WriteResult result = value == null ? store.delete(bytes(key), epoch)
              : store.put(bytes(key), bytes(value), epoch);
          attempts.add(new Attempt(key, value, epoch, result));
          halfway.countDown();
        }
        return attempts;
      }));
    }
    assertThat(halfway.await(60, TimeUnit.SECONDS)).as("%s: writers reached halfway", context).isTrue();
    Fence fence = store.fence(range, fenceEpoch);
    fenced.set(true);
    List<Attempt> attempts = new ArrayList<>();
    for (Future<List<Attempt>> f : work) {
      attempts.addAll(f.get(60, TimeUnit.SECONDS));
    }

    Map<Long, Change> fed = new HashMap<>();
    changes(RingRange.whole(), from).forEach(c -> fed.put(c.sequence(), c));
    int acknowledgedOld = 0;
    int refused = 0;
    for (Attempt a : attempts) {
      boolean covered = range.contains(position(a.key())) && a.epoch() < fenceEpoch;
      if (a.result() instanceof WriteResult.Applied applied) {
        if (covered) {
          acknowledgedOld++;
          assertThat(applied.sequence()).as("%s: %s acknowledged at epoch %d after the fence at %d", context,
              a.key(), a.epoch(), fence.position()).isLessThanOrEqualTo(fence.position());
        }
        Change change = fed.get(applied.sequence());
        assertThat(change).as("%s: the feed holds the write acknowledged at %d", context, applied.sequence())
            .isNotNull();
        assertThat(text(change.entry().key())).isEqualTo(a.key());
        assertThat(change.entry().value() == null ? null : text(change.entry().value())).isEqualTo(a.value());
      } else {
        refused++;
        assertThat(covered).as("%s: only old-epoch writes to the range are refused: %s", context, a).isTrue();
        assertThat(a.result()).isEqualTo(new WriteResult.RetryWithEpoch(fenceEpoch, range));
      }
    }
    assertThat(fed).as("%s: the feed holds exactly the acknowledged writes", context)
        .hasSize(attempts.size() - refused);
    assertThat(acknowledgedOld).as("%s: old-epoch writes before the fence", context).isPositive();
    assertThat(refused).as("%s: old-epoch writes after the fence", context).isPositive();
    store.unfence(range, fenceEpoch);
  }

  // ---- apply and digests

  @Test
  void shouldApplyIdempotently() {
    List<String> keys = inTokenOrder("k", 50);
    List<Entry> batch = new ArrayList<>();
    keys.forEach(k -> batch.add(Entry.of(bytes(k), bytes("copied-" + k), LATER)));
    batch.add(Entry.of(bytes(keys.get(3)), null, Version.of(LATER.millis() + 1, 0, 77)));
    put(keys.get(4), "stale");

    long first = store.apply(batch);
    RangeDigest once = store.digest(RingRange.whole());
    long second = store.apply(batch);
    RangeDigest twice = store.digest(RingRange.whole());

    assertThat(second).as("applying the same entries again writes nothing").isEqualTo(first);
    assertThat(twice.sameContentAs(once)).as("%s vs %s", once, twice).isTrue();
    assertThat(once.keys()).isEqualTo(49);
    assertThat(value(keys.get(3))).as("a null value deletes").isNull();
    assertThat(value(keys.get(4))).isEqualTo("copied-" + keys.get(4));
    assertThat(store.apply(List.of())).isEqualTo(store.latestSequence());
  }

  @Test
  void shouldRefuseAWholeBatchWithAnEntryAtTheWrongPosition() {
    put("kept", "v");
    long latest = store.latestSequence();
    RangeDigest before = store.digest(RingRange.whole());
    Entry good = Entry.of(bytes("good"), bytes("v"));
    Entry misplaced = new Entry(position("other") , bytes("bad"), bytes("v"));

    assertThatThrownBy(() -> store.apply(List.of(good, misplaced)))
        .isInstanceOf(StoreException.BadRequest.class)
        .hasMessageContaining("entry 1: position %016x is not the ring position %016x", position("other"),
            position("bad"));
    assertThat(store.latestSequence()).isEqualTo(latest);
    assertThat(store.digest(RingRange.whole()).sameContentAs(before)).isTrue();
    assertThat(value("good")).isNull();
  }

  // ---- bulk load

  /** The top and bottom quarter of the ring: a range that wraps, so a scan of it yields two runs of keys. */
  static final RingRange LOADED = RingRange.of(0xC000_0000_0000_0000L, 0x4000_0000_0000_0000L);
  /** Values of 8 KiB: 700 of them make a load of about 5.6 MiB, above the size a store ingests from. */
  private static final int LOAD_VALUE = 8 * 1024;

  /** {@code count} entries of keys in {@code range} with 8 KiB values, in the range's scan order (across the top). */
  static List<Entry> loadEntries(String prefix, RingRange range, int count) {
    List<Entry> entries = new ArrayList<>();
    Random random = new Random(prefix.hashCode());
    for (int i = 0; entries.size() < count; i++) {
      String key = prefix + "-" + i;
      if (range.contains(position(key))) {
        byte[] value = new byte[LOAD_VALUE];
        random.nextBytes(value);
        entries.add(Entry.of(bytes(key), value));
      }
    }
    entries.sort(Comparator.comparing(e -> e.position() - range.start() - 1, Long::compareUnsigned));
    return entries;
  }

  static long bytesOf(List<Entry> entries) {
    return entries.stream().mapToLong(Entry::size).sum();
  }

  @Test
  void shouldLoadAClearedRangeAsTableFilesTakingNoSequenceNumber() {
    List<String> outside = new ArrayList<>();
    for (int i = 0; outside.size() < 100; i++) {
      if (!LOADED.contains(position("client-" + i))) {
        outside.add("client-" + i);
      }
    }
    outside.forEach(k -> put(k, "v"));
    long before = store.latestSequence();
    List<Entry> entries = loadEntries("copied", LOADED, 700);

    LoadResult result = store.load(entries.iterator());

    assertThat(result).isEqualTo(new LoadResult(700, bytesOf(entries), true, before));
    assertThat(store.latestSequence()).as("an ingest takes no sequence number").isEqualTo(before);
    try (RangeScan scan = store.scan(LOADED, null)) {
      List<Entry> scanned = new ArrayList<>();
      scan.forEachRemaining(scanned::add);
      assertThat(scanned).as("the loaded range, in scan order").hasSize(700);
      for (int i = 0; i < scanned.size(); i++) {
        assertThat(scanned.get(i).key()).isEqualTo(entries.get(i).key());
        assertThat(scanned.get(i).value()).isEqualTo(entries.get(i).value());
      }
    }
    assertThat(scanKeys(RingRange.of(LOADED.end(), LOADED.start()), null)).containsExactlyInAnyOrderElementsOf(outside);
    long later = put(outside.get(0), "after the load");
    assertThat(changes(RingRange.whole(), before)).as("the feed reads on across the ingest, with no gap")
        .extracting(Change::sequence).containsExactly(later);

    reopen();
    assertThat(store.get(entries.get(350).key())).as("a load survives a restart").hasValue(entries.get(350).value());
    assertThat(store.digest(LOADED).keys()).isEqualTo(700);
  }

  @Test
  void shouldLoadThroughTheWritePathWhereTheRangeHoldsAKey() {
    List<Entry> entries = loadEntries("copied", LOADED, 700);
    String written = null;
    for (int i = 0; written == null; i++) {
      if (LOADED.contains(position("client-" + i))) {
        written = "client-" + i;
      }
    }
    put(written, "a client's write");
    long before = store.latestSequence();

    LoadResult result = store.load(entries.iterator());

    assertThat(result.ingested()).as("a key between the first and last loaded key").isFalse();
    assertThat(result.entries()).isEqualTo(700);
    assertThat(result.sequence()).isEqualTo(store.latestSequence()).isEqualTo(before + 700);
    assertThat(changes(LOADED, before)).as("written entries are in the feed").hasSize(700);
    assertThat(value(written)).isEqualTo("a client's write");
    assertThat(store.digest(LOADED).keys()).isEqualTo(701);

    List<Entry> small = loadEntries("small", RingRange.of(0x1000_0000_0000_0000L, 0x2000_0000_0000_0000L), 10);
    LoadResult smallResult = store.load(small.iterator());
    assertThat(smallResult.ingested()).as("a load of 80 KiB is written, not ingested").isFalse();
    assertThat(store.get(small.get(9).key())).hasValue(small.get(9).value());
    assertThat(store.load(List.<Entry>of().iterator())).isEqualTo(new LoadResult(0, 0, false,
        store.latestSequence()));
  }

  @Test
  void shouldLoadNothingOfALoadWithABadEntryOrAFailingSource() {
    List<Entry> entries = new ArrayList<>(loadEntries("copied", LOADED, 700));
    long before = store.latestSequence();
    List<Entry> misplaced = new ArrayList<>(entries);
    misplaced.add(new Entry(position("other"), bytes("bad"), bytes("v")));
    assertThatThrownBy(() -> store.load(misplaced.iterator())).isInstanceOf(StoreException.BadRequest.class)
        .hasMessageContaining("entry 700: position %016x is not the ring position %016x", position("other"),
            position("bad"));
    List<Entry> deletion = new ArrayList<>(entries.subList(0, 10));
    deletion.add(Entry.of(bytes("deleted"), null));
    assertThatThrownBy(() -> store.load(deletion.iterator())).isInstanceOf(StoreException.BadRequest.class)
        .hasMessageContaining("entry 10 of a load is a deletion");
    Iterator<Entry> failing = new Iterator<>() {
      private int i;

      @Override
      public boolean hasNext() {
        return true;
      }

      @Override
      public Entry next() {
        if (i == 650) {
          throw new IllegalStateException("the source went away");
        }
        return entries.get(i++);
      }
    };
    assertThatThrownBy(() -> store.load(failing)).isInstanceOf(IllegalStateException.class)
        .hasMessage("the source went away");

    assertThat(store.latestSequence()).isEqualTo(before);
    assertThat(store.digest(RingRange.whole()).keys()).as("nothing loaded").isZero();
    assertThat(store.load(entries.iterator()).ingested()).as("the same load, whole").isTrue();
  }

  @Test
  void shouldGiveTheSameDigestForTheSameContentsInAnyOrder() {
    long seed = Seeds.seed(getClass().getSimpleName() + ".shouldGiveTheSameDigestForTheSameContentsInAnyOrder");
    Random random = new Random(seed);
    Map<String, byte[]> contents = new LinkedHashMap<>();
    for (int i = 0; i < 300; i++) {
      byte[] value = new byte[random.nextInt(64)];
      random.nextBytes(value);
      contents.put("key-" + random.nextInt(1_000_000), value);
    }
    List<String> keys = new ArrayList<>(contents.keySet());
    RingRange part = RingRange.of(random.nextLong(), random.nextLong());

    Map<String, Version> versions = new HashMap<>();
    keys.forEach(k -> versions.put(k, Version.of(1_000 + random.nextInt(1_000), random.nextInt(3), random.nextLong())));
    keys.forEach(k -> store.put(bytes(k), contents.get(k), 0, versions.get(k)));
    RangeDigest whole = store.digest(RingRange.whole());
    RangeDigest partial = store.digest(part);
    assertThat(whole.digest()).as("documented algorithm")
        .isEqualTo(referenceDigest(contents, versions, RingRange.whole()));
    assertThat(partial.digest()).isEqualTo(referenceDigest(contents, versions, part));
    assertThat(whole.keys()).isEqualTo(contents.size());
    assertThat(whole.bytes()).isEqualTo(contents.entrySet().stream()
        .mapToLong(e -> bytes(e.getKey()).length + e.getValue().length).sum());
    assertThat(whole.sequence()).isEqualTo(store.latestSequence());

    for (int order = 0; order < 4; order++) {
      store.deleteRange(RingRange.whole(), 1);
      Collections.shuffle(keys, random);
      List<Entry> batch = new ArrayList<>();
      for (String k : keys) {
        if (random.nextInt(5) == 0) {
          store.put(bytes(k), bytes("overwritten later"), 0, Version.of(999, 0, 1));
          store.put(bytes("noise-" + k), bytes("deleted later"), 0);
          store.delete(bytes("noise-" + k), 0);
        }
        batch.add(Entry.of(bytes(k), contents.get(k), versions.get(k)));
        if (random.nextInt(20) == 0) {
          store.apply(batch);
          batch.clear();
        }
      }
      store.apply(batch);
      assertThat(store.digest(RingRange.whole()).sameContentAs(whole)).as("order %d", order).isTrue();
      assertThat(store.digest(part).sameContentAs(partial)).as("order %d, part %s", order, part).isTrue();
    }
    String changed = keys.get(0);
    store.put(bytes(changed), bytes("different"), 0);
    assertThat(store.digest(RingRange.whole()).sameContentAs(whole)).as("different contents").isFalse();
  }

  @Test
  void shouldDigestAnEmptyRangeAsZeros() {
    RangeDigest empty = store.digest(RingRange.of(5, 6));

    assertThat(empty.digest()).isEqualTo(new byte[16]);
    assertThat(empty.keys()).isZero();
    assertThat(empty.bytes()).isZero();
  }

  /** docs/storage.md, "Range digest", computed from scratch with one-shot hashes of concatenated bytes. */
  /** The digest of docs/storage.md, written from its text: each record is {@code len(k) ++ k ++ version ++ v}. */
  static byte[] referenceDigest(Map<String, byte[]> contents, Map<String, Version> versions, RingRange range) {
    long sumA = 0;
    long sumB = 0;
    for (Map.Entry<String, byte[]> e : contents.entrySet()) {
      byte[] key = bytes(e.getKey());
      if (!range.contains(Entry.positionOf(key))) {
        continue;
      }
      Version v = versions.get(e.getKey());
      byte[] record = ByteBuffer.allocate(4 + key.length + 20 + e.getValue().length)
          .putInt(key.length).put(key).putLong(v.millis()).putInt(v.logical()).putLong(v.writer())
          .put(e.getValue()).array();
      sumA += Hashing.xxh3_64(0x72696e6773686641L).hashBytesToLong(record);
      sumB += Hashing.xxh3_64(0x72696e6773686642L).hashBytesToLong(record);
    }
    return ByteBuffer.allocate(16).putLong(sumA).putLong(sumB).array();
  }

  // ---- versions: max-version-wins

  /** What a store must hold after {@code entries} arrived in any order: per key, the entry that supersedes the rest. */
  static Map<String, Entry> winners(List<Entry> entries) {
    Map<String, Entry> out = new TreeMap<>();
    for (Entry e : entries) {
      Entry held = out.get(text(e.key()));
      if (e.supersedes(held)) {
        out.put(text(e.key()), e);
      }
    }
    out.values().removeIf(e -> e.isDeletion() && !e.version().isAfter(Version.ZERO));
    return out;
  }

  /** Every entry of the store, tombstones included, by key. */
  Map<String, Entry> held() {
    Map<String, Entry> out = new TreeMap<>();
    try (RangeScan scan = store.scan(RingRange.whole(), null)) {
      scan.forEachRemaining(e -> out.put(text(e.key()), e));
    }
    return out;
  }

  @Test
  void shouldKeepTheHighestVersionWhateverOrderPutsDeletesAppliesAndLoadsArriveIn() {
    long seed = Seeds.seed(getClass().getSimpleName()
        + ".shouldKeepTheHighestVersionWhateverOrderPutsDeletesAppliesAndLoadsArriveIn");
    Random random = new Random(seed);
    List<Entry> writes = new ArrayList<>();
    for (int i = 0; i < 400; i++) {
      String key = "key-" + random.nextInt(40);
      // Few distinct versions, so equal versions meet too (a value against a deletion, two values).
      Version version = Version.of(1 + random.nextInt(6), random.nextInt(2), random.nextInt(2));
      byte[] value = random.nextInt(4) == 0 ? null : bytes("v" + random.nextInt(3));
      writes.add(Entry.of(bytes(key), value, version));
    }
    Map<String, Entry> expected = winners(writes);
    RangeDigest first = null;
    for (int order = 0; order < 3; order++) {
      store.deleteRange(RingRange.whole(), 1);
      List<Entry> shuffled = new ArrayList<>(writes);
      Collections.shuffle(shuffled, random);
      int i = 0;
      while (i < shuffled.size()) {
        int n = 1 + random.nextInt(20);
        List<Entry> part = shuffled.subList(i, Math.min(shuffled.size(), i + n));
        switch (random.nextInt(3)) {
          case 0 -> part.forEach(e -> {
            WriteResult r = e.isDeletion() ? store.delete(e.key(), 0, e.version())
                : store.put(e.key(), e.value(), 0, e.version());
            assertThat(r).as("a write of a lower version is answered applied too").isInstanceOf(
                WriteResult.Applied.class);
          });
          case 1 -> store.apply(List.copyOf(part));
          default -> store.load(part.stream().sorted(Comparator.comparing(Entry::position, Long::compareUnsigned))
              .iterator());
        }
        i += n;
      }
      assertThat(held()).as("seed %d, order %d: per key the entry of the highest version", seed, order)
          .isEqualTo(expected);
      expected.forEach((k, e) -> assertThat(store.get(bytes(k)).orElse(null)).as("get %s", k).isEqualTo(e.value()));
      RangeDigest digest = store.digest(RingRange.whole());
      assertThat(digest.keys()).isEqualTo(expected.values().stream().filter(e -> !e.isDeletion()).count());
      if (first == null) {
        first = digest;
      }
      assertThat(digest.sameContentAs(first)).as("seed %d, order %d: the same digest", seed, order).isTrue();
    }
  }

  @Test
  void shouldKeepATombstoneSoAnOlderWriteDoesNotBringAKeyBack() {
    Version deleted = Version.of(5_000, 0, 1);
    store.put(bytes("k"), bytes("old"), 0, Version.of(1_000, 0, 1));
    store.delete(bytes("k"), 0, deleted);

    store.apply(List.of(Entry.of(bytes("k"), bytes("a late copy"), Version.of(2_000, 0, 1))));
    store.put(bytes("k"), bytes("a late write"), 0, Version.of(4_999, 7, 9));
    store.load(List.of(Entry.of(bytes("k"), bytes("a late load"), Version.of(3_000, 0, 1))).iterator());

    assertThat(store.get(bytes("k"))).as("nothing older than the deletion brings the key back").isEmpty();
    assertThat(held()).as("a scan carries the tombstone, with its version")
        .containsExactly(Map.entry("k", Entry.of(bytes("k"), null, deleted)));
    assertThat(store.digest(RingRange.whole()).keys()).as("a digest counts live keys only").isZero();

    store.put(bytes("k"), bytes("newer"), 0, Version.of(5_000, 1, 1));
    assertThat(value("k")).as("a newer write does").isEqualTo("newer");
  }

  @Test
  void shouldStampWritesWithoutAVersionAboveEveryVersionItHasSeen() {
    Version ahead = Version.of(System.currentTimeMillis() + 3_600_000, 0, 5);
    store.apply(List.of(Entry.of(bytes("k"), bytes("copied from a node whose clock runs ahead"), ahead)));
    reopen(); // a restarted node's clock starts from its own time

    put("k", "a client of before versions");

    assertThat(value("k")).as("the node stamps above what it has seen").isEqualTo("a client of before versions");
    assertThat(held().get("k").version()).isGreaterThan(ahead);
  }

  @Test
  void shouldFeedEachVersionedWriteWithItsVersionAndNothingForASupersededOne() {
    long after = store.latestSequence();
    long put = ((WriteResult.Applied) store.put(bytes("k"), bytes("v"), 0, Version.of(10, 0, 1))).sequence();
    store.put(bytes("k"), bytes("older"), 0, Version.of(9, 0, 1));
    long delete = ((WriteResult.Applied) store.delete(bytes("k"), 0, Version.of(11, 0, 1))).sequence();

    assertThat(changes(RingRange.whole(), after)).containsExactly(
        new Change(put, Entry.of(bytes("k"), bytes("v"), Version.of(10, 0, 1))),
        new Change(delete, Entry.of(bytes("k"), null, Version.of(11, 0, 1))));
  }

  // ---- range delete

  @Test
  void shouldDeleteExactlyARangeAndCountIt() {
    List<String> keys = inTokenOrder("k", 100);
    keys.forEach(k -> put(k, "v"));
    RingRange wrapping = RingRange.of(position(keys.get(80)), position(keys.get(19)));
    store.fence(wrapping, 9);
    long before = store.latestSequence();

    assertThat(store.deleteRange(wrapping, 1)).isEqualTo(39);

    assertThat(scanKeys(RingRange.whole(), null)).containsExactlyElementsOf(keys.subList(20, 81));
    assertThat(changes(wrapping, before)).hasSize(39).allSatisfy(c -> assertThat(c.entry().isDeletion()).isTrue());
    assertThat(store.deleteRange(wrapping, 1)).as("idempotent").isZero();
    assertThat(store.deleteRange(RingRange.whole(), 1)).isEqualTo(61);
    assertThat(scanKeys(RingRange.whole(), null)).isEmpty();
  }

  // ---- bad input

  @Test
  void shouldRefuseBadInputNamingTheValueAndChangingNothing() {
    put("existing", "v");
    long latest = store.latestSequence();
    RingRange range = RingRange.of(10, 20);
    byte[] tooLong = new byte[Store.MAX_KEY_BYTES + 1];
    byte[] tooBig = new byte[Store.MAX_VALUE_BYTES + 1];

    refused(() -> store.put(new byte[0], bytes("v"), 0), "key is empty (0 bytes); a key must be 1 to 16384 bytes");
    refused(() -> store.put(tooLong, bytes("v"), 0), "is 16385 bytes; a key must be 1 to 16384 bytes");
    refused(() -> store.put(null, bytes("v"), 0), "key is missing");
    refused(() -> store.put(bytes("k"), tooBig, 0), "value is 4194305 bytes; a value must be at most 4194304 bytes");
    refused(() -> store.put(bytes("k"), null, 0), "value is missing");
    refused(() -> store.put(bytes("k"), bytes("v"), -1), "epoch -1 is negative; an epoch must be >= 0");
    refused(() -> store.delete(bytes("existing"), -2), "epoch -2 is negative");
    refused(() -> store.delete(new byte[0], 0), "key is empty");
    refused(() -> store.get(tooLong), "is 16385 bytes");
    refused(() -> store.changes(range, -5), "afterSequence -5 is negative");
    refused(() -> store.changes(null, 0), "range is missing");
    refused(() -> store.scan(range, Store.Cursor.atPosition(30)),
        "cursor position 000000000000001e is outside the scanned range (000000000000000a, 0000000000000014]");
    refused(() -> store.scan(range, new Store.Cursor(15, tooLong)), "cursor key");
    refused(() -> store.digest(null), "range is missing");
    refused(() -> store.fence(range, -3), "epoch -3 is negative");
    refused(() -> store.unfence(range, -3), "epoch -3 is negative");
    refused(() -> store.deleteRange(null, 1), "range is missing");
    refused(() -> store.apply(null), "entries are missing");
    refused(() -> store.apply(Arrays.asList(Entry.of(bytes("a"), bytes("v")), null)), "entry 1 is null");
    refused(() -> store.apply(List.of(Entry.of(bytes("a"), tooBig))),
        "entry 0: value is 4194305 bytes; a value must be at most 4194304 bytes");
    refused(() -> store.apply(List.of(new Entry(0, new byte[0], bytes("v")))), "entry 0: key is empty");
    refused(() -> store.put(bytes("k"), bytes("v"), 0, Version.ZERO), "version v0.0@0000000000000000 is version 0");
    refused(() -> store.delete(bytes("existing"), 0, null), "version is missing");
    List<Entry> oversized = new ArrayList<>();
    byte[] fourMiB = new byte[Store.MAX_VALUE_BYTES];
    for (int i = 0; i < 17; i++) {
      oversized.add(Entry.of(bytes("big-" + i), fourMiB));
    }
    refused(() -> store.apply(oversized), "apply of more than 67108864 key and value bytes (entry 15 reaches");

    assertThat(store.latestSequence()).as("nothing was written").isEqualTo(latest);
    assertThat(scanKeys(RingRange.whole(), null)).containsExactly("existing");
  }

  private static void refused(ThrowingCallable call, String message) {
    assertThatThrownBy(call).isInstanceOf(StoreException.BadRequest.class).hasMessageContaining(message)
        .satisfies(e -> assertThat(((StoreException) e).retriable()).isFalse());
  }
}
