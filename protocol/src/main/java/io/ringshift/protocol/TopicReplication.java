package io.ringshift.protocol;

/**
 * How the control plane's topics are replicated: the replication factor they are created with and their {@code
 * min.insync.replicas}. A control-plane record is written with {@code acks=all}, so with 3 replicas and 2 in sync
 * the topics stay writable with one broker down and no acknowledged record is lost with one broker gone.
 *
 * @param factor the replication factor, 1 to 32767
 * @param minInSync {@code min.insync.replicas}, 1 to {@code factor}
 */
public record TopicReplication(short factor, int minInSync) {
  /** Replication factor 3, min.insync.replicas 2: production, on 3 brokers or more. */
  public static final TopicReplication PRODUCTION = new TopicReplication((short) 3, 2);

  /** @throws IllegalArgumentException naming the value that breaks its rule */
  public TopicReplication {
    if (factor < 1) {
      throw new IllegalArgumentException("replication factor was " + factor + "; it must be >= 1");
    }
    if (minInSync < 1 || minInSync > factor) {
      throw new IllegalArgumentException("min.insync.replicas was " + minInSync + "; it must be between 1 and the "
          + "replication factor " + factor);
    }
  }

  /**
   * The default for a cluster of {@code brokers} brokers: {@link #PRODUCTION} on 3 or more; one replica per broker
   * with 1 in sync on a smaller (development) cluster, which keeps it writable but loses what one broker held.
   *
   * @throws IllegalArgumentException when {@code brokers} is below 1
   */
  public static TopicReplication forBrokers(int brokers) {
    if (brokers < 1) {
      throw new IllegalArgumentException("the cluster had " + brokers + " brokers; it needs at least 1");
    }
    return brokers >= 3 ? PRODUCTION : new TopicReplication((short) brokers, 1);
  }

  /**
   * An explicit replication factor: {@code min.insync.replicas} 2 from 3 replicas up (one replica may be down), 1
   * below.
   */
  public static TopicReplication ofFactor(short factor) {
    return new TopicReplication(factor, factor >= 3 ? 2 : 1);
  }
}
