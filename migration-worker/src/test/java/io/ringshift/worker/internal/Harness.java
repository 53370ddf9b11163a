package io.ringshift.worker.internal;

import static org.awaitility.Awaitility.await;

import io.ringshift.protocol.RecordKeys;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.ringshift.protocol.RecordSerdes;
import io.ringshift.protocol.SigningKey;
import io.ringshift.protocol.TrustedKeys;
import io.ringshift.ring.RingRange;
import io.ringshift.schemas.avro.RangeCopyTask;
import io.ringshift.schemas.avro.TaskKind;
import io.ringshift.schemas.avro.TaskState;
import io.ringshift.schemas.avro.TaskStatus;
import io.ringshift.worker.Limits;
import io.ringshift.worker.NodeStores;
import io.ringshift.worker.TaskTuning;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.Predicate;

/**
 * Runs tasks the way the worker does, without Kafka: a {@link TaskContext} whose statuses go to a list (the
 * in-memory status sink) and whose control-plane view the test feeds, as the orchestrator and publisher would.
 */
final class Harness implements AutoCloseable {
  static {
    // Tests copy generated records (newBuilder(other)), which needs the Avro trust the serdes install.
    RecordSerdes.taskStatus();
  }

  static final String CLUSTER = "c1";
  static final Duration WAIT = Duration.ofSeconds(20);
  /** Small batches and frequent checkpoints, so short copies still take several of each. */
  static final TaskTuning FAST = TaskTuning.DEFAULTS.withBatch(16 * 1024, 100)
      .withCheckpoints(64 * 1024, Duration.ofMillis(200))
      .withIntervals(Duration.ofMillis(20), Duration.ofMillis(50));

  /** Signs the PUBLISHED records the tests feed; the control state trusts it. */
  static final SigningKey PUBLISHER = SigningKey.generate();

  final List<TaskStatus> statuses = new ArrayList<>();
  final ControlState control;
  final Throttles throttles;
  final Slots slots;
  final TaskContext ctx;
  final MeterRegistry registry = new SimpleMeterRegistry();
  final WorkerMetrics metrics = new WorkerMetrics(registry);
  private final TaskScheduler scheduler = new TaskScheduler("harness", 8);

  Harness(NodeStores stores, Limits limits, TaskTuning tuning, Clock clock, Duration grace) {
    control = new ControlState(TrustedKeys.of(PUBLISHER.publicKey()), clock);
    throttles = new Throttles(limits, Ticker.system());
    slots = new Slots(limits);
    StatusSink sink = s -> {
      synchronized (statuses) {
        statuses.add(s);
      }
      control.onStatus(s.getTaskId(), s);
    };
    ctx = new TaskContext("worker-test", stores, throttles, slots, sink, control, clock, Ticker.system(), tuning,
        grace, metrics);
  }

  Harness(NodeStores stores) {
    this(stores, Limits.unlimited(), FAST, Clock.systemUTC(), Duration.ZERO);
  }

  static RangeCopyTask copyTask(long epoch, RingRange range, List<String> sources, String target) {
    return task(TaskKind.COPY, epoch, range, sources, target);
  }

  static RangeCopyTask task(TaskKind kind, long epoch, RingRange range, List<String> sources, String target) {
    return RangeCopyTask.newBuilder()
        .setTaskId(RecordKeys.taskId(CLUSTER, epoch, kind == TaskKind.UNKNOWN ? TaskKind.COPY : kind, range.start(),
            range.end(), target))
        .setClusterId(CLUSTER)
        .setEpoch(epoch)
        .setKind(kind)
        .setRangeStart(range.start())
        .setRangeEnd(range.end())
        .setSources(List.copyOf(sources))
        .setTarget(target)
        .setTargetZone("az-1")
        .setEstimatedBytes(0)
        .setTimestampMillis(0)
        .setFenceRequested(false)
        .build();
  }

  /**
   * An epoch record of cluster {@link #CLUSTER} in {@code state} (STAGED, CONVERGED, FENCE_CUTOVER, REVERTED, ...),
   * with {@code stage} (null for none), unsigned as the publisher writes every state but PUBLISHED.
   */
  static io.ringshift.schemas.avro.EpochRecord epochRecord(long epoch, io.ringshift.schemas.avro.EpochState state,
      Integer stage) {
    return io.ringshift.schemas.avro.EpochRecord.newBuilder()
        .setClusterId(CLUSTER).setEpoch(epoch).setState(state).setStage(stage)
        .setCause(io.ringshift.schemas.avro.MembershipEvent.newBuilder().setClusterId(CLUSTER).setNodeId("node-t")
            .setAction(io.ringshift.schemas.avro.MembershipAction.JOIN).setZone("az-1").setRequestId("r")
            .setRequestedBy("test").setTimestampMillis(0).build())
        .setMembers(List.of()).setVnodes(1).setReplicas(1).setHashId("h").setPolicyId("p")
        .setMembershipDigest(java.nio.ByteBuffer.allocate(32)).setTargetChecksum(java.nio.ByteBuffer.allocate(32))
        .setTimestampMillis(0).build();
  }

  static RangeCopyTask fenceRequested(RangeCopyTask task) {
    return RangeCopyTask.newBuilder(task).setFenceRequested(true).build();
  }

  /** The scheduler the runs step on. */
  TaskScheduler scheduler() {
    return scheduler;
  }

  CompletableFuture<Void> start(TaskRun run) {
    return scheduler.start(run);
  }

  /** A new run of {@code task} from its latest status here, started. */
  TaskRun run(RangeCopyTask task) {
    TaskRun run = TaskRun.of(task, control.status(task.getTaskId()).orElse(null), ctx);
    start(run);
    return run;
  }

  List<TaskStatus> statuses() {
    synchronized (statuses) {
      return List.copyOf(statuses);
    }
  }

  List<TaskStatus> statuses(String taskId) {
    return statuses().stream().filter(s -> s.getTaskId().equals(taskId)).toList();
  }

  /** Waits for a status of the task matching {@code condition}, and returns the first such. */
  TaskStatus awaitStatus(String taskId, String what, Predicate<TaskStatus> condition) {
    return await(taskId + ": " + what).atMost(WAIT).pollInterval(Duration.ofMillis(10))
        .until(() -> statuses(taskId).stream().filter(condition).findFirst().orElse(null), s -> s != null);
  }

  TaskStatus awaitState(String taskId, TaskState state) {
    return awaitStatus(taskId, "state " + state, s -> s.getState() == state);
  }

  void awaitFinished(TaskRun run) {
    await("the run of " + run.task().getTaskId() + " ends").atMost(WAIT).until(run::finished);
  }

  @Override
  public void close() throws InterruptedException {
    scheduler.close();
  }
}
