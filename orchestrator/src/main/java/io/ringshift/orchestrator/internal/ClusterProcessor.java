package io.ringshift.orchestrator.internal;

import io.ringshift.orchestrator.internal.ClusterAggregate.EpochEvent;
import io.ringshift.orchestrator.internal.ClusterAggregate.Rejection;
import io.ringshift.orchestrator.internal.ClusterAggregate.TaskCancelled;
import io.ringshift.orchestrator.internal.ClusterAggregate.TaskEvent;
import io.ringshift.orchestrator.internal.ClusterAggregate.Transition;
import io.ringshift.ring.RingException;
import io.ringshift.protocol.RecordKeys;
import io.ringshift.protocol.RecordSerdes;
import io.ringshift.protocol.AvroBytes;
import io.ringshift.protocol.EpochRecords;
import io.ringshift.schemas.avro.ClusterState;
import io.ringshift.schemas.avro.EpochRecord;
import io.ringshift.schemas.avro.EpochState;
import io.ringshift.schemas.avro.MembershipAction;
import io.ringshift.schemas.avro.MembershipEvent;
import io.ringshift.schemas.avro.TaskStatus;
import java.util.Objects;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.state.KeyValueStore;

/**
 * Second stage: one cluster's aggregate, loaded from the state store, advanced by the input, stored back, and
 * its effects forwarded. Under exactly_once_v2 the store update, the outputs and the input offset commit
 * together, so a restart never emits an epoch or a task twice.
 */
final class ClusterProcessor implements Processor<String, Command, String, Output> {
  private final String storeName;
  private final String membershipTopic;
  private final AvroMapping mapping;
  private final OrchestratorMetrics metrics;
  private ProcessorContext<String, Output> context;
  private KeyValueStore<String, ClusterState> store;

  ClusterProcessor(String storeName, String membershipTopic, AvroMapping mapping, OrchestratorMetrics metrics) {
    this.storeName = storeName;
    this.membershipTopic = membershipTopic;
    this.mapping = mapping;
    this.metrics = metrics;
  }

  @Override
  public void init(ProcessorContext<String, Output> context) {
    this.context = context;
    this.store = context.getStateStore(storeName);
  }

  @Override
  public void process(Record<String, Command> record) {
    String clusterId = record.key();
    ClusterState stored = store.get(clusterId);
    Step step = step(mapping, metrics, membershipTopic, clusterId, stored, record.value(), record.timestamp());
    step.outputs().forEach(context::forward);
    if (!Objects.equals(step.next(), stored)) {
      store.put(clusterId, step.next());
    }
  }

  /** What one input does to a cluster: the state to store and the records to emit, in order. */
  record Step(ClusterState next, java.util.List<Record<String, Output>> outputs) {}

  /**
   * Advances cluster {@code clusterId} from {@code stored} by {@code command}, read at {@code ts}: pure but for the
   * meters and the mapping's plan memo. The Kafka Streams processor stores and forwards what it returns, in one
   * exactly-once commit; the deterministic simulation runs the same step.
   */
  static Step step(AvroMapping mapping, OrchestratorMetrics metrics, String membershipTopic, String clusterId,
      ClusterState stored, Command command, long ts) {
    ClusterAggregate aggregate = mapping.aggregate(stored);
    Transition transition;
    String requestId = null;
    if (command.kind() == Command.Kind.MEMBERSHIP) {
      MembershipEvent event = RecordSerdes.membershipEvent().deserialize(command.value());
      requestId = event.getRequestId();
      transition = onMembership(mapping, aggregate, event);
    } else if (command.kind() == Command.Kind.EPOCH) {
      EpochRecord epoch = RecordSerdes.epochRecord().deserialize(command.value());
      metrics.answer(epoch.getState().name());
      byte[] checksum = AvroBytes.toArray(epoch.getTargetChecksum());
      String reason = epoch.getReason() == null ? "no reason given" : epoch.getReason();
      transition = switch (epoch.getState()) {
        case PUBLISHED -> aggregate.onPublished(epoch.getEpoch(), checksum, epoch.getFilling() != null
            && !epoch.getFilling().isEmpty(), () -> EpochRecords.rebuild(epoch));
        case REVERTED -> aggregate.onReverted(epoch.getEpoch(), checksum, reason, mapping.clusterBytes());
        default -> aggregate.onRejected(epoch.getEpoch(), checksum, reason, mapping.clusterBytes());
      };
    } else {
      TaskStatus status = RecordSerdes.taskStatus().deserialize(command.value());
      transition = aggregate.onStatus(status.getTaskId(), status.getEpoch(), AvroMapping.progress(status.getState()),
          mapping.clusterBytes());
    }
    java.util.List<Record<String, Output>> outputs = new java.util.ArrayList<>();
    for (ClusterAggregate.Effect effect : transition.effects()) {
      if (effect instanceof EpochEvent e) {
        metrics.epoch(e.state());
        outputs.add(new Record<>(clusterId, new Output.Epoch(AvroMapping.epochRecord(e, ts)), ts));
      } else if (effect instanceof TaskEvent t) {
        outputs.add(new Record<>(t.task().taskId(),
            new Output.Task(AvroMapping.task(clusterId, t.epoch(), t.task(), t.fenceRequested(), ts)), ts));
      } else if (effect instanceof TaskCancelled c) {
        outputs.add(new Record<>(c.taskId(), new Output.Task(null), ts));
      } else if (effect instanceof Rejection r) {
        metrics.rejected(OrchestratorMetrics.refusal(r.reason(), command.kind() == Command.Kind.EPOCH));
        outputs.add(rejectRecord(membershipTopic, r, command, clusterId, requestId, ts));
      }
    }
    ClusterState next = mapping.state(transition.next());
    if (transition.next().initialised() || stored != null) {
      // Only clusters that exist get gauges: a change for an unknown cluster id must not add a series.
      metrics.cluster(clusterId, transition.next());
    }
    if (transition.next().initialised()) {
      ClusterAggregate.InFlight inFlight = transition.next().inFlight();
      mapping.forgetPlansExcept(clusterId, inFlight == null ? null : inFlight.plan());
    }
    return new Step(next, outputs);
  }

  /**
   * The reject of the input being processed quotes its bytes and position; a queued change refused when its
   * turn came (its input was committed long ago) is quoted as the event it was, re-encoded, at position -1.
   */
  private static Record<String, Output> rejectRecord(String membershipTopic, Rejection r, Command command,
      String clusterId, String requestId, long ts) {
    if (r.origin() == null || (command.kind() == Command.Kind.MEMBERSHIP
        && r.origin().requestId() != null && r.origin().requestId().equals(requestId))) {
      return new Record<>(command.originalKey() == null ? "" : command.originalKey(),
          new Output.Reject(Rejects.of(command, r.reason(), clusterId, requestId, ts)), ts);
    }
    MembershipEvent event = AvroMapping.event(clusterId, r.origin());
    String key = RecordKeys.membershipKey(event);
    return new Record<>(key, new Output.Reject(Rejects.of(membershipTopic, -1, -1, key,
        RecordSerdes.membershipEvent().serialize(event), r.reason(), clusterId, event.getRequestId(), ts)), ts);
  }

  private static Transition onMembership(AvroMapping mapping, ClusterAggregate aggregate, MembershipEvent event) {
    if (event.getAction() == MembershipAction.INIT) {
      if (aggregate.initialised()) {
        return aggregate.init(aggregate.active(), AvroMapping.change(event));
      }
      try {
        return aggregate.init(AvroMapping.initialRing(event), AvroMapping.change(event));
      } catch (RingException e) {
        return new Transition(aggregate, java.util.List.of(new Rejection(e.getMessage(), null)));
      }
    }
    if (event.getAction() == MembershipAction.CANCEL) {
      return aggregate.onCancel(AvroMapping.change(event), mapping.clusterBytes());
    }
    return aggregate.onChange(AvroMapping.change(event), mapping.clusterBytes());
  }
}
