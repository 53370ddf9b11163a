package io.ringshift.ring;

import java.util.Random;
import java.util.function.BiConsumer;
import java.util.function.Function;

/**
 * Seeded, replayable randomized checks, in the way of jqwik's {@code @Property}: a run draws a fresh seed (or
 * takes {@code -Dringshift.seed}), prints it, derives every try from it, and a failure names the run seed, the
 * try and the generated case. Replay a whole run with {@code -Dringshift.seed=<seed>}, or just the failing case
 * with {@code -Dringshift.case=<case seed>}; for example
 * {@code ./mvnw -B -pl ring test -Dtest='PlacementProperties#shouldMoveKeysOnlyToJoiningNode' -Dringshift.case=42}.
 *
 * <p>All randomness of a try, generation and sampling alike, comes from the one {@link Random} handed to it, so
 * a seed replays the case exactly. Nothing shrinks a failing case; generators keep rings small instead.
 */
final class Seeded {
  static final String SEED_PROPERTY = "ringshift.seed";
  static final String CASE_PROPERTY = "ringshift.case";

  private Seeded() {}

  /** The seed of this run of a test: {@code -Dringshift.seed} when given, else a fresh one; printed. */
  static long runSeed(String test) {
    String fixed = System.getProperty(SEED_PROPERTY);
    long seed = fixed != null ? Long.parseLong(fixed.trim()) : new Random().nextLong();
    System.out.printf("%s seed=%d (replay: -D%s=%d)%n", test, seed, SEED_PROPERTY, seed);
    return seed;
  }

  /**
   * Checks {@code property} on {@code tries} generated cases.
   *
   * @param name printed with the seed and in failures
   * @param generator builds a case from the try's random source; its {@code toString} describes the case
   * @param property checks one case; it may draw more randomness (sample positions, keys) from the same source
   */
  static <T> void forAll(String name, int tries, Function<Random, T> generator, BiConsumer<T, Random> property) {
    String onlyCase = System.getProperty(CASE_PROPERTY);
    if (onlyCase != null) {
      long caseSeed = Long.parseLong(onlyCase.trim());
      System.out.printf("%s replaying case seed=%d%n", name, caseSeed);
      runCase(name, "replayed case", 0, caseSeed, generator, property);
      return;
    }
    long seed = runSeed(name + " (" + tries + " tries)");
    Random seeds = new Random(seed);
    for (int i = 0; i < tries; i++) {
      runCase(name, "run seed=" + seed + " (-D" + SEED_PROPERTY + "=" + seed + ")", i, seeds.nextLong(), generator,
          property);
    }
  }

  private static <T> void runCase(String name, String run, int attempt, long caseSeed,
      Function<Random, T> generator, BiConsumer<T, Random> property) {
    Random rnd = new Random(caseSeed);
    T value = generator.apply(rnd);
    try {
      property.accept(value, rnd);
    } catch (AssertionError | RuntimeException e) {
      throw new AssertionError(String.format(
          "%s falsified at try %d of %s, case seed=%d (replay only this case: -D%s=%d)%n  case: %s%n  %s",
          name, attempt, run, caseSeed, CASE_PROPERTY, caseSeed, value, e.getMessage()), e);
    }
  }
}
