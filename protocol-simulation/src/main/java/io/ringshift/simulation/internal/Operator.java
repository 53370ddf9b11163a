package io.ringshift.simulation.internal;

import io.ringshift.ring.Member;
import io.ringshift.ring.RingSnapshot;
import io.ringshift.schemas.avro.EpochRecord;
import io.ringshift.schemas.avro.EpochState;
import io.ringshift.schemas.avro.MembershipAction;
import io.ringshift.schemas.avro.MembershipEvent;
import java.util.ArrayList;
import java.util.List;

/**
 * The operator and the faults of a scenario: it writes the INIT, then at each operation's time draws its target from the
 * world as it is (which spare joins, which member drains, which role crashes) and does it: membership events as
 * {@code ringshift join|drain|fail|set-weight|cancel} write them, crashes and restarts, cut-offs, network partitions,
 * nodes lost for good, forced rejections. Destructive operations keep at least R + 1 members and lose at most R - 1
 * nodes, so no range can lose every copy.
 */
final class Operator {
  private static final long SESSION_TIMEOUT = 15_000;

  private final World w;
  private final SimClock clock;
  private int requests;

  Operator(World w) {
    this.w = w;
    this.clock = new SimClock(w.loop, 0, 0);
  }

  void init() {
    MembershipEvent init = w.initEvent(clock.millis());
    w.kafka.append(World.MEMBERSHIP, World.membershipKey(init), World.encodeEvent(init), clock.millis());
    w.trace.note(w.loop.now(), "INIT " + w.initialMembers);
  }

  private void send(String node, MembershipAction action, String zone, Double weight, Long epoch) {
    String requestId = "op-" + (++requests);
    MembershipEvent e = World.membershipEvent(node, action, zone, weight, requestId, "operator", clock.millis(), epoch);
    w.kafka.append(World.MEMBERSHIP, World.membershipKey(e), World.encodeEvent(e), clock.millis());
    w.trace.note(w.loop.now(), action + " " + node + (epoch == null ? "" : " epoch " + epoch) + " (" + requestId + ")");
    w.count(action.name());
  }

  void run(Scenario.Op op) {
    if (!w.active) {
      return;
    }
    switch (op.kind()) {
      case JOIN -> join();
      case DRAIN -> drain();
      case SET_WEIGHT -> setWeight();
      case CANCEL -> cancel();
      case FAIL -> fail();
      case LOSE_NODE -> loseNode();
      case CRASH_NODE -> crashNode();
      case CRASH_ROLE -> crashRole();
      case CUT_OFF -> cutOff();
      case PARTITION -> partition();
      case FORCE_REJECT -> forceReject();
      case MUTE -> mute();
      case BURST -> {
        join();
        if (w.random.chance(0.5)) {
          drain();
        } else {
          setWeight();
        }
      }
    }
  }

  private RingSnapshot published() {
    return w.latestPublishedRing();
  }

  private List<String> members() {
    RingSnapshot ring = published();
    return ring == null ? List.of() : World.ids(ring);
  }

  private void join() {
    List<String> candidates = new ArrayList<>();
    for (String id : w.nodes.keySet()) {
      SimNode n = w.nodes.get(id);
      if (!n.lost && !members().contains(id)) {
        candidates.add(id);
      }
    }
    if (candidates.isEmpty()) {
      return;
    }
    // Half the time the node that left the ring last (a drain undone, a node back after its failure): its tokens, and so
    // its ranges, are those it had.
    String node = w.random.chance(0.5) && lastLeft != null && candidates.contains(lastLeft) ? lastLeft
        : w.random.pick(candidates);
    send(node, MembershipAction.JOIN, w.zones.get(node), w.random.chance(0.2) ? 2.0 : null, null);
  }

  private boolean canShrink() {
    return members().size() > w.scenario.replicas() + 1;
  }

  /** The node a DRAIN or FAIL of this operator named last. */
  private String lastLeft;

  private void drain() {
    if (!canShrink()) {
      return;
    }
    lastLeft = w.random.pick(members());
    send(lastLeft, MembershipAction.DRAIN, null, null, null);
  }

  private void setWeight() {
    if (members().isEmpty()) {
      return;
    }
    send(w.random.pick(members()), MembershipAction.SET_WEIGHT, null, w.random.pick(List.of(0.5, 1.0, 2.0)), null);
  }

  private void fail() {
    if (!canShrink() || !w.mayRiskANode()) {
      return;
    }
    lastLeft = w.random.pick(members());
    send(lastLeft, MembershipAction.FAIL, null, null, null);
  }

  private void loseNode() {
    if (!canShrink() || !w.mayRiskANode()) {
      return;
    }
    String node = w.random.pick(members());
    w.nodes.get(node).lose();
    w.trace.note(w.loop.now(), node + " lost for good");
    w.count("nodes lost");
  }

  /**
   * Cancels the plan in flight, by the node its change names; sometimes names a wrong epoch (refused). With nothing in
   * flight, an operator who means to cancel waits for the next plan (up to 30 s) and cancels it soon after it appears.
   */
  private void cancel() {
    cancel(0);
  }

  private void cancel(int tries) {
    if (!w.active) {
      return;
    }
    EpochRecord inFlight = inFlight();
    if (inFlight == null || inFlight.getCause() == null) {
      if (tries < 300) {
        w.loop.after(100, "the operator waits for a plan to cancel", () -> cancel(tries + 1));
      }
      return;
    }
    long epoch = w.random.chance(0.1) ? inFlight.getEpoch() + 1 : inFlight.getEpoch();
    String node = inFlight.getCause().getNodeId();
    if (w.random.chance(0.5) && !node.isEmpty()) {
      // Now, or a moment later, while its tasks copy, catch up or fence.
      w.loop.after(w.random.between(0, 1_500), "the operator cancels epoch " + epoch, () -> {
        if (w.active) {
          send(node, MembershipAction.CANCEL, null, null, epoch);
        }
      });
      return;
    }
    send(node, MembershipAction.CANCEL, null, null, epoch);
  }

  /** The latest plan that no PUBLISHED, REJECTED, CANCELLED or SUPERSEDED record ended; null when none. */
  private EpochRecord inFlight() {
    List<EpochRecord> records = new ArrayList<>();
    for (SimKafka.Rec r : w.kafka.committed(World.EPOCHS)) {
      EpochRecord e = World.epochOf(r);
      if (e != null) {
        records.add(e);
      }
    }
    EpochRecord last = null;
    for (EpochRecord e : records) {
      if (e.getState() == EpochState.PLANNED) {
        last = e;
      } else if (last != null && e.getEpoch() == last.getEpoch()
          && (World.terminal(e.getState()) || e.getState() == EpochState.READY
              || (e.getState() == EpochState.SUPERSEDED && e.getPlanVersion() == last.getPlanVersion()))) {
        last = null;
      }
    }
    return last;
  }

  private void crashNode() {
    List<SimNode> up = w.nodes.values().stream().filter(n -> n.up).toList();
    if (up.isEmpty() || !w.mayRiskANode()) {
      return;
    }
    SimNode node = w.random.pick(up);
    node.crash();
    w.trace.note(w.loop.now(), node.id + " crashed");
    w.count("node crashes");
    w.loop.after(w.random.between(500, 20_000), node.id + " restarts", () -> {
      if (!node.up && !node.lost) {
        node.start();
      }
    });
  }

  private void crashRole() {
    int pick = w.random.nextInt(4);
    w.count("role crashes");
    if (pick == 0 && w.orchestrator.up) {
      w.orchestrator.crash();
      w.trace.note(w.loop.now(), "orchestrator crashed");
      w.loop.after(w.random.between(500, 20_000), "orchestrator restarts", () -> {
        if (!w.orchestrator.up) {
          w.orchestrator.start();
        }
      });
    } else if (pick == 1) {
      SimWorker worker = w.random.pick(w.workers);
      if (!worker.up) {
        return;
      }
      worker.crash();
      w.trace.note(w.loop.now(), worker.id + " crashed");
      w.loop.after(SESSION_TIMEOUT, "group notices " + worker.id, w::rebalanceWorkers);
      w.loop.after(w.random.between(500, 30_000), worker.id + " restarts", () -> {
        if (!worker.up) {
          worker.start();
          w.rebalanceWorkers();
        }
      });
    } else if (pick == 2) {
      crashAndRestart(w.random.pick(w.publishers), w::electPublisher);
    } else {
      crashAndRestart(w.random.pick(w.healths), w::electHealth);
    }
  }

  /** Crashes a lease member that is up and restarts it 0.5 to 20 s later; the group then elects a holder again. */
  private void crashAndRestart(LeaseMember m, Runnable elect) {
    if (!m.up()) {
      return;
    }
    m.crash();
    w.trace.note(w.loop.now(), m.id() + " crashed");
    w.loop.after(w.random.between(500, 20_000), m.id() + " restarts", () -> {
      if (!m.up()) {
        m.start();
        elect.run();
      }
    });
  }

  private void cutOff() {
    List<String> roles = new ArrayList<>();
    roles.add(w.orchestrator.id);
    w.workers.forEach(x -> roles.add(x.id));
    w.publishers.forEach(x -> roles.add(x.id));
    w.healths.forEach(x -> roles.add(x.id));
    String role = w.random.pick(roles);
    if (!w.cutOff.add(role)) {
      return;
    }
    long duration = w.random.between(5_000, 90_000);
    w.trace.note(w.loop.now(), role + " cut off from Kafka for " + duration + " ms");
    w.count("cut-offs");
    w.loop.after(Math.min(SESSION_TIMEOUT, duration), "group and leases notice " + role, () -> {
      if (w.cutOff.contains(role)) {
        w.rebalanceWorkers();
        w.electPublisher();
        w.electHealth();
      }
    });
    w.loop.after(duration, role + " reconnects", () -> reconnect(role));
  }

  /**
   * A client or a node stops getting its reports to ring.participants through for a while (its Kafka producer is cut
   * off while it keeps serving): its lease lapses, the publisher's barriers go on without it once the readers count it
   * lapsed, and a client stops serving the ranges a transition moves.
   */
  private void mute() {
    List<SimParticipant> candidates = new ArrayList<>();
    List<String> names = new ArrayList<>();
    for (SimClient c : w.clients) {
      if (c.participant != null && !c.participant.muted) {
        candidates.add(c.participant);
        names.add(c.id);
      }
    }
    for (SimNode n : w.nodes.values()) {
      if (n.participant != null && !n.participant.muted && !n.lost) {
        candidates.add(n.participant);
        names.add("node/" + n.id);
      }
    }
    if (candidates.isEmpty()) {
      return;
    }
    int i = w.random.nextInt(candidates.size());
    SimParticipant muted = candidates.get(i);
    long duration = w.random.between(5_000, 40_000);
    muted.muted = true;
    w.muted.add(muted);
    w.trace.note(w.loop.now(), names.get(i) + " stops reporting to ring.participants for " + duration + " ms");
    w.count("participants muted");
    w.loop.after(duration, names.get(i) + " reports again", () -> {
      muted.muted = false;
      w.muted.remove(muted);
    });
  }

  void reconnect(String role) {
    if (!w.cutOff.remove(role)) {
      return;
    }
    w.trace.note(w.loop.now(), role + " reaches Kafka again");
    if (role.equals(w.orchestrator.id)) {
      w.orchestrator.reconnected();
    }
    w.workers.stream().filter(x -> x.id.equals(role)).forEach(SimWorker::reconnected);
    w.publishers.stream().filter(x -> x.id.equals(role)).forEach(SimPublisher::reconnected);
    w.rebalanceWorkers();
    w.electPublisher();
    w.electHealth();
  }

  private void partition() {
    List<String> callers = new ArrayList<>();
    w.workers.forEach(x -> callers.add(x.id));
    w.healths.forEach(x -> callers.add(x.id));
    w.clients.forEach(x -> callers.add(x.id));
    String caller = w.random.pick(callers);
    String node = w.random.pick(new ArrayList<>(w.nodes.keySet()));
    if (caller.startsWith("health-") && !w.mayRiskANode()) {
      return;
    }
    String pair = caller + "|" + node;
    if (!w.blocked.add(pair)) {
      return;
    }
    long duration = w.random.between(5_000, 60_000);
    w.trace.note(w.loop.now(), caller + " cannot reach " + node + " for " + duration + " ms");
    w.count("partitions");
    w.loop.after(duration, pair + " heals", () -> w.blocked.remove(pair));
  }

  private void forceReject() {
    int n = (int) w.random.between(1, 4);
    w.publishers.forEach(p -> p.forcedRejections += n);
    w.trace.note(w.loop.now(), "the publisher will reject the next " + n + " epoch(s)");
  }

  /**
   * After four rejections in a row the orchestrator holds at the published epoch and plans nothing until the next
   * membership change (docs/orchestrator.md): an operator who sees a failure epoch's repair held sends one. At the end of
   * the faults, when the last published epoch still has filling marks and nothing is in flight, this operator sets a
   * member's weight to what it is, which plans the repair with it.
   */
  void nudgeAHeldCluster() {
    RingSnapshot ring = published();
    if (ring == null) {
      return;
    }
    // A node lost for good that is still a member: the health manager holds its FAIL back while too few members
    // answer (the FAILs of the last ten minutes count as not answering), and says so; the operator reads that and
    // fails the node himself, as docs/operations.md tells him to.
    boolean failed = false;
    for (Member m : ring.members()) {
      SimNode node = w.nodes.get(m.id());
      if (node != null && node.lost) {
        w.trace.note(w.loop.now(), m.id() + " is lost and still a member: the operator fails it");
        send(m.id(), MembershipAction.FAIL, null, null, null);
        failed = true;
      }
    }
    if (failed || inFlight() != null || !w.checks.lastPublishedHasMarks()) {
      return;
    }
    Member member = ring.members().get(0);
    w.trace.note(w.loop.now(), "the cluster holds with a repair unpublished: the operator sends a change");
    send(member.id(), MembershipAction.SET_WEIGHT, null, member.weight(), null);
  }

  /** For the report: the member ids of the last published ring. */
  List<String> lastMembers() {
    RingSnapshot ring = published();
    return ring == null ? List.of() : ring.members().stream().map(Member::id).toList();
  }
}
