package io.ringshift.cli.internal.control;

import static io.ringshift.orchestrator.admin.ControlRecords.T0;
import static io.ringshift.orchestrator.admin.ControlRecords.cause;
import static io.ringshift.orchestrator.admin.ControlRecords.epoch;
import static io.ringshift.orchestrator.admin.ControlRecords.rejected;
import static io.ringshift.orchestrator.admin.ControlRecords.ring;
import static io.ringshift.orchestrator.admin.ControlRecords.status;
import static io.ringshift.orchestrator.admin.ControlRecords.task;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.ringshift.orchestrator.admin.EpochProgress;
import io.ringshift.orchestrator.admin.ClusterView;
import io.ringshift.cli.internal.Golden;
import io.ringshift.cli.internal.JsonOutput;
import io.ringshift.ring.RingSnapshot;
import io.ringshift.schemas.avro.EpochRecord;
import io.ringshift.schemas.avro.EpochState;
import io.ringshift.schemas.avro.MembershipAction;
import io.ringshift.schemas.avro.MembershipEvent;
import io.ringshift.schemas.avro.RangeCopyTask;
import io.ringshift.protocol.RecordKeys;
import io.ringshift.schemas.avro.TaskKind;
import io.ringshift.schemas.avro.TaskState;
import io.ringshift.schemas.avro.TaskStatus;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.List;
import org.junit.jupiter.api.Test;

class ReportsTest {
  private static final String C = "shop";
  private static final RingSnapshot E1 = ring(C, 1, 6);
  private static final RingSnapshot E2 = ring(C, 2, 7);
  private static final EpochRecord READY = epoch(E1, EpochState.READY, 1, cause(C, MembershipAction.INIT, "", "r-0"),
      0, T0);
  private static final EpochRecord PLANNED = epoch(E2, EpochState.PLANNED, 1,
      cause(C, MembershipAction.JOIN, "node-007", "r-1"), 3, T0 + 60_000);
  private static final RangeCopyTask A = task(C, 2, 0x10, 0x20, "node-007", List.of("node-002", "node-001"));
  private static final RangeCopyTask B = task(C, 2, 0x20, 0x30, "node-007", List.of("node-005"));
  private static final RangeCopyTask D = task(C, 2, 0x40, 0x50, "node-007", List.of("node-002"));

  private static final long NOW = T0 + 70_000;

  /** B started 10 s before NOW and copied 1 KiB of its 4 KiB, throttled. */
  private static TaskStatus copyingB() {
    TaskStatus s = status(B, TaskState.COPYING);
    s.setCopiedBytes(1024);
    s.setStartedMillis(T0 + 60_000);
    s.setBlockedReason("throttled: source node-005 at 512 B/s");
    return s;
  }

  private static ClusterView view() {
    return ClusterView.of(C, List.of(epoch(E1, EpochState.PLANNED, 1, READY.getCause(), 0, T0), READY, PLANNED),
        List.of(A, B, D), List.of(status(A, TaskState.VERIFIED), copyingB()),
        List.of(rejected(C, "r-2", "JOIN of node node-007: it is already a member of cluster shop", T0 + 120_000)),
        5);
  }

  @Test
  void shouldPrintTheActiveEpochTheEpochInFlightItsTasksAndTheRejections() {
    List<String> lines = Reports.statusText(view(), 2, NOW);

    assertThat(lines.get(0)).isEqualTo("cluster shop");
    assertThat(lines.get(1)).isEqualTo("active     epoch 1 READY: 6 members in 3 zones, vnodes 16, replicas 3, "
        + "checksum " + E1.checksumHex().substring(0, 12) + "; INIT at 2026-01-02T03:04:05Z");
    assertThat(lines.get(3)).isEqualTo("in flight  epoch 2 plan 1 PLANNED: JOIN node-007 (az-2) (request r-1 by "
        + "alice) at 2026-01-02T03:05:05Z; 7 members, checksum " + E2.checksumHex().substring(0, 12));
    assertThat(lines.get(4)).isEqualTo("           3 tasks, replica data moved 6.25% (ideal 6.25%), keyspace "
        + "changed 25.00%, estimated 2.93 KiB");
    // A is done (4 KiB), B copied 1 KiB of 4 KiB in the 10 s since it started, D has not started: 5 of 12 KiB.
    assertThat(lines.get(5)).isEqualTo("progress   [############..................]   41.7%  5.00 KiB of 12.0 KiB "
        + "copied  at 512 B/s  ETA 14 s  (1 of 3 verified)");
    assertThat(lines.get(6)).isEqualTo("  waiting  1 task: throttled: source node-005 at 512 B/s");
    assertThat(lines.get(7)).isEqualTo("tasks      3: PENDING 1, COPYING 1, VERIFIED 1");
    assertThat(lines.get(8)).isEqualTo("  STATE     KIND  RANGE                                 KEYSPACE  "
        + "SOURCES -> TARGET              COPIED    ID" + " ".repeat(A.getTaskId().length() - 2 + 2) + "DETAIL");
    assertThat(lines.get(9)).isEqualTo("  VERIFIED  COPY  (0000000000000010, 0000000000000020]  0.00%     "
        + "node-002,node-001 -> node-007  4.00 KiB  " + A.getTaskId());
    assertThat(lines.get(10)).isEqualTo("  COPYING   COPY  (0000000000000020, 0000000000000030]  0.00%     "
        + "node-005 -> node-007           1.00 KiB  " + B.getTaskId() + "  throttled: source node-005 at 512 B/s");
    assertThat(lines.get(11)).isEqualTo("  ... 1 more (--limit 0 shows all)");
    assertThat(lines.get(12)).isEqualTo("rejected   1 (latest 1):");
    assertThat(lines.get(13)).isEqualTo("  2026-01-02T03:06:05Z  request r-2  JOIN of node node-007: it is already "
        + "a member of cluster shop");
    assertThat(lines.get(2)).isEqualTo("published  none yet (clients have no ring; is the publisher running?)");
    assertThat(lines).hasSize(14);
  }

  @Test
  void shouldSayWhenNothingIsInFlightOrRejected() {
    ClusterView idle = ClusterView.of(C, List.of(READY), List.of(), List.of(), List.of(), 5);

    assertThat(Reports.statusText(idle, 20, NOW)).containsExactly(
        "cluster shop",
        "active     epoch 1 READY: 6 members in 3 zones, vnodes 16, replicas 3, checksum "
            + E1.checksumHex().substring(0, 12) + "; INIT at 2026-01-02T03:04:05Z",
        "published  none yet (clients have no ring; is the publisher running?)",
        "in flight  none",
        "rejected   none");
  }

  @Test
  void shouldSayHowTheLatestChangeIsCutOver() {
    EpochRecord published = EpochRecord.newBuilder(READY).setState(EpochState.PUBLISHED)
        .setSigningKeyId("ed25519:0011223344556677").setSignature(java.nio.ByteBuffer.wrap(new byte[64]))
        .setTimestampMillis(T0 + 1_000).build();
    EpochRecord staged = EpochRecord.newBuilder(PLANNED).setState(EpochState.STAGED).setStage(1)
        .setTimestampMillis(T0 + 2_000).build();
    ClusterView view = ClusterView.of(C, List.of(READY, published, PLANNED, staged), List.of(), List.of(),
        List.of(), 5);
    assertThat(Reports.statusText(view, 20, NOW)).contains("cutover    epoch 2 in stage WRITE_BOTH_READ_OLD since "
        + "2026-01-02T03:04:07Z: writes go to both rings, reads to the previous one");

    EpochRecord fenced = EpochRecord.newBuilder(PLANNED).setState(EpochState.FENCE_CUTOVER)
        .setReason("published at the fence, without transition stages: participant old-app does not route by "
            + "transition stages").setTimestampMillis(T0 + 2_000).build();
    view = ClusterView.of(C, List.of(READY, published, PLANNED, fenced), List.of(), List.of(), List.of(), 5);
    assertThat(Reports.statusText(view, 20, NOW)).contains("cutover    epoch 2 published at the fence, without "
        + "transition stages: participant old-app does not route by transition stages (at 2026-01-02T03:04:07Z)");
  }

  @Test
  void shouldSayWhatClientsRouteByAndWhenThePublisherRefusedAnEpoch() {
    EpochRecord published = EpochRecord.newBuilder(READY).setState(EpochState.PUBLISHED)
        .setSigningKeyId("ed25519:0011223344556677").setSignature(java.nio.ByteBuffer.wrap(new byte[64]))
        .setTimestampMillis(T0 + 1_000).build();
    EpochRecord ready2 = epoch(E2, EpochState.READY, 0, cause(C, MembershipAction.JOIN, "node-007", "r-1"), 0,
        T0 + 2_000);
    EpochRecord refused = EpochRecord.newBuilder(ready2).setState(EpochState.REJECTED)
        .setReason("TASKS: 1 task of epoch 2 is not VERIFIED").setTimestampMillis(T0 + 3_000).build();
    ClusterView view = ClusterView.of(C, List.of(READY, published, ready2, refused), List.of(), List.of(),
        List.of(), 5);

    assertThat(Reports.statusText(view, 20, NOW)).contains("published  epoch 1 at 2026-01-02T03:04:06Z by key "
        + "ed25519:0011223344556677: clients route by it; epoch 2 was REJECTED by the publisher at "
        + "2026-01-02T03:04:08Z: TASKS: 1 task of epoch 2 is not VERIFIED; the orchestrator rolled back to published "
        + "epoch 1 (after a second rejection in a row it plans only failures again, after a third it holds there "
        + "until the next change)");
    assertThat(Reports.statusText(view, 20, NOW)).as("the rejected epoch is not active")
        .anyMatch(line -> line.startsWith("active     epoch 1 "));
    EpochRecord replanned = EpochRecord.newBuilder(ready2).setState(EpochState.PLANNED).setEpoch(3)
        .setSupersedes(2L).setReason("re-planned from published epoch 1 because epoch 2 was rejected by the "
            + "publisher (TASKS: 1 task of epoch 2 is not VERIFIED) (attempt 1)").setTimestampMillis(T0 + 3_500)
        .build();
    ClusterView again = ClusterView.of(C, List.of(READY, published, ready2, refused, replanned), List.of(),
        List.of(), List.of(), 5);
    assertThat(Reports.statusText(again, 20, NOW))
        .anyMatch(line -> line.endsWith("; the orchestrator rolled back to published epoch 1 and planned again as "
            + "epoch 3"))
        .anyMatch(line -> line.startsWith("in flight  epoch 3 plan 0 PLANNED"))
        .contains("           re-planned from published epoch 1 because epoch 2 was rejected by the publisher (TASKS: "
            + "1 task of epoch 2 is not VERIFIED) (attempt 1)");
    JsonNode json;
    try {
      json = parse(Reports.statusJson(view, NOW));
    } catch (Exception e) {
      throw new AssertionError(e);
    }
    assertThat(json.get("published").get("epoch").asLong()).isEqualTo(1);
    assertThat(json.get("publisherRejection").get("epoch").asLong()).isEqualTo(2);
  }

  @Test
  void shouldPutEveryTaskAndItsStateInTheJson() throws Exception {
    JsonNode json = parse(Reports.statusJson(view(), NOW));

    assertThat(json.get("active").get("epoch").asLong()).isEqualTo(1);
    assertThat(json.get("inFlight").get("cause").get("requestId").asText()).isEqualTo("r-1");
    assertThat(json.get("taskCounts").toString()).isEqualTo("{\"PENDING\":1,\"COPYING\":1,\"VERIFIED\":1}");
    assertThat(json.get("tasks")).hasSize(3);
    JsonNode first = json.get("tasks").get(0);
    assertThat(first.get("id").asText()).isEqualTo(A.getTaskId());
    assertThat(first.get("rangeStart").asText()).isEqualTo("0000000000000010");
    assertThat(first.get("sources").toString()).isEqualTo("[\"node-002\",\"node-001\"]");
    assertThat(first.get("state").asText()).isEqualTo("VERIFIED");
    assertThat(json.get("rejected").get(0).get("requestId").asText()).isEqualTo("r-2");
    JsonNode progress = json.get("progress");
    assertThat(progress.get("copiedBytes").asLong()).isEqualTo(5120);
    assertThat(progress.get("estimatedBytes").asLong()).isEqualTo(12288);
    assertThat(progress.get("bytesPerSecond").asDouble()).isEqualTo(512.0);
    assertThat(progress.get("etaSeconds").asLong()).isEqualTo(14);
    assertThat(progress.get("waiting").get("throttled: source node-005 at 512 B/s").asInt()).isEqualTo(1);
  }

  @Test
  void shouldShowTheCleanupOfTheActiveEpochAndWhyItWaits() {
    RangeCopyTask cleanup = task(C, 1, 0x10, 0x20, "node-003", List.of("node-007"));
    cleanup.setKind(TaskKind.CLEANUP);
    cleanup.setTaskId(RecordKeys.taskId(C, 1, TaskKind.CLEANUP, 0x10, 0x20, "node-003"));
    TaskStatus blocked = status(cleanup, TaskState.BLOCKED);
    blocked.setBlockedReason("waiting for epoch 1 to be published");
    ClusterView idle = ClusterView.of(C, List.of(READY), List.of(cleanup), List.of(blocked), List.of(), 5);

    assertThat(idle.tasks()).isEmpty();
    assertThat(Reports.statusText(idle, 20, NOW)).containsSequence(
        "in flight  none",
        "cleanup    epoch 1: 1 task: BLOCKED 1",
        "  waiting  1 task: waiting for epoch 1 to be published");
  }

  /**
   * Without --cluster-bytes the orchestrator estimates nothing; the workers measure each range on its source when the
   * copy starts (TaskStatus.rangeBytes), so the bar moves with the bytes copied, and a task not started yet counts as
   * the mean of the measured ones.
   */
  @Test
  void shouldMoveTheBarByTheRangeSizesTheWorkersMeasuredWhenNothingWasEstimated() {
    RangeCopyTask copying = task(C, 2, 0x10, 0x20, "node-007", List.of("node-002"));
    copying.setEstimatedBytes(0);
    RangeCopyTask pending = task(C, 2, 0x20, 0x30, "node-007", List.of("node-002"));
    pending.setEstimatedBytes(0);
    TaskStatus measured = status(copying, TaskState.COPYING);
    measured.setRangeBytes(8192L);
    measured.setCopiedBytes(4096);
    measured.setStartedMillis(NOW - 4_000);

    EpochProgress p = EpochProgress.of(List.of(new ClusterView.TaskView(copying, measured),
        new ClusterView.TaskView(pending, null)), NOW);

    assertThat(p.estimatedBytes()).isEqualTo(16384);
    assertThat(p.fraction()).isEqualTo(0.25);
    assertThat(p.bytesPerSecond()).isEqualTo(1024.0);
    assertThat(p.etaSeconds()).isEqualTo(12);
    assertThat(p.line()).isEqualTo("[#######.......................]   25.0%  4.00 KiB of 16.0 KiB copied  at 1.00 "
        + "KiB/s  ETA 12 s  (0 of 2 verified)");
  }

  /** A cleanup that had nothing to delete is counted as such, not as a failure, and gives no wait reason. */
  @Test
  void shouldCountCleanupsThatDeletedNothingApartFromFailures() {
    RangeCopyTask gone = task(C, 1, 0x10, 0x20, "node-003", List.of("node-007"));
    gone.setKind(TaskKind.CLEANUP);
    gone.setTaskId(RecordKeys.taskId(C, 1, TaskKind.CLEANUP, 0x10, 0x20, "node-003"));
    RangeCopyTask old = task(C, 1, 0x20, 0x30, "node-004", List.of("node-007"));
    old.setKind(TaskKind.CLEANUP);
    old.setTaskId(RecordKeys.taskId(C, 1, TaskKind.CLEANUP, 0x20, 0x30, "node-004"));
    TaskStatus nothing = status(gone, TaskState.VERIFIED);
    nothing.setError("nothing deleted: node-003 was declared failed and removed by published epoch 1; its data is "
        + "written off");
    TaskStatus olderWorker = status(old, TaskState.FAILED);
    olderWorker.setError("nothing deleted: epoch 2 gives the range back to node-004 (task x)");
    ClusterView idle = ClusterView.of(C, List.of(READY), List.of(gone, old), List.of(nothing, olderWorker), List.of(),
        5);

    List<String> text = Reports.statusText(idle, 20, NOW);
    assertThat(text).contains("cleanup    epoch 1: 2 tasks: nothing to delete 2");
    assertThat(String.join("\n", text)).doesNotContain("FAILED", "waiting");
  }

  @Test
  void shouldTellProgressWithoutEstimatesByVerifiedTasks() {
    RangeCopyTask unsized = task(C, 2, 0x10, 0x20, "node-007", List.of("node-002"));
    unsized.setEstimatedBytes(0);
    RangeCopyTask other = task(C, 2, 0x20, 0x30, "node-007", List.of("node-002"));
    other.setEstimatedBytes(0);
    EpochProgress p = EpochProgress.of(List.of(new ClusterView.TaskView(unsized, status(unsized, TaskState.VERIFIED)),
        new ClusterView.TaskView(other, null)), NOW);

    assertThat(p.fraction()).isEqualTo(0.5);
    assertThat(p.bytesPerSecond()).isEqualTo(-1);
    assertThat(p.line()).isEqualTo("[###############...............]   50.0%  4.00 KiB copied  not started  "
        + "ETA unknown  (1 of 2 verified)");
    assertThat(EpochProgress.duration(200)).isEqualTo("3 min 20 s");
    assertThat(EpochProgress.duration(7500)).isEqualTo("2 h 5 min");
  }

  @Test
  void shouldListTheAuditLogOneLinePerRecord() {
    EpochRecord superseded = epoch(E2, EpochState.SUPERSEDED, 1, PLANNED.getCause(), 3, T0 + 90_000);

    List<String> lines = Reports.epochsText(C, List.of(READY, PLANNED, superseded));

    assertThat(lines.get(0)).isEqualTo("cluster shop: 3 epoch records");
    assertThat(lines.get(1)).isEqualTo("TIME                  EPOCH  PLAN  STATE       CAUSE                 "
        + "REQUEST  MEMBERS  CHECKSUM      TASKS  MOVED  REASON");
    assertThat(lines.get(2)).isEqualTo("2026-01-02T03:04:05Z  1      1     READY       INIT                  r-0  "
        + "    6        " + E1.checksumHex().substring(0, 12) + "  0      6.25%");
    assertThat(lines.get(4)).endsWith("3      6.25%  node node-002 failed while plan 1 copied from or to it");
  }

  @Test
  void shouldDescribeTheOutcomeOfARequest() {
    assertThat(Reports.outcome(PLANNED)).isEqualTo("epoch 2 PLANNED (plan 1, 7 members, checksum "
        + E2.checksumHex().substring(0, 12) + "): 3 tasks, replica data moved 6.25% (ideal 6.25%), estimated "
        + "2.93 KiB");
  }

  @Test
  void shouldDescribeEachKindOfCause() {
    var weight = cause(C, MembershipAction.SET_WEIGHT, "node-003", "r");
    weight.setWeight(2.5);

    assertThat(Reports.cause(cause(C, MembershipAction.DRAIN, "node-003", "r"))).isEqualTo("DRAIN node-003");
    assertThat(Reports.cause(weight)).isEqualTo("SET_WEIGHT node-003 -> 2.5");
    assertThat(Reports.cause(cause(C, MembershipAction.INIT, "", "r"))).isEqualTo("INIT");
  }

  @Test
  void shouldPrintTheStatusJsonOfAnEpochInFlightByteForByte() {
    Golden.assertMatches("status-in-flight.json", printedStatus(view()));
  }

  @Test
  void shouldPrintTheStatusJsonOfAPublishedClusterWithARefusalAndACleanupByteForByte() {
    EpochRecord published = EpochRecord.newBuilder(READY).setState(EpochState.PUBLISHED)
        .setSigningKeyId("ed25519:0011223344556677").setSignature(java.nio.ByteBuffer.wrap(new byte[64]))
        .setTimestampMillis(T0 + 1_000).build();
    EpochRecord refused = EpochRecord.newBuilder(epoch(E2, EpochState.READY, 0,
            cause(C, MembershipAction.JOIN, "node-007", "r-1"), 0, T0 + 2_000))
        .setState(EpochState.REJECTED).setReason("TASKS: 1 task of epoch 2 is not VERIFIED")
        .setTimestampMillis(T0 + 3_000).build();
    RangeCopyTask cleanup = task(C, 1, 0x10, 0x20, "node-003", List.of("node-007"));
    cleanup.setKind(TaskKind.CLEANUP);
    cleanup.setTaskId(RecordKeys.taskId(C, 1, TaskKind.CLEANUP, 0x10, 0x20, "node-003"));
    TaskStatus failed = status(cleanup, TaskState.BLOCKED);
    failed.setError("delete failed: node-003 unreachable");
    failed.setBlockedReason("waiting for epoch 1 to be published");
    ClusterView view = ClusterView.of(C, List.of(READY, published, refused), List.of(cleanup), List.of(failed),
        List.of(), 5);

    Golden.assertMatches("status-published.json", printedStatus(view));
  }

  @Test
  void shouldPrintTheStatusJsonOfAReplanNotStartedYetByteForByte() {
    MembershipEvent weight = setWeight();
    EpochRecord superseded = epoch(E2, EpochState.SUPERSEDED, 1, weight, 3, T0 + 60_000);
    EpochRecord replanned = EpochRecord.newBuilder(epoch(E2, EpochState.PLANNED, 2, weight, 3, T0 + 90_000))
        .setSupersedes(1L).build();
    var unnamed = rejected(C, null, "not a membership event", T0 + 100_000);
    unnamed.setKey(null);
    ClusterView view = ClusterView.of(C, List.of(READY, epoch(E2, EpochState.PLANNED, 1, weight, 3, T0 + 30_000),
        superseded, replanned), List.of(A, D), List.of(), List.of(unnamed), 5);

    Golden.assertMatches("status-replanned.json", printedStatus(view));
  }

  @Test
  void shouldPrintTheStatusJsonOfAnIdleClusterByteForByte() {
    ClusterView idle = ClusterView.of(C, List.of(READY), List.of(), List.of(), List.of(), 5);

    Golden.assertMatches("status-idle.json", printedStatus(idle));
  }

  @Test
  void shouldPrintTheEpochsJsonByteForByte() {
    MembershipEvent weight = setWeight();
    EpochRecord superseded = epoch(E2, EpochState.SUPERSEDED, 1, PLANNED.getCause(), 3, T0 + 90_000);
    // Records written before planVersion and diffSummary existed have neither; a cause-less record is printed too.
    EpochRecord old = EpochRecord.newBuilder(epoch(E2, EpochState.PLANNED, 2, weight, 3, T0 + 95_000))
        .setPlanVersion(null).setDiffSummary(null).setSupersedes(1L).build();
    EpochRecord causeless = EpochRecord.newBuilder(READY).setTimestampMillis(T0 + 99_000).build();
    causeless.setCause(null);

    Golden.assertMatches("epochs.json", Golden.printed(out -> JsonOutput.print(out,
        Reports.epochsJson(C, List.of(READY, PLANNED, superseded, old, causeless)))));
  }

  /** The status JSON as {@code ringshift status --json} prints it. */
  private static String printedStatus(ClusterView view) {
    return Golden.printed(out -> JsonOutput.print(out, Reports.statusJson(view, NOW)));
  }

  private static MembershipEvent setWeight() {
    MembershipEvent weight = cause(C, MembershipAction.SET_WEIGHT, "node-003", "r-3");
    weight.setWeight(2.5);
    return weight;
  }

  static JsonNode parse(Object json) throws Exception {
    StringWriter text = new StringWriter();
    JsonOutput.print(new PrintWriter(text), json);
    return new ObjectMapper().readTree(text.toString());
  }
}
