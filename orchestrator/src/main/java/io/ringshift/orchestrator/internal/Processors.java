package io.ringshift.orchestrator.internal;

import org.apache.kafka.streams.processor.api.ProcessorSupplier;

/** Suppliers of the orchestrator's processors, for the topology in the public package. */
public final class Processors {
  private Processors() {}

  public static ProcessorSupplier<byte[], byte[], String, Routed> decode(Command.Kind kind) {
    return () -> new DecodeProcessor(kind);
  }

  public static ProcessorSupplier<String, Command, String, Output> cluster(String store, String membershipTopic,
      AvroMapping mapping, OrchestratorMetrics metrics) {
    return () -> new ClusterProcessor(store, membershipTopic, mapping, metrics);
  }
}
