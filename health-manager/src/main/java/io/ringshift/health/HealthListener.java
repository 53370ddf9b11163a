package io.ringshift.health;

/**
 * Told what a {@link HealthManager} sees and decides, on its probing thread; every method does nothing by default.
 * A listener must return quickly and not throw.
 */
public interface HealthListener {
  HealthListener NONE = new HealthListener() {};

  /** {@code node} missed its first probe of a run: it is suspected, not failed. */
  default void suspected(String node, String reason) {}

  /** {@code node} answered again after {@code misses} missed probes: the suspicion is dropped. */
  default void recovered(String node, int misses) {}

  /** This manager wrote a FAIL of {@code node} with {@code requestId} after {@code misses} missed probes. */
  default void failed(String node, String requestId, int misses, String reason) {}

  /**
   * FAILs that were due are held back: fewer than a majority of the probed members answer, so this manager may be
   * the one that is cut off ({@code answering} of {@code probed} answered the last round).
   */
  default void heldBack(int answering, int probed) {}

  /** A member of the cluster has no address in the manager's node list: it is not probed and never failed. */
  default void notProbed(String node) {}

  /** This manager became the one that decides ({@code true}: it holds the lease) or stopped being it. */
  default void activeChanged(boolean active) {}
}
