package io.ringshift.protocol;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import org.apache.avro.Schema;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericDatumReader;
import org.apache.avro.generic.GenericRecord;
import org.apache.avro.io.BinaryEncoder;
import org.apache.avro.io.DecoderFactory;
import org.apache.avro.io.EncoderFactory;
import org.apache.avro.message.BinaryMessageEncoder;
import org.apache.avro.specific.SpecificDatumWriter;
import org.apache.avro.specific.SpecificRecord;

/** Writing records as other schema versions would, for tests that play an older or newer writer. */
final class AvroIo {
  private AvroIo() {}

  /**
   * {@code record}'s data as a generic record of another version {@code as} of its schema, through Avro's own
   * schema resolution: fields {@code as} lacks are dropped, fields it adds take their defaults.
   */
  static GenericRecord asVersion(SpecificRecord record, Schema as) {
    try {
      ByteArrayOutputStream out = new ByteArrayOutputStream();
      BinaryEncoder encoder = EncoderFactory.get().binaryEncoder(out, null);
      new SpecificDatumWriter<SpecificRecord>(record.getSchema()).write(record, encoder);
      encoder.flush();
      return new GenericDatumReader<GenericRecord>(record.getSchema(), as)
          .read(null, DecoderFactory.get().binaryDecoder(out.toByteArray(), null));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** A single-object message of {@code record} written with its own (generic) schema. */
  static byte[] singleObject(GenericRecord record) {
    try {
      ByteArrayOutputStream out = new ByteArrayOutputStream();
      new BinaryMessageEncoder<GenericRecord>(GenericData.get(), record.getSchema()).encode(record, out);
      return out.toByteArray();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** {@code record} written as a single-object message of schema version {@code writer}. */
  static byte[] writtenAs(SpecificRecord record, Schema writer) {
    return singleObject(asVersion(record, writer));
  }
}
