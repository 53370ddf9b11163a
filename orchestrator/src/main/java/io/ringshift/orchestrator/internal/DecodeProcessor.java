package io.ringshift.orchestrator.internal;

import io.ringshift.protocol.CodecException;
import io.ringshift.protocol.RecordKeys;
import io.ringshift.protocol.RecordSerdes;
import io.ringshift.schemas.avro.EpochRecord;
import io.ringshift.schemas.avro.EpochState;
import io.ringshift.schemas.avro.MembershipAction;
import io.ringshift.schemas.avro.MembershipEvent;
import io.ringshift.schemas.avro.TaskStatus;
import java.nio.charset.StandardCharsets;
import java.util.Locale;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.processor.api.RecordMetadata;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * First stage: decodes an input record, refuses what is malformed or breaks a rule that needs no state (blank
 * ids, unknown action, bad weight), and re-keys the rest by cluster id so one processor sees all of a cluster.
 * A tombstone (null value) on the compacted membership topic is how a key is forgotten, not an event: skipped.
 */
final class DecodeProcessor implements Processor<byte[], byte[], String, Routed> {
  private static final Logger LOG = LoggerFactory.getLogger(DecodeProcessor.class);
  private final Command.Kind kind;
  private ProcessorContext<String, Routed> context;

  DecodeProcessor(Command.Kind kind) {
    this.kind = kind;
  }

  @Override
  public void init(ProcessorContext<String, Routed> context) {
    this.context = context;
  }

  @Override
  public void process(Record<byte[], byte[]> record) {
    if (record.value() == null) {
      return;
    }
    RecordMetadata meta = context.recordMetadata().orElseThrow();
    String key = record.key() == null ? null : new String(record.key(), StandardCharsets.UTF_8);
    Record<String, Routed> routed = decode(kind, new Command(kind, key, record.value(), meta.topic(), meta.partition(),
        meta.offset()), record.timestamp());
    if (routed != null) {
      context.forward(routed);
    }
  }

  /**
   * The first stage of one input, pure: the command re-keyed by its cluster id, a reject keyed by the input's key, or
   * null for a record that goes nowhere (an epoch record that is not the publisher's answer, or does not decode). The
   * Kafka Streams processor forwards what it returns; the deterministic simulation runs the same step.
   */
  static Record<String, Routed> decode(Command.Kind kind, Command command, long timestamp) {
    String key = command.originalKey();
    if (kind == Command.Kind.EPOCH) {
      return answer(command, timestamp);
    }
    String clusterId;
    String problem;
    String requestId = null;
    try {
      if (kind == Command.Kind.MEMBERSHIP) {
        MembershipEvent event = RecordSerdes.membershipEvent().deserialize(command.value());
        clusterId = event.getClusterId();
        requestId = event.getRequestId();
        problem = problemOf(event);
        if (problem == null) {
          // On a compacted topic a mis-keyed event would erase another node's latest event.
          String expected = RecordKeys.membershipKey(event);
          if (!expected.equals(key)) {
            problem = "key was \"" + key + "\"; a membership event is keyed <cluster>/<node> "
                + "(RecordKeys.membershipKey), here \"" + expected + "\"";
          }
        }
      } else {
        TaskStatus status = RecordSerdes.taskStatus().deserialize(command.value());
        clusterId = status.getClusterId();
        problem = clusterId == null || clusterId.isBlank() ? "clusterId was blank; every task status names its "
            + "cluster" : null;
      }
    } catch (CodecException e) {
      clusterId = null;
      problem = "malformed " + (kind == Command.Kind.MEMBERSHIP ? "membership event" : "task status") + ": "
          + e.getMessage();
    }
    if (problem != null) {
      return new Record<>(key == null ? "" : key, new Routed.Reject(
          Rejects.of(command, problem, clusterId, requestId, timestamp)), timestamp);
    }
    return new Record<>(clusterId, new Routed.Valid(command), timestamp);
  }

  /**
   * ring.epochs is the orchestrator's own output and the publisher's: only the publisher's answers (PUBLISHED,
   * REJECTED) and reverts (REVERTED) go on to the cluster; a record that does not decode is nobody's request, so it
   * is logged and skipped, not put on the reject topic.
   */
  private static Record<String, Routed> answer(Command command, long timestamp) {
    EpochRecord epoch;
    try {
      epoch = RecordSerdes.epochRecord().deserialize(command.value());
    } catch (CodecException e) {
      LOG.warn("skipping an undecodable record of {} at partition {} offset {}: {}", command.topic(),
          command.partition(), command.offset(), e.getMessage());
      return null;
    }
    if ((epoch.getState() == EpochState.PUBLISHED || epoch.getState() == EpochState.REJECTED
        || epoch.getState() == EpochState.REVERTED)
        && epoch.getClusterId() != null && !epoch.getClusterId().isBlank()) {
      return new Record<>(epoch.getClusterId(), new Routed.Valid(command), timestamp);
    }
    return null;
  }

  /** The first rule a membership event breaks that needs no state, or null. */
  static String problemOf(MembershipEvent e) {
    if (e.getClusterId() == null || e.getClusterId().isBlank()) {
      return "clusterId was \"" + e.getClusterId() + "\"; every event names its cluster";
    }
    if (e.getAction() == MembershipAction.UNKNOWN) {
      return "action was UNKNOWN (written by a newer version); the actions are INIT, JOIN, DRAIN, FAIL, "
          + "SET_WEIGHT, REMOVE, CANCEL";
    }
    if (e.getAction() == MembershipAction.CANCEL && (e.getEpoch() == null || e.getEpoch() < 1)) {
      return "CANCEL: epoch was " + e.getEpoch() + "; a cancel names the epoch to cancel, >= 1";
    }
    if (e.getAction() != MembershipAction.CANCEL && e.getEpoch() != null) {
      return String.format(Locale.ROOT, "%s of node %s: epoch was %d; only a CANCEL names an epoch", e.getAction(),
          e.getNodeId(), e.getEpoch());
    }
    if (e.getAction() != MembershipAction.INIT && (e.getNodeId() == null || e.getNodeId().isBlank())) {
      return String.format(Locale.ROOT, "%s: nodeId was \"%s\"; a node id must not be blank", e.getAction(),
          e.getNodeId());
    }
    Double w = e.getWeight();
    if (w != null && !(Double.isFinite(w) && w > 0)) {
      return String.format(Locale.ROOT, "%s of node %s: weight was %s; weight must be finite and > 0",
          e.getAction(), e.getNodeId(), w);
    }
    return null;
  }
}
