package io.ringshift.client;

import io.ringshift.client.internal.AcceptedSnapshot;
import io.ringshift.client.internal.GateOutcome;
import io.ringshift.client.internal.SnapshotGate;
import io.ringshift.protocol.PublishedSnapshot;
import io.ringshift.protocol.TrustedKeys;
import java.util.Objects;

/**
 * What a {@link RingClient} does with each record of {@code ring.snapshots}, without Kafka: verify it (the same
 * {@code SnapshotGate}: checksum, signature, epoch order, hash chain) and, when it passes, swap the routing table (the
 * same {@link Placement}s). The deterministic simulation's clients and storage nodes route by it; {@link RingClient}
 * is the shell that tails the topic, keeps a cold-start file, reads the floor epoch and counts. Not thread safe.
 */
public final class SnapshotRouter {
  private final SnapshotGate gate;
  private AcceptedSnapshot current;
  private RoutingTable table;

  /** What became of one snapshot offered. */
  public sealed interface Outcome {}

  /** Verified and routed by from now on. */
  public record Swapped(long previousEpoch, long epoch, boolean gap) implements Outcome {}

  /** The bytes of the snapshot routed by now: nothing to do. */
  public record Duplicate(long epoch) implements Outcome {}

  /** Refused: the router keeps its snapshot. */
  public record Refused(RefusalReason reason, long epoch, String message) implements Outcome {}

  public SnapshotRouter(String clusterId, TrustedKeys trustedKeys) {
    this.gate = new SnapshotGate(Objects.requireNonNull(clusterId, "clusterId"), trustedKeys);
  }

  /**
   * A record of {@code ring.snapshots} for the cluster: its value ({@code null}: a tombstone) and its timestamp.
   * Swaps to it when it passes every check against the snapshot routed by now.
   */
  public Outcome offer(byte[] bytes, long publishedAtMillis) {
    GateOutcome outcome = gate.check(bytes, current);
    if (outcome instanceof GateOutcome.Accepted a) {
      long previous = current == null ? RingClient.NO_EPOCH : current.epoch();
      current = new AcceptedSnapshot(a.snapshot(), bytes, publishedAtMillis);
      table = RoutingTable.of(current);
      return new Swapped(previous, current.epoch(), a.gap());
    }
    if (outcome instanceof GateOutcome.Duplicate d) {
      return new Duplicate(d.epoch());
    }
    GateOutcome.Refused r = (GateOutcome.Refused) outcome;
    return new Refused(r.reason(), r.epoch(), r.message());
  }

  /** The epoch routed by, {@link RingClient#NO_EPOCH} before the first snapshot. */
  public long epoch() {
    return current == null ? RingClient.NO_EPOCH : current.epoch();
  }

  /** The snapshot routed by, or null before the first. */
  public PublishedSnapshot current() {
    return current == null ? null : current.snapshot();
  }

  /**
   * The placement of {@code key}: its range's owners (writes) and readable replicas (reads), as {@link RingClient}
   * gives it.
   *
   * @throws IllegalStateException before the first snapshot
   */
  public Placement placement(byte[] key) {
    if (table == null) {
      throw new IllegalStateException("no snapshot routed by yet");
    }
    return table.at(table.ring.position(key));
  }
}
