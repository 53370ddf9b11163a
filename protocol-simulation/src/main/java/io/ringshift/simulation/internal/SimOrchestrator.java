package io.ringshift.simulation.internal;

import io.ringshift.orchestrator.OrchestratorCore;
import io.ringshift.protocol.RecordSerdes;
import io.ringshift.schemas.avro.ClusterState;
import io.ringshift.schemas.avro.EpochRecord;
import io.ringshift.schemas.avro.RangeCopyTask;
import io.ringshift.schemas.avro.RejectedEvent;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The orchestrator: its production core ({@link OrchestratorCore}, the topology's two stages) inside a shell that does
 * what Kafka Streams with exactly_once_v2 does for it: it reads ring.membership, ring.task-status and ring.epochs
 * read_committed, keeps each cluster's state in a store, and every commit interval writes the outputs, the state and
 * the input positions in one transaction. A crash loses what was processed since the last commit; the restarted
 * instance fences the old producer, restores the committed state and positions, and processes the same inputs again.
 */
final class SimOrchestrator {
  static final String TRANSACTIONAL_ID = "orchestrator";
  private static final long COMMIT_INTERVAL = 100;

  private final World w;
  final String id = "orchestrator";
  boolean up;
  private int life;
  private OrchestratorCore core;
  private Map<String, ClusterState> committedState = new HashMap<>();
  private Map<String, Long> committedPositions = Map.of();
  private Map<String, ClusterState> working;
  private SimKafka.Reader inputs;
  private int producerEpoch;
  private final List<OrchestratorCore.Emitted> pending = new ArrayList<>();
  private boolean pollScheduled;
  private boolean commitScheduled;

  SimOrchestrator(World w) {
    this.w = w;
    for (String topic : List.of(World.MEMBERSHIP, World.STATUS, World.EPOCHS)) {
      w.kafka.onVisible(topic, this::schedulePoll);
    }
  }

  void start() {
    life++;
    up = true;
    producerEpoch = w.kafka.initTransactions(TRANSACTIONAL_ID);
    core = new OrchestratorCore(0, World.MEMBERSHIP);
    working = new HashMap<>(committedState);
    inputs = w.kafka.reader().assignAll(World.MEMBERSHIP, World.STATUS, World.EPOCHS);
    inputs.restore(committedPositions);
    pending.clear();
    pollScheduled = false;
    commitScheduled = false;
    schedulePoll();
  }

  void crash() {
    if (up) {
      up = false;
      life++;
      pending.clear();
    }
  }

  void schedulePoll() {
    if (!up || pollScheduled) {
      return;
    }
    pollScheduled = true;
    int at = life;
    w.loop.after(w.random.between(1, 60), "orchestrator polls", () -> {
      pollScheduled = false;
      if (up && life == at) {
        poll();
      }
    });
  }

  private void poll() {
    if (!w.connected(id)) {
      return; // the world polls it again when it reconnects
    }
    List<SimKafka.Rec> batch = inputs.poll((int) w.random.between(1, 40));
    for (SimKafka.Rec r : batch) {
      if (r.value == null) {
        continue;
      }
      OrchestratorCore.Source source = switch (r.topic) {
        case World.MEMBERSHIP -> OrchestratorCore.Source.MEMBERSHIP;
        case World.STATUS -> OrchestratorCore.Source.TASK_STATUS;
        default -> OrchestratorCore.Source.EPOCHS;
      };
      OrchestratorCore.Decoded decoded = core.decode(new OrchestratorCore.Input(source, r.key, r.value, r.topic,
          r.partition, r.offset, r.timestamp));
      pending.addAll(decoded.emitted());
      if (decoded.routed() != null) {
        String cluster = decoded.routed().clusterId();
        OrchestratorCore.Step step = core.process(decoded.routed(), working.get(cluster), r.timestamp);
        working.put(cluster, step.next());
        pending.addAll(step.emitted());
      }
    }
    if (!batch.isEmpty() && !commitScheduled) {
      commitScheduled = true;
      int at = life;
      w.loop.after(COMMIT_INTERVAL, "orchestrator commits", () -> {
        commitScheduled = false;
        if (up && life == at) {
          commit();
        }
      });
    }
    if (!batch.isEmpty()) {
      schedulePoll();
    }
  }

  private void commit() {
    if (!w.connected(id)) {
      // Cut off: the transaction cannot commit; Streams would fail it and the instance would start over.
      w.trace.note(w.loop.now(), "orchestrator cannot commit (cut off): restarts");
      crash();
      w.loop.after(1_000, "orchestrator restarts after a failed commit", this::restartWhenConnected);
      return;
    }
    SimKafka.Txn txn;
    try {
      txn = w.kafka.begin(TRANSACTIONAL_ID, producerEpoch);
      long ts;
      for (OrchestratorCore.Emitted e : pending) {
        String topic = switch (e.target()) {
          case EPOCHS -> World.EPOCHS;
          case TASKS -> World.TASKS;
          case REJECTED -> World.REJECTED;
        };
        byte[] value = e.value() == null ? null : switch (e.target()) {
          case EPOCHS -> RecordSerdes.epochRecord().serialize((EpochRecord) e.value());
          case TASKS -> RecordSerdes.rangeCopyTask().serialize((RangeCopyTask) e.value());
          case REJECTED -> RecordSerdes.rejectedEvent().serialize((RejectedEvent) e.value());
        };
        ts = e.timestampMillis();
        w.kafka.send(txn, topic, e.key(), value, ts);
      }
      w.kafka.commit(txn);
    } catch (SimKafka.Fenced f) {
      w.trace.note(w.loop.now(), "orchestrator fenced: " + f.getMessage());
      crash();
      return;
    }
    w.count("orchestrator commits");
    pending.clear();
    committedState = new HashMap<>(working);
    committedPositions = inputs.positions();
  }

  void restartWhenConnected() {
    if (up) {
      return;
    }
    if (w.connected(id)) {
      start();
    } else {
      w.loop.after(1_000, "orchestrator waits for Kafka", this::restartWhenConnected);
    }
  }

  /** Kafka reachable again: read on. */
  void reconnected() {
    schedulePoll();
  }
}
