package io.ringshift.health.internal;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * The suspicion of every probed node: a node is <em>due</em> for a FAIL only after {@code misses} consecutive
 * missed probes that span at least {@code minDown}, from the first missed probe of the run to the latest. One
 * answered probe ends the run: the node is healthy again and a later outage starts from zero. So a timeout is a
 * suspicion, never a failure; a pause shorter than the window never fails a node; and a node that flaps is failed
 * only when one of its outages alone is long enough. Not thread safe: the probing thread owns it.
 */
public final class Debounce {
  /** One probe's outcome. */
  public record Probe(boolean up, String reason) {
    public static Probe answered() {
      return new Probe(true, "answered");
    }

    public static Probe missed(String reason) {
      return new Probe(false, Objects.requireNonNull(reason, "reason"));
    }
  }

  /** A node that is due: its run of {@code misses} missed probes has lasted {@code down}; the last one's reason. */
  public record Due(String node, int misses, Duration down, String reason) {}

  /** What one observation changed. */
  public enum Change {
    /** Nothing: still healthy, or still missing. */
    NONE,
    /** The first missed probe of a run. */
    SUSPECTED,
    /** An answer after a run of missed probes. */
    RECOVERED
  }

  private record Run(int misses, Instant firstMiss, Instant lastMiss, String reason) {}

  private final int misses;
  private final Duration minDown;
  private final Map<String, Run> runs = new HashMap<>();

  /**
   * @param misses consecutive missed probes a FAIL needs, at least 1
   * @param minDown how long those misses must span, 0 or more
   */
  public Debounce(int misses, Duration minDown) {
    if (misses < 1) {
      throw new IllegalArgumentException("misses was " + misses + "; it must be at least 1");
    }
    if (minDown.isNegative()) {
      throw new IllegalArgumentException("minDown was " + minDown + "; it must be 0 or more");
    }
    this.misses = misses;
    this.minDown = minDown;
  }

  /** Records {@code node}'s probe of {@code at}. */
  public Change observe(String node, Probe probe, Instant at) {
    Run run = runs.get(node);
    if (probe.up()) {
      return runs.remove(node) == null ? Change.NONE : Change.RECOVERED;
    }
    if (run == null) {
      runs.put(node, new Run(1, at, at, probe.reason()));
      return Change.SUSPECTED;
    }
    runs.put(node, new Run(run.misses() + 1, run.firstMiss(), at, probe.reason()));
    return Change.NONE;
  }

  /** The missed probes of {@code node}'s current run, 0 when it answered its last probe. */
  public int misses(String node) {
    Run run = runs.get(node);
    return run == null ? 0 : run.misses();
  }

  /** The nodes due for a FAIL now, in id order. */
  public List<Due> due() {
    List<Due> due = new ArrayList<>();
    runs.forEach((node, run) -> {
      Duration down = Duration.between(run.firstMiss(), run.lastMiss());
      if (run.misses() >= misses && down.compareTo(minDown) >= 0) {
        due.add(new Due(node, run.misses(), down, run.reason()));
      }
    });
    due.sort((a, b) -> a.node().compareTo(b.node()));
    return due;
  }

  /** Forgets {@code node} (failed, or no longer watched): a later run starts from zero. */
  public void forget(String node) {
    runs.remove(node);
  }

  /** Forgets every node but {@code watched}. */
  public void retain(java.util.Set<String> watched) {
    runs.keySet().retainAll(watched);
  }
}
