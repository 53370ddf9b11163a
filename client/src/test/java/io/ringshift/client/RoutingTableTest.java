package io.ringshift.client;

import static org.assertj.core.api.Assertions.assertThat;

import io.ringshift.ring.Member;
import io.ringshift.ring.MemberState;
import io.ringshift.ring.ReplicaSet;
import io.ringshift.ring.RingSnapshot;
import io.ringshift.protocol.FillingRange;
import io.ringshift.protocol.PublishedSnapshot;
import io.ringshift.protocol.SigningKey;
import io.ringshift.protocol.TransitionStage;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class RoutingTableTest {
  private static final SigningKey KEY = SigningKey.generate();

  private static RoutingTable table(PublishedSnapshot snapshot) {
    return RoutingTable.of(TestSnapshots.accepted(snapshot, 0));
  }

  @Test
  void shouldPlaceEveryKeyOnTheRingsReplicas() {
    PublishedSnapshot snapshot = TestSnapshots.chain(KEY, 3).get(2);
    RoutingTable table = table(snapshot);
    RingSnapshot ring = snapshot.ring();
    long seed = System.nanoTime();
    SplittableRandom random = new SplittableRandom(seed);
    for (int i = 0; i < 20_000; i++) {
      byte[] key = new byte[1 + random.nextInt(24)];
      random.nextBytes(key);
      Placement p = table.at(ring.position(key));
      ReplicaSet expected = ring.replicasOf(key);
      assertThat(p.ownerIds()).as("seed %d, key %d", seed, i).isEqualTo(expected.ids());
      assertThat(p.primary()).isEqualTo(ring.ownerOf(key));
      assertThat(p.epoch()).isEqualTo(3);
      assertThat(p.readable()).isSameAs(p.owners());
    }
  }

  /**
   * In each transition stage a key's writes go to its replicas in both rings (the new ring's first) and its reads to the
   * previous ring's or the new ring's; a write waits for every owner of both.
   */
  @Test
  void shouldRouteEachKeyByBothRingsInATransitionStage() {
    List<PublishedSnapshot> chain = TestSnapshots.chain(KEY, 4);
    RingSnapshot before = chain.get(2).ring();
    RingSnapshot after = chain.get(3).ring();
    long seed = System.nanoTime();
    for (TransitionStage stage : List.of(TransitionStage.WRITE_BOTH_READ_OLD, TransitionStage.WRITE_BOTH_READ_NEW)) {
      RoutingTable table = table(PublishedSnapshot.transition(after, before, stage).signedBy(KEY));
      assertThat(table.stage()).isEqualTo(stage);
      SplittableRandom random = new SplittableRandom(seed);
      int moved = 0;
      for (int i = 0; i < 20_000; i++) {
        byte[] key = new byte[1 + random.nextInt(24)];
        random.nextBytes(key);
        Placement p = table.at(after.position(key));
        List<String> now = after.replicasOf(key).ids();
        List<String> old = before.replicasOf(key).ids();
        List<String> expected = new java.util.ArrayList<>(now);
        old.stream().filter(id -> !now.contains(id)).forEach(expected::add);
        String context = String.format("seed %d, key %d, %s", seed, i, stage);
        assertThat(p.ownerIds()).as(context).isEqualTo(expected);
        assertThat(p.readableIds()).as(context).isEqualTo(stage.readsNew() ? now : old);
        assertThat(p.moving()).as(context).isEqualTo(!now.equals(old));
        assertThat(p.epoch()).isEqualTo(4);
        moved += now.equals(old) ? 0 : 1;
      }
      assertThat(moved).as("a join moves some keys").isPositive();
    }
  }

  @Test
  void shouldReturnTheSameInstanceForLookupsOfOneRange() {
    RoutingTable table = table(TestSnapshots.chain(KEY, 1).get(0));
    RingSnapshot ring = table.ring;

    assertThat(table.at(ring.rangeEnd(5))).isSameAs(table.at(ring.rangeStart(5) + 1)).isSameAs(table.ofRange(5));
    assertThat(table.ofRange(5).rangeEnd()).isEqualTo(ring.rangeEnd(5));
  }

  @Test
  void shouldExcludeReplicasMarkedFillingFromTheReadableOwners() {
    PublishedSnapshot complete = TestSnapshots.chain(KEY, 5).get(4);
    PublishedSnapshot failure = TestSnapshots.failureEpoch(complete, "node-04", KEY);
    RoutingTable table = table(failure);
    RingSnapshot ring = failure.ring();
    int excluded = 0;
    for (int r = 0; r < ring.tokenCount(); r++) {
      Placement p = table.ofRange(r);
      assertThat(p.ownerIds()).isEqualTo(ring.replicasOfRange(r).ids());
      for (Member owner : p.owners()) {
        boolean marked = markOverlaps(ring, r, failure.filling(), owner.id());
        assertThat(p.readable().contains(owner)).as("range %d owner %s marked %s", r, owner.id(), marked)
            .isEqualTo(!marked);
        excluded += marked ? 1 : 0;
      }
    }
    assertThat(excluded).as("a failure epoch has replicas being filled").isPositive();
  }

  @Test
  void shouldReadNoKeyFromAReplicaWhoseMarkCoversIt() {
    PublishedSnapshot complete = TestSnapshots.chain(KEY, 5).get(4);
    PublishedSnapshot failure = TestSnapshots.failureEpoch(complete, "node-01", KEY);
    RoutingTable table = table(failure);
    long seed = System.nanoTime();
    SplittableRandom random = new SplittableRandom(seed);
    for (int i = 0; i < 20_000; i++) {
      long position = random.nextLong();
      Placement p = table.at(position);
      for (FillingRange mark : failure.filling()) {
        if (mark.contains(position)) {
          assertThat(p.readableIds()).as("seed %d, position %s", seed, Long.toUnsignedString(position))
              .doesNotContain(mark.node());
        }
      }
    }
  }

  @Test
  void shouldExcludeFillingMembersFromTheReadableOwners() {
    RingSnapshot ring = TestSnapshots.ring(TestSnapshots.CLUSTER, 1, 6).toBuilder()
        .members(TestSnapshots.ring(TestSnapshots.CLUSTER, 1, 6).members().stream()
            .map(m -> m.id().equals("node-02") ? m.withState(MemberState.FILLING) : m).toList())
        .build();
    RoutingTable table = table(PublishedSnapshot.unsigned(ring, null, List.of()).signedBy(KEY));
    byte[] key = "user:42".getBytes(StandardCharsets.UTF_8);
    for (int r = 0; r < ring.tokenCount(); r++) {
      Placement p = table.ofRange(r);
      assertThat(p.readableIds()).doesNotContain("node-02");
      assertThat(p.readableCount()).isEqualTo(p.ownerCount() - (p.ownerIds().contains("node-02") ? 1 : 0));
    }
    assertThat(table.at(ring.position(key)).ownerIds()).isEqualTo(ring.replicasOf(key).ids());
  }

  private static boolean markOverlaps(RingSnapshot ring, int r, List<FillingRange> marks, String node) {
    long start = ring.rangeStart(r);
    long end = ring.rangeEnd(r);
    for (FillingRange mark : marks) {
      if (mark.node().equals(node) && !(start == end && r != 0)
          && (io.ringshift.ring.RingRange.of(start, end).contains(mark.end()) || mark.contains(end))) {
        return true;
      }
    }
    return false;
  }
}
