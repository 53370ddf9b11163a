package io.ringshift.simulation.internal;

import io.ringshift.protocol.RecordSerdes;
import io.ringshift.publisher.PublisherCore;
import io.ringshift.schemas.avro.EpochRecord;
import io.ringshift.schemas.avro.EpochState;
import io.ringshift.schemas.avro.RangeCopyTask;
import io.ringshift.schemas.avro.TaskStatus;
import java.time.Duration;

/**
 * A snapshot publisher: its production core ({@link PublisherCore}: history, task book, decision queue, checks,
 * signing) inside a shell that does what a publishing session does with Kafka: only the holder of the lease publishes;
 * a session starts by fencing earlier producers of the transactional id, reads ring.epochs from the beginning, reads
 * ring.tasks and ring.task-status to their end before deciding, rechecks a waiting READY record every 200 ms, and
 * writes each decision in a transaction of its own. A session that fails (fenced, cut off) ends; the next one starts
 * from the log. The world can force a rejection: the next epoch it would publish is rejected instead.
 */
final class SimPublisher implements LeaseMember {
  static final String TRANSACTIONAL_ID = "publisher";
  private static final long RECHECK = 200;
  private static final Duration PATIENCE = Duration.ofSeconds(15);

  /** Ends a session from inside a decision. */
  private static final class SessionEnds extends RuntimeException {
    SessionEnds(String why) {
      super(why, null, false, false);
    }
  }

  private final World w;
  final String id;
  boolean up;
  boolean holdsLease;
  private int life;
  private boolean session;
  private SimClock clock;
  private PublisherCore core;
  private SimKafka.Reader epochs;
  private SimKafka.Reader control;
  private int producerEpoch;
  private boolean pollScheduled;
  /** Epochs to reject instead of publishing (forced by the world). */
  int forcedRejections;

  SimPublisher(World w, String id) {
    this.w = w;
    this.id = id;
    w.kafka.onVisible(World.EPOCHS, this::schedulePoll);
  }

  @Override
  public String id() {
    return id;
  }

  @Override
  public boolean up() {
    return up;
  }

  @Override
  public boolean holdsLease() {
    return holdsLease;
  }

  @Override
  public void loseLease() {
    holdsLease = false;
  }

  @Override
  public void start() {
    life++;
    up = true;
    holdsLease = false;
    session = false;
    if (clock == null) {
      clock = w.newClock();
    }
  }

  @Override
  public void crash() {
    if (!up) {
      return;
    }
    up = false;
    holdsLease = false;
    session = false;
    life++;
    w.loop.after(PublisherLease.TIMEOUT, "publisher lease expires", w::electPublisher);
  }

  /** The lease is this publisher's: it opens a session. */
  @Override
  public void takeLease() {
    holdsLease = true;
    w.trace.note(w.loop.now(), id + " holds the publisher lease");
    // A session this publisher still runs from an earlier lease (it was cut off meanwhile) ends: a new lease, a new
    // session, whose producer fences every earlier one (the old session's pending steps see another life).
    if (session) {
      session = false;
      life++;
    }
    openSession();
  }

  private void openSession() {
    if (!up || !holdsLease || session) {
      return;
    }
    if (!w.connected(id)) {
      return;
    }
    producerEpoch = w.kafka.initTransactions(TRANSACTIONAL_ID);
    core = new PublisherCore(w.publisherKey, w.trusted, PATIENCE, w.scenario.stages());
    epochs = w.kafka.reader().assignAll(World.EPOCHS);
    control = w.kafka.reader().assignAll(World.TASKS, World.STATUS, World.PARTICIPANTS);
    session = true;
    pollScheduled = false;
    schedulePoll();
  }

  /** The session failed: a new one starts a second later, from the log. */
  private void endSession(String why) {
    session = false;
    w.trace.note(w.loop.now(), id + " session ends: " + why);
    int at = life;
    w.loop.after(1_000, id + " reopens a session", () -> {
      if (up && life == at) {
        openSession();
      }
    });
  }

  void schedulePoll() {
    if (!up || !session || pollScheduled) {
      return;
    }
    pollScheduled = true;
    int at = life;
    w.loop.after(w.random.between(1, 60), id + " polls", () -> {
      pollScheduled = false;
      if (up && life == at && session) {
        poll();
      }
    });
  }

  private void poll() {
    if (!w.connected(id)) {
      return;
    }
    epochs.readToEnd(r -> {
      if (r.value != null) {
        core.onEpochRecord(World.epochOf(r));
      }
    });
    if (core.queued() == 0 && !core.inTransition()) {
      return;
    }
    control.readToEnd(r -> {
      if (r.topic.equals(World.TASKS)) {
        core.onTask(r.key, r.value == null ? null : task(r));
      } else if (r.topic.equals(World.PARTICIPANTS)) {
        core.onParticipant(r.key, r.value == null ? null
            : RecordSerdes.participantReport().deserialize(r.value), clock.millis());
      } else {
        core.onStatus(r.key, r.value == null ? null : status(r));
      }
    });
    try {
      core.decide(w.loop.now() * 1_000_000L, clock.millis(), this::commit, new PublisherCore.Waiting() {
        @Override
        public void waiting(EpochRecord ready, String reason, Duration patience) {
          w.trace.note(w.loop.now(), id + " READY epoch " + ready.getEpoch() + " waits: " + reason);
        }

        @Override
        public void holding(EpochRecord record, String reason) {
          w.trace.note(w.loop.now(), id + " epoch " + record.getEpoch() + " " + reason);
        }
      });
    } catch (SessionEnds e) {
      endSession(e.getMessage());
      return;
    }
    if (core.queued() > 0 || core.inTransition()) {
      int at = life;
      w.loop.after(RECHECK, id + " rechecks", () -> {
        if (up && life == at && session) {
          poll();
        }
      });
    }
  }

  private void commit(PublisherCore.Decision decision) {
    if (!w.connected(id)) {
      throw new SessionEnds("cut off from Kafka");
    }
    try {
      SimKafka.Txn txn = w.kafka.begin(TRANSACTIONAL_ID, producerEpoch);
      // A forced rejection stands for a check that fails; the FINAL snapshot after a second stage follows checks that
      // passed already, and a real publisher never rejects it.
      if (decision instanceof PublisherCore.Publish p && forcedRejections > 0
          && !core.inSecondStage(p.record().getClusterId(), p.record().getEpoch())) {
        forcedRejections--;
        EpochRecord rejected = EpochRecord.newBuilder(p.ready()).setState(EpochState.REJECTED)
            .setReason("TASKS: rejected by the simulation (a forced rejection)").setTimestampMillis(clock.millis())
            .build();
        w.kafka.send(txn, World.EPOCHS, rejected.getClusterId(), RecordSerdes.epochRecord().serialize(rejected),
            clock.millis());
        w.kafka.commit(txn);
        w.count("forced rejections");
        throw new SessionEnds("forced a rejection of epoch " + p.ready().getEpoch());
      }
      if (decision instanceof PublisherCore.Publish p) {
        String cluster = p.record().getClusterId();
        w.kafka.send(txn, World.SNAPSHOTS, cluster, p.snapshot(), clock.millis());
        w.kafka.send(txn, World.EPOCHS, cluster, RecordSerdes.epochRecord().serialize(p.record()), clock.millis());
      } else if (decision instanceof PublisherCore.Stage st) {
        String cluster = st.record().getClusterId();
        w.kafka.send(txn, World.SNAPSHOTS, cluster, st.snapshot(), clock.millis());
        w.kafka.send(txn, World.EPOCHS, cluster, RecordSerdes.epochRecord().serialize(st.record()), clock.millis());
        w.count(st.record().getState() == EpochState.REVERTED ? "first stages reverted"
            : "stages published (" + st.record().getStage() + ")");
      } else if (decision instanceof PublisherCore.Note n) {
        w.kafka.send(txn, World.EPOCHS, n.record().getClusterId(), RecordSerdes.epochRecord().serialize(n.record()),
            clock.millis());
        w.count(n.record().getState() != EpochState.FENCE_CUTOVER ? "barriers reached (" + n.record().getStage() + ")"
            : io.ringshift.protocol.Cutover.isInPlaceNote(n.record()) ? "repairs in place" : "fence cutovers");
      } else if (decision instanceof PublisherCore.Reject r) {
        w.kafka.send(txn, World.EPOCHS, r.record().getClusterId(), RecordSerdes.epochRecord().serialize(r.record()),
            clock.millis());
        w.count("rejections");
      }
      w.kafka.commit(txn);
    } catch (SimKafka.Fenced f) {
      // As SnapshotPublisher: a publisher that still holds the lease opens a new session a second later; one that lost
      // it stands by (endSession).
      throw new SessionEnds("fenced: " + f.getMessage());
    }
  }

  private static RangeCopyTask task(SimKafka.Rec r) {
    if (r.decoded == null) {
      r.decoded = RecordSerdes.rangeCopyTask().deserialize(r.value);
    }
    return (RangeCopyTask) r.decoded;
  }

  private static TaskStatus status(SimKafka.Rec r) {
    if (r.decoded == null) {
      r.decoded = RecordSerdes.taskStatus().deserialize(r.value);
    }
    return (TaskStatus) r.decoded;
  }

  /** Kafka reachable again. */
  void reconnected() {
    if (up && holdsLease && !session) {
      openSession();
    }
    schedulePoll();
  }

  /** The lease's timing. */
  static final class PublisherLease {
    static final long TIMEOUT = 10_000;

    private PublisherLease() {}
  }
}
