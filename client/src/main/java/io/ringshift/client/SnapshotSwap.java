package io.ringshift.client;

import io.ringshift.protocol.PublishedSnapshot;
import java.util.Objects;

/**
 * One change of the routing table, as {@link RingClient#addSwapListener swap listeners} see it.
 *
 * @param previousEpoch the epoch routed by before, or {@link RingClient#NO_EPOCH} for the first snapshot
 * @param epoch the epoch routed by now
 * @param snapshot the verified snapshot now routed by
 */
public record SnapshotSwap(long previousEpoch, long epoch, PublishedSnapshot snapshot) {
  public SnapshotSwap {
    Objects.requireNonNull(snapshot, "snapshot");
    if (epoch != snapshot.epoch()) {
      throw new IllegalArgumentException("epoch was " + epoch + " but the snapshot is of epoch "
          + snapshot.epoch() + "; they must agree");
    }
  }
}
