package io.ringshift.ring;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * Random membership histories: random rings go through random joins, removals, weight changes and state
 * changes, and every invariant of the snapshot, of the diff and of the change is checked after every step (in
 * the manner of Kafka's TaskAssignorConvergenceTest).
 *
 * <p>Each run draws a fresh seed and prints it (see {@link Seeded}); a failure message names the seed, the
 * scenario and the step. Replay a failure exactly with
 * {@code ./mvnw -B -pl ring test -Dtest=RandomScenarioTest -Dringshift.seed=<seed>}.
 */
class RandomScenarioTest {
  private static final int SCENARIOS = 30;
  private static final int STEPS = 20;
  private static final int[] VNODES = {1, 2, 3, 4, 8, 16};

  private enum Op { JOIN, REMOVE, REWEIGHT, RESTATE }

  @Test
  void shouldKeepEveryInvariantThroughRandomJoinsRemovalsAndWeightChanges() {
    long seed = Seeded.runSeed("RandomScenarioTest");
    Random scenarios = new Random(seed);
    for (int s = 0; s < SCENARIOS; s++) {
      runScenario(seed, s, new Random(scenarios.nextLong()));
    }
  }

  private static void runScenario(long seed, int scenario, Random rnd) {
    int zones = 1 + rnd.nextInt(4);
    int vnodes = VNODES[rnd.nextInt(VNODES.length)];
    int replicas = 1 + rnd.nextInt(4);
    Set<String> taken = new HashSet<>();
    List<Member> members = new ArrayList<>();
    for (int i = 1 + rnd.nextInt(6); i > 0; i--) {
      members.add(TestRings.randomMember(rnd, taken, zones));
    }
    RingSnapshot initial = build(members, vnodes, replicas, 0);
    String context = "seed=" + seed + " scenario=" + scenario + " step=0 (initial ring, V=" + vnodes + ", R="
        + replicas + ", members " + initial.memberIds() + ")";
    verify(context, () -> RingInvariants.checkSnapshot(initial, rnd));
    RingSnapshot current = initial;

    for (int step = 1; step <= STEPS; step++) {
      Op op = pick(rnd, members.size());
      List<Member> next = new ArrayList<>(members);
      String subject;
      switch (op) {
        case JOIN -> {
          // A new zone now and then, so that rings cross the "fewer zones than R" boundary both ways.
          Member joiner = TestRings.randomMember(rnd, taken, zones + (rnd.nextInt(4) == 0 ? 1 : 0));
          next.add(joiner);
          subject = joiner.id();
        }
        case REMOVE -> subject = next.remove(rnd.nextInt(next.size())).id();
        case REWEIGHT -> {
          int i = rnd.nextInt(next.size());
          Member m = next.get(i);
          double weight = m.weight();
          while (weight == m.weight()) {
            weight = TestRings.WEIGHTS[rnd.nextInt(TestRings.WEIGHTS.length)];
          }
          next.set(i, m.withWeight(weight));
          subject = m.id() + " " + m.weight() + " -> " + weight;
        }
        case RESTATE -> {
          int i = rnd.nextInt(next.size());
          Member m = next.get(i);
          MemberState state = m.state() == MemberState.ACTIVE ? MemberState.FILLING : MemberState.ACTIVE;
          next.set(i, m.withState(state));
          subject = m.id() + " -> " + state;
        }
        default -> throw new IllegalStateException(op.name());
      }
      RingSnapshot from = current;
      RingSnapshot to = build(next, vnodes, replicas, step);
      String where = "seed=" + seed + " scenario=" + scenario + " step=" + step + " " + op + " " + subject
          + " (V=" + vnodes + ", R=" + replicas + ", members " + from.memberIds() + ")";
      verify(where, () -> checkStep(op, subject, from, to, rnd));
      current = to;
      members.clear();
      members.addAll(next);
    }
  }

  private static void checkStep(Op op, String subject, RingSnapshot from, RingSnapshot to, Random rnd) {
    RingInvariants.checkSnapshot(to, rnd);
    RingDiff diff = from.diffTo(to);
    RingInvariants.checkDiff(from, to, diff, rnd);
    String node = subject.split(" ")[0];
    switch (op) {
      case JOIN -> RingInvariants.checkGrowth(from, to, diff, node, rnd);
      case REMOVE -> RingInvariants.checkShrink(from, to, diff, node, rnd);
      case REWEIGHT -> {
        if (to.member(node).weight() > from.member(node).weight()) {
          RingInvariants.checkGrowth(from, to, diff, node, rnd);
        } else {
          RingInvariants.checkShrink(from, to, diff, node, rnd);
        }
      }
      case RESTATE -> {
        // A state only decides who may serve reads: placement stays, the checksum must not.
        RingInvariants.check(diff.isEmpty(), () -> "a state change moved ranges: " + diff.changes());
        RingInvariants.check(!from.checksumHex().equals(to.checksumHex()),
            () -> "a state change did not change the checksum");
      }
      default -> throw new IllegalStateException(op.name());
    }
  }

  private static Op pick(Random rnd, int nodes) {
    int roll = rnd.nextInt(10);
    if (roll < 4) {
      return nodes < 12 ? Op.JOIN : Op.REMOVE;
    }
    if (roll < 7) {
      return nodes > 1 ? Op.REMOVE : Op.JOIN;
    }
    return roll < 9 ? Op.REWEIGHT : Op.RESTATE;
  }

  private static RingSnapshot build(List<Member> members, int vnodes, int replicas, long epoch) {
    return RingSnapshot.builder()
        .clusterId("scenario")
        .epoch(epoch)
        .vnodes(vnodes)
        .replicas(replicas)
        .members(members)
        .build();
  }

  /** Runs a check and, when it fails, says which seed, scenario and step to replay. */
  private static void verify(String where, Runnable check) {
    try {
      check.run();
    } catch (AssertionError | RuntimeException e) {
      throw new AssertionError(where + ": " + e.getMessage(), e);
    }
  }
}
