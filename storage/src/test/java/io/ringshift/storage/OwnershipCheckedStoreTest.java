package io.ringshift.storage;

import static io.ringshift.storage.TestKeys.bytes;
import static io.ringshift.storage.TestKeys.text;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.ringshift.ring.RingRange;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The node's ownership check against a real {@code RocksStore} of node-1: a write tagged with an older epoch for a
 * range node-1 no longer replicates is refused with the ring's epoch; everything else reaches the store.
 */
class OwnershipCheckedStoreTest {
  @TempDir Path dir;
  private Store rocks;
  private Rings.View view;
  private Store store;

  @BeforeEach
  void open() {
    rocks = RocksStore.open(dir.resolve("node-1"), "node-1", "az-1");
    view = new Rings.View(Rings.EPOCH_5);
    store = OwnershipCheckedStore.wrap(rocks, view);
  }

  @AfterEach
  void close() {
    store.close();
  }

  @Test
  void rejectsAStaleWriteForARangeTheNodeNoLongerReplicatesWithTheRingsEpoch() {
    String key = Rings.movedAwayFrom("node-1");
    long before = rocks.latestSequence();

    WriteResult result = store.put(bytes(key), bytes("v"), 4);

    assertThat(result).isEqualTo(new WriteResult.RetryWithEpoch(5, Rings.rangeOf(Rings.EPOCH_5, key),
        WriteResult.Reason.NOT_A_REPLICA));
    assertThat(((WriteResult.RetryWithEpoch) result).fencedRange().contains(Rings.EPOCH_5.position(bytes(key))))
        .isTrue();
    assertThat(rocks.get(bytes(key))).as("nothing written").isEmpty();
    assertThat(rocks.latestSequence()).as("nothing in the log").isEqualTo(before);
  }

  @Test
  void rejectsAStaleDeleteForARangeTheNodeNoLongerReplicates() {
    String key = Rings.movedAwayFrom("node-1");
    rocks.apply(List.of(Entry.of(bytes(key), bytes("kept"))));

    WriteResult result = store.delete(bytes(key), 3);

    assertThat(result).isEqualTo(new WriteResult.RetryWithEpoch(5, Rings.rangeOf(Rings.EPOCH_5, key),
        WriteResult.Reason.NOT_A_REPLICA));
    assertThat(rocks.get(bytes(key)).map(TestKeys::text)).hasValue("kept");
  }

  /**
   * In a transition to epoch 5, node-1 leaves some ranges. While reads still go to epoch 4 it takes epoch-4 writes
   * there (clients not at the first stage yet write epoch 4's replicas); once reads go to epoch 5 it refuses them, as
   * after the transition.
   */
  @Test
  void shouldJudgeOlderWritesByThePreviousRingWhileATransitionReadsIt() {
    String key = Rings.movedAwayFrom("node-1");
    view.swapToStage(Rings.EPOCH_4, Rings.EPOCH_5, true);

    assertThat(store.put(bytes(key), bytes("from a client at epoch 4"), 4)).isInstanceOf(WriteResult.Applied.class);
    assertThat(store.put(bytes(key), bytes("dual write"), 5)).isInstanceOf(WriteResult.Applied.class);

    view.swapToStage(Rings.EPOCH_4, Rings.EPOCH_5, false);
    assertThat(store.put(bytes(key), bytes("a straggler"), 4)).isEqualTo(new WriteResult.RetryWithEpoch(5,
        Rings.rangeOf(Rings.EPOCH_5, key), WriteResult.Reason.NOT_A_REPLICA));
    assertThat(store.put(bytes(key), bytes("dual write"), 5, Version.of(9, 0, 1)))
        .isInstanceOf(WriteResult.Applied.class);
  }

  /**
   * A range delete in a transition keeps what readers may read: while they read epoch 4, node-4 (pending in epoch 5)
   * may be cleared by the copy of epoch 5, and node-1 keeps what epoch 4 gives it; once reads go to epoch 5, what
   * either ring gives a node stays. A fence of the transition's epoch on a range node-1 leaves stays while reads go to
   * epoch 4 (the ownership check lets epoch-4 writes through then) and goes once they moved.
   */
  @Test
  void shouldKeepWhatEitherRingsReadersMayReadAndTheFencesThatStillRefuse() {
    Store node4 = OwnershipCheckedStore.wrap(RocksStore.open(dir.resolve("node-4"), "node-4", "az-1"), view);
    // Pruned by this test alone, so that no prune on the background thread races it.
    OwnershipCheckedStore node1 = OwnershipCheckedStore.wrapPrunedByCaller(rocks, view);
    try {
      String moved = Rings.movedAwayFrom("node-1");
      RingRange toNode4 = Rings.rangeOf(Rings.EPOCH_5, moved);
      view.swapToStage(Rings.EPOCH_4, Rings.EPOCH_5, true);
      assertThat(node4.deleteRange(toNode4, 5)).as("the copy of epoch 5 clears its pending target").isZero();
      assertThatThrownBy(() -> node1.deleteRange(Rings.rangeOf(Rings.EPOCH_4, moved), 4))
          .isInstanceOf(StoreException.Refused.class).hasMessageContaining("epoch 4");
      assertThatThrownBy(() -> node1.deleteRange(Rings.rangeOf(Rings.EPOCH_4, moved), 5))
          .as("a delete of the transition's own epoch too").isInstanceOf(StoreException.Refused.class)
          .hasMessageContaining("readers of that ring may still read it");
      node1.fence(toNode4, 5);
      assertThat(node1.pruneFences()).as("still refuses epoch-4 writes").isZero();

      view.swapToStage(Rings.EPOCH_4, Rings.EPOCH_5, false);
      assertThatThrownBy(() -> node4.deleteRange(toNode4, 5)).as("readers of epoch 5 read node-4")
          .isInstanceOf(StoreException.Refused.class);
      assertThatThrownBy(() -> node1.deleteRange(Rings.rangeOf(Rings.EPOCH_4, moved), 5))
          .as("stragglers still read epoch 4").isInstanceOf(StoreException.Refused.class);
      assertThat(node1.pruneFences()).as("the ownership check refuses them now").isOne();
    } finally {
      node4.close();
    }
  }

  /** A write without a version comes from a client of before versions: the node dates it, for its reports. */
  @Test
  void shouldDateTheLastWriteWithoutAVersion() {
    OwnershipCheckedStore checked = (OwnershipCheckedStore) store;
    String key = Rings.keptBy("node-1");
    assertThat(checked.lastUnversionedWriteMillis()).isEqualTo(-1);

    store.put(bytes(key), bytes("versioned"), 5, Version.of(System.currentTimeMillis(), 0, 3));
    assertThat(checked.lastUnversionedWriteMillis()).as("a versioned write is not dated").isEqualTo(-1);

    long before = System.currentTimeMillis();
    store.delete(bytes(key), 5);
    assertThat(checked.lastUnversionedWriteMillis()).isBetween(before, System.currentTimeMillis());
  }

  @Test
  void shouldApplyAStaleWriteForARangeTheNodeStillReplicates() {
    String key = Rings.keptBy("node-1");

    WriteResult result = store.put(bytes(key), bytes("v"), 4);

    assertThat(result).isInstanceOf(WriteResult.Applied.class);
    assertThat(rocks.get(bytes(key)).map(TestKeys::text)).hasValue("v");
  }

  @Test
  void shouldApplyWritesTaggedWithTheRingsEpochOrANewerOne() {
    String key = Rings.movedAwayFrom("node-1");

    WriteResult current = store.put(bytes(key), bytes("at-5"), 5);
    WriteResult ahead = store.put(bytes(key), bytes("at-6"), 6);

    assertThat(current).isInstanceOf(WriteResult.Applied.class);
    assertThat(ahead).as("a client ahead of the node's view").isInstanceOf(WriteResult.Applied.class);
    assertThat(rocks.get(bytes(key)).map(TestKeys::text)).hasValue("at-6");
  }

  @Test
  void rejectsExactlyTheStaleWritesForKeysTheNodeDoesNotReplicate() {
    List<String> expected = new ArrayList<>();
    int refused = 0;
    for (int i = 0; i < 500; i++) {
      String key = "many-" + i;
      WriteResult result = store.put(bytes(key), bytes("v"), 4);
      if (Rings.replicates(Rings.EPOCH_5, "node-1", key)) {
        expected.add(key);
        assertThat(result).as(key).isInstanceOf(WriteResult.Applied.class);
      } else {
        refused++;
        assertThat(result).as(key).isEqualTo(new WriteResult.RetryWithEpoch(5, Rings.rangeOf(Rings.EPOCH_5, key),
            WriteResult.Reason.NOT_A_REPLICA));
      }
    }

    List<String> stored = new ArrayList<>();
    try (RangeScan scan = rocks.scan(RingRange.whole(), null)) {
      scan.forEachRemaining(e -> stored.add(text(e.key())));
    }
    assertThat(stored).containsExactlyInAnyOrderElementsOf(expected);
    assertThat(refused).as("node-1 replicates some keys of 4 nodes at R = 2, not all").isBetween(1, 499);
  }

  @Test
  void rejectsEveryStaleWriteOnANodeTheRingNoLongerHas() {
    view.swap(Rings.EPOCH_6);
    String key = Rings.keptBy("node-1");

    assertThat(store.put(bytes(key), bytes("v"), 5)).isEqualTo(new WriteResult.RetryWithEpoch(6,
        Rings.rangeOf(Rings.EPOCH_6, key), WriteResult.Reason.NOT_A_REPLICA));
    assertThat(rocks.get(bytes(key))).isEmpty();
  }

  @Test
  void rejectsNothingByOwnershipBeforeTheNodeHasARing() {
    Store noRing = OwnershipCheckedStore.wrap(rocks, RingView.none());
    String key = Rings.movedAwayFrom("node-1");

    assertThat(noRing.put(bytes(key), bytes("v"), 0)).isInstanceOf(WriteResult.Applied.class);
    assertThat(noRing.delete(bytes(key), 0)).isInstanceOf(WriteResult.Applied.class);
  }

  @Test
  void shouldFollowTheViewWhenTheNodeSwapsRings() {
    view.swap(Rings.EPOCH_4);
    String key = Rings.movedAwayFrom("node-1");
    assertThat(store.put(bytes(key), bytes("before"), 4)).isInstanceOf(WriteResult.Applied.class);

    view.swap(Rings.EPOCH_5);

    assertThat(store.put(bytes(key), bytes("after"), 4)).isInstanceOf(WriteResult.RetryWithEpoch.class);
    assertThat(rocks.get(bytes(key)).map(TestKeys::text)).hasValue("before");
  }

  @Test
  void shouldNeverRefuseMigrationsApplyNorARangeDeleteOfALaterEpoch() {
    String moved = Rings.movedAwayFrom("node-1");
    String kept = Rings.keptBy("node-1");

    store.apply(List.of(Entry.of(bytes(moved), bytes("copied")), Entry.of(bytes(kept), bytes("copied"))));

    assertThat(rocks.get(bytes(moved)).map(TestKeys::text)).hasValue("copied");
    assertThat(store.deleteRange(RingRange.whole(), 6)).isEqualTo(2);
    assertThat(rocks.get(bytes(moved))).isEmpty();
  }

  /**
   * Found by the protocol simulation (seed 20261381): a copy of epoch 5 run again after epoch 5 was published (a
   * worker cut off from Kafka sent a stale status after another worker's VERIFIED) cleared its target's range, by
   * then a published replica serving reads. A range delete of the node's own epoch is a cleanup of what the node
   * lost in that epoch; where that epoch makes the node a replica, it is refused. What the node lost still goes.
   */
  @Test
  void rejectsARangeDeleteOfTheRingsOwnEpochWhereItMakesTheNodeAReplica() {
    String kept = Rings.keptBy("node-1");
    RingRange range = Rings.rangeOf(Rings.EPOCH_5, kept);
    rocks.apply(List.of(Entry.of(bytes(kept), bytes("published copy"))));

    assertThatThrownBy(() -> store.deleteRange(range, 5)).isInstanceOf(StoreException.Refused.class)
        .hasMessageContaining("for epoch 5 refused, nothing deleted: this node (node-1) routes by the ring of epoch 5, "
            + "in which it is a replica of " + range);
    assertThat(rocks.get(bytes(kept)).map(TestKeys::text)).hasValue("published copy");

    String moved = Rings.movedAwayFrom("node-1");
    rocks.apply(List.of(Entry.of(bytes(moved), bytes("old copy"))));
    assertThat(store.deleteRange(Rings.rangeOf(Rings.EPOCH_5, moved), 5)).as("a cleanup of epoch 5").isEqualTo(1);
  }

  /**
   * A cleanup of epoch 4 deletes what node-1 lost in epoch 4; the node routes by epoch 5, which makes it a replica of
   * part of the range again (a later epoch handed it back, or a FAIL made it a filling replica): that part must stay.
   * It used to be deleted whatever the node's ring said.
   */
  @Test
  void rejectsARangeDeleteOfAnEarlierEpochWhenTheNodesRingMakesItAReplicaOfTheRange() {
    String kept = Rings.keptBy("node-1");
    RingRange range = Rings.rangeOf(Rings.EPOCH_5, kept);
    rocks.apply(List.of(Entry.of(bytes(kept), bytes("epoch-5 copy"))));

    assertThatThrownBy(() -> store.deleteRange(range, 4)).isInstanceOf(StoreException.Refused.class)
        .hasMessage("range delete of " + range + " for epoch 4 refused, nothing deleted: this node (node-1) routes by "
            + "the ring of epoch 5, in which it is a replica of " + range + ", which overlaps it; that epoch's copy "
            + "must stay");
    assertThat(rocks.get(bytes(kept)).map(TestKeys::text)).hasValue("epoch-5 copy");
  }

  /**
   * The node routes by epoch 5: a write at epoch 6 (the next, maybe in flight) goes through, anything beyond is
   * refused and changes nothing; a fence may be up to 64 ahead (an epoch planned again after a rejection takes a
   * number no rejected epoch used), not more. A write at epoch 2^63 - 1 used to pass every fence and the ownership check, land
   * above every fence position, never be drained to a new replica, and be lost at cleanup; a fence at it refused
   * every write for good.
   */
  @Test
  void rejectsWritesAndFencesMoreThanOneEpochAheadOfTheNodesRing() {
    String key = Rings.keptBy("node-1");
    long before = rocks.latestSequence();

    assertThatThrownBy(() -> store.put(bytes(key), bytes("v"), Long.MAX_VALUE))
        .isInstanceOf(StoreException.EpochAhead.class)
        .hasMessage("write of key " + io.ringshift.storage.internal.Checks.preview(bytes(key)) + " at epoch "
            + Long.MAX_VALUE + " refused, nothing changed: this node (node-1) routes by the ring of epoch 5, and "
            + "only epochs up to 6 can be in use; retry once the node has the newer ring");
    assertThatThrownBy(() -> store.delete(bytes(key), 7)).isInstanceOf(StoreException.EpochAhead.class);
    assertThatThrownBy(() -> store.fence(RingRange.whole(), Long.MAX_VALUE))
        .isInstanceOf(StoreException.EpochAhead.class).hasMessageContaining("fence of ");
    assertThatThrownBy(() -> store.fence(RingRange.whole(), 5 + 65))
        .isInstanceOf(StoreException.EpochAhead.class).hasMessageContaining("only epochs up to 69 can be in use");
    assertThat(rocks.latestSequence()).as("nothing written").isEqualTo(before);
    assertThat(rocks.fences()).isEmpty();
    assertThat(((StoreException) org.assertj.core.api.Assertions.catchThrowable(
        () -> store.put(bytes(key), bytes("v"), 7))).retriable()).isTrue();

    assertThat(store.put(bytes(key), bytes("next"), 6)).isInstanceOf(WriteResult.Applied.class);
    assertThat(store.fence(RingRange.whole(), 6).epoch()).isEqualTo(6);
    assertThat(store.fence(RingRange.whole(), 5 + 64).epoch()).as("a re-planned epoch after rejections").isEqualTo(69);
  }

  /**
   * Routing by epoch 5: a fence of epoch 5 on a range node-1 no longer replicates is lifted (the ownership check
   * refuses more); one on a range it still replicates stays, unless a newer fence covers it; one of the next epoch
   * (in flight) stays.
   */
  @Test
  void shouldPruneTheFencesTheRingMakesRedundantAndKeepTheRest() {
    RingRange moved = Rings.rangeOf(Rings.EPOCH_5, Rings.movedAwayFrom("node-1"));
    RingRange kept = Rings.rangeOf(Rings.EPOCH_5, Rings.keptBy("node-1"));
    RingRange covered = Rings.rangeOf(Rings.EPOCH_5, Rings.key(k -> Rings.replicates(Rings.EPOCH_5, "node-1", k)
        && !Rings.rangeOf(Rings.EPOCH_5, k).equals(kept)));
    rocks.fence(moved, 5);
    rocks.fence(kept, 5);
    rocks.fence(covered, 4);
    rocks.fence(covered, 5);
    rocks.fence(kept, 6);

    int lifted = ((OwnershipCheckedStore) store).pruneFences();

    // kept@5 stays: the fence at 6 covering it belongs to an epoch in flight, which a re-plan may still lift.
    assertThat(lifted).isEqualTo(2);
    assertThat(rocks.fences()).extracting(f -> f.range() + "@" + f.epoch())
        .containsExactlyInAnyOrder(kept + "@5", covered + "@5", kept + "@6");
    assertThat(((OwnershipCheckedStore) store).pruneFences()).as("nothing more").isZero();
  }

  @Test
  void shouldDeleteARangeOfAnEarlierEpochThatTheNodesRingDoesNotMakeItAReplicaOf() {
    String moved = Rings.movedAwayFrom("node-1");
    RingRange range = Rings.rangeOf(Rings.EPOCH_5, moved);
    rocks.apply(List.of(Entry.of(bytes(moved), bytes("old copy"))));

    assertThat(store.deleteRange(range, 4)).isEqualTo(1);
    assertThat(rocks.get(bytes(moved))).isEmpty();
  }

  @Test
  void shouldReadKeysTheNodeNoLongerReplicates() {
    String moved = Rings.movedAwayFrom("node-1");
    rocks.put(bytes(moved), bytes("old"), 4);

    assertThat(store.get(bytes(moved)).map(TestKeys::text)).hasValue("old");
    try (RangeScan scan = store.scan(RingRange.whole(), null)) {
      assertThat(text(scan.next().key())).isEqualTo(moved);
    }
    assertThat(store.digest(RingRange.whole()).keys()).isEqualTo(1);
  }

  @Test
  void shouldKeepTheFenceRuleForKeysTheNodeStillReplicates() {
    String kept = Rings.keptBy("node-1");
    store.fence(RingRange.whole(), 6);

    assertThat(store.put(bytes(kept), bytes("v"), 5)).isEqualTo(new WriteResult.RetryWithEpoch(6,
        RingRange.whole(), WriteResult.Reason.FENCED));
    assertThat(store.put(bytes(kept), bytes("v"), 6)).isInstanceOf(WriteResult.Applied.class);
  }

  @Test
  void shouldCheckTheInputBeforeOwnership() {
    String moved = Rings.movedAwayFrom("node-1");

    assertThatThrownBy(() -> store.put(bytes(moved), bytes("v"), -1))
        .isInstanceOf(StoreException.BadRequest.class)
        .hasMessage("epoch -1 is negative; an epoch must be >= 0");
    assertThatThrownBy(() -> store.put(bytes(moved), null, 4))
        .isInstanceOf(StoreException.BadRequest.class)
        .hasMessageContaining("value is missing");
    assertThatThrownBy(() -> store.delete(new byte[0], 4))
        .isInstanceOf(StoreException.BadRequest.class)
        .hasMessageContaining("key is empty");
  }

  @Test
  void shouldCheckOwnershipForTheStoresOwnNodeId() {
    assertThat(((OwnershipCheckedStore) store).nodeId()).isEqualTo("node-1");
    assertThatThrownBy(() -> OwnershipCheckedStore.wrap(rocks, null))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("use RingView.none()");
  }

  @Test
  void shouldCarryTheRefusalAndItsReasonOverHttp() {
    String moved = Rings.movedAwayFrom("node-1");
    String kept = Rings.keptBy("node-1");
    store.fence(Rings.rangeOf(Rings.EPOCH_5, kept), 6);
    try (NodeServer server = NodeServer.start(store, new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
        Store remote = RemoteStore.connect(server.hostPort(), Duration.ofSeconds(10))) {

      assertThat(remote.put(bytes(moved), bytes("v"), 4)).isEqualTo(new WriteResult.RetryWithEpoch(5,
          Rings.rangeOf(Rings.EPOCH_5, moved), WriteResult.Reason.NOT_A_REPLICA));
      assertThat(remote.delete(bytes(kept), 4)).isEqualTo(new WriteResult.RetryWithEpoch(6,
          Rings.rangeOf(Rings.EPOCH_5, kept), WriteResult.Reason.FENCED));
      assertThat(remote.put(bytes(moved), bytes("v"), 5)).isInstanceOf(WriteResult.Applied.class);
    }
  }
}
