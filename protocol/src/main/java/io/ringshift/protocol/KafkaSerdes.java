package io.ringshift.protocol;

import org.apache.avro.specific.SpecificRecord;
import org.apache.kafka.common.serialization.Serde;
import org.apache.kafka.common.serialization.Serdes;

/**
 * Kafka serdes over the {@link AvroSerde}s of {@link RecordSerdes} (single-object encoding; null stays null, so
 * tombstones pass through).
 */
public final class KafkaSerdes {
  private KafkaSerdes() {}

  /** A Kafka serde that encodes and decodes with {@code avro}; decoding throws {@link CodecException}. */
  public static <T extends SpecificRecord> Serde<T> of(AvroSerde<T> avro) {
    return Serdes.serdeFrom(
        (topic, record) -> record == null ? null : avro.serialize(record),
        (topic, bytes) -> bytes == null ? null : avro.deserialize(bytes));
  }
}
