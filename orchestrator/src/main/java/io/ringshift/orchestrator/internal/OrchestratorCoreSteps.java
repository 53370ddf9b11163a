package io.ringshift.orchestrator.internal;

import io.ringshift.schemas.avro.ClusterState;
import java.util.List;
import org.apache.kafka.streams.processor.api.Record;

/** The topology's two processing steps as functions, for {@code OrchestratorCore}: the code its processors run. */
public final class OrchestratorCoreSteps {
  private OrchestratorCoreSteps() {}

  /** What one input does to a cluster: the state to store and the records to emit, in order. */
  public record Step(ClusterState next, List<Record<String, Output>> outputs) {}

  /** The first stage ({@link DecodeProcessor#decode}): routed, refused, or null for nothing. */
  public static Record<String, Routed> decode(Command.Kind kind, Command command, long timestamp) {
    return DecodeProcessor.decode(kind, command, timestamp);
  }

  /** The second stage ({@link ClusterProcessor#step}). */
  public static Step step(AvroMapping mapping, OrchestratorMetrics metrics, String membershipTopic, String clusterId,
      ClusterState stored, Command command, long ts) {
    ClusterProcessor.Step s = ClusterProcessor.step(mapping, metrics, membershipTopic, clusterId, stored, command, ts);
    return new Step(s.next(), s.outputs());
  }
}
