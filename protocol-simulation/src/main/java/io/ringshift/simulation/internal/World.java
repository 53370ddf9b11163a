package io.ringshift.simulation.internal;

import io.ringshift.protocol.RecordKeys;
import io.ringshift.protocol.RecordSerdes;
import io.ringshift.protocol.SigningKey;
import io.ringshift.protocol.TrustedKeys;
import io.ringshift.ring.Member;
import io.ringshift.ring.RingSnapshot;
import io.ringshift.schemas.avro.EpochRecord;
import io.ringshift.schemas.avro.EpochState;
import io.ringshift.schemas.avro.MemberSpec;
import io.ringshift.schemas.avro.MemberSpecState;
import io.ringshift.schemas.avro.MembershipAction;
import io.ringshift.schemas.avro.MembershipEvent;
import io.ringshift.storage.Store;
import io.ringshift.storage.StoreException;
import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * The simulated world of one scenario: the virtual clock and random source, the simulated Kafka, the storage nodes, the
 * roles (each a production core inside a simulated shell), the clients, the operator, the faults and the checks. Runs on
 * the calling thread; everything that happens is an event of {@link EventLoop}.
 */
public final class World {
  public static final String CLUSTER = "sim";
  static final String MEMBERSHIP = "ring.membership";
  static final String EPOCHS = "ring.epochs";
  static final String TASKS = "ring.tasks";
  static final String STATUS = "ring.task-status";
  static final String REJECTED = "ring.rejected";
  static final String SNAPSHOTS = "ring.snapshots";
  static final String PARTICIPANTS = "ring.participants";
  static final int PARTITIONS = 3;
  /** Tombstones on compacted topics outlive this (Kafka's delete.retention.ms is a day; shorter here, so it matters). */
  static final long TOMBSTONE_RETENTION = 300_000;

  private static final SigningKey PUBLISHER_KEY = deterministicKey();

  final Scenario scenario;
  final Trace trace;
  final EventLoop loop;
  final SimRandom random;
  final SimKafka kafka;
  final SigningKey publisherKey = PUBLISHER_KEY;
  final TrustedKeys trusted = TrustedKeys.of(PUBLISHER_KEY.publicKey()).remembering(4096);
  final Invariants checks;
  final Map<String, SimNode> nodes = new TreeMap<>();
  /** Participants whose reports do not get through (a fault), until healed. */
  final java.util.Set<SimParticipant> muted = new java.util.HashSet<>();
  final List<String> initialMembers = new ArrayList<>();
  final List<String> spares = new ArrayList<>();
  final Map<String, String> zones = new TreeMap<>();
  SimOrchestrator orchestrator;
  final List<SimWorker> workers = new ArrayList<>();
  final List<SimPublisher> publishers = new ArrayList<>();
  final List<SimHealth> healths = new ArrayList<>();
  final List<SimClient> clients = new ArrayList<>();
  final Operator operator;
  /** Roles cut off from Kafka now. */
  final Set<String> cutOff = new HashSet<>();
  /** "caller|node" pairs that cannot reach each other now. */
  final Set<String> blocked = new HashSet<>();
  /** Whether the scenario is in its active phase (operations and faults). */
  boolean active = true;
  private int nextIncarnation;
  final boolean taskRecords;

  public World(Scenario scenario, boolean keepTrace) {
    this(scenario, keepTrace, false);
  }

  /** @param taskRecords whether the trace notes every record of the task and status topics too */
  public World(Scenario scenario, boolean keepTrace, boolean taskRecords) {
    this.scenario = scenario;
    this.trace = new Trace(keepTrace, taskRecords ? 20_000 : 400);
    this.taskRecords = taskRecords;
    this.loop = new EventLoop(trace);
    this.random = new SimRandom(scenario.seed());
    this.kafka = new SimKafka(loop, random, trace, 40);
    for (String t : List.of(MEMBERSHIP, EPOCHS, TASKS, STATUS, REJECTED, SNAPSHOTS, PARTICIPANTS)) {
      kafka.create(t, PARTITIONS, !t.equals(EPOCHS) && !t.equals(REJECTED));
    }
    this.checks = new Invariants(this);
    this.operator = new Operator(this);
    SimKafka.Reader failures = kafka.reader().assignAll(MEMBERSHIP);
    kafka.onVisible(MEMBERSHIP, () -> failures.readToEnd(r -> {
      if (r.value != null) {
        MembershipEvent e = io.ringshift.protocol.RecordSerdes.membershipEvent().deserialize(r.value);
        if (e.getAction() == MembershipAction.FAIL) {
          everFailed.add(e.getNodeId());
        }
      }
    }));
  }

  private static SigningKey deterministicKey() {
    try {
      SecureRandom seeded = SecureRandom.getInstance("SHA1PRNG");
      seeded.setSeed(0x72696e6773686966L);
      return SigningKey.generate(seeded);
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("no SHA1PRNG in this JDK", e);
    }
  }

  /** A clock for a new process: mostly close to the virtual time, sometimes seconds off. */
  SimClock newClock() {
    long offset = random.chance(0.3) ? random.between(-10_000, 10_000) : random.between(-200, 200);
    double drift = random.between(-50, 50);
    return new SimClock(loop, offset, drift);
  }

  String incarnation() {
    return "incarnation-" + (nextIncarnation++);
  }

  /** Builds the world: nodes, roles, clients; schedules the INIT, the operations and the faults. */
  void build() {
    List<String> zoneNames = new ArrayList<>();
    for (int z = 1; z <= scenario.zones(); z++) {
      zoneNames.add("az-" + z);
    }
    int total = scenario.initialNodes() + scenario.spareNodes();
    for (int i = 0; i < total; i++) {
      String id = String.format("node-%02d", i);
      String zone = zoneNames.get(i % zoneNames.size());
      zones.put(id, zone);
      (i < scenario.initialNodes() ? initialMembers : spares).add(id);
      SimNode node = new SimNode(this, id, zone);
      nodes.put(id, node);
      node.start();
    }
    orchestrator = new SimOrchestrator(this);
    orchestrator.start();
    for (int i = 0; i < scenario.publishers(); i++) {
      SimPublisher p = new SimPublisher(this, "publisher-" + i);
      publishers.add(p);
      p.start();
    }
    for (int i = 0; i < scenario.workers(); i++) {
      SimWorker w = new SimWorker(this, "worker-" + i);
      workers.add(w);
      w.start();
    }
    for (int i = 0; i < scenario.healthManagers(); i++) {
      SimHealth h = new SimHealth(this, "health-" + i);
      healths.add(h);
      h.start();
    }
    int keysEach = Math.max(1, scenario.keys() / scenario.writers());
    for (int i = 0; i < scenario.writers(); i++) {
      List<String> keys = new ArrayList<>();
      for (int k = 0; k < keysEach; k++) {
        keys.add("k-" + i + "-" + k);
      }
      SimClient c = new SimClient(this, "writer-" + i, keys, true);
      clients.add(c);
      c.start();
    }
    for (int i = 0; i < scenario.readers(); i++) {
      SimClient c = new SimClient(this, "reader-" + i, List.of(), false);
      clients.add(c);
      c.start();
    }
    rebalanceWorkers();
    electPublisher();
    electHealth();
    operator.init();
    for (Scenario.Op op : scenario.ops()) {
      loop.at(op.at(), "op " + op, () -> operator.run(op));
    }
    loop.at(scenario.activeMillis(), "heal everything", this::healAll);
    scheduleCompaction();
  }

  private void scheduleCompaction() {
    loop.after(random.between(20_000, 60_000), "compaction", () -> {
      for (String t : List.of(MEMBERSHIP, TASKS, STATUS, SNAPSHOTS, PARTICIPANTS)) {
        kafka.compact(t, TOMBSTONE_RETENTION);
      }
      scheduleCompaction();
    });
  }

  /** The end of the active phase: every fault is healed and every crashed process restarted. */
  void healAll() {
    active = false;
    for (String role : List.copyOf(cutOff)) {
      operator.reconnect(role);
    }
    blocked.clear();
    muted.forEach(p -> p.muted = false);
    muted.clear();
    publishers.forEach(p -> p.forcedRejections = 0);
    nodes.values().forEach(n -> {
      if (!n.lost && !n.up) {
        n.start();
      }
    });
    if (!orchestrator.up) {
      orchestrator.start();
    }
    workers.forEach(w -> {
      if (!w.up) {
        w.start();
      }
      w.reconnected();
    });
    publishers.forEach(p -> {
      if (!p.up) {
        p.start();
      }
    });
    healths.forEach(h -> {
      if (!h.up) {
        h.start();
      }
    });
    rebalanceWorkers();
    electPublisher();
    electHealth();
    trace.note(loop.now(), "healed: no fault from here on");
    loop.after(60_000, "the operator looks at the cluster", operator::nudgeAHeldCluster);
  }

  // ---- running

  /** Most events one scenario may take: more means it never settles. */
  static final long MAX_STEPS = 3_000_000;

  private boolean interleaving;

  /**
   * Called on a worker's call to a node: sometimes a client's write lands right then, between two calls of a copy, a
   * catch-up or a verification, as it would on a real network.
   */
  void interleave() {
    if (interleaving || !active || !random.chance(0.04)) {
      return;
    }
    List<SimClient> writers = clients.stream().filter(SimClient::writer).toList();
    if (writers.isEmpty()) {
      return;
    }
    interleaving = true;
    try {
      random.pick(writers).writeNow();
      count("writes slipped between a worker's calls");
    } finally {
      interleaving = false;
    }
  }

  /** Builds the world and runs it to the end of the scenario, or to the first violation; then the final checks. */
  public void run() {
    build();
    long end = scenario.activeMillis() + scenario.quietMillis();
    while (checks.violation() == null) {
      try {
        if (!loop.step(end)) {
          break;
        }
      } catch (RuntimeException | AssertionError e) {
        java.io.StringWriter stack = new java.io.StringWriter();
        e.printStackTrace(new java.io.PrintWriter(stack));
        String[] lines = stack.toString().split("\n");
        checks.violation("an event threw " + String.join(" | ", java.util.Arrays.asList(lines).subList(0,
            Math.min(8, lines.length))));
        break;
      }
      if (loop.steps() > MAX_STEPS) {
        checks.violation("the scenario did not settle: " + MAX_STEPS + " events by " + loop.now() + " ms");
        break;
      }
    }
    if (checks.violation() == null) {
      checks.atTheEnd();
    }
  }

  public String violation() {
    return checks.violation();
  }

  public long violationStep() {
    return checks.violationStep();
  }

  public long steps() {
    return loop.steps();
  }

  public long strays() {
    return checks.strays();
  }

  public Trace trace() {
    return trace;
  }

  public Map<String, Long> counts() {
    return counts;
  }

  // ---- the fault budget

  /**
   * The nodes that failed or may be declared failed: lost for good, FAILed by anyone, down, or cut off from a health
   * manager. The protocol keeps every acknowledged write through R - 1 failures, not more: a scenario adds no fault that
   * could take a node out while this many are at risk already.
   */
  int nodesAtRisk() {
    Set<String> risky = new java.util.TreeSet<>(everFailed);
    for (SimNode n : nodes.values()) {
      if (n.lost || !n.up) {
        risky.add(n.id);
      }
    }
    for (String pair : blocked) {
      String caller = pair.substring(0, pair.indexOf('|'));
      if (caller.startsWith("health-")) {
        risky.add(pair.substring(pair.indexOf('|') + 1));
      }
    }
    return risky.size();
  }

  /** Whether one more node may be put at risk. */
  boolean mayRiskANode() {
    return nodesAtRisk() < scenario.replicas() - 1;
  }

  /** Nodes a FAIL named, ever (read off ring.membership as it is written). */
  final Set<String> everFailed = new java.util.TreeSet<>();

  // ---- connectivity

  boolean connected(String role) {
    return !cutOff.contains(role);
  }

  boolean reaches(String caller, String node) {
    return !blocked.contains(caller + "|" + node);
  }

  /** A store of node {@code nodeId} as {@code caller} reaches it: unavailable while the node is down or unreachable. */
  Store storeFor(String caller, String nodeId) {
    return new SimNodeStore(this, caller, nodeId);
  }

  // ---- groups and leases

  /** The workers' consumer group: the partitions of ring.tasks among the workers that are up and reach Kafka. */
  void rebalanceWorkers() {
    List<SimWorker> live = workers.stream().filter(w -> w.up && connected(w.id)).toList();
    Map<SimWorker, Set<Integer>> next = new LinkedHashMap<>();
    live.forEach(w -> next.put(w, new java.util.TreeSet<>()));
    for (int p = 0; p < PARTITIONS; p++) {
      if (!live.isEmpty()) {
        next.get(live.get(p % live.size())).add(p);
      }
    }
    for (SimWorker w : workers) {
      if (w.up) {
        // A member cut off from Kafka misses the rebalance and leaves the group with nothing; it learns so (its
        // partitions were lost) only when it reaches Kafka again, and its tasks run on meanwhile.
        w.assign(next.getOrDefault(w, Set.of()));
      }
    }
  }

  /** The publisher holding the lease: the first that is up and reaches Kafka; a takeover after the lease timeout. */
  void electPublisher() {
    elect(publishers);
  }

  /** The same for the health managers. */
  void electHealth() {
    elect(healths);
  }

  private void elect(List<? extends LeaseMember> group) {
    if (group.stream().anyMatch(m -> m.up() && m.holdsLease() && connected(m.id()))) {
      return;
    }
    // The group gives the lease to another member: the one that held it loses it (one cut off learns so when it
    // tries to commit and finds itself fenced).
    group.stream().filter(m -> m.up() && connected(m.id())).findFirst().ifPresent(next -> {
      group.stream().filter(m -> m != next).forEach(LeaseMember::loseLease);
      next.takeLease();
    });
  }

  // ---- records

  static byte[] encodeEvent(MembershipEvent e) {
    return RecordSerdes.membershipEvent().serialize(e);
  }

  /** Decodes a ring.epochs record once (cached on the record). */
  static EpochRecord epochOf(SimKafka.Rec r) {
    if (r.decoded == null && r.value != null) {
      r.decoded = RecordSerdes.epochRecord().deserialize(r.value);
    }
    return (EpochRecord) r.decoded;
  }

  static MembershipEvent membershipEvent(String node, MembershipAction action, String zone, Double weight,
      String requestId, String requestedBy, long timestamp, Long epoch) {
    return MembershipEvent.newBuilder().setClusterId(CLUSTER).setNodeId(node).setAction(action).setZone(zone)
        .setWeight(weight).setRequestId(requestId).setRequestedBy(requestedBy).setTimestampMillis(timestamp)
        .setEpoch(epoch).build();
  }

  static String membershipKey(MembershipEvent e) {
    return RecordKeys.membershipKey(e);
  }

  /** The INIT event of the scenario's initial members. */
  MembershipEvent initEvent(long timestamp) {
    List<MemberSpec> members = new ArrayList<>();
    for (String id : initialMembers) {
      members.add(MemberSpec.newBuilder().setId(id).setZone(zones.get(id)).setWeight(1.0)
          .setState(MemberSpecState.ACTIVE).setTokens(List.of()).build());
    }
    return MembershipEvent.newBuilder().setClusterId(CLUSTER).setNodeId("").setAction(MembershipAction.INIT)
        .setRequestId("init").setRequestedBy("operator").setTimestampMillis(timestamp).setInitialMembers(members)
        .setVnodes(scenario.vnodes()).setReplicas(scenario.replicas())
        .setPolicyId(scenario.balanced() ? "balanced-tokens/zone-aware-walk/v1" : null).build();
  }

  /** The published ring with the highest epoch, from what the checks saw committed; null before the first. */
  RingSnapshot latestPublishedRing() {
    return checks.latestPublishedRing();
  }

  /** Ids of a ring's members. */
  static List<String> ids(RingSnapshot ring) {
    return ring.members().stream().map(Member::id).toList();
  }

  /** Throws {@link StoreException.Unavailable} naming why {@code caller} cannot reach {@code node}. */
  static StoreException unavailable(String caller, String node, String why) {
    return new StoreException.Unavailable(caller + " cannot reach " + node + ": " + why, null);
  }

  /** Counts of what happened, for the report. */
  final Map<String, Long> counts = new TreeMap<>();

  void count(String what) {
    counts.merge(what, 1L, Long::sum);
  }

  boolean isPublished(long epoch) {
    return checks.publishedAt(epoch) >= 0;
  }

  static boolean terminal(EpochState s) {
    return s == EpochState.PUBLISHED || s == EpochState.REJECTED || s == EpochState.CANCELLED;
  }
}
