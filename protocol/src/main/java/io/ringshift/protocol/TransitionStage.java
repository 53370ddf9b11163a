package io.ringshift.protocol;

/**
 * Where a transition from one published ring to the next stands (docs/protocol.md, "Transition stages"). A change
 * that moves ranges is published as stages of its epoch, in this order, each a signed snapshot; the publisher moves
 * to the next only once every live participant routes by the one before:
 *
 * <ol>
 *   <li>{@link #WRITE_BOTH_READ_OLD}: writes go to the replicas of both rings, reads to the previous ring's, while the
 *       workers copy the moving ranges;
 *   <li>{@link #WRITE_BOTH_READ_NEW}: writes still go to both, reads to the new ring's, whose copies are verified;
 *   <li>{@link #FINAL}: the new ring alone, as every snapshot before stages.
 * </ol>
 *
 * Any two neighbouring stages are safe together: in each pair, every replica a participant of one stage reads from
 * is written by the participants of the other.
 */
public enum TransitionStage {
  WRITE_BOTH_READ_OLD(1),
  WRITE_BOTH_READ_NEW(2),
  FINAL(3);

  private final int order;

  TransitionStage(int order) {
    this.order = order;
  }

  /** The stage's place in a transition, 1 to 3; also its number in the signing payload. */
  public int order() {
    return order;
  }

  /** Whether writes go to the replicas of both rings. */
  public boolean writesBoth() {
    return this != FINAL;
  }

  /** Whether reads go to the new ring's replicas. */
  public boolean readsNew() {
    return this != WRITE_BOTH_READ_OLD;
  }
}
