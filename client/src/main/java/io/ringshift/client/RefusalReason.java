package io.ringshift.client;

/**
 * Why a {@link RingClient} refused a snapshot. The name is the value of the {@code reason} tag of the
 * {@code ringshift.client.refusals} counter. A refused snapshot changes nothing: the client keeps routing by
 * its last good one. Every reason is permanent for the bytes that caused it (the same bytes are refused again).
 */
public enum RefusalReason {
  /**
   * The bytes are not a snapshot this client can read: a bad single-object header, an unknown writer schema,
   * a truncated or corrupt body, an unsupported format, hash or policy, content that breaks a ring rule (a bad
   * member, a filling mark naming a non-member), a tombstone, or a cold-start file with a bad frame.
   */
  MALFORMED,
  /** The ring rebuilt from the snapshot's membership and parameters does not have the checksum it states. */
  CHECKSUM,
  /** The snapshot describes another cluster than the one the client follows. */
  WRONG_CLUSTER,
  /** The snapshot carries no signature. */
  UNSIGNED,
  /** The snapshot is signed by a key the client does not trust. */
  UNKNOWN_KEY,
  /** The signature does not verify with the trusted key it names: the snapshot was altered or forged. */
  BAD_SIGNATURE,
  /** The snapshot is the next epoch but does not carry the current snapshot's checksum as its previous one. */
  BROKEN_CHAIN,
  /** The epoch is not newer than the current one, and the bytes are not the current snapshot's. */
  OLDER_EPOCH
}
