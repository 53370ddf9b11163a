package io.ringshift.protocol;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.ringshift.protocol.CodecException.Reason;
import io.ringshift.schemas.avro.EpochRecord;
import io.ringshift.schemas.avro.EpochState;
import io.ringshift.schemas.avro.MemberSpecState;
import io.ringshift.schemas.avro.MembershipAction;
import io.ringshift.schemas.avro.MembershipEvent;
import io.ringshift.schemas.avro.RangeCopyTask;
import io.ringshift.schemas.avro.TaskKind;
import io.ringshift.schemas.avro.TaskState;
import io.ringshift.schemas.avro.TaskStatus;
import java.util.List;
import java.util.function.Function;
import java.util.function.Supplier;
import org.apache.avro.Schema;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericRecord;
import org.apache.avro.specific.SpecificRecord;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * A newer writer adds a symbol to an enum; this version reads the symbol as UNKNOWN (the enum's default) instead
 * of failing, for every enum of every record, wherever it sits (top level, inside an array, inside an embedded
 * record).
 */
class FutureEnumSymbolTest {
  /** One enum occurrence: the record, the enum's name, where to put the symbol, and where to read it back. */
  record Case<T extends SpecificRecord>(
      String name,
      Class<T> type,
      Supplier<T> sample,
      String enumName,
      List<String> path,
      Function<T, Enum<?>> read) {
    @Override
    public String toString() {
      return name;
    }
  }

  static List<Case<?>> cases() {
    return List.of(
        new Case<>("MembershipEvent.action", MembershipEvent.class, SampleRecords::fullMembershipEvent,
            "MembershipAction", List.of("action"), MembershipEvent::getAction),
        new Case<>("MembershipEvent.initialMembers[2].state", MembershipEvent.class,
            SampleRecords::fullMembershipEvent, "MemberSpecState", List.of("initialMembers", "2", "state"),
            e -> e.getInitialMembers().get(2).getState()),
        new Case<>("EpochRecord.state", EpochRecord.class, SampleRecords::fullEpochRecord,
            "EpochState", List.of("state"), EpochRecord::getState),
        new Case<>("EpochRecord.members[1].state", EpochRecord.class, SampleRecords::fullEpochRecord,
            "MemberSpecState", List.of("members", "1", "state"), r -> r.getMembers().get(1).getState()),
        new Case<>("EpochRecord.cause.action", EpochRecord.class, SampleRecords::fullEpochRecord,
            "MembershipAction", List.of("cause", "action"), r -> r.getCause().getAction()),
        new Case<>("RangeCopyTask.kind", RangeCopyTask.class, SampleRecords::fullRangeCopyTask,
            "TaskKind", List.of("kind"), RangeCopyTask::getKind),
        new Case<>("TaskStatus.state", TaskStatus.class, SampleRecords::fullTaskStatus,
            "TaskState", List.of("state"), TaskStatus::getState));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("cases")
  <T extends SpecificRecord> void shouldReadASymbolAddedLaterAsUnknown(Case<T> c) {
    T record = c.sample().get();
    Schema future = withExtraSymbol(record.getSchema(), c.enumName(), "FUTURE_SYMBOL");
    assertThat(SchemaRules.incompatibilities(record.getSchema(), future))
        .as("adding a symbol to an enum with a default is a compatible change").isEmpty();
    GenericRecord written = AvroIo.asVersion(record, future);
    put(written, c.path(), "FUTURE_SYMBOL");
    byte[] bytes = AvroIo.singleObject(written);
    AvroSerde<T> knowsFuture = AvroSerde.singleObject(c.type(), List.of(future));

    T decoded = knowsFuture.deserialize(bytes);

    assertThat(c.read().apply(decoded)).hasToString("UNKNOWN");
    assertThat(c.read().apply(record)).as("the sample's own value").isNotNull().isNotEqualTo(c.read().apply(decoded));
    assertThatThrownBy(() -> RecordSerdes.create(c.type()).deserialize(bytes))
        .as("a serde not given the newer schema cannot resolve it and says so")
        .isInstanceOfSatisfying(CodecException.class, e -> assertThat(e.reason()).isEqualTo(Reason.UNKNOWN_SCHEMA));
  }

  /** The enums these cases cover are all the enums there are, so a new enum needs a case here. */
  @org.junit.jupiter.api.Test
  void shouldCoverEveryEnum() {
    List<Class<? extends Enum<?>>> all = List.of(MembershipAction.class, MemberSpecState.class, EpochState.class,
        TaskKind.class, TaskState.class);
    assertThat(cases()).extracting(Case::enumName)
        .containsAll(all.stream().map(Class::getSimpleName).toList());
  }

  /** {@code schema} with {@code symbol} appended to the enum named {@code enumName}, which must occur once. */
  private static Schema withExtraSymbol(Schema schema, String enumName, String symbol) {
    String json = schema.toString();
    String marker = "\"type\":\"enum\",\"name\":\"" + enumName + "\"";
    int at = json.indexOf(marker);
    assertThat(at).as("enum %s in %s", enumName, schema.getName()).isNotNegative();
    assertThat(json.indexOf(marker, at + 1)).as("enum %s defined once", enumName).isNegative();
    int close = json.indexOf("\"UNKNOWN\"]", at);
    String future = json.substring(0, close) + "\"UNKNOWN\",\"" + symbol + "\"]"
        + json.substring(close + "\"UNKNOWN\"]".length());
    return new Schema.Parser().parse(future);
  }

  /** Sets the enum at {@code path} (field names, and list indexes as numbers) to {@code symbol}. */
  private static void put(GenericRecord root, List<String> path, String symbol) {
    Object parent = root;
    for (String step : path.subList(0, path.size() - 1)) {
      parent = parent instanceof List<?> list ? list.get(Integer.parseInt(step)) : ((GenericRecord) parent).get(step);
    }
    GenericRecord owner = (GenericRecord) parent;
    String field = path.get(path.size() - 1);
    owner.put(field, new GenericData.EnumSymbol(owner.getSchema().getField(field).schema(), symbol));
  }
}
