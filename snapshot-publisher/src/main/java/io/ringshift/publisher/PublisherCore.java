package io.ringshift.publisher;

import io.ringshift.protocol.RingSnapshotCodec;
import io.ringshift.protocol.SigningKey;
import io.ringshift.protocol.TrustedKeys;
import io.ringshift.publisher.internal.DecisionQueue;
import io.ringshift.publisher.internal.PublisherState;
import io.ringshift.publisher.internal.TaskBook;
import io.ringshift.publisher.internal.Transitions;
import io.ringshift.protocol.Participants;
import io.ringshift.schemas.avro.ParticipantReport;
import io.ringshift.publisher.internal.Verdict;
import io.ringshift.schemas.avro.EpochRecord;
import io.ringshift.schemas.avro.EpochState;
import io.ringshift.schemas.avro.RangeCopyTask;
import io.ringshift.schemas.avro.TaskStatus;
import java.time.Duration;
import java.util.Objects;

/**
 * The snapshot publisher without Kafka: what it knows ({@code PublisherState}, rebuilt from {@code ring.epochs}), the
 * live tasks and their statuses ({@code TaskBook}), the READY records waiting to be decided ({@code DecisionQueue}) and
 * the checks ({@code EpochCheck}), exactly as a publishing session runs them. The session, and the deterministic
 * simulation, feed it what they read and write what it decides, in one transaction per decision.
 *
 * <p>The order matters as in the session: read {@code ring.epochs} (every record, {@link #onEpochRecord}); before
 * {@link #decide}, read {@code ring.tasks} and {@code ring.task-status} to their end ({@link #onTask},
 * {@link #onStatus}); a decision is committed by the caller before the next record is decided. Not thread safe.
 */
public final class PublisherCore {
  /** What to write for one READY record, in one transaction. */
  public sealed interface Decision {
    /** The READY record decided. */
    EpochRecord ready();
  }

  /**
   * Publish: the signed snapshot's bytes to {@code ring.snapshots} (key: cluster id) and {@code record} (PUBLISHED) to
   * {@code ring.epochs}, together.
   */
  public record Publish(EpochRecord ready, byte[] snapshot, EpochRecord record) implements Decision {}

  /** Reject: {@code record} (REJECTED, with the reason) to {@code ring.epochs}, and nothing else. */
  public record Reject(EpochRecord ready, EpochRecord record, boolean waited) implements Decision {}

  /**
   * A transition stage, or a revert (docs/protocol.md, "Transition stages"): the snapshot's bytes to
   * {@code ring.snapshots} (key: cluster id) and {@code record} (STAGED, or REVERTED with the previous epoch's snapshot
   * published again) to {@code ring.epochs}, together. {@code ready}: the PLANNED or READY record it answers or
   * advances, or {@code record} itself for a revert.
   */
  public record Stage(EpochRecord ready, byte[] snapshot, EpochRecord record) implements Decision {}

  /**
   * {@code record} alone to {@code ring.epochs}: FENCE_CUTOVER (a PLANNED record answered without stages) or
   * CONVERGED (every live participant reached a stage).
   */
  public record Note(EpochRecord ready, EpochRecord record) implements Decision {}

  /** Writes a decision; throws when it could not (the session ends: a fenced producer, Kafka gone). */
  @FunctionalInterface
  public interface Committer {
    void commit(Decision decision);
  }

  /** Told of a READY record that starts waiting for its tasks, or for the participants. */
  @FunctionalInterface
  public interface Waiting {
    void waiting(EpochRecord ready, String reason, Duration patience);

    /** {@code record} waits for the participants to reach a stage, with no deadline: leases end for the silent. */
    default void holding(EpochRecord record, String reason) {}
  }

  private final SigningKey key;
  private final PublisherState state;
  private final TaskBook tasks = new TaskBook();
  private final DecisionQueue queue;
  private final RingSnapshotCodec codec = new RingSnapshotCodec();

  /**
   * @param key the key it signs with
   * @param historyKeys the keys a PUBLISHED record must be signed by to count as published (its own and earlier ones)
   * @param patience how long a READY record whose tasks do not add up yet may wait before it is rejected
   */
  public PublisherCore(SigningKey key, TrustedKeys historyKeys, Duration patience) {
    this(key, historyKeys, patience, true);
  }

  /** @param stages whether changes that move ranges are published in transition stages */
  public PublisherCore(SigningKey key, TrustedKeys historyKeys, Duration patience, boolean stages) {
    this.key = Objects.requireNonNull(key, "key");
    this.state = new PublisherState(historyKeys, stages);
    this.queue = new DecisionQueue(patience);
  }

  /** A record of {@code ring.participants} ({@code null}: a tombstone), read at {@code nowMillis}. */
  public void onParticipant(String key, ParticipantReport report, long nowMillis) {
    state.transitions().onParticipant(key, report, nowMillis);
  }

  /** The participants of a cluster, as read so far. */
  public Participants participants(String clusterId) {
    return state.transitions().participants(clusterId);
  }

  /**
   * Whether {@code epoch} of the cluster is in stage {@code WRITE_BOTH_READ_NEW}: its READY record passed every check,
   * and what follows is its FINAL snapshot, never a rejection.
   */
  public boolean inSecondStage(String clusterId, long epoch) {
    return state.transitions().inSecondStage(clusterId, epoch);
  }

  /** Per cluster with a staged epoch, how many live participants its next barrier waits for. */
  public java.util.Map<String, Integer> stragglers(long nowMillis) {
    return state.transitions().stragglerCounts(nowMillis);
  }

  /** Whether a staged epoch waits for the participants: the caller should read them and decide again soon. */
  public boolean inTransition() {
    return state.transitions().waiting();
  }

  /** A record of {@code ring.epochs}, in log order; returns whether it is a PUBLISHED record the history now ends with. */
  public boolean onEpochRecord(EpochRecord record) {
    state.onRecord(record);
    return record.getState() == EpochState.PUBLISHED
        && state.lastPublished(record.getClusterId()) == record.getEpoch();
  }

  /** A record of {@code ring.tasks} ({@code null}: a tombstone). */
  public void onTask(String taskId, RangeCopyTask task) {
    tasks.onTask(taskId, task);
  }

  /** A record of {@code ring.task-status} ({@code null}: a tombstone). */
  public void onStatus(String taskId, TaskStatus status) {
    tasks.onStatus(taskId, status);
  }

  /** Whether READY records read since the last decision are new to the queue. */
  public boolean fresh() {
    return state.pendingCount() > 0;
  }

  /** READY records queued or waiting. */
  public int queued() {
    return queue.size() + state.pendingCount();
  }

  /** The last published epoch of a cluster, or -1. */
  public long lastPublished(String clusterId) {
    return state.lastPublished(clusterId);
  }

  /**
   * Decides the READY records queued, in log order, at {@code nowNanos} (for the patience) and {@code nowMillis} (the
   * time the records written carry): each final decision is handed to {@code committer}, and counts once it returns;
   * a record whose tasks do not add up yet waits (told to {@code waiting} the first time).
   */
  public void decide(long nowNanos, long nowMillis, Committer committer, Waiting waiting) {
    queue.addAll(state.takePending());
    housekeeping(nowMillis, committer);
    queue.decide(nowNanos, ready -> state.decide(ready, tasks, key, nowMillis), new DecisionQueue.Outcomes() {
      @Override
      public void decided(EpochRecord ready, Verdict verdict, boolean waited) {
        if (verdict instanceof Verdict.Publish p) {
          committer.commit(new Publish(ready, codec.encode(p.snapshot()), p.record()));
          state.onRecord(p.record());
          tasks.forget(p.record().getClusterId(), p.record().getEpoch());
        } else if (verdict instanceof Verdict.Reject r) {
          committer.commit(new Reject(ready, r.record(), waited));
          state.onRecord(r.record());
        } else if (verdict instanceof Verdict.Stage st) {
          committer.commit(new Stage(ready, codec.encode(st.snapshot()), st.record()));
          state.onRecord(st.record());
        } else if (verdict instanceof Verdict.Note n) {
          committer.commit(new Note(ready, n.record()));
          state.onRecord(n.record());
        } else if (!(verdict instanceof Verdict.Ignore)) {
          throw new IllegalStateException("not a final verdict: " + verdict);
        }
      }

      @Override
      public void waiting(EpochRecord ready, Verdict.NotYet notYet) {
        waiting.waiting(ready, notYet.reason(), queue.patience());
      }

      @Override
      public void holding(EpochRecord record, Verdict.Hold hold) {
        waiting.holding(record, hold.reason());
      }
    });
    housekeeping(nowMillis, committer);
  }

  /**
   * Writes what answers no queued record: the reverts of abandoned first stages, then the barriers reached
   * (CONVERGED). Before the queue, so that a revert comes before the records after it; and after, so that a rejection
   * is reverted at once.
   */
  private void housekeeping(long nowMillis, Committer committer) {
    for (Transitions.Housekeeping h : state.housekeeping(nowMillis)) {
      if (h.snapshot() != null) {
        committer.commit(new Stage(h.record(), codec.encode(h.snapshot()), h.record()));
      } else {
        committer.commit(new Note(h.record(), h.record()));
      }
      state.onRecord(h.record());
    }
  }

  /** The patience with a READY record whose tasks do not add up. */
  public Duration patience() {
    return queue.patience();
  }
}
