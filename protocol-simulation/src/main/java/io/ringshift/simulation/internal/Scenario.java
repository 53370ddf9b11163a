package io.ringshift.simulation.internal;

import java.util.ArrayList;
import java.util.List;

/**
 * One scenario, drawn from a seed: the cluster's shape, the roles that run, the clocks' skews, and the operations and
 * faults at their times. The targets of an operation (which node joins, which role crashes) are drawn when it runs,
 * from the state of the world then, by the same random source.
 *
 * @param graceMillis the cleanup grace period the workers wait after an epoch is published
 * @param activeMillis how long operations and faults go on; then everything is healed and the world runs quiet
 * @param quietMillis how long the world runs quiet before the final checks (every epoch must have ended by then)
 */
public record Scenario(long seed, int initialNodes, int spareNodes, int zones, int replicas, int vnodes,
    boolean balanced, int keys, int writers, int readers, int workers, int publishers, int healthManagers,
    long graceMillis, long activeMillis, long quietMillis, List<Op> ops, boolean stages) {

  /** What can happen in a scenario. */
  public enum Kind {
    /** A spare node joins. */
    JOIN,
    /** A member drains. */
    DRAIN,
    /** A member's weight changes. */
    SET_WEIGHT,
    /** The epoch in flight, if any, is cancelled by the node its change names. */
    CANCEL,
    /** An operator declares a member failed (it may be alive). */
    FAIL,
    /** A member is lost for good (its data too): the health manager, or an operator, fails it. */
    LOSE_NODE,
    /** A node's process crashes and restarts on its data. */
    CRASH_NODE,
    /** A role's process (orchestrator, a worker, a publisher, a health manager) crashes and restarts. */
    CRASH_ROLE,
    /** A role is cut off from Kafka for a while. */
    CUT_OFF,
    /** A worker, client or health manager cannot reach one node for a while. */
    PARTITION,
    /** The publisher rejects the next epoch it would publish. */
    FORCE_REJECT,
    /** Two membership changes at once. */
    BURST,
    /** A client or node stops reporting to ring.participants for a while: its lease in the barrier lapses. */
    MUTE
  }

  /** One operation or fault, at {@code at} milliseconds. */
  public record Op(long at, Kind kind) {
    @Override
    public String toString() {
      return kind + "@" + at + "ms";
    }
  }

  private static final Kind[] WEIGHTED = {
      Kind.JOIN, Kind.JOIN, Kind.JOIN, Kind.DRAIN, Kind.DRAIN, Kind.SET_WEIGHT, Kind.CANCEL, Kind.CANCEL,
      Kind.FAIL, Kind.LOSE_NODE, Kind.CRASH_NODE, Kind.CRASH_NODE, Kind.CRASH_ROLE, Kind.CRASH_ROLE, Kind.CRASH_ROLE,
      Kind.CUT_OFF, Kind.CUT_OFF, Kind.PARTITION, Kind.PARTITION, Kind.FORCE_REJECT, Kind.BURST, Kind.MUTE};

  /** The scenario of {@code seed}. */
  public static Scenario of(long seed) {
    SimRandom r = new SimRandom(seed ^ 0x5DEECE66DL);
    int zones = 3;
    int replicas = r.chance(0.7) ? 3 : 2;
    int initial = (int) r.between(replicas + 2, 7);
    int spares = (int) r.between(2, 3);
    int vnodes = r.pick(List.of(2, 4, 8));
    boolean balanced = r.chance(0.25);
    int keys = (int) r.between(40, 120);
    long active = r.between(120_000, 240_000);
    int count = (int) r.between(9, 15);
    List<Op> ops = new ArrayList<>();
    for (int i = 0; i < count; i++) {
      ops.add(new Op(r.between(15_000, active), WEIGHTED[r.nextInt(WEIGHTED.length)]));
    }
    ops.sort(java.util.Comparator.comparingLong(Op::at).thenComparing(Op::kind));
    int workers = (int) r.between(1, 2);
    int publishers = (int) r.between(1, 2);
    int healths = r.chance(0.8) ? 1 : 2;
    // Most scenarios publish their changes in transition stages; some at the fence, as a publisher with stages off.
    boolean stages = r.chance(0.85);
    return new Scenario(seed, initial, spares, zones, replicas, vnodes, balanced, keys, 2, 2, workers, publishers,
        healths, 120_000, active, 420_000, List.copyOf(ops), stages);
  }

  @Override
  public String toString() {
    return "scenario " + seed + ": " + initialNodes + " nodes + " + spareNodes + " spares in " + zones + " zones, R="
        + replicas + ", " + vnodes + " vnodes" + (balanced ? " (balanced)" : "") + ", " + keys + " keys, " + workers
        + " worker(s), " + publishers + " publisher(s), " + healthManagers + " health manager(s), "
        + (stages ? "transition stages" : "fence cutovers") + "; ops " + ops;
  }
}
