package io.ringshift.orchestrator.internal;

import io.ringshift.schemas.avro.RejectedEvent;
import java.nio.ByteBuffer;

/** Builds the records of ring.rejected: the reason, where the input came from and its original bytes. */
final class Rejects {
  private Rejects() {}

  static RejectedEvent of(String topic, int partition, long offset, String key, byte[] value, String reason,
      String clusterId, String requestId, long timestampMillis) {
    return RejectedEvent.newBuilder()
        .setSourceTopic(topic)
        .setSourcePartition(partition)
        .setSourceOffset(offset)
        .setKey(key)
        .setValue(value == null ? null : ByteBuffer.wrap(value))
        .setReason(reason)
        .setClusterId(clusterId)
        .setRequestId(requestId)
        .setTimestampMillis(timestampMillis)
        .build();
  }

  static RejectedEvent of(Command c, String reason, String clusterId, String requestId, long timestampMillis) {
    return of(c.topic(), c.partition(), c.offset(), c.originalKey(), c.value(), reason, clusterId, requestId,
        timestampMillis);
  }
}
