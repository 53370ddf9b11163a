package io.ringshift.health.internal;

import static io.ringshift.health.internal.Records.epoch;
import static io.ringshift.health.internal.Records.event;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.ringshift.health.HealthListener;
import io.ringshift.health.internal.Debounce.Probe;
import io.ringshift.protocol.RecordSerdes;
import io.ringshift.schemas.avro.EpochState;
import io.ringshift.schemas.avro.MembershipAction;
import io.ringshift.schemas.avro.MembershipEvent;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import org.apache.kafka.common.KafkaException;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The debounce end to end, with a fake clock and a fake prober: a round a second, 3 misses over at least 10 s, five
 * members. Each test drives rounds and says when the nodes are down.
 */
class DeciderTest {
  private static final Duration INTERVAL = Duration.ofSeconds(1);
  private static final int MISSES = 3;
  private static final Duration MIN_DOWN = Duration.ofSeconds(10);
  private static final List<String> MEMBERS = List.of("node-1", "node-2", "node-3", "node-4", "node-5");

  private final FakeClock clock = new FakeClock();
  private final FakeProber prober = new FakeProber();
  private final Recorder listener = new Recorder();
  private final MembershipView view = new MembershipView(Records.CLUSTER);
  /** Every FAIL written, by any decider of a test, in order. */
  private final List<String> fails = new ArrayList<>();
  /** Whether a written FAIL reaches the view at once, as the tail would read it back. */
  private boolean echo = true;

  @BeforeEach
  void declareTheCluster() {
    view.onEpoch(epoch(1, EpochState.READY, MembershipAction.INIT, "", MEMBERS.toArray(String[]::new)));
  }

  @Test
  void shouldFailANodeStoppedForGoodExactlyOnceAfterTheDebounce() {
    Decider decider = decider();
    prober.down.add("node-3");

    List<Integer> failedAt = new ArrayList<>();
    for (int round = 0; round < 120; round++) {
      if (!decider.round(prober, true, this::write).isEmpty()) {
        failedAt.add(round);
      }
      clock.advance(INTERVAL);
    }

    // The first missed probe is at round 0; the run spans 10 s at round 10 (11 misses): one FAIL, then none.
    assertThat(fails).containsExactly("node-3");
    assertThat(failedAt).containsExactly(10);
    assertThat(listener.suspected).containsExactly("node-3");
    assertThat(prober.asked.subList(11 * MEMBERS.size(), prober.asked.size()))
        .as("a failed node is no longer probed").doesNotContain("node-3");
  }

  @Test
  void shouldFailOnceEvenBeforeTheFailIsReadBack() {
    echo = false; // the tail lags: only the decider's memory knows of the FAIL
    Decider decider = decider();
    prober.down.add("node-3");

    rounds(decider, 60, true);

    assertThat(fails).containsExactly("node-3");
    assertThat(decider.unconfirmed()).containsOnlyKeys("node-3");

    view.onMembershipEvent(event(MembershipAction.FAIL, "node-3", listener.requestIds.get(0)));
    rounds(decider, 30, true);

    assertThat(decider.unconfirmed()).as("read back: Kafka knows it now").isEmpty();
    assertThat(fails).containsExactly("node-3");
  }

  @Test
  void shouldNotFailANodePausedShorterThanTheWindow() {
    Decider decider = decider();

    prober.down.add("node-2");
    rounds(decider, 10, true); // misses at 0 s .. 9 s: 10 misses, more than 3, spanning 9 s < 10 s
    prober.down.remove("node-2");
    rounds(decider, 60, true);

    assertThat(fails).isEmpty();
    assertThat(listener.suspected).containsExactly("node-2");
    assertThat(listener.recovered).containsExactly("node-2:10");
  }

  @Test
  void shouldNeedTheConsecutiveMissesEvenWhenTheWindowIsZero() {
    Decider decider = new Decider(view, Set.copyOf(MEMBERS), new Debounce(MISSES, Duration.ZERO), clock, listener);

    prober.down.add("node-2");
    rounds(decider, 2, true); // two timeouts: a suspicion, not a failure
    prober.down.remove("node-2");
    rounds(decider, 5, true);

    assertThat(fails).isEmpty();

    prober.down.add("node-2");
    rounds(decider, 3, true);

    assertThat(fails).containsExactly("node-2");
  }

  @Test
  void shouldNotFailANodeThatFlapsFasterThanTheWindow() {
    Decider decider = decider();

    for (int flap = 0; flap < 10; flap++) { // down 6 s, up 1 s, again and again
      prober.down.add("node-4");
      rounds(decider, 7, true);
      prober.down.remove("node-4");
      rounds(decider, 1, true);
    }

    assertThat(fails).isEmpty();
    assertThat(listener.suspected).hasSize(10);
    assertThat(listener.recovered).hasSize(10);
  }

  @Test
  void shouldFailAFlappingNodeAtMostOnceAndNeverJoinItAgain() {
    Decider decider = decider();

    for (int flap = 0; flap < 5; flap++) { // down 15 s, up 3 s: each outage alone is long enough
      prober.down.add("node-4");
      rounds(decider, 15, true);
      prober.down.remove("node-4");
      rounds(decider, 3, true);
    }

    assertThat(fails).as("one FAIL; answering again changes nothing").containsExactly("node-4");
    assertThat(listener.recovered).isEmpty(); // once failed it is not watched: its coming back is not a recovery
  }

  @Test
  void shouldNotFailAgainAfterATakeoverWhenTheFailIsOnKafka() {
    Decider first = decider();
    prober.down.add("node-1");
    rounds(first, 12, true);
    assertThat(fails).containsExactly("node-1");

    // The manager that takes over starts from nothing but what Kafka says.
    Decider second = decider();
    rounds(second, 60, true);

    assertThat(fails).containsExactly("node-1");
  }

  @Test
  void shouldKeepSuspicionsWarmOnAStandbyAndFailAtOnceWhenItTakesOver() {
    Decider standby = decider();
    prober.down.add("node-5");

    rounds(standby, 15, false);
    assertThat(fails).as("a standby never writes").isEmpty();

    standby.round(prober, true, this::write);
    assertThat(fails).containsExactly("node-5");
  }

  @Test
  void shouldHoldBackFailsWhileMostMembersMiss() {
    Decider decider = decider();
    prober.down.addAll(List.of("node-1", "node-2", "node-3")); // 2 of 5 answer: this manager may be cut off

    rounds(decider, 30, true);

    assertThat(fails).isEmpty();
    assertThat(listener.heldBack).containsExactly("2/5");

    prober.down.removeAll(List.of("node-1", "node-2"));
    rounds(decider, 1, true);

    assertThat(fails).as("node-3's run went on all along").containsExactly("node-3");
  }

  /**
   * Protocol review of e5d1a4e: the guard was computed over the watched members, which shrink with each FAIL. A manager
   * losing its view of the fleet a few nodes at a time failed each batch while the rest still made a majority of what
   * was left: here 5 of 10 nodes, and it would have gone on. The nodes failed in the last 10 minutes count as members
   * that do not answer.
   */
  @Test
  void shouldNotLetEachFailShrinkTheMajorityItIsHeldBackBy() {
    List<String> ten = new ArrayList<>();
    for (int i = 0; i < 10; i++) {
      ten.add("node-" + i);
    }
    view.onEpoch(epoch(2, EpochState.READY, MembershipAction.JOIN, "node-9", ten.toArray(String[]::new)));
    Decider decider = new Decider(view, Set.copyOf(ten), new Debounce(MISSES, MIN_DOWN), clock, listener);
    timedEcho = true;
    prober.down.addAll(List.of("node-0", "node-1", "node-2")); // 7 of 10 answer: a real outage, failed

    rounds(decider, 30, true);
    assertThat(fails).containsExactlyInAnyOrder("node-0", "node-1", "node-2");

    prober.down.addAll(List.of("node-3", "node-4")); // 5 of the 7 still watched answer, 5 of the 10
    rounds(decider, 60, true);

    assertThat(fails).as("5 of 10 answer: no majority").hasSize(3);
    assertThat(listener.heldBack).containsExactly("5/10");

    clock.advance(Decider.RECENT_FAILURES);
    rounds(decider, 1, true);
    assertThat(fails).as("10 minutes later the fleet is the 7 nodes left, 5 of which answer").hasSize(5);
  }

  /**
   * Found by the protocol simulation (seeds 20261257, 20261298): after three rejections in a row the orchestrator holds
   * and refuses the FAILs it gets, asking for them again; the manager never sent one again (a FAIL at most once per life
   * of a node), so a dead node stayed a replica for good. A refused FAIL declared nothing: the node is watched again and
   * failed again, with a new request.
   */
  @Test
  void shouldFailANodeAgainWhenTheOrchestratorRefusedItsFail() {
    Decider decider = decider();
    prober.down.add("node-3");
    rounds(decider, 30, true);
    assertThat(fails).containsExactly("node-3");

    view.onRejected(Records.CLUSTER, listener.requestIds.get(0));
    rounds(decider, 30, true);

    assertThat(fails).as("failed again after its debounce").containsExactly("node-3", "node-3");
    assertThat(listener.requestIds).hasSize(2).doesNotHaveDuplicates();
    rounds(decider, 60, true);
    assertThat(fails).as("the second FAIL was not refused: once only").hasSize(2);

    // A refusal of a FAIL whose node a plan in flight removes anyway (it already failed) declares it all the same.
    view.onEpoch(epoch(2, EpochState.PLANNED, MembershipAction.FAIL, "node-3", "node-1", "node-2", "node-4",
        "node-5"));
    view.onRejected(Records.CLUSTER, listener.requestIds.get(1));
    rounds(decider, 60, true);
    assertThat(fails).as("the plan in flight removes node-3: no third FAIL").hasSize(2);
  }

  /**
   * Found by the protocol simulation (seeds 20261257, 20261322, 20261328): an operator's CANCEL naming the node (keyed
   * by node, like the FAIL) landed after the manager's FAIL and before the manager read it back. The FAIL was never the
   * node's latest event, so the manager took it for unread forever and never watched the node again: when the
   * orchestrator refused that FAIL, the lost node stayed a replica for good.
   */
  @Test
  void shouldReadAFailBackEvenWhenALaterEventOfTheNodeCoversIt() {
    echo = false;
    Decider decider = decider();
    prober.down.add("node-3");
    rounds(decider, 30, true);
    assertThat(fails).containsExactly("node-3");

    RecordSerdes.trustGeneratedClasses();
    view.onMembershipEvent(event(MembershipAction.FAIL, "node-3", listener.requestIds.get(0)));
    view.onMembershipEvent(event(MembershipAction.CANCEL, "node-3", "operator-7"));
    view.onRejected(Records.CLUSTER, listener.requestIds.get(0));
    rounds(decider, 30, true);

    assertThat(fails).as("the refused FAIL was read back: node-3 watched and failed again")
        .containsExactly("node-3", "node-3");
  }

  /**
   * Found by the protocol simulation (seed 20261299): compaction removed the manager's FAIL before the manager read
   * it, behind a later event of the node (an operator's CANCEL naming it), so the FAIL was never read back and the
   * node never watched again; when the orchestrator refused that FAIL, the lost node stayed a member for good and the
   * next plan's copies to it were blocked forever. A FAIL not read back within a minute is let go: the node is
   * watched again, and failed again if it is still down (a second FAIL of a failed node is refused, harmlessly).
   */
  @Test
  void shouldWatchANodeAgainWhenItsFailIsNeverReadBack() {
    echo = false;
    Decider decider = decider();
    prober.down.add("node-3");
    rounds(decider, 30, true);
    assertThat(fails).containsExactly("node-3");

    RecordSerdes.trustGeneratedClasses();
    view.onMembershipEvent(event(MembershipAction.CANCEL, "node-3", "operator-7"));
    view.onRejected(Records.CLUSTER, listener.requestIds.get(0));
    rounds(decider, 40, true);
    assertThat(fails).as("within a minute of the FAIL: not yet").containsExactly("node-3");
    rounds(decider, 60, true);

    assertThat(fails).as("watched again once the unconfirmed FAIL expired, and failed again")
        .containsExactly("node-3", "node-3");
  }

  @Test
  void shouldProbeOnlyMembersWithAnAddress() {
    Decider decider = new Decider(view, Set.of("node-1", "node-2", "node-3", "node-4", "node-9"),
        new Debounce(MISSES, MIN_DOWN), clock, listener);
    prober.down.add("node-9"); // an address, but not a member: never probed, never failed

    rounds(decider, 30, true);

    assertThat(new HashSet<>(prober.asked)).containsExactlyInAnyOrder("node-1", "node-2", "node-3", "node-4");
    assertThat(listener.notProbed).containsExactly("node-5");
    assertThat(fails).isEmpty();
  }

  @Test
  void shouldIgnoreANodeAnOperatorAlreadyFailed() {
    Decider decider = decider();
    prober.down.add("node-2");
    view.onMembershipEvent(event(MembershipAction.FAIL, "node-2", "operator-1"));

    rounds(decider, 30, true);

    assertThat(fails).isEmpty();
    assertThat(prober.asked).doesNotContain("node-2");
  }

  @Test
  void shouldWatchANodeAgainAfterItJoinsAgain() {
    Decider decider = decider();
    prober.down.add("node-2");
    rounds(decider, 12, true);
    assertThat(fails).containsExactly("node-2");

    view.onMembershipEvent(event(MembershipAction.JOIN, "node-2", "operator-2")); // an operator's decision
    rounds(decider, 12, true);

    assertThat(fails).as("a new life, a new failure").containsExactly("node-2", "node-2");
  }

  @Test
  void shouldTryAFailAgainWhenItsWriteFailed() {
    Decider decider = decider();
    prober.down.add("node-3");
    rounds(decider, 10, true);

    clock.advance(INTERVAL);
    assertThatThrownBy(() -> decider.round(prober, true, node -> {
      throw new KafkaException("broker down");
    })).isInstanceOf(KafkaException.class);
    assertThat(fails).isEmpty();

    clock.advance(INTERVAL);
    decider.round(prober, true, this::write);
    rounds(decider, 20, true);

    assertThat(fails).containsExactly("node-3");
  }

  private Decider decider() {
    return new Decider(view, Set.copyOf(MEMBERS), new Debounce(MISSES, MIN_DOWN), clock, listener);
  }

  private void rounds(Decider decider, int count, boolean decides) {
    for (int i = 0; i < count; i++) {
      decider.round(prober, decides, this::write);
      clock.advance(INTERVAL);
    }
  }

  /** Whether a FAIL read back carries the time it was written (by the test's clock), as a manager writes it. */
  private boolean timedEcho;

  private String write(String node) {
    String requestId = "hm-" + (fails.size() + 1);
    fails.add(node);
    if (echo) {
      RecordSerdes.trustGeneratedClasses();
      MembershipEvent written = event(MembershipAction.FAIL, node, requestId);
      if (timedEcho) {
        written = MembershipEvent.newBuilder(written).setTimestampMillis(clock.millis()).build();
      }
      view.onMembershipEvent(written);
    }
    return requestId;
  }

  private static final class FakeProber implements Decider.Prober {
    final Set<String> down = new HashSet<>();
    final List<String> asked = new ArrayList<>();

    @Override
    public Map<String, Probe> probe(Set<String> nodes) {
      Map<String, Probe> results = new TreeMap<>();
      for (String node : nodes) {
        asked.add(node);
        results.put(node, down.contains(node) ? Probe.missed("connection refused") : Probe.answered());
      }
      return results;
    }
  }

  private static final class Recorder implements HealthListener {
    final List<String> suspected = new ArrayList<>();
    final List<String> recovered = new ArrayList<>();
    final List<String> heldBack = new ArrayList<>();
    final List<String> notProbed = new ArrayList<>();
    final List<String> requestIds = new ArrayList<>();

    @Override
    public void suspected(String node, String reason) {
      suspected.add(node);
    }

    @Override
    public void recovered(String node, int misses) {
      recovered.add(node + ":" + misses);
    }

    @Override
    public void failed(String node, String requestId, int misses, String reason) {
      requestIds.add(requestId);
    }

    @Override
    public void heldBack(int answering, int probed) {
      heldBack.add(answering + "/" + probed);
    }

    @Override
    public void notProbed(String node) {
      notProbed.add(node);
    }
  }

  private static final class FakeClock extends Clock {
    private Instant now = Instant.parse("2026-12-03T10:00:00Z");

    void advance(Duration d) {
      now = now.plus(d);
    }

    @Override
    public Instant instant() {
      return now;
    }

    @Override
    public java.time.ZoneId getZone() {
      return ZoneOffset.UTC;
    }

    @Override
    public Clock withZone(java.time.ZoneId zone) {
      return this;
    }
  }
}
