package io.ringshift.orchestrator.internal;

import static io.ringshift.orchestrator.internal.ClusterAggregateTest.change;
import static io.ringshift.orchestrator.internal.ClusterAggregateTest.epochs;
import static io.ringshift.orchestrator.internal.ClusterAggregateTest.initialised;
import static org.assertj.core.api.Assertions.assertThat;

import io.ringshift.orchestrator.MembershipChange.Action;
import io.ringshift.orchestrator.PlannedTask;
import io.ringshift.orchestrator.internal.ClusterAggregate.EpochEvent;
import io.ringshift.orchestrator.internal.ClusterAggregate.Progress;
import io.ringshift.orchestrator.internal.ClusterAggregate.TaskEvent;
import io.ringshift.orchestrator.internal.ClusterAggregate.Transition;
import io.ringshift.protocol.RecordSerdes;
import io.ringshift.schemas.avro.ClusterState;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.List;
import org.apache.avro.Schema;
import org.apache.avro.SchemaNormalization;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericDatumReader;
import org.apache.avro.generic.GenericRecord;
import org.apache.avro.io.DecoderFactory;
import org.apache.avro.message.BinaryMessageEncoder;
import org.junit.jupiter.api.Test;

/** The aggregate survives the state store: what a restarted orchestrator loads is what it stored. */
class AvroMappingTest {
  private static final long BYTES = 1L << 30;

  /** A join whose tasks all caught up (fence requested) and whose first task is VERIFIED. */
  private static ClusterAggregate fenceRequested() {
    ClusterAggregate state = initialised().onChange(change(Action.JOIN, "node-12", "az-2"), BYTES).next();
    List<PlannedTask> tasks = state.inFlight().plan().tasks();
    state = state.onStatus(tasks.get(0).taskId(), 2, Progress.VERIFIED, BYTES).next();
    for (PlannedTask task : tasks.subList(1, tasks.size())) {
      state = state.onStatus(task.taskId(), 2, Progress.CAUGHT_UP, BYTES).next();
    }
    assertThat(state.inFlight().fenceRequested()).isTrue();
    return state;
  }

  /** Stored and loaded by a fresh mapping, as after a restart: the plan is recomputed, not memoised. */
  private static ClusterAggregate restarted(ClusterAggregate state) {
    byte[] stored = RecordSerdes.clusterState().serialize(new AvroMapping(BYTES).state(state));
    return new AvroMapping(BYTES).aggregate(RecordSerdes.clusterState().deserialize(stored));
  }

  @Test
  void shouldRestoreARepairPlannedAfterTwoFailureEpochsWithTheChainIntact() {
    ClusterAggregate repairing = initialised().onChange(change(Action.FAIL, "node-07", null), BYTES).next()
        .onChange(change(Action.FAIL, "node-05", null), BYTES).next();
    assertThat(repairing.inFlight().plan().target().epoch()).isEqualTo(4);

    ClusterAggregate loaded = restarted(repairing);

    assertThat(loaded.inFlight().plan().target()).isEqualTo(repairing.inFlight().plan().target());
    assertThat(loaded.inFlight().plan().tasks()).isEqualTo(repairing.inFlight().plan().tasks());
    assertThat(loaded.lastReadyRing()).isEqualTo(repairing.lastReadyRing());
    assertThat(loaded.lastReadyRing().epoch()).isEqualTo(3);
    assertThat(loaded.inFlight().deadNodes()).as("in the order they failed").containsExactly("node-07", "node-05");
  }

  @Test
  void shouldRestoreWhatCancelledTasksCopied() {
    // A JOIN whose plan a FAIL supersedes: its tasks are cancelled and what they copied is remembered.
    ClusterAggregate joining = initialised().onChange(change(Action.JOIN, "node-12", "az-3"), BYTES).next();
    ClusterAggregate repairing = joining.onChange(change(Action.FAIL, "node-05", null), BYTES).next();
    assertThat(repairing.strays()).hasSameSizeAs(joining.inFlight().plan().tasks())
        .allSatisfy(c -> assertThat(c.node()).isEqualTo("node-12"));

    assertThat(restarted(repairing).strays()).isEqualTo(repairing.strays());
  }

  @Test
  void shouldReuseTheActiveRingWhileTheStateNamesItsEpochAndChecksum() {
    AvroMapping mapping = new AvroMapping(BYTES);
    ClusterState stored = mapping.state(fenceRequested());

    ClusterAggregate first = mapping.aggregate(stored);
    ClusterAggregate second = mapping.aggregate(RecordSerdes.clusterState().deserialize(
        RecordSerdes.clusterState().serialize(stored)));

    assertThat(second.active()).isSameAs(first.active());
    assertThat(second.inFlight().plan()).isSameAs(first.inFlight().plan());
    // The next epoch's ring is another ring: rebuilt, and checked against its own checksum.
    ClusterState next = ClusterState.newBuilder(stored).setActiveEpoch(stored.getActiveEpoch() + 1)
        .setInFlight(null).build();
    org.assertj.core.api.Assertions.assertThatThrownBy(() -> mapping.aggregate(next))
        .hasMessageContaining("epoch " + next.getActiveEpoch());
  }

  @Test
  void shouldRestoreTheCaughtUpTasksAndTheFenceRequest() {
    ClusterAggregate state = fenceRequested();

    ClusterAggregate restored = restarted(state);

    assertThat(restored.inFlight().verified()).isEqualTo(state.inFlight().verified());
    assertThat(restored.inFlight().caughtUp()).isEqualTo(state.inFlight().caughtUp()).isNotEmpty();
    assertThat(restored.inFlight().fenceRequested()).isTrue();
    assertThat(restored.inFlight().plan().tasks()).isEqualTo(state.inFlight().plan().tasks());
    assertThat(restored.inFlight().plan().cleanupTasks()).isEqualTo(state.inFlight().plan().cleanupTasks());
  }

  @Test
  void shouldNeitherRepeatNorLoseTheFenceRequestAfterARestart() {
    ClusterAggregate restored = restarted(fenceRequested());
    List<PlannedTask> tasks = restored.inFlight().plan().tasks();

    for (PlannedTask task : tasks) {
      assertThat(restored.onStatus(task.taskId(), 2, Progress.CAUGHT_UP, BYTES).effects()).isEmpty();
    }
    Transition t = new Transition(restored, List.of());
    List<ClusterAggregate.Effect> effects = new java.util.ArrayList<>();
    for (PlannedTask task : tasks) {
      t = t.next().onStatus(task.taskId(), 2, Progress.VERIFIED, BYTES);
      effects.addAll(t.effects());
    }
    Transition all = new Transition(t.next(), effects);
    assertThat(epochs(all)).extracting(EpochEvent::state).containsExactly(EpochEvent.State.READY);
    assertThat(all.effects()).filteredOn(TaskEvent.class::isInstance).map(e -> ((TaskEvent) e).task())
        .containsExactlyElementsOf(restored.inFlight().plan().cleanupTasks());
  }

  /**
   * A state written by the previous version (ClusterState v1, before the fence step) loads: nothing is caught
   * up and the fence is not requested, so the fence is asked once the workers report CAUGHT_UP.
   */
  @Test
  void shouldLoadAVersionOneStateWithNothingCaughtUpAndNoFenceRequested() throws IOException {
    ClusterAggregate state = fenceRequested();
    ClusterState current = new AvroMapping(BYTES).state(state);
    Schema v1 = released("ClusterState", 1);
    byte[] v1Bytes = writtenAs(current, v1);
    assertThat(fingerprint(v1Bytes)).as("the bytes name the v1 schema")
        .isEqualTo(SchemaNormalization.parsingFingerprint64(v1));

    ClusterAggregate loaded = new AvroMapping(BYTES).aggregate(RecordSerdes.clusterState().deserialize(v1Bytes));

    assertThat(loaded.active().checksumHex()).isEqualTo(state.active().checksumHex());
    assertThat(loaded.inFlight().verified()).isEqualTo(state.inFlight().verified());
    assertThat(loaded.inFlight().caughtUp()).isEmpty();
    assertThat(loaded.inFlight().fenceRequested()).isFalse();
    assertThat(loaded.queue()).isEqualTo(state.queue());
    List<PlannedTask> tasks = loaded.inFlight().plan().tasks();
    Transition t = new Transition(loaded, List.of());
    for (PlannedTask task : tasks.subList(1, tasks.size())) {
      t = t.next().onStatus(task.taskId(), 2, Progress.CAUGHT_UP, BYTES);
    }
    assertThat(t.effects()).as("the fence, once the workers report CAUGHT_UP again").hasSize(tasks.size() - 1)
        .allMatch(e -> ((TaskEvent) e).fenceRequested());
  }

  private static Schema released(String name, int version) throws IOException {
    String resource = "/io/ringshift/protocol/released/" + name + "/v" + version + ".avsc";
    try (InputStream in = AvroMappingTest.class.getResourceAsStream(resource)) {
      assertThat(in).as("class-path resource %s", resource).isNotNull();
      return new Schema.Parser().parse(in);
    }
  }

  /** {@code record} as a single-object message of an older schema: fields it lacks are dropped. */
  private static byte[] writtenAs(ClusterState record, Schema writer) throws IOException {
    byte[] current = RecordSerdes.clusterState().serialize(record);
    // Single-object encoding: 2-byte marker, 8-byte fingerprint, then the body.
    GenericRecord old = new GenericDatumReader<GenericRecord>(ClusterState.getClassSchema(), writer)
        .read(null, DecoderFactory.get().binaryDecoder(current, 10, current.length - 10, null));
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    new BinaryMessageEncoder<GenericRecord>(GenericData.get(), writer).encode(old, out);
    return out.toByteArray();
  }

  /** The schema fingerprint of a single-object message: 8 bytes little-endian after the 2-byte marker. */
  private static long fingerprint(byte[] message) {
    return ByteBuffer.wrap(message, 2, 8).order(ByteOrder.LITTLE_ENDIAN).getLong();
  }
}
