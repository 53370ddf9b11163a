package io.ringshift.publisher.internal;

import io.ringshift.schemas.avro.EpochRecord;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.function.Function;

/**
 * The READY records the publisher has read and not answered yet, in log order, with the patience granted to
 * those whose tasks do not add up yet. Pure: the time is passed in; not thread-safe (the publisher's one thread
 * owns it).
 *
 * <p>Design. Kafka commits a transaction partition by partition. The orchestrator writes the tombstones of a
 * superseded plan's tasks on {@code ring.tasks} in the same transaction as the READY record of the failure epoch
 * that superseded it, under the same epoch number, so the publisher can read that READY record while a
 * {@code ring.tasks} partition's last stable offset is still before the tombstones: the old plan's tasks then
 * look live and unverified. A REJECTED record is final (every later epoch of the cluster is then rejected by
 * {@link Check#SEQUENCE}), so a check on the tasks must not reject on such a view. {@link EpochCheck} answers
 * {@link Verdict.NotYet} instead; the record stays here and is decided again after every new read of the control
 * topics, and is rejected, with the reason of that last look, only once it has waited {@code patience} since the
 * first. A cluster's records are decided in log order, so one behind a waiting record of the same cluster waits
 * too, without a deadline of its own yet (deciding it first would reject it by SEQUENCE); other clusters go on.
 */
public final class DecisionQueue {
  /** What becomes of the queued records. */
  public interface Outcomes {
    /**
     * A final verdict on {@code ready}: {@link Verdict.Publish}, {@link Verdict.Reject} (at once, or the
     * rejection of a {@link Verdict.NotYet} whose patience is spent) or {@link Verdict.Ignore}. Acted on before the
     * next record is decided, so that decision sees its effect.
     */
    void decided(EpochRecord ready, Verdict verdict, boolean waited);

    /** {@code ready} failed a check on its tasks for the first time; it waits at most the patience. */
    void waiting(EpochRecord ready, Verdict.NotYet notYet);

    /** {@code record} waits for a barrier ({@link Verdict.Hold}), told once per record and reason. */
    default void holding(EpochRecord record, Verdict.Hold hold) {}
  }

  private static final class Entry {
    final EpochRecord ready;
    boolean waiting;
    long deadlineNanos;
    String held;

    Entry(EpochRecord ready) {
      this.ready = ready;
    }
  }

  private final Duration patience;
  private final List<Entry> queue = new ArrayList<>();

  /**
   * @param patience how long a record whose tasks do not add up may wait for them before it is rejected
   * @throws IllegalArgumentException when {@code patience} is not positive
   */
  public DecisionQueue(Duration patience) {
    Objects.requireNonNull(patience, "patience");
    if (patience.isNegative() || patience.isZero()) {
      throw new IllegalArgumentException("patience was " + patience + "; it must be positive");
    }
    this.patience = patience;
  }

  public Duration patience() {
    return patience;
  }

  /** Queues READY records, in log order, behind those already queued. */
  public void addAll(List<EpochRecord> ready) {
    ready.forEach(r -> queue.add(new Entry(Objects.requireNonNull(r, "ready"))));
  }

  /** Records queued, waiting or not decided yet. */
  public int size() {
    return queue.size();
  }

  /**
   * Decides the queued records in log order with {@code decider}: a final verdict is handed to
   * {@code outcomes} and the record leaves the queue; a {@link Verdict.NotYet} keeps it, and the cluster's later
   * records, queued until a later call, unless it has waited {@code patience} since its first, when its rejection
   * is handed over instead.
   *
   * @param nowNanos the time, on the scale of {@link System#nanoTime()}
   */
  public void decide(long nowNanos, Function<EpochRecord, Verdict> decider, Outcomes outcomes) {
    Set<String> held = new HashSet<>();
    for (Iterator<Entry> it = queue.iterator(); it.hasNext(); ) {
      Entry e = it.next();
      String cluster = e.ready.getClusterId();
      if (held.contains(cluster)) {
        continue;
      }
      Verdict verdict = decider.apply(e.ready);
      if (verdict instanceof Verdict.Hold hold) {
        if (!hold.reason().equals(e.held)) {
          e.held = hold.reason();
          outcomes.holding(e.ready, hold);
        }
        held.add(cluster);
        continue;
      }
      if (verdict instanceof Verdict.Stage stage && !stage.answers()) {
        // The READY record's second stage: it stays, to be decided again once the participants have reached it.
        outcomes.decided(e.ready, verdict, e.waiting);
        held.add(cluster);
        continue;
      }
      if (verdict instanceof Verdict.NotYet notYet) {
        if (!e.waiting) {
          e.waiting = true;
          e.deadlineNanos = nowNanos + patience.toNanos();
          outcomes.waiting(e.ready, notYet);
        }
        if (nowNanos - e.deadlineNanos < 0) {
          held.add(cluster);
          continue;
        }
        verdict = notYet.rejection();
      }
      it.remove();
      outcomes.decided(e.ready, verdict, e.waiting);
    }
  }
}
