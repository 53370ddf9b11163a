package io.ringshift.cli.internal.control;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import com.fasterxml.jackson.databind.JsonNode;
import io.ringshift.cli.internal.Golden;
import io.ringshift.cli.internal.JsonOutput;
import io.ringshift.orchestrator.admin.ControlRecords;
import io.ringshift.orchestrator.EpochPlanner;
import io.ringshift.orchestrator.PlannedTask;
import io.ringshift.orchestrator.admin.EpochProgress;
import io.ringshift.orchestrator.admin.PlanPreview;
import io.ringshift.ring.RingSnapshot;
import io.ringshift.schemas.avro.MembershipAction;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

class PlanReportTest {
  private static final RingSnapshot ACTIVE = ControlRecords.ring("shop", 4, 6);
  private static final ChangeSpec JOIN = new ChangeSpec(MembershipAction.JOIN, "node-007", "az-1", null);

  private static PlanReport report(long clusterBytes, PlanPreview.Basis basis) {
    var plan = EpochPlanner.plan(ACTIVE, JOIN.applyTo("shop", ACTIVE.members()), 5, 0, Set.of(), clusterBytes);
    PlanPreview preview = new PlanPreview("shop", ACTIVE, basis, basis == PlanPreview.Basis.ACTIVE ? null : 5L, plan,
        0, clusterBytes);
    return new PlanReport(JOIN, preview, PlanCost.unmeasured(preview, Set.of()), null);
  }

  @Test
  void shouldSummariseTheTasksAndTheKeyspaceMovedPerZonePair() {
    PlanReport r = report(0, PlanPreview.Basis.ACTIVE);
    List<String> lines = r.text(3);
    int tasks = r.preview().plan().tasks().size();

    assertThat(lines.get(0)).isEqualTo("plan: JOIN of node-007 (zone az-1, weight 1.0) on cluster shop (nothing was "
        + "written)");
    assertThat(lines.get(1)).isEqualTo("from       active epoch 4 (6 members, checksum "
        + ACTIVE.checksumHex().substring(0, 12) + ")");
    assertThat(lines.get(2)).startsWith("to         epoch 5 plan 0 (7 members, checksum ");
    assertThat(lines.get(3)).isEqualTo("tasks      " + tasks + " (" + tasks + " COPY)");
    assertThat(lines.get(4)).startsWith("moves      ").contains("of the replica data; ideal ").contains("ratio ");
    assertThat(lines.get(6)).isEqualTo("by zone    (preferred source zone -> target zone; keyspace fractions: "
        + "--cluster-bytes N shows bytes)");
    assertThat(lines).filteredOn(l -> l.matches("  az-\\d -> az-1 .*")).hasSameSizeAs(r.preview().flows());
    assertThat(lines).contains("task list (first 3)", "  ... " + (tasks - 3) + " more (--limit 0 shows all)");
    assertThat(r.preview().flows()).allSatisfy(f -> assertThat(f.targetZone()).isEqualTo("az-1"));
    assertThat(r.preview().flows().stream().mapToInt(PlanPreview.ZoneFlow::tasks).sum()).isEqualTo(tasks);
    assertThat(r.preview().flows().stream().mapToDouble(PlanPreview.ZoneFlow::keyspaceFraction).sum())
        .isCloseTo(r.preview().plan().diff().movedReplicaFraction() * ACTIVE.replicas(), within(1e-9));
  }

  @Test
  void shouldShowBytesWhenTheClusterSizeIsGiven() {
    PlanReport r = report(24L << 40, PlanPreview.Basis.ACTIVE);

    List<String> lines = r.text(0);

    assertThat(lines).contains("by zone    (preferred source zone -> target zone; cluster of 24.0 TiB)");
    assertThat(lines).filteredOn(l -> l.startsWith("  az-")).allSatisfy(l -> assertThat(l).matches(".*(GiB|TiB)$"));
    assertThat(lines).contains("task list").noneMatch(l -> l.contains("more (--limit 0"));
    assertThat(r.preview().flows().stream().mapToLong(PlanPreview.ZoneFlow::bytes).sum())
        .isEqualTo(r.preview().plan().tasks().stream().mapToLong(PlannedTask::estimatedBytes).sum());
  }

  @Test
  void shouldSayWhereThePlanStarts() {
    assertThat(report(0, PlanPreview.Basis.QUEUED).text(0).get(1)).startsWith("from       the target of epoch 4 (6 "
        + "members, checksum ").endsWith("which is in flight: the change waits for it to be READY");
    assertThat(report(0, PlanPreview.Basis.REPLAN).text(0).get(1)).startsWith("from       active epoch 4 (6 members")
        .endsWith("a FAIL re-plans epoch 5, which is in flight, and its current plan becomes SUPERSEDED");
  }

  @Test
  void shouldListEveryTaskInTheJson() throws Exception {
    PlanReport r = report(1L << 30, PlanPreview.Basis.ACTIVE);

    JsonNode json = ReportsTest.parse(r.json());

    assertThat(json.get("tasks").asInt()).isEqualTo(r.preview().plan().tasks().size());
    assertThat(json.get("taskList")).hasSize(r.preview().plan().tasks().size());
    assertThat(json.get("toEpoch").asLong()).isEqualTo(5);
    assertThat(json.get("byZone").get(0).get("targetZone").asText()).isEqualTo("az-1");
    assertThat(json.get("taskList").get(0).get("target").asText()).isEqualTo("node-007");
    assertThat(json.get("taskList").get(0).get("id").asText()).startsWith("shop/5/copy/");
  }

  @Test
  void shouldPrintThePlanJsonOfAJoinByteForByte() {
    PlanReport r = report(1L << 30, PlanPreview.Basis.ACTIVE);

    Golden.assertMatches("plan-join.json", Golden.printed(out -> JsonOutput.print(out, r.json())));
  }

  @Test
  void shouldPrintThePlanJsonOfAFailureWithAnEpochInFlightByteForByte() {
    ChangeSpec fail = new ChangeSpec(MembershipAction.FAIL, "node-002", null, null);
    var plan = EpochPlanner.plan(ACTIVE, fail.applyTo("shop", ACTIVE.members()), 7, 0, Set.of("node-002"), 0);
    PlanPreview preview = new PlanPreview("shop", ACTIVE, PlanPreview.Basis.FAILURE, 5L, plan, 2, 0);
    PlanReport r = new PlanReport(fail, preview, PlanCost.unmeasured(preview, Set.of("node-002")),
        "it repairs a failure, whose dead node is still a replica of the ring it starts from");

    Golden.assertMatches("plan-failure.json", Golden.printed(out -> JsonOutput.print(out, r.json())));
  }

  /** The cost report: bytes per zone link measured on the sources, the ETA at the slower rate, no under-replication. */
  @Test
  void shouldReportTheMeasuredBytesPerZoneLinkAndAnEtaAtTheSlowerOfTheThrottleAndTheMeasuredRate() {
    var plan = EpochPlanner.plan(ACTIVE, JOIN.applyTo("shop", ACTIVE.members()), 5, 0, Set.of(), 0);
    PlanPreview preview = new PlanPreview("shop", ACTIVE, PlanPreview.Basis.ACTIVE, null, plan, 0, 0);
    java.util.Map<String, Long> measured = new java.util.HashMap<>();
    plan.tasks().forEach(t -> measured.put(t.taskId(), 1L << 20)); // 1 MiB each
    long total = (long) plan.tasks().size() << 20;
    PlanCost cost = new PlanCost(measured, Set.of("node-003"), 4 << 20, 3, 2 << 20,
        PlanCost.risk(preview, Set.of()));

    List<String> lines = cost.text(preview);

    assertThat(lines.get(0)).startsWith("cost       " + io.ringshift.ring.ByteUnits.format(total)
        + " to copy (measured on the sources): az-").contains(" -> az-1 ");
    assertThat(lines.get(1)).isEqualTo("           not measured on node-003: unreachable (their next sources were "
        + "asked)");
    assertThat(lines.get(2)).isEqualTo("eta        " + EpochProgress.duration((total + (2 << 20) - 1) / (2 << 20))
        + " at 2.00 MiB/s (the throttle --rate 2.00 MiB/s), copy time only: the fence and the publication add "
        + "seconds");
    assertThat(lines.get(3)).isEqualTo("risk       no under-replication: the change copies before it switches: every "
        + "range keeps its 3 replicas until the epoch is published, and the old copies are deleted only after its "
        + "grace period");
    PlanCost.CostJson json = cost.json(preview);
    assertThat(json.bytes()).isEqualTo(total);
    assertThat(json.measuredTasks()).isEqualTo(plan.tasks().size());
    assertThat(json.bytesByZoneLink().values().stream().mapToLong(Long::longValue).sum()).isEqualTo(total);
    assertThat(json.rateBytesPerSecond()).isEqualTo(2 << 20);
  }

  @Test
  void shouldReportTheKeyspaceAFailureLeavesUnderReplicatedAndAnUnknownCostWithoutNodes() {
    ChangeSpec fail = new ChangeSpec(MembershipAction.FAIL, "node-002", null, null);
    var plan = EpochPlanner.plan(ACTIVE, fail.applyTo("shop", ACTIVE.members()), 6, 0, Set.of("node-002"), 0);
    PlanPreview preview = new PlanPreview("shop", ACTIVE, PlanPreview.Basis.FAILURE, null, plan, 0, 0);

    PlanCost cost = PlanCost.unmeasured(preview, Set.of("node-002"));

    double held = 0;
    for (int r = 0; r < ACTIVE.tokenCount(); r++) {
      held += ACTIVE.replicasOfRange(r).contains("node-002") ? ACTIVE.rangeFraction(r) : 0;
    }
    assertThat(cost.risk().fewest()).isEqualTo(2);
    assertThat(cost.risk().underReplicatedFraction()).isCloseTo(held, within(1e-9));
    List<String> lines = cost.text(preview);
    assertThat(lines.get(0)).isEqualTo("cost       unknown: give --nodes FILE and --node-secret-file FILE to measure "
        + "the ranges on their sources, or --cluster-bytes N to estimate");
    assertThat(lines.get(1)).isEqualTo("eta        unknown: the bytes are unknown");
    assertThat(lines.get(2)).startsWith("risk       peak under-replication: " + Text.percent(held) + " of the keyspace "
        + "has fewer than 3 complete replicas, the fewest 2, until the repair is READY: the FAIL removes node-002 at "
        + "once");
  }

  @Test
  void shouldSayThatAFailurePublishesItsFailureEpochFirst() {
    PlanReport r = report(0, PlanPreview.Basis.FAILURE);

    assertThat(r.text(0)).anySatisfy(line -> assertThat(line).contains("publishes failure epoch 4 at once"));
  }
}
