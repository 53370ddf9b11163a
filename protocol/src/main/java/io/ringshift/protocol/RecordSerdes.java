package io.ringshift.protocol;

import io.ringshift.schemas.avro.ClusterState;
import io.ringshift.schemas.avro.EpochRecord;
import io.ringshift.schemas.avro.HotKeysReport;
import io.ringshift.schemas.avro.MembershipEvent;
import io.ringshift.schemas.avro.ParticipantReport;
import io.ringshift.schemas.avro.RangeCopyTask;
import io.ringshift.schemas.avro.RejectedEvent;
import io.ringshift.schemas.avro.RingSnapshot;
import io.ringshift.schemas.avro.TaskStatus;
import io.ringshift.schemas.avro.WorkerBudgets;
import io.ringshift.protocol.internal.AvroClassTrust;
import io.ringshift.protocol.internal.ReleasedSchemas;
import org.apache.avro.specific.SpecificData;
import org.apache.avro.specific.SpecificRecord;

/**
 * The serde of every record ringshift writes, one per topic value type. Each is Avro single-object encoding
 * ({@link AvroSerde#singleObject}) of the generated class, and reads bytes written with the current schema and
 * with every released version under {@code io/ringshift/protocol/released/<Record>/}, resolving them to the
 * current class (fields a writer did not know take their defaults; an enum symbol a reader does not know
 * becomes {@code UNKNOWN}).
 *
 * <p>Each method returns the same immutable, thread-safe instance on every call. Decoding throws {@link
 * CodecException} for bytes that are not a single-object message ({@link CodecException.Reason#BAD_HEADER}),
 * name a writer schema this version does not know ({@link CodecException.Reason#UNKNOWN_SCHEMA}), or are
 * truncated, corrupt or followed by extra bytes ({@link CodecException.Reason#MALFORMED}); encoding throws it
 * ({@link CodecException.Reason#INVALID_CONTENT}) for a record with a missing required field. The serdes check
 * the Avro shape only: whether an event is valid for the ring (a JOIN with a zone, a weight &gt; 0) is for the
 * consumer to decide. This module has no Kafka dependency; wrap a serde into a Kafka {@code Serde} where one is
 * needed.
 */
public final class RecordSerdes {
  // Initialised when the class is first used: the released schemas are parsed once per class loader.
  private static final AvroSerde<MembershipEvent> MEMBERSHIP_EVENT = create(MembershipEvent.class);
  private static final AvroSerde<EpochRecord> EPOCH_RECORD = create(EpochRecord.class);
  private static final AvroSerde<RangeCopyTask> RANGE_COPY_TASK = create(RangeCopyTask.class);
  private static final AvroSerde<TaskStatus> TASK_STATUS = create(TaskStatus.class);
  private static final AvroSerde<RingSnapshot> RING_SNAPSHOT = create(RingSnapshot.class);
  private static final AvroSerde<RejectedEvent> REJECTED_EVENT = create(RejectedEvent.class);
  private static final AvroSerde<ClusterState> CLUSTER_STATE = create(ClusterState.class);
  private static final AvroSerde<WorkerBudgets> WORKER_BUDGETS = create(WorkerBudgets.class);
  private static final AvroSerde<HotKeysReport> HOT_KEYS_REPORT = create(HotKeysReport.class);
  private static final AvroSerde<ParticipantReport> PARTICIPANT_REPORT = create(ParticipantReport.class);

  private RecordSerdes() {}

  /** Values of {@code ring.membership}. */
  public static AvroSerde<MembershipEvent> membershipEvent() {
    return MEMBERSHIP_EVENT;
  }

  /** Values of {@code ring.epochs}. */
  public static AvroSerde<EpochRecord> epochRecord() {
    return EPOCH_RECORD;
  }

  /** Values of {@code ring.tasks}. */
  public static AvroSerde<RangeCopyTask> rangeCopyTask() {
    return RANGE_COPY_TASK;
  }

  /** Values of {@code ring.task-status}. */
  public static AvroSerde<TaskStatus> taskStatus() {
    return TASK_STATUS;
  }

  /**
   * Values of {@code ring.snapshots}, as the raw Avro record. {@link RingSnapshotCodec} sits on top of this serde
   * and also rebuilds and verifies the ring; use it unless you need the record itself.
   */
  public static AvroSerde<RingSnapshot> ringSnapshot() {
    return RING_SNAPSHOT;
  }

  /** Values of {@code ring.rejected}: refused inputs with the reason and the original bytes. */
  public static AvroSerde<RejectedEvent> rejectedEvent() {
    return REJECTED_EVENT;
  }

  /** The orchestrator's per-cluster state (its state store and changelog topic). */
  public static AvroSerde<ClusterState> clusterState() {
    return CLUSTER_STATE;
  }

  /** Values of {@code ring.worker-budgets}: a worker group's shared byte-rate budgets. */
  public static AvroSerde<WorkerBudgets> workerBudgets() {
    return WORKER_BUDGETS;
  }

  /** Values of {@code ring.hot-keys}: a client's hottest keys. */
  public static AvroSerde<HotKeysReport> hotKeysReport() {
    return HOT_KEYS_REPORT;
  }

  /** Values of {@code ring.participants}: what a client or node routes by, under a lease. */
  public static AvroSerde<ParticipantReport> participantReport() {
    return PARTICIPANT_REPORT;
  }

  /** A single-object serde of {@code type} that also reads every released version of its schema. */
  static <T extends SpecificRecord> AvroSerde<T> create(Class<T> type) {
    String name = SpecificData.get().getSchema(type).getName();
    return AvroSerde.singleObject(type, ReleasedSchemas.of(name));
  }

  /**
   * Lets Avro instantiate the generated record classes (Avro 1.12 refuses classes from untrusted packages). Every
   * serde here does this on first use; call it yourself only when you build records before using any serde, for
   * example with a builder that fills a default made of nested records (such as {@code EpochRecord.filling}).
   * Idempotent and cheap.
   */
  public static void trustGeneratedClasses() {
    AvroClassTrust.ensureInstalled();
  }
}
