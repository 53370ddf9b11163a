package io.ringshift.simulator.internal;

/** The one 64-bit mixer of the simulator: the seeded workload streams and jump's replica draws share it. */
public final class SplitMix {
  private SplitMix() {}

  /** SplitMix64's finaliser: a fast, well-mixed 64-bit bijection. */
  public static long mix64(long z) {
    z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
    z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
    return z ^ (z >>> 31);
  }
}
