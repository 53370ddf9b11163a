package io.ringshift.audit;

import java.util.Locale;
import java.util.Objects;

/**
 * One record read from {@code ring.snapshots}: its key (the cluster id), its value (the bytes a client decodes) and
 * where it was in the topic, so that a discrepancy names the exact record.
 *
 * @param key the record key, the cluster id ({@code ""} for a record without a key)
 * @param value the record value; never null (tombstones are not snapshots and are dropped when reading)
 * @param partition partition of {@code ring.snapshots}
 * @param offset offset in that partition
 */
public record SnapshotRecord(String key, byte[] value, int partition, long offset) {
  public SnapshotRecord {
    Objects.requireNonNull(key, "key");
    Objects.requireNonNull(value, "value: a tombstone is not a snapshot");
    if (partition < 0 || offset < 0) {
      throw new IllegalArgumentException(String.format(Locale.ROOT,
          "partition %d offset %d: a record position is never negative", partition, offset));
    }
  }

  /** {@code ring.snapshots partition 0 offset 7}. */
  String position() {
    return String.format(Locale.ROOT, "ring.snapshots partition %d offset %d", partition, offset);
  }
}
