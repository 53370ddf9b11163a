package io.ringshift.orchestrator.internal;

import io.ringshift.orchestrator.MembershipChange;
import io.ringshift.orchestrator.EpochPlanner;
import io.ringshift.orchestrator.PlannedTask;
import io.ringshift.orchestrator.internal.ClusterAggregate.EpochEvent;
import io.ringshift.orchestrator.internal.ClusterAggregate.InFlight;
import io.ringshift.orchestrator.EpochPlanner.Plan;
import io.ringshift.orchestrator.MembershipChange.Action;
import io.ringshift.ring.Member;
import io.ringshift.ring.PlacementPolicy;
import io.ringshift.ring.RingBuilder;
import io.ringshift.ring.RingDiff;
import io.ringshift.ring.RingException;
import io.ringshift.ring.RingSnapshot;
import io.ringshift.schemas.avro.ClusterState;
import io.ringshift.schemas.avro.DiffSummary;
import io.ringshift.protocol.AvroBytes;
import io.ringshift.protocol.EpochRecords;
import io.ringshift.protocol.RingSnapshotCodec;
import io.ringshift.schemas.avro.EpochRecord;
import io.ringshift.schemas.avro.EpochState;
import io.ringshift.schemas.avro.InFlightEpoch;
import io.ringshift.schemas.avro.MembershipAction;
import io.ringshift.schemas.avro.MembershipEvent;
import io.ringshift.schemas.avro.PublishedEpoch;
import io.ringshift.schemas.avro.UnpublishedEpoch;
import io.ringshift.schemas.avro.RangeCopyTask;
import io.ringshift.schemas.avro.TaskKind;
import io.ringshift.schemas.avro.TaskState;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Converts between the domain ({@link ClusterAggregate}, {@link MembershipChange}, the ring) and the Avro
 * records on the topics and in the state store.
 *
 * <p>The state store keeps only the inputs of a plan (active membership, target membership, epoch, plan version,
 * dead nodes); the plan itself is recomputed, which is deterministic, and memoised per (cluster, epoch, plan)
 * because every task status of an epoch needs it.
 */
public final class AvroMapping {
  private final long clusterBytes;
  /** Memoised plans per cluster, keyed by everything a plan depends on. */
  private final Map<String, Map<PlanKey, Plan>> plans = new ConcurrentHashMap<>();
  /** The last active ring of each cluster, reused while a state names the same epoch and checksum. */
  private final Map<String, RingSnapshot> activeRings = new ConcurrentHashMap<>();
  /** The last published rings of each cluster that are not its active ring, by epoch. */
  private final Map<String, Map<Long, RingSnapshot>> publishedRings = new ConcurrentHashMap<>();

  /** What a plan is a function of (with the placement rules and {@code clusterBytes}, which are fixed here). */
  private record PlanKey(long epoch, int planVersion, String activeChecksum, String targetChecksum,
      List<String> deadNodes) {}

  public AvroMapping(long clusterBytes) {
    this.clusterBytes = clusterBytes;
  }

  // ---- task statuses ----

  /** What a reported task state means to the aggregate. */
  public static ClusterAggregate.Progress progress(TaskState state) {
    return switch (state) {
      case PENDING, COPYING -> ClusterAggregate.Progress.BEHIND;
      case CAUGHT_UP, FENCED -> ClusterAggregate.Progress.CAUGHT_UP;
      case VERIFIED -> ClusterAggregate.Progress.VERIFIED;
      default -> ClusterAggregate.Progress.STUCK; // BLOCKED, FAILED, UNKNOWN (a newer writer's state)
    };
  }

  // ---- membership events ----

  /** The change an event asks for; INIT events map to the INIT action. */
  public static MembershipChange change(MembershipEvent e) {
    Action action = switch (e.getAction()) {
      case INIT -> Action.INIT;
      case JOIN -> Action.JOIN;
      case DRAIN -> Action.DRAIN;
      case FAIL -> Action.FAIL;
      case SET_WEIGHT -> Action.SET_WEIGHT;
      case REMOVE -> Action.REMOVE;
      case CANCEL -> Action.CANCEL;
      default -> throw new IllegalArgumentException(
          "action was " + e.getAction() + "; the actions are INIT, JOIN, DRAIN, FAIL, SET_WEIGHT, REMOVE, CANCEL");
    };
    return new MembershipChange(action, e.getNodeId(), e.getZone(), e.getWeight(), e.getRequestId(),
        e.getRequestedBy(), e.getTimestampMillis(), e.getEpoch());
  }

  /** The event a change came from, for the cause of an epoch record. */
  public static MembershipEvent event(String clusterId, MembershipChange c) {
    return MembershipEvent.newBuilder()
        .setClusterId(clusterId)
        .setNodeId(c.nodeId() == null ? "" : c.nodeId())
        .setAction(MembershipAction.valueOf(c.action().name()))
        .setZone(c.zone())
        .setWeight(c.weight())
        .setRequestId(c.requestId() == null ? "" : c.requestId())
        .setRequestedBy(c.requestedBy() == null ? "" : c.requestedBy())
        .setTimestampMillis(c.timestampMillis())
        .setEpoch(c.epoch())
        .build();
  }

  /**
   * The first ring of a new cluster, epoch 1, from an INIT event.
   *
   * @throws RingException when the membership or the parameters are invalid
   */
  public static RingSnapshot initialRing(MembershipEvent init) {
    if (init.getInitialMembers() == null || init.getInitialMembers().isEmpty()) {
      throw new RingException("INIT of cluster " + init.getClusterId()
          + ": initialMembers was empty; a new cluster needs at least one member");
    }
    for (int i = 0; i < init.getInitialMembers().size(); i++) {
      if (!init.getInitialMembers().get(i).getTokens().isEmpty()) {
        throw new RingException("INIT of cluster " + init.getClusterId() + ": initialMembers[" + i + "] (\""
            + init.getInitialMembers().get(i).getId() + "\") lists tokens; an INIT lists none, the orchestrator "
            + "allocates them under the cluster's policy");
      }
    }
    return RingSnapshot.builder()
        .clusterId(init.getClusterId())
        .epoch(1)
        .policy(init.getPolicyId() == null ? PlacementPolicy.HASHED : PlacementPolicy.ofId(init.getPolicyId()))
        .vnodes(init.getVnodes() == null ? RingBuilder.DEFAULT_VNODES : init.getVnodes())
        .replicas(init.getReplicas() == null ? RingBuilder.DEFAULT_REPLICAS : init.getReplicas())
        .members(EpochRecords.members(init.getInitialMembers()))
        .build();
  }

  // ---- outputs ----

  public static EpochRecord epochRecord(EpochEvent e, long timestampMillis) {
    Plan plan = e.plan();
    RingSnapshot target = plan.target();
    RingDiff diff = plan.diff();
    MembershipEvent cause = e.cause() == null ? null : event(target.clusterId(), e.cause());
    boolean init = e.cause() != null && e.cause().action() == Action.INIT;
    return EpochRecord.newBuilder()
        .setClusterId(target.clusterId())
        .setEpoch(target.epoch())
        .setPlanVersion(plan.planVersion())
        .setState(EpochState.valueOf(e.state().name()))
        .setCause(cause)
        .setMembers(EpochRecords.specs(target))
        .setVnodes(target.vnodes())
        .setReplicas(target.replicas())
        .setHashId(target.hashId())
        .setPolicyId(target.policyId())
        .setMembershipDigest(ByteBuffer.wrap(membershipDigest(target)))
        .setTargetChecksum(ByteBuffer.wrap(target.checksum()))
        .setPreviousChecksum(e.previousChecksum() == null ? null : ByteBuffer.wrap(e.previousChecksum()))
        .setDiffSummary(init ? null : DiffSummary.newBuilder()
            .setChangedRanges(diff.changes().size())
            .setChangedFraction(diff.changedFraction())
            .setMovedReplicaFraction(diff.movedReplicaFraction())
            .setPrimaryMovedFraction(diff.primaryMovedFraction())
            .setIdealMovedFraction(diff.idealMovedFraction())
            .setTasks(plan.tasks().size())
            .setEstimatedBytes(plan.estimatedBytes())
            .build())
        .setSupersedes(e.supersedes())
        .setReason(e.reason())
        .setFilling(RingSnapshotCodec.toAvro(e.filling()))
        .setPreviousMembers(List.of()) // set, not defaulted: a default array of records needs the Avro class trust
        .setTimestampMillis(timestampMillis)
        .build();
  }

  /**
   * The record of a task.
   *
   * @param fenceRequested true on the re-emission that asks for the fence (RangeCopyTask.fenceRequested)
   */
  public static RangeCopyTask task(String clusterId, long epoch, PlannedTask t, boolean fenceRequested,
      long timestampMillis) {
    return RangeCopyTask.newBuilder()
        .setTaskId(t.taskId())
        .setClusterId(clusterId)
        .setEpoch(epoch)
        .setKind(TaskKind.valueOf(t.kind().name()))
        .setRangeStart(t.rangeStart())
        .setRangeEnd(t.rangeEnd())
        .setSources(t.sources())
        .setTarget(t.target())
        .setTargetZone(t.targetZone())
        .setEstimatedBytes(t.estimatedBytes())
        .setTimestampMillis(timestampMillis)
        .setFenceRequested(fenceRequested)
        .setCancelledEpoch(t.cancelledEpoch())
        .build();
  }

  /**
   * SHA-256 of the canonical membership, as EpochRecord.membershipDigest documents it: the member count as
   * i32, then for each member in ring order its id, zone (u32 length + UTF-8), weight (IEEE-754 bits) and state
   * name, big-endian. Equal memberships give equal digests, whatever the epoch, V or R.
   */
  public static byte[] membershipDigest(RingSnapshot ring) {
    try {
      MessageDigest sha = MessageDigest.getInstance("SHA-256");
      sha.update(ByteBuffer.allocate(4).putInt(ring.memberCount()).array());
      for (Member m : ring.members()) {
        putString(sha, m.id());
        putString(sha, m.zone());
        sha.update(ByteBuffer.allocate(8).putLong(Double.doubleToLongBits(m.weight())).array());
        putString(sha, m.state().name());
      }
      return sha.digest();
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is required by every Java platform", e);
    }
  }

  private static void putString(MessageDigest sha, String s) {
    byte[] bytes = s.getBytes(StandardCharsets.UTF_8);
    sha.update(ByteBuffer.allocate(4).putInt(bytes.length).array());
    sha.update(bytes);
  }

  // ---- state ----

  /** The stored state of a cluster; null for an uninitialised aggregate. */
  public ClusterState state(ClusterAggregate a) {
    if (!a.initialised()) {
      return null;
    }
    RingSnapshot active = a.active();
    InFlightEpoch inFlight = null;
    if (a.inFlight() != null) {
      InFlight f = a.inFlight();
      RingSnapshot target = f.plan().target();
      inFlight = InFlightEpoch.newBuilder()
          .setEpoch(target.epoch())
          .setPlanVersion(f.plan().planVersion())
          .setMembers(EpochRecords.specs(target))
          .setChecksum(ByteBuffer.wrap(target.checksum()))
          .setCause(event(active.clusterId(), f.cause()))
          .setDeadNodes(new ArrayList<>(f.deadNodes()))
          .setVerifiedTaskIds(new ArrayList<>(new java.util.TreeSet<>(f.verified())))
          .setCaughtUpTaskIds(new ArrayList<>(new java.util.TreeSet<>(f.caughtUp())))
          .setFenceRequested(f.fenceRequested())
          .setCarriedChanges(f.carried().stream().map(c -> event(active.clusterId(), c)).toList())
          .build();
      plans.computeIfAbsent(target.clusterId(), c -> new ConcurrentHashMap<>())
          .putIfAbsent(planKey(active, f.plan().planVersion(), target, Set.copyOf(f.deadNodes())), f.plan());
    }
    List<MembershipEvent> queue = new ArrayList<>();
    for (MembershipChange c : a.queue()) {
      queue.add(event(active.clusterId(), c));
    }
    return ClusterState.newBuilder()
        .setClusterId(active.clusterId())
        .setVnodes(active.vnodes())
        .setPolicyId(active.policyId())
        .setReplicas(active.replicas())
        .setActiveEpoch(active.epoch())
        .setActiveMembers(EpochRecords.specs(active))
        .setActiveChecksum(ByteBuffer.wrap(active.checksum()))
        .setInFlight(inFlight)
        .setQueue(queue)
        .setPublished(publishedEpoch(a.publication().published()))
        .setComplete(sameRing(a.publication().complete(), a.publication().published()) ? null
            : publishedEpoch(a.publication().complete()))
        .setUnpublished(a.publication().unpublished().stream().map(u -> UnpublishedEpoch.newBuilder()
            .setEpoch(u.epoch())
            .setChecksum(ByteBuffer.wrap(u.checksum()))
            .setCause(u.cause() == null ? null : event(active.clusterId(), u.cause()))
            .setTaskIds(new ArrayList<>(u.taskIds()))
            .setCarriedChanges(u.carried().stream().map(c -> event(active.clusterId(), c)).toList())
            .build()).toList())
        .setSkippedEpochs(a.skipped())
        .setRejectedAttempts(a.publication().rejections())
        .setHeld(a.publication().held())
        .setReplannedChanges(a.publication().replanned().stream().map(c -> event(active.clusterId(), c)).toList())
        .setStrays(a.strays().stream().map(c -> io.ringshift.schemas.avro.StrayCopy.newBuilder()
            .setNode(c.node())
            .setZone(c.zone())
            .setRangeStart(c.start())
            .setRangeEnd(c.end())
            .build()).toList())
        .build();
  }

  private static PublishedEpoch publishedEpoch(RingSnapshot ring) {
    return ring == null ? null : PublishedEpoch.newBuilder()
        .setEpoch(ring.epoch())
        .setMembers(EpochRecords.specs(ring))
        .setChecksum(ByteBuffer.wrap(ring.checksum()))
        .build();
  }

  private static boolean sameRing(RingSnapshot a, RingSnapshot b) {
    return a == b || (a != null && b != null && a.epoch() == b.epoch()
        && java.util.Arrays.equals(a.checksum(), b.checksum()));
  }

  /**
   * The aggregate a stored state describes. Rebuilds the active ring and the in-flight plan and checks both
   * against their stored checksums, so a state written by a different placement implementation is caught.
   */
  public ClusterAggregate aggregate(ClusterState s) {
    if (s == null) {
      return ClusterAggregate.uninitialised();
    }
    RingSnapshot active = activeRing(s);
    InFlight inFlight = null;
    InFlightEpoch f = s.getInFlight();
    if (f != null) {
      HashSet<String> dead = new HashSet<>(f.getDeadNodes());
      byte[] targetChecksum = AvroBytes.toArray(f.getChecksum());
      PlanKey key = new PlanKey(f.getEpoch(), f.getPlanVersion(), active.checksumHex(),
          java.util.HexFormat.of().formatHex(targetChecksum), sorted(dead));
      Plan plan = plans.computeIfAbsent(s.getClusterId(), c -> new ConcurrentHashMap<>()).computeIfAbsent(key, k ->
          EpochPlanner.plan(active, EpochRecords.members(f.getMembers()), f.getEpoch(), f.getPlanVersion(), dead, clusterBytes));
      requireChecksum("in-flight epoch " + f.getEpoch(), plan.target(), f.getChecksum());
      // A version 1 state has no caught-up tasks and no fence request: its defaults, [] and false.
      // In the order they failed, which says which failure epochs were published (ClusterAggregate.InFlight).
      inFlight = new InFlight(plan, change(f.getCause()), List.copyOf(f.getDeadNodes()),
          new HashSet<>(f.getVerifiedTaskIds()),
          new HashSet<>(f.getCaughtUpTaskIds()), f.getFenceRequested(),
          f.getCarriedChanges().stream().map(AvroMapping::change).toList());
    }
    List<MembershipChange> queue = new ArrayList<>();
    for (MembershipEvent e : s.getQueue()) {
      queue.add(change(e));
    }
    RingSnapshot published = s.getPublished() == null ? null : ring(s, s.getPublished());
    RingSnapshot complete = s.getComplete() == null ? published : ring(s, s.getComplete());
    List<ClusterAggregate.Unpublished> unpublished = new ArrayList<>();
    for (UnpublishedEpoch u : s.getUnpublished()) {
      unpublished.add(new ClusterAggregate.Unpublished(u.getEpoch(), AvroBytes.toArray(u.getChecksum()),
          u.getCause() == null ? null : change(u.getCause()), List.copyOf(u.getTaskIds()),
          u.getCarriedChanges().stream().map(AvroMapping::change).toList()));
    }
    List<MembershipChange> replanned = new ArrayList<>();
    s.getReplannedChanges().forEach(e -> replanned.add(change(e)));
    List<EpochPlanner.StrayCopy> strays = new ArrayList<>();
    s.getStrays().forEach(c -> strays.add(new EpochPlanner.StrayCopy(c.getNode(), c.getZone(), c.getRangeStart(),
        c.getRangeEnd())));
    return new ClusterAggregate(active, inFlight, queue, s.getSkippedEpochs(), new ClusterAggregate.Publication(
        published, complete, unpublished, s.getRejectedAttempts(), s.getHeld(), replanned), strays);
  }

  /**
   * A published ring of a stored state, memoised like the active ring: it is the active ring itself in the usual
   * case, else the last few rebuilt are kept.
   */
  private RingSnapshot ring(ClusterState s, PublishedEpoch p) {
    byte[] checksum = AvroBytes.toArray(p.getChecksum());
    RingSnapshot active = activeRings.get(s.getClusterId());
    if (active != null && active.epoch() == p.getEpoch() && java.util.Arrays.equals(active.checksum(), checksum)) {
      return active;
    }
    Map<Long, RingSnapshot> ofCluster = publishedRings.computeIfAbsent(s.getClusterId(), c -> new ConcurrentHashMap<>());
    RingSnapshot cached = ofCluster.get(p.getEpoch());
    if (cached != null && java.util.Arrays.equals(cached.checksum(), checksum)) {
      return cached;
    }
    RingSnapshot ring = build(s, "published epoch", p.getEpoch(), p.getMembers(), p.getChecksum());
    if (ofCluster.size() >= 4) {
      ofCluster.clear();
    }
    ofCluster.put(p.getEpoch(), ring);
    return ring;
  }

  /**
   * The active ring of a stored state. Every input of a cluster loads its state, and building a ring of 120 x 256
   * tokens takes milliseconds, so the last ring of each cluster is memoised: a state whose active epoch and
   * checksum equal the memoised ring's describes that ring (the checksum is a SHA-256 over the token table and
   * parameters), so the ring is reused without a rebuild.
   */
  private RingSnapshot activeRing(ClusterState s) {
    RingSnapshot cached = activeRings.get(s.getClusterId());
    if (cached != null && cached.epoch() == s.getActiveEpoch()
        && java.util.Arrays.equals(cached.checksum(), AvroBytes.toArray(s.getActiveChecksum()))) {
      return cached;
    }
    RingSnapshot active = build(s, "active epoch", s.getActiveEpoch(), s.getActiveMembers(), s.getActiveChecksum());
    activeRings.put(s.getClusterId(), active);
    return active;
  }

  /** A ring of the state's cluster and parameters, checked against its stored checksum. */
  private static RingSnapshot build(ClusterState s, String what, long epoch,
      List<io.ringshift.schemas.avro.MemberSpec> members, ByteBuffer checksum) {
    PlacementPolicy policy = s.getPolicyId() == null ? PlacementPolicy.HASHED : PlacementPolicy.ofId(s.getPolicyId());
    RingBuilder builder = RingSnapshot.builder()
        .clusterId(s.getClusterId())
        .epoch(epoch)
        .replicas(s.getReplicas());
    RingSnapshot ring = EpochRecords.withMembers(builder, s.getVnodes(), policy, members, true).build();
    requireChecksum(what + " " + epoch, ring, checksum);
    return ring;
  }

  /** Forgets memoised plans of a cluster other than the one in flight. */
  void forgetPlansExcept(String clusterId, Plan current) {
    Map<PlanKey, Plan> ofCluster = plans.get(clusterId);
    if (ofCluster != null) {
      ofCluster.values().removeIf(p -> p != current);
    }
  }

  public long clusterBytes() {
    return clusterBytes;
  }

  private static PlanKey planKey(RingSnapshot active, int planVersion, RingSnapshot target, Set<String> dead) {
    return new PlanKey(target.epoch(), planVersion, active.checksumHex(), target.checksumHex(), sorted(dead));
  }

  private static List<String> sorted(Set<String> values) {
    return List.copyOf(new java.util.TreeSet<>(values));
  }

  private static void requireChecksum(String what, RingSnapshot ring, ByteBuffer stored) {
    byte[] expected = AvroBytes.toArray(stored);
    if (!java.util.Arrays.equals(expected, ring.checksum())) {
      throw new IllegalStateException(String.format(Locale.ROOT,
          "stored %s of cluster %s rebuilds to checksum %s, not the stored %s: the placement rules changed",
          what, ring.clusterId(), ring.checksumHex(), java.util.HexFormat.of().formatHex(expected)));
    }
  }
}
