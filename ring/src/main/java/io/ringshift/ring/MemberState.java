package io.ringshift.ring;

/**
 * The state of a member within one snapshot. Both states own tokens and count for placement; the state
 * only decides whether clients may read from the member.
 */
public enum MemberState {
  /** Placed and read-eligible. */
  ACTIVE,
  /** Placed but still being filled (a repair target): writes go to it, reads must not. */
  FILLING
}
