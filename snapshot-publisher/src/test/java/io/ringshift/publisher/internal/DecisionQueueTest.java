package io.ringshift.publisher.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.ringshift.publisher.ClusterScript;
import io.ringshift.publisher.ClusterScript.Step;
import io.ringshift.protocol.SigningKey;
import io.ringshift.protocol.TrustedKeys;
import io.ringshift.schemas.avro.EpochRecord;
import io.ringshift.schemas.avro.EpochState;
import io.ringshift.schemas.avro.RangeCopyTask;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;
import org.junit.jupiter.api.Test;

/**
 * The publisher's patience with READY records whose tasks do not add up yet, on an injected time: a check on the
 * tasks never rejects at first sight, a record is rejected only once it has waited the patience, a cluster's later
 * records wait behind it, and other clusters do not.
 */
class DecisionQueueTest {
  private static final SigningKey KEY = SigningKey.generate();
  private static final Duration PATIENCE = Duration.ofSeconds(15);
  private static final long T0 = 1_000_000_000L;

  private final DecisionQueue queue = new DecisionQueue(PATIENCE);
  private final Recorder outcomes = new Recorder();

  /** Records what the queue hands over, as "decided <cluster>/<epoch> <verdict>[ after waiting]" and "waiting ...". */
  static final class Recorder implements DecisionQueue.Outcomes {
    final List<String> calls = new ArrayList<>();
    final List<Verdict> verdicts = new ArrayList<>();

    @Override
    public void decided(EpochRecord ready, Verdict verdict, boolean waited) {
      calls.add("decided " + ready.getClusterId() + "/" + ready.getEpoch() + " " + verdict.getClass().getSimpleName()
          + (waited ? " after waiting" : ""));
      verdicts.add(verdict);
    }

    @Override
    public void waiting(EpochRecord ready, Verdict.NotYet notYet) {
      calls.add("waiting " + ready.getClusterId() + "/" + ready.getEpoch() + ": " + notYet.reason());
    }
  }

  @Test
  void shouldWaitForTheTombstonesOfASupersededPlanInsteadOfRejectingTheFailureEpoch() {
    ClusterScript script = new ClusterScript("cache");
    PublisherState state = new PublisherState(TrustedKeys.of(KEY.publicKey()));
    TaskBook tasks = new TaskBook();
    published(state, script.init(6));
    ClusterScript superseded = new ClusterScript("cache");
    superseded.init(6);
    List<RangeCopyTask> oldTasks = superseded.join("node-07", "az-1").tasks();
    oldTasks.forEach(t -> tasks.onTask(t.getTaskId(), t));
    Step failure = script.fail("node-04");
    queue.addAll(List.of(failure.ready()));
    Function<EpochRecord, Verdict> decider = ready -> state.decide(ready, tasks, KEY, 0);

    queue.decide(T0, decider, outcomes);
    oldTasks.forEach(t -> tasks.onTask(t.getTaskId(), null)); // the tombstones become readable
    queue.decide(T0 + millis(200), decider, outcomes);

    assertThat(outcomes.calls).hasSize(2);
    assertThat(outcomes.calls.get(0)).startsWith("waiting cache/2: TASKS: " + oldTasks.size() + " of the ");
    assertThat(outcomes.calls.get(1)).isEqualTo("decided cache/2 Publish after waiting");
    assertThat(queue.size()).isZero();
  }

  @Test
  void rejectsWithTheReasonOfTheLastLookOnlyOnceThePatienceIsSpent() {
    EpochRecord ready = ready("cache", 2);
    queue.addAll(List.of(ready));
    List<String> reasons = List.of("TASKS: first look", "TASKS: second look", "TASKS: last look");
    int[] looks = {0};
    Function<EpochRecord, Verdict> stillFailing = r -> notYet(r, reasons.get(Math.min(looks[0]++, 2)));

    queue.decide(T0, stillFailing, outcomes);
    queue.decide(T0 + PATIENCE.toNanos() - 1, stillFailing, outcomes);
    assertThat(outcomes.calls).containsExactly("waiting cache/2: TASKS: first look");
    assertThat(queue.size()).isOne();

    queue.decide(T0 + PATIENCE.toNanos(), stillFailing, outcomes);

    assertThat(outcomes.calls).containsExactly("waiting cache/2: TASKS: first look",
        "decided cache/2 Reject after waiting");
    assertThat(((Verdict.Reject) outcomes.verdicts.get(0)).record().getReason()).isEqualTo("TASKS: last look");
    assertThat(queue.size()).isZero();
  }

  @Test
  void rejectsAtOnceOnACheckThatReadsNoTasks() {
    EpochRecord ready = ready("cache", 2);
    queue.addAll(List.of(ready));

    queue.decide(T0, r -> reject(r, "CHAIN: broken"), outcomes);

    assertThat(outcomes.calls).containsExactly("decided cache/2 Reject");
  }

  @Test
  void shouldHoldTheLaterRecordsOfAWaitingClusterButDecidesOtherClusters() {
    EpochRecord waiting = ready("cache", 2);
    EpochRecord next = ready("cache", 3);
    EpochRecord other = ready("sessions", 7);
    queue.addAll(List.of(waiting, next, other));
    List<EpochRecord> decided = new ArrayList<>();
    Function<EpochRecord, Verdict> decider = r -> {
      decided.add(r);
      return r == waiting ? notYet(r, "TASKS: not yet") : new Verdict.Ignore("already published");
    };

    queue.decide(T0, decider, outcomes);

    assertThat(decided).as("cache/3 is not decided before cache/2").containsExactly(waiting, other);
    assertThat(outcomes.calls).containsExactly("waiting cache/2: TASKS: not yet",
        "decided sessions/7 Ignore");
    assertThat(queue.size()).isEqualTo(2);

    queue.decide(T0 + PATIENCE.toNanos(), decider, outcomes);

    assertThat(outcomes.calls).containsSubsequence("decided cache/2 Reject after waiting", "decided cache/3 Ignore");
    assertThat(queue.size()).isZero();
  }

  @Test
  void rejectsAPatienceThatIsNotPositive() {
    assertThatThrownBy(() -> new DecisionQueue(Duration.ZERO))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("patience was PT0S; it must be positive");
  }

  private static void published(PublisherState state, Step step) {
    state.onRecord(step.ready());
    Verdict v = state.decide(state.takePending().get(0), new TaskBook(), KEY, 0);
    state.onRecord(((Verdict.Publish) v).record());
  }

  private static long millis(long ms) {
    return Duration.ofMillis(ms).toNanos();
  }

  private static EpochRecord ready(String cluster, long epoch) {
    Step step = new ClusterScript(cluster).init(3);
    EpochRecord r = EpochRecord.newBuilder(step.ready()).build();
    r.setEpoch(epoch);
    r.setTargetChecksum(ByteBuffer.wrap(new byte[32]));
    return r;
  }

  private static Verdict.NotYet notYet(EpochRecord ready, String reason) {
    return new Verdict.NotYet(reject(ready, reason));
  }

  private static Verdict.Reject reject(EpochRecord ready, String reason) {
    EpochRecord rejected = EpochRecord.newBuilder(ready).setState(EpochState.REJECTED).setReason(reason).build();
    return new Verdict.Reject(Check.valueOf(reason.substring(0, reason.indexOf(':'))), rejected);
  }
}
