package io.ringshift.ring;

/**
 * How much of the keyspace one node gains and loses in a diff, as fractions of the whole keyspace.
 *
 * @param nodeId the node
 * @param gained keyspace fraction the node newly holds a replica of (it must receive a copy)
 * @param lost keyspace fraction the node no longer holds a replica of (cleanup after the grace period)
 * @param primaryGained keyspace fraction the node becomes primary owner of
 * @param primaryLost keyspace fraction the node stops being primary owner of
 */
public record NodeMovement(String nodeId, double gained, double lost, double primaryGained, double primaryLost) {}
