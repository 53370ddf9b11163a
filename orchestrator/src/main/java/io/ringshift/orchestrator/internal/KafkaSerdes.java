package io.ringshift.orchestrator.internal;

import io.ringshift.protocol.AvroSerde;
import org.apache.avro.specific.SpecificRecord;
import org.apache.kafka.common.serialization.Serde;
import org.apache.kafka.common.serialization.Serdes;

/** Kafka serdes over the schemas module's Avro serdes (single-object encoding; null stays null: tombstones). */
public final class KafkaSerdes {
  private KafkaSerdes() {}

  public static <T extends SpecificRecord> Serde<T> of(AvroSerde<T> avro) {
    return Serdes.serdeFrom(
        (topic, record) -> record == null ? null : avro.serialize(record),
        (topic, bytes) -> bytes == null ? null : avro.deserialize(bytes));
  }
}
