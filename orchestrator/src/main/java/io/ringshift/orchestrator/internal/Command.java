package io.ringshift.orchestrator.internal;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import org.apache.kafka.common.serialization.Deserializer;
import org.apache.kafka.common.serialization.Serde;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.serialization.Serializer;

/**
 * An input of the per-cluster processor, re-keyed by cluster id: a membership event, a task status or the
 * publisher's answer to an epoch, carried
 * as the original bytes with where they came from, so that a reject can quote them exactly.
 *
 * @param kind which input topic the bytes come from
 * @param originalKey the record's key on its input topic (may be null)
 * @param value the record's value bytes, exactly as read
 * @param topic, partition, offset where the record was read
 */
public record Command(Kind kind, String originalKey, byte[] value, String topic, int partition, long offset) {
  /** The input the command comes from. */
  public enum Kind {
    MEMBERSHIP,
    TASK_STATUS,
    /** A PUBLISHED, REJECTED or REVERTED record of ring.epochs: the publisher's answer to an epoch. */
    EPOCH
  }

  /** Serde for the repartition topic: kind, partition, offset, then length-prefixed topic, key and value. */
  public static Serde<Command> serde() {
    Serializer<Command> serializer = (t, c) -> {
      byte[] topic = c.topic.getBytes(StandardCharsets.UTF_8);
      byte[] key = c.originalKey == null ? null : c.originalKey.getBytes(StandardCharsets.UTF_8);
      ByteBuffer out = ByteBuffer.allocate(1 + 4 + 8 + 4 + topic.length + 4 + (key == null ? 0 : key.length) + 4
          + c.value.length);
      out.put((byte) c.kind.ordinal()).putInt(c.partition).putLong(c.offset);
      out.putInt(topic.length).put(topic);
      out.putInt(key == null ? -1 : key.length);
      if (key != null) {
        out.put(key);
      }
      out.putInt(c.value.length).put(c.value);
      return out.array();
    };
    Deserializer<Command> deserializer = (t, bytes) -> {
      ByteBuffer in = ByteBuffer.wrap(bytes);
      Kind kind = Kind.values()[in.get()];
      int partition = in.getInt();
      long offset = in.getLong();
      String topic = new String(take(in, in.getInt()), StandardCharsets.UTF_8);
      int keyLength = in.getInt();
      String key = keyLength < 0 ? null : new String(take(in, keyLength), StandardCharsets.UTF_8);
      byte[] value = take(in, in.getInt());
      return new Command(kind, key, value, topic, partition, offset);
    };
    return Serdes.serdeFrom(serializer, deserializer);
  }

  private static byte[] take(ByteBuffer in, int length) {
    byte[] bytes = new byte[length];
    in.get(bytes);
    return bytes;
  }
}
