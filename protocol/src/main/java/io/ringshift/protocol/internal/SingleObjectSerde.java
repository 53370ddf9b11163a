package io.ringshift.protocol.internal;

import io.ringshift.protocol.AvroSerde;
import io.ringshift.protocol.CodecException;
import io.ringshift.protocol.CodecException.Reason;
import java.io.ByteArrayOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.avro.Schema;
import org.apache.avro.SchemaNormalization;
import org.apache.avro.io.BinaryDecoder;
import org.apache.avro.io.DecoderFactory;
import org.apache.avro.message.BinaryMessageEncoder;
import org.apache.avro.message.SchemaStore;
import org.apache.avro.specific.SpecificData;
import org.apache.avro.specific.SpecificDatumReader;
import org.apache.avro.specific.SpecificRecord;

/**
 * Avro single-object encoding: {@code C3 01}, the little-endian CRC-64-AVRO fingerprint of the writer schema's
 * parsing canonical form, then the binary body.
 *
 * <p>Design: encoding is Avro's own {@link BinaryMessageEncoder}. Decoding reads the same frame and resolves
 * the writer schema through a {@link SchemaStore} exactly like {@code BinaryMessageDecoder}, but reads the body
 * with a {@link BinaryDecoder} over the byte array instead of the stream decoder {@code BinaryMessageDecoder}
 * uses. The reason is poison input: the stream decoder allocates whatever length a corrupt string or bytes
 * field claims (measured: 1 GiB for a 60-byte message) before it finds the bytes missing, whereas the array
 * decoder checks every length against the bytes actually present (and Avro 1.12.2 already bounds array
 * pre-sizing the same way). A corrupt message therefore costs about its own size. The frame is byte-for-byte
 * the standard one; tests check interoperability with {@code BinaryMessageDecoder} both ways.
 *
 * <p>Thread-safe: the encoder, the schema store and the cached readers are all safe to share.
 */
public final class SingleObjectSerde<T extends SpecificRecord> implements AvroSerde<T> {
  /** Marker and fingerprint: the fixed part of every message. */
  public static final int HEADER_LENGTH = 10;

  private static final byte MARKER_0 = (byte) 0xC3;
  private static final byte MARKER_1 = (byte) 0x01;

  private final Class<T> type;
  private final Schema readerSchema;
  private final SpecificData model;
  private final BinaryMessageEncoder<T> encoder;
  private final SchemaStore.Cache store = new SchemaStore.Cache();
  private final List<Long> knownFingerprints = new ArrayList<>();
  private final Map<Long, SpecificDatumReader<T>> readers = new ConcurrentHashMap<>();

  private SingleObjectSerde(Class<T> type, Iterable<Schema> olderWriterSchemas) {
    AvroClassTrust.ensureInstalled();
    this.type = type;
    this.model = new SpecificData(type.getClassLoader());
    this.readerSchema = model.getSchema(type);
    this.encoder = new BinaryMessageEncoder<>(model, readerSchema);
    register(readerSchema);
    for (Schema older : olderWriterSchemas) {
      register(older);
    }
  }

  /** A serde for the generated class {@code type} that also reads the given earlier writer schemas. */
  public static <T extends SpecificRecord> SingleObjectSerde<T> create(
      Class<T> type, Iterable<Schema> olderWriterSchemas) {
    Objects.requireNonNull(type, "type");
    Objects.requireNonNull(olderWriterSchemas, "olderWriterSchemas");
    return new SingleObjectSerde<>(type, olderWriterSchemas);
  }

  private void register(Schema schema) {
    long fingerprint = SchemaNormalization.parsingFingerprint64(schema);
    if (store.findByFingerprint(fingerprint) == null) {
      store.addSchema(schema);
      knownFingerprints.add(fingerprint);
    }
  }

  /** The schema this serde writes and resolves every message to. */
  public Schema schema() {
    return readerSchema;
  }

  /** Fingerprint of the schema this serde writes. */
  public long fingerprint() {
    return SchemaNormalization.parsingFingerprint64(readerSchema);
  }

  @Override
  public byte[] serialize(T record) {
    Objects.requireNonNull(record, "record");
    ByteArrayOutputStream out = new ByteArrayOutputStream(256);
    try {
      encoder.encode(record, out);
    } catch (IOException e) {
      throw new UncheckedIOException("writing to memory cannot fail", e);
    } catch (RuntimeException e) {
      // Avro reports a record that does not fit its schema (a null in a non-null field) this way.
      throw new CodecException(Reason.INVALID_CONTENT,
          "cannot encode " + type.getSimpleName() + ": " + e.getMessage(), e);
    }
    return out.toByteArray();
  }

  @Override
  public T deserialize(byte[] bytes) {
    Objects.requireNonNull(bytes, "bytes");
    if (bytes.length < HEADER_LENGTH) {
      throw fail(Reason.BAD_HEADER,
          "%d bytes is too short for an Avro single-object message (2-byte marker C3 01 and 8-byte schema "
              + "fingerprint, then the body)", bytes.length);
    }
    if (bytes[0] != MARKER_0 || bytes[1] != MARKER_1) {
      throw fail(Reason.BAD_HEADER,
          "not an Avro single-object message: it starts with %02X %02X, expected the marker C3 01",
          bytes[0] & 0xFF, bytes[1] & 0xFF);
    }
    long fingerprint = littleEndianLong(bytes, 2);
    SpecificDatumReader<T> reader = readerFor(fingerprint);
    BinaryDecoder decoder =
        DecoderFactory.get().binaryDecoder(bytes, HEADER_LENGTH, bytes.length - HEADER_LENGTH, null);
    T record;
    try {
      record = reader.read(null, decoder);
    } catch (EOFException e) {
      throw fail(Reason.MALFORMED,
          "truncated %s: the %d-byte message ends before the record does", type.getSimpleName(), bytes.length);
    } catch (IOException | RuntimeException e) {
      // Avro signals every way a body can be corrupt (negative lengths, bad union or enum indexes, limits)
      // with assorted runtime exceptions; to the caller they all mean "these bytes are not a valid record".
      if (e instanceof SecurityException) {
        throw new CodecException(Reason.MALFORMED, "Avro refused to instantiate " + type.getName()
            + " (" + e.getMessage() + "); the global ClassSecurityValidator no longer trusts "
            + AvroClassTrust.GENERATED_PACKAGE, e);
      }
      throw new CodecException(Reason.MALFORMED, String.format(Locale.ROOT,
          "corrupt %s body: %s", type.getSimpleName(), describe(e)), e);
    }
    try {
      if (!decoder.isEnd()) {
        throw fail(Reason.MALFORMED,
            "%d unexpected bytes after the end of the %s record", countRemaining(decoder), type.getSimpleName());
      }
    } catch (IOException e) {
      throw new UncheckedIOException("reading from memory cannot fail", e);
    }
    return record;
  }

  private SpecificDatumReader<T> readerFor(long fingerprint) {
    SpecificDatumReader<T> cached = readers.get(fingerprint);
    if (cached != null) {
      return cached;
    }
    Schema writer = store.findByFingerprint(fingerprint);
    if (writer == null) {
      throw fail(Reason.UNKNOWN_SCHEMA,
          "unknown writer schema: fingerprint %s is not a known version of %s (known: %s); was it written by "
              + "a newer ringshift?", hex(fingerprint), readerSchema.getFullName(), knownFingerprintsHex());
    }
    return readers.computeIfAbsent(fingerprint, f -> new SpecificDatumReader<>(writer, readerSchema, model));
  }

  private String knownFingerprintsHex() {
    List<String> known = new ArrayList<>(knownFingerprints.size());
    for (long f : knownFingerprints) {
      known.add(hex(f));
    }
    return String.join(", ", known);
  }

  private static int countRemaining(BinaryDecoder decoder) throws IOException {
    return decoder.inputStream().available();
  }

  private static String describe(Exception e) {
    return e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
  }

  /** Fingerprints as written in single-object headers: 16 hex digits of the unsigned value. */
  public static String hex(long fingerprint) {
    return String.format(Locale.ROOT, "0x%016X", fingerprint);
  }

  private static long littleEndianLong(byte[] bytes, int offset) {
    long value = 0;
    for (int i = 7; i >= 0; i--) {
      value = (value << 8) | (bytes[offset + i] & 0xFFL);
    }
    return value;
  }

  private static CodecException fail(Reason reason, String format, Object... args) {
    return new CodecException(reason, String.format(Locale.ROOT, format, args));
  }
}
