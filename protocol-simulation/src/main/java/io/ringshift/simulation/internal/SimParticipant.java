package io.ringshift.simulation.internal;

import io.ringshift.protocol.PublishedSnapshot;
import io.ringshift.protocol.RecordSerdes;
import io.ringshift.protocol.TransitionStage;
import io.ringshift.schemas.avro.ParticipantKind;
import io.ringshift.schemas.avro.ParticipantReport;
import java.nio.ByteBuffer;
import java.util.function.Supplier;

/**
 * A client's or a node's place in the barrier, as the client's {@code ParticipantReporter} keeps it (docs/protocol.md,
 * "The client barrier"): a report on {@code ring.participants} at every swap and every third of its lease, written on
 * the participant's own clock; the lease runs from the last report that reached Kafka. A muted participant (a fault:
 * its reports do not get through) holds no lease once a lease has passed, and a client then stops serving the ranges a
 * transition moves.
 */
final class SimParticipant {
  /** As the client's default lease. */
  static final long LEASE = 10_000;

  private final World w;
  private final String id;
  private final boolean node;
  private final Supplier<PublishedSnapshot> current;
  private final SimClock clock;
  private long lastReportedAt = Long.MIN_VALUE; // on this participant's clock
  private int life;
  /** The lease's holding period, as the client's: one more each time a report gets through when none held it. */
  long period;
  /** Called with the new period each time the lease is taken. */
  java.util.function.LongConsumer onAcquired = p -> { };
  boolean muted;

  SimParticipant(World w, String id, boolean node, Supplier<PublishedSnapshot> current) {
    this.w = w;
    this.id = id;
    this.node = node;
    this.current = current;
    this.clock = w.newClock();
  }

  /** Starts reporting: now, then every third of the lease. */
  void start() {
    life++;
    lastReportedAt = Long.MIN_VALUE;
    report();
    schedule(life);
  }

  /** The process stopped: no more reports; its last one lapses at the readers. */
  void stop() {
    life++;
  }

  private void schedule(int at) {
    w.loop.after(LEASE / 3, id + " renews its lease", () -> {
      if (life == at) {
        report();
        schedule(at);
      }
    });
  }

  /** A swap: report at once. */
  void swapped() {
    report();
  }

  private void report() {
    if (muted) {
      w.count("participant reports lost (muted)");
      return;
    }
    PublishedSnapshot s = current.get();
    boolean held = leaseHeld();
    long now = clock.millis();
    ParticipantReport report = ParticipantReport.newBuilder()
        .setClusterId(World.CLUSTER)
        .setParticipantId(id)
        .setKind(node ? ParticipantKind.NODE : ParticipantKind.CLIENT)
        .setEpoch(s == null ? -1 : s.epoch())
        .setStage(s == null ? TransitionStage.FINAL.order() : s.stage().order())
        .setChecksum(s == null ? null : ByteBuffer.wrap(s.checksum()))
        .setStagesSupported(true)
        .setLeaseMillis(LEASE)
        .setReportedAtMillis(now)
        .setUnversionedWritesAtMillis(null)
        .build();
    w.kafka.append(World.PARTICIPANTS, World.CLUSTER + "/" + id,
        RecordSerdes.participantReport().serialize(report), now);
    lastReportedAt = now;
    if (!held) {
      onAcquired.accept(++period);
    }
  }

  /** Whether the lease holds: a report reached Kafka less than a lease ago, by this participant's clock. */
  boolean leaseHeld() {
    return lastReportedAt != Long.MIN_VALUE && clock.millis() - lastReportedAt < LEASE;
  }
}
