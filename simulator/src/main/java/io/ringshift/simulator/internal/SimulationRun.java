package io.ringshift.simulator.internal;

import io.ringshift.ring.ByteUnits;
import com.dynatrace.hash4j.hashing.Hasher64;
import com.dynatrace.hash4j.hashing.Hashing;
import io.ringshift.simulator.SimulationParameters;
import io.ringshift.simulator.SimulationProgress;
import io.ringshift.simulator.SimulationResult;
import io.ringshift.simulator.SimulationResult.BalanceRow;
import io.ringshift.simulator.SimulationResult.Change;
import io.ringshift.simulator.SimulationResult.DiffCheck;
import io.ringshift.simulator.SimulationResult.Moved;
import io.ringshift.simulator.SimulationResult.SchemeRow;
import io.ringshift.simulator.SimulationResult.Section;
import io.ringshift.simulator.SimulationResult.VnodeRow;
import io.ringshift.simulator.SimulationResult.WeightShare;
import io.ringshift.ring.ReplicaSet;
import io.ringshift.ring.RingDiff;
import io.ringshift.ring.RingHash;
import io.ringshift.ring.RingSnapshot;
import io.ringshift.simulator.placement.Fleet;
import io.ringshift.simulator.placement.JumpPlacement;
import io.ringshift.simulator.placement.ModuloPlacement;
import io.ringshift.simulator.placement.PartitionPlacement;
import io.ringshift.simulator.placement.PlacementScheme;
import io.ringshift.simulator.placement.RendezvousPlacement;
import io.ringshift.simulator.placement.RingPlacement;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;
import java.util.function.Function;
import java.util.function.ToLongFunction;

/**
 * Runs the reference scenario and produces a {@link SimulationResult}.
 *
 * <p>Design: the workload is generated once; every placement is turned into an {@link Assignment} (the replicas
 * of every key, in a flat int array) and every figure is a plain loop over two assignments, so the run is
 * bounded by lookups, not by bookkeeping. Assignments of the ring's base and changed memberships are shared
 * between sections. Only the expensive, embarrassingly parallel part (rendezvous lookups) runs on several
 * threads; timings run on one thread, after a warm-up pass, and take the best of two passes.
 */
public final class SimulationRun {
  /** V values of the sweep: powers of two from 1 to 1024. */
  static final int[] SWEEP = {1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024};
  /** Agreement threshold between simulated and diff fractions, in standard errors. */
  static final double MAX_Z = 4.0;
  private static final Hasher64 XXH3 = Hashing.xxh3_64();
  /** Expected share of the run per stage (measured on the reference scenario), for an even progress bar. */
  private static final double[] STAGE_WEIGHTS = {0.5, 1.8, 0.1, 0.7, 2.0, 6.0};
  /** The sum of the stage weights the run reports to its progress. */
  public static final double TOTAL_WEIGHT = Arrays.stream(STAGE_WEIGHTS).sum();

  private final SimulationParameters p;
  private final SimulationProgress progress;
  private final ToLongFunction<RingSnapshot> snapshotWireBytes;
  /** Keeps timing loops from being optimised away. */
  private volatile long sink;

  private Workload workload;
  private Fleet base;
  private Fleet joined;
  private Fleet drained;
  private Fleet heavier;
  private int victim;
  private int heavierNode;
  private RingPlacement ring;
  private Assignment ringBase;
  private Assignment ringJoin;
  private Assignment ringDrain;

  private SimulationRun(SimulationParameters p, SimulationProgress progress,
      ToLongFunction<RingSnapshot> snapshotWireBytes) {
    this.p = p;
    this.progress = progress;
    this.snapshotWireBytes = snapshotWireBytes;
  }

  /** See {@link io.ringshift.simulator.Simulation#run}. */
  public static SimulationResult run(SimulationParameters p, SimulationProgress progress,
      ToLongFunction<RingSnapshot> snapshotWireBytes) {
    return new SimulationRun(p, progress, snapshotWireBytes).run();
  }

  private SimulationResult run() {
    progress.stage("workload", STAGE_WEIGHTS[0]);
    workload = Workload.generate(p);
    SimulationResult.WorkloadSummary summary = workload.summary(p);
    pickFleets();

    progress.stage("ring changes", STAGE_WEIGHTS[1]);
    Section<Change> changes = changes();
    progress.stage("balance", STAGE_WEIGHTS[2]);
    Section<BalanceRow> balance = balance(summary);
    progress.stage("weights 1:2:4", STAGE_WEIGHTS[3]);
    Section<WeightShare> weights = weights();
    progress.stage("V sweep", STAGE_WEIGHTS[4]);
    Section<VnodeRow> sweep = sweep();
    progress.stage("schemes", STAGE_WEIGHTS[5]);
    Section<SchemeRow> schemes = schemes();
    long total = progress.elapsedMillis();
    progress.finish();
    return new SimulationResult(SimulationResult.FORMAT, p, summary, changes, balance, weights, sweep, schemes,
        new SimulationResult.Runtime(total, progress.stageMillis(),
            java.lang.Runtime.getRuntime().availableProcessors()));
  }

  /** The base fleet and its changed memberships; the changed nodes are picked by the seed. */
  private void pickFleets() {
    base = Fleet.uniform(p.nodes(), p.zones());
    SplittableRandom pick = new SplittableRandom(SplitMix.mix64(p.seed() ^ 0x6368616E6765L));
    victim = pick.nextInt(p.nodes());
    int other = pick.nextInt(p.nodes() - 1);
    heavierNode = other >= victim ? other + 1 : other;
    joined = base.plusNewNode();
    drained = base.minus(victim);
    heavier = base.withWeight(heavierNode, 2.0);
  }

  // ---- 1. membership changes on the ring ----

  private Section<Change> changes() {
    ring = RingPlacement.of(base, p.vnodes(), p.replicas(), 1);
    ringBase = Assignment.compute(ring, workload);
    progress.update(0.2, "join");
    RingPlacement joinRing = ring.changeTo(joined);
    ringJoin = Assignment.compute(joinRing, workload);
    Fleet.Node joiner = joined.byNumber(joined.maxNumber());
    Fleet.Node gone = base.byNumber(victim);
    Fleet.Node heavy = base.byNumber(heavierNode);
    List<Change> rows = new ArrayList<>();
    rows.add(change("join", joiner.id() + " (" + joiner.zoneName() + ") joins", joiner, joinRing, ringJoin, -1));
    progress.update(0.45, "drain");
    RingPlacement drainRing = ring.changeTo(drained);
    ringDrain = Assignment.compute(drainRing, workload);
    rows.add(change("drain", gone.id() + " (" + gone.zoneName() + ") drains", gone, drainRing, ringDrain,
        -1));
    progress.update(0.6, "failure");
    rows.add(change("failure", gone.id() + " (" + gone.zoneName() + ") fails", gone,
        drainRing, ringDrain, victim));
    progress.update(0.75, "weight");
    RingPlacement heavyRing = ring.changeTo(heavier);
    rows.add(change("weight", heavy.id() + " (" + heavy.zoneName() + ") weight 1 -> 2", heavy, heavyRing,
        Assignment.compute(heavyRing, workload), -1));
    return new Section<>("Membership changes on the ring", changesTakeaway(rows), rows);
  }

  private Change change(String name, String description, Fleet.Node node, RingPlacement next, Assignment after,
      int down) {
    MoveAnalysis analysis = MoveAnalysis.between(workload, ringBase, after, down);
    Moved moved = analysis.moved();
    RingDiff diff = ring.snapshot().diffTo(next.snapshot());
    int keys = workload.count;
    int r = after.stride;
    double expected = diff.movedReplicaFraction();
    // The sample variance can be 0 on a tiny sample; the variance a key count of 0 or 1 new replicas would
    // give at the diff's fraction is a floor that keeps the check meaningful.
    double modelVariance = Math.max(0, expected / r - expected * expected);
    double replicaSe = Math.max(analysis.replicaStandardError(keys), Math.sqrt(modelVariance / keys));
    double replicaZ = z(moved.keysFraction(), expected, replicaSe);
    double primaryExpected = diff.primaryMovedFraction();
    double primarySe = Math.sqrt(Math.max(primaryExpected * (1 - primaryExpected), 1.0 / keys) / keys);
    double primaryZ = z(moved.primaryKeysFraction(), primaryExpected, primarySe);
    DiffCheck check = new DiffCheck(diff.changes().size(), diff.changedFraction(), expected, primaryExpected,
        diff.idealMovedFraction(), moved.keysFraction(), replicaSe, replicaZ, moved.primaryKeysFraction(),
        primarySe, primaryZ, Math.abs(replicaZ) <= MAX_Z && Math.abs(primaryZ) <= MAX_Z);
    String nodes = base.size() + " -> " + next.fleet().size();
    return new Change(name, description, node.id(), node.zoneName(), nodes, moved, check, analysis.sources());
  }

  private static double z(double simulated, double expected, double se) {
    return se > 0 ? (simulated - expected) / se : 0;
  }

  private String changesTakeaway(List<Change> rows) {
    double lo = Double.POSITIVE_INFINITY;
    double hi = 0;
    double maxZ = 0;
    boolean agree = true;
    for (Change c : rows) {
      if (c.moved().keysOverIdeal() != null) {
        lo = Math.min(lo, c.moved().keysOverIdeal());
        hi = Math.max(hi, c.moved().keysOverIdeal());
      }
      maxZ = Math.max(maxZ, Math.max(Math.abs(c.diff().replicaZ()), Math.abs(c.diff().primaryZ())));
      agree &= c.diff().agrees();
    }
    Change drain = rows.get(1);
    Change failure = rows.get(2);
    SimulationResult.CopySources f = failure.sources();
    String drainSources = drain.sources().sourceNodes() == 1
        ? "from " + drain.sources().busiestSource() + " alone"
        : String.format(Locale.ROOT, "from %d nodes (%.0f%% from %s)", drain.sources().sourceNodes(),
            100 * drain.sources().busiestSourceShare(), drain.sources().busiestSource());
    String zones = f.sameZoneShare() == 0 ? "all across zones" : Units.percent(f.sameZoneShare()) + " within a zone";
    return String.format(Locale.ROOT,
        "Each change copies %.2f-%.2fx the ideal (below 1: the node got less than its fair share), and the "
            + "ring's diff %s the simulated keys (max |z| %.1f). A drain streams %s; a failure cannot, so its "
            + "rebuild reads from %d survivors (busiest %s), %s.",
        lo, hi, agree ? "agrees with" : "DISAGREES with", maxZ, drainSources, f.sourceNodes(),
        Units.percent(f.busiestSourceShare()), zones);
  }

  // ---- 2. balance of the base ring ----

  private Section<BalanceRow> balance(SimulationResult.WorkloadSummary summary) {
    List<BalanceRow> rows = new ArrayList<>(LoadBalance.of(workload, ringBase).rows());
    BalanceRow bounded = LoadBalance.boundedReads(workload, ringBase, LoadBalance.READ_BALANCE_FACTOR);
    rows.add(bounded);
    BalanceRow replicaBytes = BalanceRow.find(rows, BalanceRow.REPLICA, BalanceRow.BYTES);
    BalanceRow primaryKeys = BalanceRow.find(rows, BalanceRow.PRIMARY, BalanceRow.KEYS);
    BalanceRow primaryQps = BalanceRow.find(rows, BalanceRow.PRIMARY, BalanceRow.QPS);
    String takeaway = String.format(Locale.ROOT,
        "At V = %d the busiest node holds %.2fx the mean of primaries and %.2fx of replica bytes (CV %.1f%%; the "
            + "key sample alone gives %.1f%%). Request load follows the hot keys: the hottest key alone is %.1fx "
            + "a node's mean rate, so primary QPS max/mean is %.1f whatever the placement; reads with bounded load "
            + "(factor %.2f, RingClient.readReplica) spread hot keys over their replicas: max/mean %.2f.",
        p.vnodes(), primaryKeys.maxOverMean(), replicaBytes.maxOverMean(), 100 * replicaBytes.cv(),
        100 * replicaBytes.randomFloorCv(), summary.hottestKeyOverNodeMean(), primaryQps.maxOverMean(),
        LoadBalance.READ_BALANCE_FACTOR, bounded.maxOverMean());
    return new Section<>("Balance of the base ring", takeaway, rows);
  }

  // ---- 3. weighted shares ----

  private Section<WeightShare> weights() {
    List<WeightShare> rows = new ArrayList<>();
    Fleet mixed = base.withWeightCycle(1, 2, 4);
    String mixedName = String.format(Locale.ROOT, "%d nodes, 1:2:4 mixed in every zone", mixed.size());
    rows.addAll(weightShares(mixedName, mixed));
    progress.update(0.6, "3 nodes");
    List<Fleet.Node> three = new ArrayList<>();
    double[] w = {1, 2, 4};
    for (int i = 0; i < 3; i++) {
      three.add(new Fleet.Node(i, Fleet.Node.idOf(i), i % p.zones(), w[i]));
    }
    rows.addAll(weightShares("3 nodes of weight 1, 2, 4", new Fleet(three, p.zones())));
    List<WeightShare> mixedRows = rows.stream().filter(r -> r.ring().equals(mixedName)).toList();
    StringBuilder primaryRatio = new StringBuilder();
    StringBuilder replicaRatio = new StringBuilder();
    double worst = 0;
    WeightShare lightest = mixedRows.get(0);
    for (WeightShare s : mixedRows) {
      String sep = primaryRatio.length() == 0 ? "" : " : ";
      primaryRatio.append(sep).append(ratioText(s.primaryShare(), lightest.primaryShare()));
      if (s.replicaShare() != null && lightest.replicaShare() != null) {
        replicaRatio.append(sep).append(ratioText(s.replicaShare(), lightest.replicaShare()));
      }
    }
    boolean everywhere = rows.stream().anyMatch(r -> r.replicaShare() == null);
    for (WeightShare s : rows) {
      worst = Math.max(worst, Math.abs(s.primaryOverExpected() - 1));
    }
    String weightsPresent = mixedRows.stream().map(s -> Units.fixed(s.weight(), 0))
        .collect(java.util.stream.Collectors.joining(":"));
    String takeaway = String.format(Locale.ROOT,
        "On the mixed ring weights %s get primaries in the ratio %s%s; every class is within %.1f%% of its "
            + "expected primary share.%s",
        weightsPresent, primaryRatio, replicaRatio.length() == 0 ? "" : " and replica copies " + replicaRatio,
        100 * worst, everywhere ? " Where R >= nodes every node holds every key, so replica shares cannot "
            + "follow weight." : "");
    return new Section<>("Realised shares of weights 1:2:4", takeaway, rows);
  }

  private static String ratioText(double value, double base) {
    return base > 0 ? Units.fixed(value / base, 2) : "-";
  }

  private List<WeightShare> weightShares(String name, Fleet fleet) {
    RingPlacement placement = RingPlacement.of(fleet, p.vnodes(), Math.min(p.replicas(), fleet.size()), 1);
    Assignment a = Assignment.compute(placement, workload);
    LoadBalance loads = LoadBalance.of(workload, a);
    double total = fleet.totalWeight();
    double keys = workload.count;
    double copies = keys * a.stride;
    List<WeightShare> rows = new ArrayList<>();
    for (double weight : new double[] {1, 2, 4}) {
      int count = 0;
      double primary = 0;
      double replica = 0;
      double min = Double.POSITIVE_INFINITY;
      double max = 0;
      double expected = weight / total;
      for (Fleet.Node n : fleet.nodes()) {
        if (n.weight() != weight) {
          continue;
        }
        count++;
        double share = loads.load[0][0][n.number()] / keys;
        primary += share;
        replica += loads.load[1][0][n.number()] / copies;
        min = Math.min(min, share / expected);
        max = Math.max(max, share / expected);
      }
      if (count > 0) {
        boolean everywhere = a.stride >= fleet.size();
        rows.add(new WeightShare(name, weight, count, expected, primary / count,
            everywhere ? null : replica / count, primary / count / expected,
            everywhere ? null : replica / count / expected, min, max));
      }
    }
    return rows;
  }

  // ---- 4. the V sweep ----

  private Section<VnodeRow> sweep() {
    List<VnodeRow> rows = new ArrayList<>();
    double ideal = base.idealMovedFractionTo(joined);
    for (int i = 0; i < SWEEP.length; i++) {
      int v = SWEEP[i];
      progress.update((double) i / SWEEP.length, "V=" + v);
      RingSnapshot snapshot = RingPlacement.build(base, v, p.replicas(), 1);
      double[] builds = new double[3];
      for (int b = 0; b < builds.length; b++) {
        long t0 = System.nanoTime();
        snapshot = RingPlacement.build(base, v, p.replicas(), 1);
        builds[b] = (System.nanoTime() - t0) / 1e6;
      }
      Arrays.sort(builds);
      double[][] shares = exactShares(snapshot);
      LoadBalance.Stats primary = LoadBalance.Stats.of(shares[0]);
      LoadBalance.Stats replica = LoadBalance.Stats.of(shares[1]);
      RingDiff join = snapshot.diffTo(RingPlacement.build(joined, v, p.replicas(), 2));
      rows.add(new VnodeRow(v, snapshot.tokenCount(), builds[1], snapshot.footprintBytes(),
          12L * snapshot.tokenCount(), snapshotWireBytes.applyAsLong(snapshot), primary.max(),
          primary.cv(), replica.max(), replica.cv(), join.movedReplicaFraction() / ideal, join.changes().size(),
          timeRing(snapshot)));
    }
    return new Section<>("Virtual nodes per node (V)", sweepTakeaway(rows), rows);
  }

  /** Each member's exact share of the hash space, primary and replica level, by member index. */
  private static double[][] exactShares(RingSnapshot s) {
    int members = s.memberCount();
    double[] primary = new double[members];
    double[] replica = new double[members];
    for (int i = 0; i < s.tokenCount(); i++) {
      double f = s.rangeFraction(i);
      primary[s.tokenOwner(i)] += f;
      ReplicaSet set = s.replicasOfRange(i);
      for (int j = 0; j < set.size(); j++) {
        replica[set.memberIndex(j)] += f;
      }
    }
    return new double[][] {primary, replica};
  }

  private double timeRing(RingSnapshot s) {
    RingHash hash = s.hash();
    byte[] keys = workload.keyBytes;
    int n = workload.count;
    double best = Double.POSITIVE_INFINITY;
    long total = 0;
    for (int pass = 0; pass < 3; pass++) {
      long t0 = System.nanoTime();
      for (int k = 0; k < n; k++) {
        ReplicaSet set = s.replicasAt(hash.hash(keys, k * Workload.KEY_LENGTH, Workload.KEY_LENGTH));
        for (int j = 0; j < set.size(); j++) {
          total += set.memberIndex(j);
        }
      }
      if (pass > 0) {
        best = Math.min(best, (System.nanoTime() - t0) / (double) n);
      }
    }
    sink = total;
    return best;
  }

  private String sweepTakeaway(List<VnodeRow> rows) {
    VnodeRow chosen = row(rows, p.vnodes());
    VnodeRow quarter = row(rows, p.vnodes() / 4);
    VnodeRow fourfold = row(rows, p.vnodes() * 4);
    VnodeRow first = rows.get(0);
    VnodeRow last = rows.get(rows.size() - 1);
    StringBuilder s = new StringBuilder();
    s.append(String.format(Locale.ROOT, "Replica CV falls roughly as 1/sqrt(V), from %.0f%% at V = %d to %.1f%% at "
        + "V = %d, while the in-memory table grows from %s to %s. ", 100 * first.replicaCv(), first.vnodes(),
        100 * last.replicaCv(), last.vnodes(), ByteUnits.format(first.footprintBytes()),
        ByteUnits.format(last.footprintBytes())));
    if (chosen != null && quarter != null && fourfold != null) {
      s.append(String.format(Locale.ROOT, "4x the tokens buys ever less: V %d -> %d cuts max/mean from %.2f to "
          + "%.2f, V %d -> %d only to %.2f. ", quarter.vnodes(), chosen.vnodes(), quarter.replicaMaxOverMean(),
          chosen.replicaMaxOverMean(), chosen.vnodes(), fourfold.vnodes(), fourfold.replicaMaxOverMean()));
    }
    s.append(String.format(Locale.ROOT, "The membership-only snapshot stays %s at any V (a raw token table at V = %d "
        + "would be %s).", ByteUnits.format(last.wireSnapshotBytesEstimate()), last.vnodes(),
        ByteUnits.format(last.rawTokenTableBytes())));
    return s.toString();
  }

  private static VnodeRow row(List<VnodeRow> rows, int v) {
    return rows.stream().filter(r -> r.vnodes() == v).findFirst().orElse(null);
  }

  // ---- 5. schemes side by side ----

  /** Tokens per node of the first balanced ring row: few tokens are what the balanced policy is for. */
  static final int BALANCED_VNODES = 8;

  private Section<SchemeRow> schemes() {
    List<Function<Fleet, PlacementScheme>> factories = new ArrayList<>(List.of(
        f -> new ModuloPlacement(f, p.replicas()),
        f -> ring,
        f -> RingPlacement.balanced(f, BALANCED_VNODES, p.replicas(), 1),
        f -> RingPlacement.balanced(f, p.vnodes(), p.replicas(), 1),
        f -> new RendezvousPlacement(f, p.replicas()),
        f -> JumpPlacement.of(f, p.replicas()),
        f -> PartitionPlacement.of(f, p.partitions(), p.replicas())));
    // Share of the stage per scheme (rendezvous hashes every key once per node), for an even progress bar.
    double[] cost = {0.04, 0.03, 0.03, 0.03, 0.69, 0.08, 0.10};
    if (p.vnodes() == BALANCED_VNODES) {
      factories.remove(3); // one balanced row is enough when the run's V is the balanced row's
      cost = new double[] {0.04, 0.03, 0.06, 0.69, 0.08, 0.10};
    }
    List<SchemeRow> rows = new ArrayList<>();
    double done = 0;
    for (int i = 0; i < factories.size(); i++) {
      PlacementScheme placement = factories.get(i).apply(base);
      String name = placement.scheme();
      double start = done;
      double share = cost[i];
      Runnable step = new Runnable() {
        private int n;

        @Override
        public void run() {
          n++;
          progress.update(start + share * n / 5, name);
        }
      };
      progress.update(start, name);
      boolean isRing = placement == ring;
      Assignment before = isRing ? ringBase : Assignment.compute(placement, workload);
      step.run();
      Assignment join = isRing ? ringJoin : Assignment.compute(placement.changeTo(joined), workload);
      step.run();
      Assignment removal = isRing ? ringDrain : Assignment.compute(placement.changeTo(drained), workload);
      step.run();
      LoadBalance loads = LoadBalance.of(workload, before);
      BalanceRow replicaKeys = loads.row(BalanceRow.REPLICA, BalanceRow.KEYS, 1, 0);
      BalanceRow primaryKeys = loads.row(BalanceRow.PRIMARY, BalanceRow.KEYS, 0, 0);
      Moved joinMoved = MoveAnalysis.between(workload, before, join, -1).moved();
      Moved removalMoved = MoveAnalysis.between(workload, before, removal, -1).moved();
      step.run();
      double nanos = timeLookups(placement);
      step.run();
      rows.add(new SchemeRow(name, placement.zoneAware(), joinMoved, removalMoved, replicaKeys.maxOverMean(),
          replicaKeys.cv(), primaryKeys.maxOverMean(), primaryKeys.cv(), nanos, placement.clientState(),
          placement.clientStateBytes(snapshotWireBytes)));
      done += share;
    }
    return new Section<>("Placement schemes on the same keys", schemesTakeaway(rows), rows);
  }

  private double timeLookups(PlacementScheme placement) {
    PlacementScheme.Lookup lookup = placement.lookup();
    int[] out = new int[placement.replicas()];
    byte[] keys = workload.keyBytes;
    int n = workload.count;
    double best = Double.POSITIVE_INFINITY;
    long total = 0;
    for (int pass = 0; pass < 3; pass++) {
      long t0 = System.nanoTime();
      for (int k = 0; k < n; k++) {
        int count = lookup.replicasOf(XXH3.hashBytesToLong(keys, k * Workload.KEY_LENGTH, Workload.KEY_LENGTH), out);
        total += out[count - 1];
      }
      if (pass > 0) {
        best = Math.min(best, (System.nanoTime() - t0) / (double) n);
      }
    }
    sink = total;
    return best;
  }

  /** Built from the figures, so that it stays true for any option values. */
  private String schemesTakeaway(List<SchemeRow> rows) {
    SchemeRow modulo = scheme(rows, "modulo");
    SchemeRow ringRow = scheme(rows, "ring");
    List<String> near = new ArrayList<>();
    List<String> far = new ArrayList<>();
    for (SchemeRow r : rows) {
      if (r == modulo) {
        continue;
      }
      double worst = Math.max(nullToZero(r.join().keysOverIdeal()), nullToZero(r.removal().keysOverIdeal()));
      if (worst <= 1.25) {
        near.add(r.scheme());
      } else {
        far.add(String.format(Locale.ROOT, "%s (join %.2fx, removal %.2fx)", r.scheme(),
            nullToZero(r.join().keysOverIdeal()), nullToZero(r.removal().keysOverIdeal())));
      }
    }
    // Modulo is even but useless under change; the interesting comparison is among the consistent schemes.
    SchemeRow balanced = rows.stream().filter(r -> r != modulo)
        .min(java.util.Comparator.comparingDouble(SchemeRow::replicaKeysMaxOverMean)).orElseThrow();
    SchemeRow slowest = rows.stream().max(java.util.Comparator.comparingDouble(SchemeRow::lookupNanos)).orElseThrow();
    SchemeRow largest = rows.stream().max(java.util.Comparator.comparingLong(SchemeRow::clientStateBytes))
        .orElseThrow();
    StringBuilder s = new StringBuilder(String.format(Locale.ROOT, "Modulo copies %s of all replicas on a join "
        + "(%.0fx the ideal). ", Units.percent(modulo.join().keysFraction()),
        nullToZero(modulo.join().keysOverIdeal())));
    if (!near.isEmpty()) {
      s.append("Within 1.25x of the ideal for both a join and a removal: ").append(String.join(", ", near))
          .append(". ");
    }
    if (!far.isEmpty()) {
      s.append("Not: ").append(String.join(", ", far)).append(". ");
    }
    s.append(String.format(Locale.ROOT, "Busiest node: %.2fx the mean on the ring at V = %d, %.2fx on %s (the most "
            + "even); %s costs %.0f ns a lookup against the ring's %.0f; with %s every client holds %s.",
        ringRow.replicaKeysMaxOverMean(), p.vnodes(), balanced.replicaKeysMaxOverMean(), balanced.scheme(),
        slowest.scheme(), slowest.lookupNanos(), ringRow.lookupNanos(), largest.scheme(),
        ByteUnits.format(largest.clientStateBytes())));
    return s.toString();
  }

  private static double nullToZero(Double d) {
    return d == null ? 0 : d;
  }

  private static SchemeRow scheme(List<SchemeRow> rows, String name) {
    return rows.stream().filter(r -> r.scheme().equals(name)).findFirst().orElseThrow();
  }
}
