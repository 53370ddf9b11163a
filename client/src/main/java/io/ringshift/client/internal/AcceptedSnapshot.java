package io.ringshift.client.internal;

import io.ringshift.protocol.PublishedSnapshot;
import java.util.Objects;

/**
 * A snapshot that passed {@link SnapshotGate}, with the exact bytes it was read from (kept to recognise a
 * byte-identical duplicate and to write the cold-start file) and its publish time. The array is shared, never
 * modified.
 *
 * @param publishedAtMillis when the snapshot was published: the Kafka record timestamp, or the one stored in
 *     the cold-start file
 */
public record AcceptedSnapshot(PublishedSnapshot snapshot, byte[] bytes, long publishedAtMillis) {
  public AcceptedSnapshot {
    Objects.requireNonNull(snapshot, "snapshot");
    Objects.requireNonNull(bytes, "bytes");
  }

  public long epoch() {
    return snapshot.epoch();
  }
}
