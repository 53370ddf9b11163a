package io.ringshift.simulation.internal;

import java.util.List;
import java.util.SplittableRandom;

/** The one source of randomness of a simulated scenario: everything random is drawn from it, in event order. */
public final class SimRandom {
  private final SplittableRandom random;

  public SimRandom(long seed) {
    this.random = new SplittableRandom(seed);
  }

  /** 0 to {@code bound - 1}. */
  public int nextInt(int bound) {
    return random.nextInt(bound);
  }

  /** {@code from} to {@code to}, both included. */
  public long between(long from, long to) {
    return from + random.nextLong(to - from + 1);
  }

  public long nextLong() {
    return random.nextLong();
  }

  /** True with probability {@code p}. */
  public boolean chance(double p) {
    return random.nextDouble() < p;
  }

  public double nextDouble() {
    return random.nextDouble();
  }

  public <T> T pick(List<T> items) {
    return items.get(random.nextInt(items.size()));
  }
}
