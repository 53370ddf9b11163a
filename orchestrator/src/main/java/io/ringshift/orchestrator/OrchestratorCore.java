package io.ringshift.orchestrator;

import io.ringshift.orchestrator.internal.AvroMapping;
import io.ringshift.orchestrator.internal.Command;
import io.ringshift.orchestrator.internal.OrchestratorCoreSteps;
import io.ringshift.orchestrator.internal.OrchestratorMetrics;
import io.ringshift.orchestrator.internal.Output;
import io.ringshift.schemas.avro.ClusterState;
import io.ringshift.schemas.avro.EpochRecord;
import io.ringshift.schemas.avro.RangeCopyTask;
import io.ringshift.schemas.avro.RejectedEvent;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * The orchestrator without Kafka Streams: the two stages of its topology ({@link OrchestratorTopology}) as functions,
 * exactly the code its processors run. {@link #decode} is the first stage (decode an input record, refuse what is
 * malformed or breaks a rule that needs no state, re-key by cluster); {@link #process} the second (advance one
 * cluster's stored state by one input: the state to store next and the records to emit, in order). The deterministic
 * simulation of the protocol drives it, keeping the state, the outputs and the input positions in one simulated
 * transaction as {@code exactly_once_v2} does. Not thread safe (it memoises plans as the topology does).
 */
public final class OrchestratorCore {
  private final AvroMapping mapping;
  private final OrchestratorMetrics metrics = new OrchestratorMetrics(new SimpleMeterRegistry());
  private final String membershipTopic;

  /** Which input topic a record comes from. */
  public enum Source {
    MEMBERSHIP,
    TASK_STATUS,
    /** ring.epochs: only the publisher's answers (PUBLISHED, REJECTED) go on to the cluster. */
    EPOCHS
  }

  /**
   * An input record as read: where it came from and its bytes, exactly as they arrived.
   *
   * @param key the record's key (may be null)
   * @param value the record's value, not null (a tombstone is no input: skip it)
   */
  public record Input(Source source, String key, byte[] value, String topic, int partition, long offset,
      long timestampMillis) {
    public Input {
      Objects.requireNonNull(source, "source");
      Objects.requireNonNull(value, "value");
    }
  }

  /** An input that passed the first stage: the cluster whose state it advances. */
  public record Routed(String clusterId, Object command) {}

  /**
   * A record the orchestrator writes: to {@code ring.epochs} ({@link EpochRecord}, keyed by cluster), {@code ring.tasks}
   * ({@link RangeCopyTask}, keyed by task id; a null value is a tombstone) or {@code ring.rejected}
   * ({@link RejectedEvent}, keyed by the refused input's key).
   */
  public record Emitted(Target target, String key, Object value, long timestampMillis) {}

  /** Where an emitted record goes. */
  public enum Target {
    EPOCHS,
    TASKS,
    REJECTED
  }

  /** The first stage's answer: the input routed to its cluster, or records to write (a reject), or neither. */
  public record Decoded(Routed routed, List<Emitted> emitted) {}

  /** The second stage's answer: the state to store (null: none) and the records to emit, in order. */
  public record Step(ClusterState next, List<Emitted> emitted) {}

  /**
   * @param clusterBytes estimated logical bytes of a cluster, for the tasks' byte estimates (0: unknown)
   * @param membershipTopic the name of ring.membership, which refusals of queued changes quote
   */
  public OrchestratorCore(long clusterBytes, String membershipTopic) {
    this.mapping = new AvroMapping(clusterBytes);
    this.membershipTopic = membershipTopic;
  }

  /** The first stage, for one input. */
  public Decoded decode(Input input) {
    Command.Kind kind = switch (input.source()) {
      case MEMBERSHIP -> Command.Kind.MEMBERSHIP;
      case TASK_STATUS -> Command.Kind.TASK_STATUS;
      case EPOCHS -> Command.Kind.EPOCH;
    };
    Command command = new Command(kind, input.key(), input.value(), input.topic(), input.partition(), input.offset());
    var record = OrchestratorCoreSteps.decode(kind, command, input.timestampMillis());
    if (record == null) {
      return new Decoded(null, List.of());
    }
    if (record.value() instanceof io.ringshift.orchestrator.internal.Routed.Reject reject) {
      return new Decoded(null, List.of(new Emitted(Target.REJECTED, record.key(), reject.record(),
          record.timestamp())));
    }
    Command valid = ((io.ringshift.orchestrator.internal.Routed.Valid) record.value()).command();
    return new Decoded(new Routed(record.key(), valid), List.of());
  }

  /** The second stage: cluster {@code routed.clusterId()}'s stored state ({@code null}: none yet) advanced by it. */
  public Step process(Routed routed, ClusterState stored, long timestampMillis) {
    var step = OrchestratorCoreSteps.step(mapping, metrics, membershipTopic, routed.clusterId(), stored,
        (Command) routed.command(), timestampMillis);
    List<Emitted> out = new ArrayList<>();
    for (var r : step.outputs()) {
      Output o = r.value();
      if (o instanceof Output.Epoch e) {
        out.add(new Emitted(Target.EPOCHS, r.key(), e.record(), r.timestamp()));
      } else if (o instanceof Output.Task t) {
        out.add(new Emitted(Target.TASKS, r.key(), t.record(), r.timestamp()));
      } else if (o instanceof Output.Reject j) {
        out.add(new Emitted(Target.REJECTED, r.key(), j.record(), r.timestamp()));
      }
    }
    return new Step(step.next(), out);
  }
}
