package io.ringshift.orchestrator.admin;

import static io.ringshift.orchestrator.admin.ControlRecords.T0;
import static io.ringshift.orchestrator.admin.ControlRecords.cause;
import static io.ringshift.orchestrator.admin.ControlRecords.epoch;
import static io.ringshift.orchestrator.admin.ControlRecords.rejected;
import static io.ringshift.orchestrator.admin.ControlRecords.ring;
import static io.ringshift.orchestrator.admin.ControlRecords.status;
import static io.ringshift.orchestrator.admin.ControlRecords.task;
import static org.assertj.core.api.Assertions.assertThat;

import io.ringshift.ring.RingSnapshot;
import io.ringshift.schemas.avro.EpochRecord;
import io.ringshift.schemas.avro.EpochState;
import io.ringshift.schemas.avro.MembershipAction;
import io.ringshift.schemas.avro.RangeCopyTask;
import io.ringshift.protocol.RecordSerdes;
import io.ringshift.schemas.avro.TaskState;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.junit.jupiter.api.Test;

class ClusterViewTest {
  private static final String C = "c1";
  private static final RingSnapshot E1 = ring(C, 1, 6);
  private static final RingSnapshot E2 = ring(C, 2, 7);
  private static final RingSnapshot E3 = ring(C, 3, 8);
  private static final EpochRecord INIT_PLANNED = epoch(E1, EpochState.PLANNED, 1, init(), 0, T0);
  private static final EpochRecord INIT_READY = epoch(E1, EpochState.READY, 1, init(), 0, T0);

  private static io.ringshift.schemas.avro.MembershipEvent init() {
    return cause(C, MembershipAction.INIT, "", "r-init");
  }

  @Test
  void shouldTakeTheLatestReadyEpochAsActiveAndNothingInFlightAfterInit() {
    ClusterView view = ClusterView.of(C, List.of(INIT_PLANNED, INIT_READY), List.of(), List.of(), List.of(), 5);

    assertThat(view.exists()).isTrue();
    assertThat(view.active()).isEqualTo(INIT_READY);
    assertThat(view.inFlight()).isNull();
    assertThat(view.tasks()).isEmpty();
  }

  /** The publisher's transition records after a CANCELLED plan (its revert) do not bring the plan back in flight. */
  @Test
  void shouldTakeNoCancelledPlanInFlightWhateverThePublisherWroteOfItsStagesAfter() {
    var join = cause(C, MembershipAction.JOIN, "node-007", "r1");
    EpochRecord plan = epoch(E2, EpochState.PLANNED, 0, join, 2, T0);
    EpochRecord staged = EpochRecord.newBuilder(plan).setState(EpochState.STAGED).setStage(1).build();
    EpochRecord cancelled = epoch(E2, EpochState.CANCELLED, 0, join, 2, T0 + 1);
    EpochRecord reverted = EpochRecord.newBuilder(plan).setState(EpochState.REVERTED).setReason("cancelled").build();

    ClusterView view = ClusterView.of(C, List.of(INIT_PLANNED, INIT_READY, plan, staged, cancelled, reverted),
        List.of(), List.of(), List.of(), 5);

    assertThat(view.inFlight()).isNull();
    assertThat(view.cutover()).isEqualTo(reverted);
    ClusterView staging = ClusterView.of(C, List.of(INIT_PLANNED, INIT_READY, plan, staged), List.of(), List.of(),
        List.of(), 5);
    assertThat(staging.inFlight()).as("a staged plan is in flight until READY").isEqualTo(plan);
  }

  @Test
  void shouldShowTheLatestPlanOfTheEpochInFlightWithItsSupersededPlans() {
    var join = cause(C, MembershipAction.JOIN, "node-007", "r1");
    EpochRecord plan0 = epoch(E2, EpochState.PLANNED, 0, join, 2, T0);
    EpochRecord superseded = epoch(E2, EpochState.SUPERSEDED, 0, join, 2, T0 + 1);
    EpochRecord plan1 = epoch(E2, EpochState.PLANNED, 1, cause(C, MembershipAction.FAIL, "node-002", "r2"), 1,
        T0 + 1);
    RangeCopyTask kept = task(C, 2, 10, 20, "node-007", List.of("node-003"));

    ClusterView view = ClusterView.of(C, List.of(INIT_PLANNED, INIT_READY, plan0, superseded, plan1),
        List.of(kept), List.of(), List.of(), 5);

    assertThat(view.inFlight()).isEqualTo(plan1);
    assertThat(view.superseded()).containsExactly(superseded);
    assertThat(view.tasks()).extracting(t -> t.task().getTaskId()).containsExactly(kept.getTaskId());
    assertThat(view.tasks().get(0).state()).as("no status reported yet").isEqualTo(TaskState.PENDING);
  }

  @Test
  void shouldKeepOnlyTheCurrentValueOfEachTaskIdAsCompactionWill() {
    RangeCopyTask kept = task(C, 2, 10, 20, "node-007", List.of("node-002"));
    RangeCopyTask keptWithNewSources = task(C, 2, 10, 20, "node-007", List.of("node-003"));
    RangeCopyTask dropped = task(C, 2, 20, 30, "node-007", List.of("node-002"));
    List<ConsumerRecord<byte[], byte[]>> log = List.of(
        record(0, kept.getTaskId(), RecordSerdes.rangeCopyTask().serialize(kept)),
        record(1, dropped.getTaskId(), RecordSerdes.rangeCopyTask().serialize(dropped)),
        record(2, kept.getTaskId(), RecordSerdes.rangeCopyTask().serialize(keptWithNewSources)),
        record(3, dropped.getTaskId(), null),
        record(4, "garbage", new byte[] {1, 2, 3}));
    List<String> unreadable = new ArrayList<>();

    List<RangeCopyTask> live = ControlPlaneAdmin.latestPerKey(log, RecordSerdes.rangeCopyTask()::deserialize,
        unreadable);

    assertThat(live).containsExactly(keptWithNewSources);
    assertThat(unreadable).singleElement().asString().startsWith("ring.tasks partition 0 offset 4: ");
  }

  private static ConsumerRecord<byte[], byte[]> record(long offset, String key, byte[] value) {
    return new ConsumerRecord<>("ring.tasks", 0, offset, key.getBytes(StandardCharsets.UTF_8), value);
  }

  @Test
  void shouldUseTheLatestStatusOfEachTaskAndCountByState() {
    EpochRecord plan = epoch(E2, EpochState.PLANNED, 0, cause(C, MembershipAction.JOIN, "node-007", "r1"), 3, T0);
    RangeCopyTask a = task(C, 2, -100, 5, "node-007", List.of("node-001"));
    RangeCopyTask b = task(C, 2, 5, 50, "node-007", List.of("node-002"));
    RangeCopyTask c = task(C, 2, 50, 60, "node-007", List.of("node-003"));
    RangeCopyTask ofEpochOne = task(C, 1, 60, 70, "node-001", List.of("node-003"));

    ClusterView view = ClusterView.of(C, List.of(INIT_PLANNED, INIT_READY, plan), List.of(c, a, b, ofEpochOne),
        List.of(status(b, TaskState.COPYING), status(a, TaskState.VERIFIED)), List.of(), 5);

    assertThat(view.tasks()).as("the epoch in flight's, ordered by unsigned range start")
        .extracting(t -> t.task().getRangeStart()).containsExactly(5L, 50L, -100L);
    assertThat(view.countsByState()).containsExactly(Map.entry(TaskState.PENDING, 1),
        Map.entry(TaskState.COPYING, 1), Map.entry(TaskState.VERIFIED, 1));
  }

  @Test
  void shouldMakeAReadyEpochActiveAndPlanTheNextOneFromIt() {
    var join = cause(C, MembershipAction.JOIN, "node-007", "r1");
    var join2 = cause(C, MembershipAction.JOIN, "node-008", "r2");
    List<EpochRecord> log = List.of(INIT_PLANNED, INIT_READY, epoch(E2, EpochState.PLANNED, 1, join, 3, T0),
        epoch(E2, EpochState.READY, 1, join, 3, T0 + 1), epoch(E3, EpochState.PLANNED, 1, join2, 4, T0 + 1));

    ClusterView view = ClusterView.of(C, log, List.of(), List.of(), List.of(), 5);

    assertThat(view.active().getEpoch()).isEqualTo(2);
    assertThat(view.inFlight().getEpoch()).isEqualTo(3);
    assertThat(view.history()).hasSize(5);
  }

  @Test
  void shouldIgnoreOtherClustersIncludingOnesWhoseIdsNeedEscaping() {
    RingSnapshot other = ring("c1/x", 1, 3);
    EpochRecord otherReady = epoch(other, EpochState.READY, 1, cause("c1/x", MembershipAction.INIT, "", "o"), 0, T0);
    RangeCopyTask otherTask = task("c1/x", 2, 1, 2, "node-003", List.of("node-001"));

    ClusterView view = ClusterView.of(C, List.of(INIT_PLANNED, INIT_READY, otherReady), List.of(otherTask),
        List.of(), List.of(rejected("c1/x", "o", "not ours", T0)), 5);

    assertThat(view.history()).containsExactly(INIT_PLANNED, INIT_READY);
    assertThat(view.rejectedTotal()).isZero();
  }

  @Test
  void shouldKeepTheLatestRejectionsOldestFirst() {
    var rejects = List.of(rejected(C, "r3", "third", T0 + 3), rejected(C, "r1", "first", T0 + 1),
        rejected(C, "r2", "second", T0 + 2));

    ClusterView view = ClusterView.of(C, List.of(INIT_PLANNED, INIT_READY), List.of(), List.of(), rejects, 2);

    assertThat(view.rejectedTotal()).isEqualTo(3);
    assertThat(view.rejected()).extracting(r -> r.getReason()).containsExactly("second", "third");
  }

  @Test
  void shouldNotExistWithoutEpochs() {
    assertThat(ClusterView.of(C, List.of(), List.of(), List.of(), List.of(), 5).exists()).isFalse();
  }
}
