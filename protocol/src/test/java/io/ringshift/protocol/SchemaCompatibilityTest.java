package io.ringshift.protocol;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.ringshift.ring.RingSnapshot;
import io.ringshift.protocol.CodecException.Reason;
import io.ringshift.protocol.internal.ReleasedSchemas;
import io.ringshift.protocol.internal.SingleObjectSerde;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.apache.avro.Schema;
import org.apache.avro.SchemaNormalization;
import org.apache.avro.SchemaParser;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericRecord;
import org.apache.avro.specific.SpecificData;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Every schema under {@code src/main/avro} stays backward and forward compatible with every released version of
 * itself (docs/schemas.md, Compatibility), and keeps the house rules (docs, UNKNOWN enum defaults, optional fields).
 * Discovers the schema files itself, so a new file is checked without editing this test.
 */
class SchemaCompatibilityTest {
  /** Surefire runs in the module directory. */
  private static final Path SOURCES = Path.of("src", "main", "avro");

  private static final Path RELEASED_SOURCES = Path.of("src", "main", "resources");

  private static final String GENERATED_PACKAGE = "io.ringshift.schemas.avro.";

  /**
   * Fingerprints of the released schema files, oldest first. A released file is frozen: readers in the field
   * resolve bytes by this fingerprint. To release a new version, add v(N+1).avsc and its fingerprint here (the
   * failing test prints it); never edit a released file.
   */
  private static final Map<String, List<Long>> RELEASED_FINGERPRINTS = Map.of(
      "RingSnapshot", List.of(0xAA146FFED3B7B4F3L, 0xA66C2ECD2EB84938L, 0xDA37223633D6C13DL, 0xC3EB0AAE685AFFDDL),
      "MembershipEvent", List.of(0xFB069EB462E16665L, 0xE58E3A71E4117CB0L, 0x6D1E20B09AD0B56AL),
      "EpochRecord", List.of(0x1158A50E92038039L, 0x4A95BE8ACC21DBD5L, 0x52A60C049372EA18L,
          0xED5F9A1ACF4A76FDL, 0x8EF553406A5DCF6AL),
      "RangeCopyTask", List.of(0x30314BC3CD2BFDA1L, 0x9A62483F1E4A2B01L, 0x302C1F057F25437DL),
      "TaskStatus", List.of(0xC83DA27776AC092DL, 0x94702FEC0CE193B9L, 0x00A4383BB6649A84L,
          0x074DEC060E79B81FL),
      "RejectedEvent", List.of(0x0B3F20BD5712606DL),
      "WorkerBudgets", List.of(0x1800C3D828C59993L),
      "HotKeysReport", List.of(0xA8BEA0623667E6D5L),
      "ParticipantReport", List.of(0x9A3905A3CF7DAE42L),
      "ClusterState", List.of(0x2A1C97C3AF908020L, 0x3B070151E4DC2A45L, 0x35B37DE0B2911CB9L,
          0x8D5C4806D9BD29B0L, 0x2FBF0FF3669F39F9L, 0xCD64C1C362DB1B9AL, 0x84A968F9A39780B9L,
          0x47A51356325D93CFL));

  /** The record names, one per {@code src/main/avro/<Name>.avsc}. */
  static List<String> records() throws IOException {
    try (Stream<Path> files = Files.list(SOURCES)) {
      return files.map(p -> p.getFileName().toString())
          .filter(f -> f.endsWith(".avsc"))
          .map(f -> f.substring(0, f.length() - ".avsc".length()))
          .sorted()
          .collect(Collectors.toList());
    }
  }

  /** The schema the generated class writes: what the compatibility rules are about. */
  static Schema current(String name) {
    try {
      return SpecificData.get().getSchema(Class.forName(GENERATED_PACKAGE + name));
    } catch (ClassNotFoundException e) {
      throw new AssertionError("src/main/avro/" + name + ".avsc generated no class " + GENERATED_PACKAGE + name
          + "; a schema file must be named after the record it defines", e);
    }
  }

  @Test
  void shouldFindEverySchemaFile() throws IOException {
    assertThat(records()).as("schema files in %s", SOURCES.toAbsolutePath())
        .containsAll(RELEASED_FINGERPRINTS.keySet());
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("records")
  void shouldDefineInEverySchemaFileTheRecordItIsNamedAfter(String name) throws IOException {
    SchemaParser parser = new SchemaParser();
    for (String other : records()) {
      parser.parse(SOURCES.resolve(other + ".avsc"));
    }
    Schema fromFile = parser.getParsedNamedSchemas().stream()
        .filter(s -> s.getFullName().equals(GENERATED_PACKAGE + name))
        .findFirst()
        .orElseThrow(() -> new AssertionError(SOURCES.resolve(name + ".avsc") + " does not define "
            + GENERATED_PACKAGE + name + "; name each file after its record"));

    assertThat(fingerprint(fromFile))
        .as("the generated class %s does not match the schema files; rebuild it (mvn clean verify)", name)
        .isEqualTo(fingerprint(current(name)));
  }

  /** Checks the source tree as well as the class path: a deleted resource lingers in target/classes. */
  @ParameterizedTest(name = "{0}")
  @MethodSource("records")
  void shouldHaveAReleasedVersionOneOfEverySchema(String name) {
    String hint = String.format("%s has no released version: copy src/main/avro/%s.avsc to src/main/resources%s "
            + "(its self-contained form, with any type it names from another file written out) and add its "
            + "fingerprint %s to RELEASED_FINGERPRINTS", name, name, ReleasedSchemas.resource(name, 1),
        hex(current(name)));

    assertThat(RELEASED_SOURCES.resolve(ReleasedSchemas.resource(name, 1).substring(1))).as(hint).isRegularFile();
    assertThat(ReleasedSchemas.of(name)).as(hint).isNotEmpty();
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("records")
  void shouldReadAndBeReadByEveryReleasedVersion(String name) {
    Schema current = current(name);
    List<Schema> released = ReleasedSchemas.of(name);
    for (int version = 1; version <= released.size(); version++) {
      assertThat(SchemaRules.incompatibilities(current, released.get(version - 1)))
          .as("%s is not backward and forward compatible with released %s",
              name, ReleasedSchemas.resource(name, version))
          .isEmpty();
    }
  }

  /**
   * What a build writes must be a released version, or readers built later could not decode it. A schema
   * change is therefore released in the same change; this also catches a change to a type that another record
   * embeds (MembershipEvent in EpochRecord) without releasing the embedding record.
   */
  @ParameterizedTest(name = "{0}")
  @MethodSource("records")
  void shouldReleaseTheCurrentSchemaAsTheLatestVersion(String name) {
    List<Schema> released = ReleasedSchemas.of(name);
    assertThat(released).as("released versions of %s", name).isNotEmpty();
    int latest = released.size();

    assertThat(hex(released.get(latest - 1)))
        .as("%s changed since %s was released: release it as %s (fingerprint %s), so that readers of later "
                + "versions decode what this version writes", name, ReleasedSchemas.resource(name, latest),
            ReleasedSchemas.resource(name, latest + 1), hex(current(name)))
        .isEqualTo(hex(current(name)));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("records")
  void shouldKeepReleasedSchemaFilesFrozen(String name) {
    List<Long> expected = RELEASED_FINGERPRINTS.get(name);
    List<Schema> released = ReleasedSchemas.of(name);
    List<String> actual = new ArrayList<>();
    released.forEach(s -> actual.add(hex(s)));

    assertThat(expected)
        .as("RELEASED_FINGERPRINTS has no entry for %s; add \"%s\", List.of(%s)", name, name,
            actual.stream().map(h -> h + "L").collect(Collectors.joining(", ")))
        .isNotNull();
    assertThat(actual)
        .as("fingerprints of the released %s files; a released file must never change, and a new one needs its "
            + "fingerprint in RELEASED_FINGERPRINTS", name)
        .containsExactlyElementsOf(expected.stream().map(SingleObjectSerde::hex).collect(Collectors.toList()));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("records")
  void shouldKeepTheHouseRulesInEverySchema(String name) {
    assertThat(SchemaRules.violations(current(name))).as("house rules broken in %s", name).isEmpty();
  }

  // ---- The checks bite: deliberately broken variants of real schemas are reported. ----

  @Test
  void shouldReportANewFieldWithoutDefault() {
    Schema released = current("MembershipEvent");
    Schema variant = withFields(released, fields -> fields.add(
        new Schema.Field("probeWithoutDefault", Schema.create(Schema.Type.STRING), "A new required field.")));

    assertThat(SchemaRules.incompatibilities(variant, released))
        .singleElement().asString()
        .startsWith("backward (current reads released): READER_FIELD_MISSING_DEFAULT")
        .contains("probeWithoutDefault");
  }

  @Test
  void shouldReportARemovedFieldWithoutDefault() {
    Schema released = current("MembershipEvent");
    Schema variant = withFields(released, fields -> fields.removeIf(f -> f.name().equals("requestedBy")));

    assertThat(SchemaRules.incompatibilities(variant, released))
        .singleElement().asString()
        .startsWith("forward (released reads current): READER_FIELD_MISSING_DEFAULT")
        .contains("requestedBy");
  }

  @Test
  void shouldReportAChangedFieldType() {
    Schema released = current("RangeCopyTask");
    Schema variant = withFields(released, fields -> fields.replaceAll(f -> f.name().equals("epoch")
        ? new Schema.Field("epoch", Schema.create(Schema.Type.STRING), f.doc()) : f));

    assertThat(SchemaRules.incompatibilities(variant, released))
        .hasSize(2)
        .allSatisfy(p -> assertThat(p).contains("TYPE_MISMATCH").contains("/fields/2/type"));
  }

  @Test
  void shouldReportANewSymbolInAnEnumWithoutDefault() {
    Schema released = recordWithEnum(List.of("JOIN", "DRAIN"), null);
    Schema withSymbol = recordWithEnum(List.of("JOIN", "DRAIN", "PAUSE"), null);

    assertThat(SchemaRules.incompatibilities(withSymbol, released))
        .singleElement().asString()
        .startsWith("forward (released reads current): MISSING_ENUM_SYMBOLS")
        .contains("PAUSE");
  }

  /** The control: the changes the rules allow really are compatible, so the checks above are not trivially red. */
  @Test
  void shouldAcceptANewOptionalFieldAndANewEnumSymbolWithADefault() {
    Schema released = current("MembershipEvent");
    Schema variant = new Schema.Parser().parse(released.toString()
        .replace("\"CANCEL\",\"UNKNOWN\"]", "\"CANCEL\",\"UNKNOWN\",\"PAUSE\"]")
        .replace("{\"name\":\"replicas\"", "{\"name\":\"probeOptional\",\"type\":[\"null\",\"string\"],"
            + "\"doc\":\"A new optional field.\",\"default\":null},{\"name\":\"replicas\""));
    assertThat(variant.getField("probeOptional")).isNotNull();
    assertThat(variant.getField("action").schema().getEnumSymbols()).contains("PAUSE");

    assertThat(SchemaRules.incompatibilities(variant, released)).isEmpty();
    assertThat(SchemaRules.violations(variant)).isEmpty();
    assertThat(SchemaRules.incompatibilities(recordWithEnum(List.of("A", "UNKNOWN", "B"), "UNKNOWN"),
        recordWithEnum(List.of("A", "UNKNOWN"), "UNKNOWN"))).isEmpty();
  }

  @Test
  void shouldReportMissingDocsEnumsWithoutUnknownAndBadOptionalFields() {
    Schema released = current("TaskStatus");
    Schema variant = withFields(released, fields -> {
      fields.add(new Schema.Field("undocumented", Schema.create(Schema.Type.LONG), null, 0L));
      fields.add(new Schema.Field("nullLast", Schema.createUnion(Schema.create(Schema.Type.STRING),
          Schema.create(Schema.Type.NULL)), "Optional, the wrong way round.", "x"));
      fields.add(new Schema.Field("noDefault", Schema.createUnion(Schema.create(Schema.Type.NULL),
          Schema.create(Schema.Type.STRING)), "Optional without a default."));
      fields.add(new Schema.Field("color", recordWithEnum(List.of("RED", "BLUE"), "RED").getField("e").schema(),
          "An enum whose default is not UNKNOWN.", "RED"));
    });

    assertThat(SchemaRules.violations(variant)).containsExactlyInAnyOrder(
        "field TaskStatus.undocumented has no doc",
        "field TaskStatus.nullLast is [\"string\",\"null\"] with default x; an optional field must be [\"null\", T] "
            + "with default null",
        "field TaskStatus.noDefault is [\"null\",\"string\"] without a default; an optional field must be "
            + "[\"null\", T] with default null",
        "enum test.E has no doc",
        "enum test.E has default RED; it needs the symbol UNKNOWN as its default so that readers of this version "
            + "survive a symbol added later");
  }

  // ---- RingSnapshot: released bytes rebuild the same ring; a future member state is refused. ----

  @Test
  void shouldDecodeRingSnapshotBytesOfEveryReleasedVersionToTheSameRing() {
    RingSnapshot ring = Rings.varied();
    io.ringshift.schemas.avro.RingSnapshot current = new RingSnapshotCodec().toRecord(ring);
    for (Schema released : ReleasedSchemas.of("RingSnapshot")) {
      byte[] bytes = AvroIo.writtenAs(current, released);

      assertThat(new RingSnapshotCodec().decode(bytes).checksumHex()).isEqualTo(ring.checksumHex());
    }
  }

  /**
   * A later version that adds a member state and an optional field stays readable by this version: the state
   * resolves to UNKNOWN (the enum default) and the snapshot is refused with a clear message, never misread.
   */
  @Test
  void rejectsAFutureMemberStateRatherThanMisreadIt() {
    Schema current = current("RingSnapshot");
    Schema future = new Schema.Parser().parse(current.toString()
        .replace("\"symbols\":[\"ACTIVE\",\"FILLING\",\"UNKNOWN\"]",
            "\"symbols\":[\"ACTIVE\",\"FILLING\",\"UNKNOWN\",\"DRAINING\"]")
        .replace("{\"name\":\"signingKeyId\"",
            "{\"name\":\"region\",\"type\":[\"null\",\"string\"],\"default\":null},{\"name\":\"signingKeyId\""));
    assertThat(future.getField("region")).isNotNull();
    assertThat(SchemaRules.incompatibilities(current, future)).isEmpty();
    GenericRecord written = AvroIo.asVersion(new RingSnapshotCodec().toRecord(Rings.varied()), future);
    @SuppressWarnings("unchecked")
    List<GenericRecord> members = (List<GenericRecord>) written.get("members");
    members.get(1).put("state", new GenericData.EnumSymbol(
        future.getField("members").schema().getElementType().getField("state").schema(), "DRAINING"));
    byte[] bytes = AvroIo.singleObject(written);
    RingSnapshotCodec knowsFuture = new RingSnapshotCodec(
        AvroSerde.singleObject(io.ringshift.schemas.avro.RingSnapshot.class, List.of(future)));

    assertThatThrownBy(() -> knowsFuture.decode(bytes))
        .isInstanceOfSatisfying(CodecException.class, e -> assertThat(e.reason()).isEqualTo(Reason.INVALID_CONTENT))
        .hasMessageContaining("members[1] (id \"node-0002\"): state is one this reader does not know");
    assertThatThrownBy(() -> new RingSnapshotCodec().decode(bytes))
        .as("a reader that was not given the newer schema")
        .isInstanceOfSatisfying(CodecException.class, e -> assertThat(e.reason()).isEqualTo(Reason.UNKNOWN_SCHEMA));
  }

  private interface FieldEdit {
    void apply(List<Schema.Field> fields);
  }

  /** A copy of {@code record} with its field list edited (fields cannot be shared between two records). */
  private static Schema withFields(Schema record, FieldEdit edit) {
    List<Schema.Field> fields = new ArrayList<>();
    for (Schema.Field f : record.getFields()) {
      fields.add(new Schema.Field(f, f.schema()));
    }
    edit.apply(fields);
    return Schema.createRecord(record.getName(), record.getDoc(), record.getNamespace(), false, fields);
  }

  /** A documented record {@code test.R} with one enum field {@code e} of type {@code test.E}. */
  private static Schema recordWithEnum(List<String> symbols, String enumDefault) {
    Schema e = Schema.createEnum("E", null, "test", symbols, enumDefault);
    return Schema.createRecord("R", "A record.", "test", false,
        List.of(new Schema.Field("e", e, "The enum.")));
  }

  private static long fingerprint(Schema schema) {
    return SchemaNormalization.parsingFingerprint64(schema);
  }

  private static String hex(Schema schema) {
    return SingleObjectSerde.hex(fingerprint(schema));
  }
}
