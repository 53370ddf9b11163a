package io.ringshift.orchestrator;

import io.ringshift.orchestrator.internal.AvroMapping;
import io.ringshift.orchestrator.internal.Command;
import io.ringshift.protocol.KafkaSerdes;
import io.ringshift.protocol.Topics;
import io.ringshift.orchestrator.internal.OrchestratorMetrics;
import io.ringshift.orchestrator.internal.Output;
import io.ringshift.orchestrator.internal.Processors;
import io.ringshift.orchestrator.internal.Routed;
import io.ringshift.protocol.RecordSerdes;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.Map;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.kstream.Branched;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.KStream;
import org.apache.kafka.streams.kstream.Named;
import org.apache.kafka.streams.kstream.Produced;
import org.apache.kafka.streams.kstream.Repartitioned;
import org.apache.kafka.streams.state.Stores;

/**
 * The orchestrator's topology, built by one pure method (no configuration, no start-up) so that the
 * {@code TopologyTestDriver} tests and the real application run the same code.
 *
 * <pre>
 * ring.membership ─ decode ─┐                              ┌─ epochs ──── ring.epochs
 * ring.task-status ─ decode ┼─ merge ─ rejects? ─ by-cluster ─ cluster ─┼─ tasks ───── ring.tasks
 * ring.epochs ───── decode ─┘          └── ring.rejected   (state)      └─ rejects ─── ring.rejected
 *   (PUBLISHED and REJECTED only: the publisher's answers)
 * </pre>
 */
public final class OrchestratorTopology {
  /** The state store holding one {@code ClusterState} per cluster id. */
  public static final String STORE = "cluster-state";

  private OrchestratorTopology() {}

  /**
   * Builds the topology.
   *
   * @param topics the topics it reads and writes
   * @param clusterBytes estimated logical bytes of a cluster, for the tasks' byte estimates; 0 when unknown
   * @param partitions partitions of the by-cluster repartition topic; fixed for the life of the application,
   *     since it decides which task owns which cluster's state
   */
  public static Topology build(Topics topics, long clusterBytes, int partitions) {
    return build(topics, clusterBytes, partitions, new SimpleMeterRegistry());
  }

  /**
   * Builds the topology with its meters on {@code registry} (docs/metrics.md): epoch records by state, rejects by
   * reason, and each cluster's epochs and tasks in flight, all named {@code ringshift.orchestrator.*}. The meters are
   * registered now and stay until the registry drops them ({@link Orchestrator#close()} does).
   */
  public static Topology build(Topics topics, long clusterBytes, int partitions, MeterRegistry registry) {
    OrchestratorMetrics metrics = new OrchestratorMetrics(registry);
    StreamsBuilder builder = new StreamsBuilder();
    // Cached: a cluster's state is written to RocksDB and its changelog once per commit (100 ms), not once per input.
    // It holds the ids of the epoch's caught-up and verified tasks, so written per status an epoch of n tasks wrote
    // O(n^2) bytes to the changelog inside its transactions (a join at 120 x 256 tokens: 752 records, 53 MB), and
    // the broker's transaction markers fell behind (CONCURRENT_TRANSACTIONS) on a busy machine.
    builder.addStateStore(Stores.keyValueStoreBuilder(
        Stores.persistentKeyValueStore(STORE), Serdes.String(), KafkaSerdes.of(RecordSerdes.clusterState()))
        .withCachingEnabled());

    // Both inputs are read as raw bytes: a malformed record is rejected with exactly the bytes that arrived.
    KStream<String, Routed> membership = builder
        .stream(topics.membership().name(), Consumed.with(Serdes.ByteArray(), Serdes.ByteArray())
            .withName("membership-source"))
        .process(Processors.decode(Command.Kind.MEMBERSHIP), Named.as("decode-membership"));
    KStream<String, Routed> statuses = builder
        .stream(topics.taskStatus().name(), Consumed.with(Serdes.ByteArray(), Serdes.ByteArray())
            .withName("task-status-source"))
        .process(Processors.decode(Command.Kind.TASK_STATUS), Named.as("decode-task-status"));

    // The publisher's answers (PUBLISHED, REJECTED) to the epochs this topology makes READY.
    KStream<String, Routed> answers = builder
        .stream(topics.epochs().name(), Consumed.with(Serdes.ByteArray(), Serdes.ByteArray())
            .withName("epochs-source"))
        .process(Processors.decode(Command.Kind.EPOCH), Named.as("decode-epochs"));

    Map<String, KStream<String, Routed>> decoded = membership
        .merge(statuses, Named.as("inputs"))
        .merge(answers, Named.as("answers"))
        .split(Named.as("decoded-"))
        .branch((key, routed) -> routed instanceof Routed.Reject, Branched.as("rejected"))
        .defaultBranch(Branched.as("valid"));

    // Refused before any state is read: malformed bytes, blank ids, unknown actions, bad weights.
    decoded.get("decoded-rejected")
        .peek((key, routed) -> metrics.rejected(OrchestratorMetrics.early(((Routed.Reject) routed).record()
            .getReason())), Named.as("count-early-rejects"))
        .mapValues(routed -> ((Routed.Reject) routed).record(), Named.as("early-reject-record"))
        .to(topics.rejected().name(), Produced.with(topics.rejected().keySerde(), topics.rejected().valueSerde())
            .withName("early-rejects-sink"));

    // One processor sees every input of a cluster: re-key by cluster id, then advance the cluster's aggregate.
    KStream<String, Output> outputs = decoded.get("decoded-valid")
        .mapValues(routed -> ((Routed.Valid) routed).command(), Named.as("command"))
        .repartition(Repartitioned.with(Serdes.String(), Command.serde()).withName("by-cluster")
            .withNumberOfPartitions(partitions))
        .process(Processors.cluster(STORE, topics.membership().name(), new AvroMapping(clusterBytes),
                metrics),
            Named.as("cluster"), STORE);

    outputs.split(Named.as("emit-"))
        .branch((key, out) -> out instanceof Output.Epoch, Branched.withConsumer(epochs -> epochs
            .mapValues(out -> ((Output.Epoch) out).record(), Named.as("epoch-record"))
            .to(topics.epochs().name(), Produced.with(topics.epochs().keySerde(), topics.epochs().valueSerde())
                .withName("epochs-sink")), "epochs"))
        .branch((key, out) -> out instanceof Output.Task, Branched.withConsumer(tasks -> tasks
            .mapValues(out -> ((Output.Task) out).record(), Named.as("task-record"))
            .to(topics.tasks().name(), Produced.with(topics.tasks().keySerde(), topics.tasks().valueSerde())
                .withName("tasks-sink")), "tasks"))
        .defaultBranch(Branched.withConsumer(rejects -> rejects
            .mapValues(out -> ((Output.Reject) out).record(), Named.as("reject-record"))
            .to(topics.rejected().name(), Produced.with(topics.rejected().keySerde(),
                topics.rejected().valueSerde()).withName("rejects-sink")), "rejects"));
    return builder.build();
  }
}
