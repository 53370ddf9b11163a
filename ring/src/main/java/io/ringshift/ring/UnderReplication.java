package io.ringshift.ring;

/**
 * A group of ranges whose replica sets fall short of the replication factor for one reason.
 *
 * @param reason why the ranges are short
 * @param ranges how many ranges are affected
 * @param keyspaceFraction the fraction of the keyspace those ranges cover, in [0, 1]
 * @param detail a sentence for operators, for example {@code 3 replicas requested but only 2 nodes}
 */
public record UnderReplication(Reason reason, int ranges, double keyspaceFraction, String detail) {
  /** Why a replica set is short. */
  public enum Reason {
    /** The ring has fewer nodes than the replication factor: the set has fewer replicas than asked. */
    FEWER_NODES_THAN_REPLICAS,
    /** The ring has fewer zones than the replication factor: some replicas share a zone. */
    FEWER_ZONES_THAN_REPLICAS
  }
}
