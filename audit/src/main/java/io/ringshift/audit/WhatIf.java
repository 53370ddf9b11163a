package io.ringshift.audit;

import io.ringshift.protocol.CodecException;
import io.ringshift.protocol.EpochRecords;
import io.ringshift.ring.Member;
import io.ringshift.ring.PlacementPolicy;
import io.ringshift.ring.ReplicaSet;
import io.ringshift.ring.RingBuilder;
import io.ringshift.ring.RingDiff;
import io.ringshift.ring.RingException;
import io.ringshift.ring.RingSnapshot;
import io.ringshift.schemas.avro.EpochRecord;
import io.ringshift.schemas.avro.EpochState;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;

/**
 * Replays a cluster's published membership history under other ring parameters and shows what would have moved,
 * and how even the load would have been, beside what the recorded parameters did. Pure.
 *
 * <p>Each published epoch's membership is placed twice: with the epoch's recorded V and R ("actual") and with
 * the what-if V and R. Movement between consecutive published epochs is {@link RingDiff#movedReplicaFraction()}
 * (the replica data a change must copy, as a fraction of all replica data); balance is {@link #balance}. No
 * signature, checksum or chain is checked here: {@code ringshift audit} without {@code --what-if} does that.
 */
public final class WhatIf {
  private WhatIf() {}

  /**
   * One published epoch under both parameter sets.
   *
   * @param movedActual replica data moved from the previous published epoch with the recorded parameters, or
   *     null for the cluster's first published epoch
   * @param movedWhatIf the same with the what-if parameters
   * @param balanceActual {@link #balance} of the ring with the recorded parameters
   */
  public record Row(long epoch, String cause, int members, Double movedActual, Double movedWhatIf, double balanceActual,
      double balanceWhatIf) {
    public Row {
      Objects.requireNonNull(cause, "cause");
      if ((movedActual == null) != (movedWhatIf == null)) {
        throw new IllegalArgumentException("epoch " + epoch + ": movement is known under both parameter sets or "
            + "under neither");
      }
    }
  }

  /**
   * The what-if replay of one cluster.
   *
   * @param recordedVnodes the distinct V of its published epochs, in order of first use
   * @param recordedReplicas the distinct R of its published epochs
   * @param replicas the what-if R, or null when each epoch keeps its recorded R
   */
  public record ClusterWhatIf(String cluster, List<Integer> recordedVnodes, List<Integer> recordedReplicas, int vnodes,
      Integer replicas, List<Row> rows) {
    public ClusterWhatIf {
      recordedVnodes = List.copyOf(recordedVnodes);
      recordedReplicas = List.copyOf(recordedReplicas);
      rows = List.copyOf(rows);
    }

    /** Replica data moved over the whole history with the recorded parameters (a sum of fractions). */
    public double totalMovedActual() {
      return rows.stream().filter(r -> r.movedActual() != null).mapToDouble(Row::movedActual).sum();
    }

    public double totalMovedWhatIf() {
      return rows.stream().filter(r -> r.movedWhatIf() != null).mapToDouble(Row::movedWhatIf).sum();
    }

    /** The worst balance of any epoch with the recorded parameters. */
    public double worstBalanceActual() {
      return rows.stream().mapToDouble(Row::balanceActual).max().orElse(0);
    }

    public double worstBalanceWhatIf() {
      return rows.stream().mapToDouble(Row::balanceWhatIf).max().orElse(0);
    }
  }

  /**
   * Replays the PUBLISHED records of every cluster in {@code epochs} (log order; a second record of an epoch
   * already replayed is skipped, as it publishes nothing new).
   *
   * @param replicas the what-if R, or null to keep each epoch's recorded R
   * @throws io.ringshift.protocol.CodecException when a membership cannot be placed with the what-if parameters (for
   *     example a weight that gives no token at that V); the message names the member
   */
  public static List<ClusterWhatIf> replay(List<EpochRecord> epochs, int vnodes, Integer replicas) {
    return replay(epochs, vnodes, replicas, null);
  }

  /**
   * As {@link #replay(List, int, Integer)}, placing the what-if rings under {@code policy} (null: each epoch's
   * recorded policy). Under the balanced policy each what-if ring is built from the previous what-if ring's tokens,
   * as the orchestrator would have built it (docs/placement.md, section 12), so the side by side shows what the
   * allocator would have moved over the same history.
   */
  public static List<ClusterWhatIf> replay(List<EpochRecord> epochs, int vnodes, Integer replicas,
      PlacementPolicy policy) {
    Map<String, List<EpochRecord>> byCluster = new TreeMap<>();
    for (EpochRecord e : epochs) {
      if (e.getState() == EpochState.PUBLISHED) {
        byCluster.computeIfAbsent(e.getClusterId(), c -> new ArrayList<>()).add(e);
      }
    }
    List<ClusterWhatIf> out = new ArrayList<>();
    byCluster.forEach((cluster, published) -> out.add(replayCluster(cluster, published, vnodes, replicas, policy)));
    return out;
  }

  private static ClusterWhatIf replayCluster(String cluster, List<EpochRecord> published, int vnodes,
      Integer replicas, PlacementPolicy policy) {
    List<Row> rows = new ArrayList<>();
    List<Integer> recordedVnodes = new ArrayList<>();
    List<Integer> recordedReplicas = new ArrayList<>();
    Set<Long> seen = new HashSet<>();
    RingSnapshot previousActual = null;
    RingSnapshot previousWhatIf = null;
    for (EpochRecord e : published) {
      if (!seen.add(e.getEpoch())) {
        continue;
      }
      addDistinct(recordedVnodes, e.getVnodes());
      addDistinct(recordedReplicas, e.getReplicas());
      RingSnapshot actual = EpochRecords.rebuild(e);
      RingSnapshot whatIf = whatIf(e, previousWhatIf, vnodes, replicas == null ? e.getReplicas() : replicas, policy);
      Double movedActual = previousActual == null ? null
          : RingDiff.between(previousActual, actual).movedReplicaFraction();
      Double movedWhatIf = previousWhatIf == null ? null
          : RingDiff.between(previousWhatIf, whatIf).movedReplicaFraction();
      rows.add(new Row(e.getEpoch(), EpochRecords.cause(e.getCause(), false), actual.memberCount(), movedActual, movedWhatIf,
          balance(actual), balance(whatIf)));
      previousActual = actual;
      previousWhatIf = whatIf;
    }
    return new ClusterWhatIf(cluster, recordedVnodes, recordedReplicas, vnodes, replicas, rows);
  }

  /** The ring of the record's membership under the what-if parameters and policy. */
  private static RingSnapshot whatIf(EpochRecord e, RingSnapshot previous, int vnodes, int replicas,
      PlacementPolicy policy) {
    PlacementPolicy placed = policy;
    if (placed == null) {
      try {
        placed = PlacementPolicy.ofId(e.getPolicyId());
      } catch (RingException ex) {
        throw new CodecException(CodecException.Reason.UNKNOWN_POLICY, "epoch " + e.getEpoch() + " of cluster "
            + e.getClusterId() + ": " + ex.getMessage(), ex);
      }
    }
    try {
      List<Member> members = EpochRecords.members(e.getMembers());
      RingBuilder builder = placed == PlacementPolicy.BALANCED && previous != null
          && previous.policy() == PlacementPolicy.BALANCED && previous.vnodes() == vnodes
          && previous.replicas() == replicas
          ? previous.toBuilder()
          : RingSnapshot.builder().clusterId(e.getClusterId()).policy(placed).vnodes(vnodes).replicas(replicas);
      return builder.epoch(e.getEpoch()).members(members).build();
    } catch (RingException ex) {
      throw new CodecException(CodecException.Reason.INVALID_CONTENT, "epoch " + e.getEpoch() + " of cluster "
          + e.getClusterId() + ": " + ex.getMessage(), ex);
    }
  }

  private static void addDistinct(List<Integer> values, int value) {
    if (!values.contains(value)) {
      values.add(value);
    }
  }

  /**
   * How unevenly a ring loads its nodes: the largest ratio, over nodes, of the keyspace a node holds a replica of
   * to its ideal share, {@code min(1, replicasPerRange * weight / total weight)}. 1.0 is perfect; 1.10 means the
   * fullest node stores 10% more than its weight entitles it to. Zone-aware placement on zones of unequal weight
   * raises it even with many tokens, since each zone holds one replica of every range.
   */
  static double balance(RingSnapshot ring) {
    List<Member> members = ring.members();
    double[] load = new double[members.size()];
    for (int r = 0; r < ring.tokenCount(); r++) {
      double fraction = ring.rangeFraction(r);
      ReplicaSet set = ring.replicasOfRange(r);
      for (int i = 0; i < set.size(); i++) {
        load[set.memberIndex(i)] += fraction;
      }
    }
    double totalWeight = members.stream().mapToDouble(Member::weight).sum();
    double worst = 0;
    for (int m = 0; m < load.length; m++) {
      double ideal = Math.min(1.0, ring.replicasPerRange() * members.get(m).weight() / totalWeight);
      worst = Math.max(worst, load[m] / ideal);
    }
    return worst;
  }
}
