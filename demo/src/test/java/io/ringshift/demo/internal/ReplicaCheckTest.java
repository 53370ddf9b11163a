package io.ringshift.demo.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.ringshift.ring.RingRange;
import io.ringshift.ring.RingSnapshot;
import io.ringshift.schemas.avro.RangeCopyTask;
import io.ringshift.schemas.avro.TaskKind;
import io.ringshift.storage.Entry;
import io.ringshift.storage.RocksStore;
import io.ringshift.storage.Store;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ReplicaCheckTest {
  @TempDir Path dir;
  private final Map<String, Store> stores = new HashMap<>();

  @AfterEach
  void close() {
    stores.values().forEach(Store::close);
  }

  private RingSnapshot ring() {
    return RingSnapshot.builder().clusterId("t").epoch(1).vnodes(8).replicas(3)
        .addMember("n1", "az-1").addMember("n2", "az-2").addMember("n3", "az-3").addMember("n4", "az-1")
        .build();
  }

  private void load(KeySpace keys, RingSnapshot ring) {
    for (String node : ring.memberIds()) {
      stores.put(node, RocksStore.open(dir.resolve(node), node, ring.member(node).zone()));
    }
    for (int i = 0; i < keys.size(); i++) {
      for (String node : ring.replicasOf(keys.key(i)).ids()) {
        stores.get(node).apply(List.of(keys.entry(i, 2)));
      }
      keys.acknowledge(i, 2, 1, 10);
    }
  }

  @Test
  void shouldFindEveryAcknowledgedWriteOnEveryReplica() {
    KeySpace keys = new KeySpace(300, 3);
    RingSnapshot ring = ring();
    load(keys, ring);
    ReplicaCheck.Outcome outcome = ReplicaCheck.everyReplica(keys, ring, stores::get);
    assertThat(outcome.pairs()).isEqualTo(900);
    assertThat(outcome.missing()).isZero();
  }

  @Test
  void shouldReportAReplicaThatMissesOrHoldsAnOlderWrite() {
    KeySpace keys = new KeySpace(300, 3);
    RingSnapshot ring = ring();
    load(keys, ring);
    String first = ring.replicasOf(keys.key(10)).ids().get(0);
    // A replica that lost a key, and one that lost the later of two writes (a store keeps the higher version: a lost
    // write is gone from the store, not overwritten).
    stores.get(first).deleteRange(pointOf(keys.key(10)), 0);
    String second = ring.replicasOf(keys.key(20)).ids().get(1);
    stores.get(second).deleteRange(pointOf(keys.key(20)), 0);
    stores.get(second).apply(List.of(keys.entry(20, 1)));
    keys.acknowledge(30, 3, 2, 10); // acknowledged, but never written: missing on all three
    ReplicaCheck.Outcome outcome = ReplicaCheck.everyReplica(keys, ring, stores::get);
    assertThat(outcome.missing()).isEqualTo(5);
    assertThat(outcome.examples()).anySatisfy(e -> assertThat(e).contains("demo-0000010 on " + first + ": absent"))
        .anySatisfy(e -> assertThat(e).contains("demo-0000020 on " + second + ": write 1, but write 2"));
  }

  /** The range of exactly {@code key}'s ring position. */
  private static RingRange pointOf(byte[] key) {
    long p = Entry.positionOf(key);
    return RingRange.of(p - 1, p);
  }

  @Test
  void shouldCountReadsFromATaskTargetInItsRangeBeforeItWasVerified() {
    PlaneWatch.TaskFacts repair = facts("r1", TaskKind.REPAIR, "n2", 100, 200, 1_000);
    repair.verifiedMillis = 2_000;
    PlaneWatch.TaskFacts cancelled = facts("c1", TaskKind.COPY, "n3", 300, 400, 1_000);
    PlaneWatch.TaskFacts cleanup = facts("x1", TaskKind.CLEANUP, "n1", 0, 1_000, 0);
    DemoApplication.ReadLog log = new DemoApplication.ReadLog();
    log.add(1_500, "n2", 150); // during the repair, in its range: counted
    log.add(2_500, "n2", 150); // after it was verified
    log.add(1_500, "n2", 250); // outside its range
    log.add(900, "n2", 150); // before it was planned
    log.add(1_500, "n1", 150); // another node
    log.add(5_000, "n3", 350); // a cancelled task is never verified: counted
    log.add(1_500, "n1", 500); // a cleanup's target is no filling replica
    ReplicaCheck.FillingReads found = ReplicaCheck.fillingReads(List.of(repair, cancelled, cleanup), log);
    assertThat(found.count()).isEqualTo(2);
    assertThat(found.examples()).hasSize(2);
  }

  private static PlaneWatch.TaskFacts facts(String id, TaskKind kind, String target, long start, long end,
      long planned) {
    return new PlaneWatch.TaskFacts(RangeCopyTask.newBuilder().setTaskId(id).setClusterId("t").setEpoch(2)
        .setKind(kind).setRangeStart(start).setRangeEnd(end).setSources(List.of("n1")).setTarget(target)
        .setTargetZone("az-2").setEstimatedBytes(0).setTimestampMillis(planned).setFenceRequested(false).build());
  }
}
