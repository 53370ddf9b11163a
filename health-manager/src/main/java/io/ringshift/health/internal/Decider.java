package io.ringshift.health.internal;

import io.ringshift.health.HealthListener;
import io.ringshift.health.internal.Debounce.Due;
import io.ringshift.health.internal.Debounce.Probe;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * One health manager's rounds: probe every watched member, feed the {@link Debounce}, and, only when this manager
 * decides (it holds the lease and has read the topics to their end since taking it), write a FAIL for each node
 * that is due. Every manager runs rounds, the standbys too, so that one that takes over has warm suspicions.
 *
 * <p>Watched: the members of the cluster's current epoch ({@link MembershipView#members()}) that have an address, less
 * the nodes already declared dead on {@code ring.membership} (by this manager, another, or an operator) and the
 * nodes this manager failed whose FAIL it has not read back yet (for at most {@link #UNCONFIRMED_TIMEOUT}). So a node
 * is failed once per life, also across a takeover (again only when the orchestrator refused the FAIL, or the FAIL was
 * never read back), and never re-joined: the manager writes nothing but FAILs.
 *
 * <p>The majority guard: a FAIL is written only while more than half of the watched members, counted together with
 * the nodes failed in the last {@link #RECENT_FAILURES} (they are watched no more), answered the round. A manager cut
 * off from the fleet sees everyone miss; it then fails no one and says so. Counting the recent failures keeps the guard
 * from shrinking with each FAIL: over the watched members alone, a manager losing its view of the fleet a few nodes at
 * a time failed each batch while the rest still made a majority of what was left, down to a minority of the cluster.
 */
public final class Decider {
  /** Probes nodes: node id to the outcome, for every node asked about. */
  public interface Prober {
    Map<String, Probe> probe(Set<String> nodes);
  }

  /** Writes a FAIL of a node; returns its request id. Throws when the write did not happen. */
  public interface FailSink {
    String fail(String node);
  }

  /** How long a failed node still counts, as not answering, in the majority guard. */
  public static final Duration RECENT_FAILURES = Duration.ofMinutes(10);

  private final MembershipView view;
  private final Set<String> addressed;
  private final Debounce debounce;
  private final Clock clock;
  private final HealthListener listener;
  /** FAILs this manager wrote whose event it has not read back from ring.membership yet: node to request id. */
  private final Map<String, String> written = new HashMap<>();
  /** When each of {@link #written} was written, by this manager's clock. */
  private final Map<String, Instant> writtenAt = new HashMap<>();

  /**
   * How long a FAIL this manager wrote may stay unread before the manager lets it go and watches the node again:
   * compaction can remove it before it is read, behind a later event of the node (an operator's CANCEL naming it).
   * A node still down is then failed again; a second FAIL of a node that failed already is refused, harmlessly.
   */
  public static final Duration UNCONFIRMED_TIMEOUT = Duration.ofMinutes(1);
  private final Set<String> reportedUnaddressed = new HashSet<>();
  private boolean heldBack;

  /** @param addressed the nodes the manager has an address for */
  public Decider(MembershipView view, Set<String> addressed, Debounce debounce, Clock clock, HealthListener listener) {
    this.view = view;
    this.addressed = Set.copyOf(addressed);
    this.debounce = debounce;
    this.clock = clock;
    this.listener = listener;
  }

  /** The members probed in the next round. */
  public Set<String> watched() {
    // Read back: by request id, as a later event of the node (an operator's CANCEL naming it) may already cover it.
    Instant now = clock.instant();
    written.entrySet().removeIf(e -> view.hasRead(e.getValue())
        || !now.isBefore(writtenAt.get(e.getKey()).plus(UNCONFIRMED_TIMEOUT)));
    writtenAt.keySet().retainAll(written.keySet());
    Set<String> watched = new TreeSet<>();
    for (String member : view.members()) {
      if (!addressed.contains(member)) {
        if (reportedUnaddressed.add(member)) {
          listener.notProbed(member);
        }
      } else if (!view.declared(member) && !written.containsKey(member)) {
        watched.add(member);
      }
    }
    return watched;
  }

  /**
   * One round: probes the watched members and, when {@code decides}, fails those due.
   *
   * @return the nodes failed in this round
   * @throws RuntimeException what {@code sink} threw; the node stays due and is tried again next round
   */
  public List<String> round(Prober prober, boolean decides, FailSink sink) {
    Set<String> watched = watched();
    debounce.retain(watched);
    if (watched.isEmpty()) {
      return List.of();
    }
    Map<String, Probe> results = prober.probe(watched);
    Instant now = clock.instant();
    int answering = 0;
    for (String node : watched) {
      Probe probe = results.getOrDefault(node, Probe.missed("no probe result"));
      int missesBefore = debounce.misses(node);
      switch (debounce.observe(node, probe, now)) {
        case SUSPECTED -> listener.suspected(node, probe.reason());
        case RECOVERED -> listener.recovered(node, missesBefore);
        case NONE -> { }
      }
      if (probe.up()) {
        answering++;
      }
    }
    List<Due> due = debounce.due();
    if (due.isEmpty() || !decides) {
      return List.of();
    }
    // The nodes failed recently (declared on ring.membership, or written by this manager and not read back yet) count
    // as members that do not answer: the guard is over the fleet as it was, not as each FAIL left it.
    Set<String> recent = new TreeSet<>(view.failedSince(now.toEpochMilli() - RECENT_FAILURES.toMillis()));
    recent.addAll(written.keySet());
    recent.removeAll(watched);
    int counted = watched.size() + recent.size();
    if (answering * 2 <= counted) {
      if (!heldBack) {
        heldBack = true;
        listener.heldBack(answering, counted);
      }
      return List.of();
    }
    heldBack = false;
    List<String> failed = new ArrayList<>();
    for (Due d : due) {
      String reason = d.misses() + " consecutive probes missed over " + d.down().toMillis() + " ms (last: "
          + d.reason() + ")";
      String requestId = sink.fail(d.node());
      written.put(d.node(), requestId);
      writtenAt.put(d.node(), now);
      debounce.forget(d.node());
      listener.failed(d.node(), requestId, d.misses(), reason);
      failed.add(d.node());
    }
    return failed;
  }

  /** The FAILs this manager wrote and has not read back yet. */
  public Map<String, String> unconfirmed() {
    return Map.copyOf(written);
  }
}
