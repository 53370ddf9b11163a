package io.ringshift.storage;

import java.security.SecureRandom;

/**
 * Seeds of the randomized tests: printed on every run, and replayed with {@code -Dringshift.seed=N}.
 */
final class Seeds {
  private static final SecureRandom FRESH = new SecureRandom();

  private Seeds() {}

  static long seed(String test) {
    Long fixed = Long.getLong("ringshift.seed");
    long seed = fixed != null ? fixed : FRESH.nextLong();
    System.out.printf("%s: seed %d (replay with -Dringshift.seed=%d)%n", test, seed, seed);
    return seed;
  }
}
