package io.ringshift.ring;

/**
 * How much of the keyspace one node gains and loses in a diff, as fractions of the whole keyspace, beside what
 * a weight-proportional placement would make it gain and lose.
 *
 * @param nodeId the node
 * @param gained keyspace fraction the node newly holds a replica of (it must receive a copy)
 * @param lost keyspace fraction the node no longer holds a replica of (cleanup after the grace period)
 * @param primaryGained keyspace fraction the node becomes primary owner of
 * @param primaryLost keyspace fraction the node stops being primary owner of
 * @param idealGained keyspace fraction the node would gain if every node held exactly its weight share:
 *     {@code max(0, held' - held)} with {@code held = min(1, min(R, nodes) * weight / totalWeight)}
 * @param idealLost the same for what it would lose
 */
public record NodeMovement(
    String nodeId,
    double gained,
    double lost,
    double primaryGained,
    double primaryLost,
    double idealGained,
    double idealLost) {}
