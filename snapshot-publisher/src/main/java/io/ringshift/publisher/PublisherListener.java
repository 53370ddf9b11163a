package io.ringshift.publisher;

import io.ringshift.schemas.avro.EpochRecord;

/**
 * Told of each decision a {@link SnapshotPublisher} has committed, on the publisher's thread, after the commit: a
 * slow listener delays the next decision. Both methods do nothing by default.
 */
public interface PublisherListener {
  /** A listener that ignores everything. */
  PublisherListener NONE = new PublisherListener() { };

  /** {@code record} (state PUBLISHED, signed) and its snapshot are committed. */
  default void published(EpochRecord record) { }

  /** {@code record} (state REJECTED, with the reason) is committed; nothing was published. */
  default void rejected(EpochRecord record) { }
}
