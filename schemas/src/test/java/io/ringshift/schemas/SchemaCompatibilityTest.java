package io.ringshift.schemas;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.ringshift.ring.RingSnapshot;
import io.ringshift.schemas.CodecException.Reason;
import io.ringshift.schemas.internal.ReleasedSchemas;
import io.ringshift.schemas.internal.SingleObjectSerde;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.avro.Schema;
import org.apache.avro.SchemaCompatibility;
import org.apache.avro.SchemaCompatibility.SchemaCompatibilityType;
import org.apache.avro.SchemaCompatibility.SchemaPairCompatibility;
import org.apache.avro.SchemaNormalization;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericRecord;
import org.apache.avro.message.BinaryMessageEncoder;
import org.junit.jupiter.api.Test;

/** Every schema change must stay backward and forward compatible with every released version (DESIGN.md). */
class SchemaCompatibilityTest {
  /**
   * Fingerprints of released schema files. A released file is frozen: readers in the field resolve bytes by
   * this fingerprint. To release a new version, add v(N+1).avsc and its fingerprint here; never edit one.
   */
  private static final Map<Integer, Long> RELEASED_RING_SNAPSHOT_FINGERPRINTS = Map.of(1, 0xAA146FFED3B7B4F3L);

  private static final Schema CURRENT = io.ringshift.schemas.avro.RingSnapshot.getClassSchema();

  @Test
  void shouldHaveReleasedAtLeastVersionOne() {
    assertThat(ReleasedSchemas.of("RingSnapshot")).isNotEmpty();
  }

  @Test
  void currentSchemaReadsEveryReleasedVersion() {
    for (Schema released : releasedRingSnapshots()) {
      SchemaPairCompatibility result = SchemaCompatibility.checkReaderWriterCompatibility(CURRENT, released);
      assertThat(result.getType())
          .as("backward: current reads %s: %s", released.getProp("version"), result.getResult().getIncompatibilities())
          .isEqualTo(SchemaCompatibilityType.COMPATIBLE);
    }
  }

  @Test
  void everyReleasedVersionReadsTheCurrentSchema() {
    for (Schema released : releasedRingSnapshots()) {
      SchemaPairCompatibility result = SchemaCompatibility.checkReaderWriterCompatibility(released, CURRENT);
      assertThat(result.getType())
          .as("forward: a released reader reads current: %s", result.getResult().getIncompatibilities())
          .isEqualTo(SchemaCompatibilityType.COMPATIBLE);
    }
  }

  @Test
  void releasedSchemaFilesAreFrozen() {
    List<Schema> released = releasedRingSnapshots();
    assertThat(released).hasSize(RELEASED_RING_SNAPSHOT_FINGERPRINTS.size());
    for (int version = 1; version <= released.size(); version++) {
      assertThat(SingleObjectSerde.hex(SchemaNormalization.parsingFingerprint64(released.get(version - 1))))
          .as("fingerprint of %s", ReleasedSchemas.resource("RingSnapshot", version))
          .isEqualTo(SingleObjectSerde.hex(RELEASED_RING_SNAPSHOT_FINGERPRINTS.get(version)));
    }
  }

  @Test
  void bytesWrittenWithEveryReleasedSchemaDecode() throws IOException {
    RingSnapshot ring = Rings.varied();
    io.ringshift.schemas.avro.RingSnapshot current = new RingSnapshotCodec().toRecord(ring);
    for (Schema released : releasedRingSnapshots()) {
      byte[] bytes = writeWith(released, current);

      assertThat(new RingSnapshotCodec().decode(bytes).checksumHex()).isEqualTo(ring.checksumHex());
    }
  }

  @Test
  void everyFieldIsDocumented() {
    List<String> undocumented = new ArrayList<>();
    collectUndocumented(CURRENT, undocumented);
    assertThat(undocumented).as("fields and named types without a doc").isEmpty();
  }

  /**
   * A later version that adds a member state and an optional field stays readable by this version: the state
   * resolves to UNKNOWN (the enum default) and the snapshot is refused with a clear message, never misread.
   */
  @Test
  void aFutureMemberStateIsRefusedNotMisread() throws IOException {
    Schema future = futureSchemaWithDrainingState();
    assertThat(SchemaCompatibility.checkReaderWriterCompatibility(CURRENT, future).getType())
        .isEqualTo(SchemaCompatibilityType.COMPATIBLE);
    assertThat(SchemaCompatibility.checkReaderWriterCompatibility(future, CURRENT).getType())
        .isEqualTo(SchemaCompatibilityType.COMPATIBLE);
    io.ringshift.schemas.avro.RingSnapshot record = new RingSnapshotCodec().toRecord(Rings.varied());
    GenericRecord written = toGeneric(future, record);
    @SuppressWarnings("unchecked")
    List<GenericRecord> members = (List<GenericRecord>) written.get("members");
    members.get(1).put("state", new GenericData.EnumSymbol(
        future.getField("members").schema().getElementType().getField("state").schema(), "DRAINING"));
    byte[] bytes = new BinaryMessageEncoder<GenericRecord>(GenericData.get(), future).encode(written).array();
    RingSnapshotCodec knowsFuture = new RingSnapshotCodec(
        AvroSerde.singleObject(io.ringshift.schemas.avro.RingSnapshot.class, List.of(future)));

    assertThatThrownBy(() -> knowsFuture.decode(bytes))
        .isInstanceOfSatisfying(CodecException.class, e -> assertThat(e.reason()).isEqualTo(Reason.INVALID_CONTENT))
        .hasMessageContaining("members[1] (id \"node-0002\"): state is one this reader does not know");
    assertThatThrownBy(() -> new RingSnapshotCodec().decode(bytes))
        .as("a reader that was not given the newer schema")
        .isInstanceOfSatisfying(CodecException.class, e -> assertThat(e.reason()).isEqualTo(Reason.UNKNOWN_SCHEMA));
  }

  private static Schema futureSchemaWithDrainingState() {
    String json = CURRENT.toString()
        .replace("\"symbols\":[\"ACTIVE\",\"FILLING\",\"UNKNOWN\"]", "\"symbols\":[\"ACTIVE\",\"FILLING\",\"UNKNOWN\",\"DRAINING\"]")
        .replace("{\"name\":\"signingKeyId\"",
            "{\"name\":\"region\",\"type\":[\"null\",\"string\"],\"default\":null},{\"name\":\"signingKeyId\"");
    assertThat(json).contains("DRAINING").contains("\"region\"");
    return new Schema.Parser().parse(json);
  }

  private static List<Schema> releasedRingSnapshots() {
    return ReleasedSchemas.of("RingSnapshot");
  }

  /** Writes {@code record}'s data with another schema of the same record, through a generic copy. */
  private static byte[] writeWith(Schema writer, io.ringshift.schemas.avro.RingSnapshot record) throws IOException {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    new BinaryMessageEncoder<GenericRecord>(GenericData.get(), writer).encode(toGeneric(writer, record), out);
    return out.toByteArray();
  }

  private static GenericRecord toGeneric(Schema writer, io.ringshift.schemas.avro.RingSnapshot record) {
    GenericData.Record generic = new GenericData.Record(writer);
    for (Schema.Field field : writer.getFields()) {
      Schema.Field currentField = record.getSchema().getField(field.name());
      Object value = currentField == null ? field.defaultVal() : record.get(currentField.pos());
      if (value == org.apache.avro.JsonProperties.NULL_VALUE) {
        value = null;
      }
      if (field.name().equals("members")) {
        Schema memberSchema = field.schema().getElementType();
        List<GenericRecord> members = new ArrayList<>();
        for (io.ringshift.schemas.avro.RingMember m : record.getMembers()) {
          GenericData.Record gm = new GenericData.Record(memberSchema);
          gm.put("id", m.getId());
          gm.put("zone", m.getZone());
          gm.put("weight", m.getWeight());
          gm.put("state", new GenericData.EnumSymbol(memberSchema.getField("state").schema(), m.getState().name()));
          members.add(gm);
        }
        value = members;
      }
      if (value instanceof ByteBuffer) {
        value = ((ByteBuffer) value).duplicate();
      }
      generic.put(field.name(), value);
    }
    return generic;
  }

  private static void collectUndocumented(Schema schema, List<String> undocumented) {
    switch (schema.getType()) {
      case RECORD:
        if (isBlank(schema.getDoc())) {
          undocumented.add(schema.getFullName());
        }
        for (Schema.Field field : schema.getFields()) {
          if (isBlank(field.doc())) {
            undocumented.add(schema.getName() + "." + field.name());
          }
          collectUndocumented(field.schema(), undocumented);
        }
        break;
      case ENUM:
        if (isBlank(schema.getDoc())) {
          undocumented.add(schema.getFullName());
        }
        break;
      case ARRAY:
        collectUndocumented(schema.getElementType(), undocumented);
        break;
      case UNION:
        schema.getTypes().forEach(t -> collectUndocumented(t, undocumented));
        break;
      default:
        break;
    }
  }

  private static boolean isBlank(String s) {
    return s == null || s.isBlank();
  }
}
