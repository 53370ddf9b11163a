package io.ringshift.simulation.internal;

/**
 * A role that acts only while it holds its group's lease: the publishers and the health managers. {@link
 * World#elect} gives the lease of a group to one member.
 */
interface LeaseMember {
  String id();

  boolean up();

  boolean holdsLease();

  /** The group gave the lease to another member. */
  void loseLease();

  /** The group gave the lease to this member. */
  void takeLease();

  void start();

  void crash();
}
