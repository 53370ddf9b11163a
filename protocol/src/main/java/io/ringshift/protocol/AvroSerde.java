package io.ringshift.protocol;

import io.ringshift.protocol.internal.SingleObjectSerde;
import org.apache.avro.Schema;
import org.apache.avro.specific.SpecificRecord;

/**
 * Turns one kind of generated Avro record into bytes and back. This is the seam where a schema-registry serde
 * (magic byte + registry id) can later replace the built-in single-object encoding without touching the
 * domain codecs that sit on top of it.
 *
 * <p>Implementations are thread-safe.
 *
 * @param <T> the generated record class
 */
public interface AvroSerde<T extends SpecificRecord> {
  /** Encodes the record; equal records give equal bytes. */
  byte[] serialize(T record);

  /**
   * Decodes bytes written by this serde with the current or any known earlier schema, resolving them to the
   * current schema.
   *
   * @throws CodecException with {@link CodecException.Reason#BAD_HEADER}, {@link
   *     CodecException.Reason#UNKNOWN_SCHEMA} or {@link CodecException.Reason#MALFORMED}
   */
  T deserialize(byte[] bytes);

  /**
   * Avro single-object encoding ({@code C3 01}, the writer schema's 64-bit fingerprint, the body), which names
   * the writer schema in every message so readers resolve older versions.
   *
   * @param type the generated class; its schema is the reader and writer schema
   * @param olderWriterSchemas earlier versions whose bytes must still decode
   */
  static <T extends SpecificRecord> AvroSerde<T> singleObject(Class<T> type, Iterable<Schema> olderWriterSchemas) {
    return SingleObjectSerde.create(type, olderWriterSchemas);
  }
}
