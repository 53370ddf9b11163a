package io.ringshift.protocol;

import io.ringshift.schemas.avro.ParticipantKind;
import io.ringshift.schemas.avro.ParticipantReport;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.TreeMap;

/**
 * The participants of one cluster as {@code ring.participants} shows them to one reader (the publisher, {@code ringshift
 * status}): where each client and node routes, whose lease still holds, and who holds a transition stage back
 * (docs/protocol.md, "The client barrier"). Immutable; {@link #with} returns the next state.
 *
 * <p>Design note. A lease is timed on the reader's clock from when the reader <em>saw</em> the report, never from the
 * participant's own timestamp, so clock offsets between hosts do not matter; only the rates of the two clocks do,
 * which {@link #LAPSE_MARGIN} and {@link #LAPSE_RATE_MARGIN} cover. A participant stops serving moving ranges once its
 * own lease ran out since it last sent a report that was acknowledged; the reader counts it lapsed only later: it saw
 * the report after it was sent, and adds the margins. Liveness decides only whom the barrier waits for; safety
 * against a lapsed participant that still writes comes from the fences of the transition's epoch, which refuse its
 * older tag.
 */
public final class Participants {
  /** Added to every lease before a reader counts it lapsed. */
  public static final Duration LAPSE_MARGIN = Duration.ofSeconds(2);
  /** And this fraction of the lease: clocks that run at slightly different rates. */
  public static final double LAPSE_RATE_MARGIN = 0.01;

  /**
   * One participant's last report, as a reader saw it.
   *
   * @param key the record key, {@code <cluster>/<participant id>}
   * @param report the report
   * @param seenAtMillis when the reader read it, on the reader's clock
   */
  public record Participant(String key, ParticipantReport report, long seenAtMillis) {
    public Participant {
      Objects.requireNonNull(key, "key");
      Objects.requireNonNull(report, "report");
    }

    public String id() {
      return report.getParticipantId();
    }

    /** Whether it is a storage node (UNKNOWN kinds count as clients). */
    public boolean isNode() {
      return report.getKind() == ParticipantKind.NODE;
    }

    public long epoch() {
      return report.getEpoch();
    }

    /** Its stage; an unknown number counts as the first, the one furthest behind. */
    public TransitionStage stage() {
      for (TransitionStage s : TransitionStage.values()) {
        if (s.order() == report.getStage()) {
          return s;
        }
      }
      return TransitionStage.WRITE_BOTH_READ_OLD;
    }

    /** When the reader counts its lease lapsed, on the reader's clock. */
    public long lapsesAtMillis() {
      long lease = Math.max(0, report.getLeaseMillis());
      return seenAtMillis + lease + LAPSE_MARGIN.toMillis() + (long) (lease * LAPSE_RATE_MARGIN);
    }

    public boolean isLive(long nowMillis) {
      return nowMillis < lapsesAtMillis();
    }

    /** Whether it routes by {@code epoch} in {@code stage} or later. */
    public boolean hasReached(long epoch, TransitionStage stage) {
      return epoch() > epoch || (epoch() == epoch && stage().order() >= stage.order());
    }

    @Override
    public String toString() {
      return id() + (isNode() ? " (node)" : "") + " at epoch " + epoch() + " " + stage();
    }
  }

  private final String clusterId;
  private final Map<String, Participant> byKey;

  private Participants(String clusterId, Map<String, Participant> byKey) {
    this.clusterId = clusterId;
    this.byKey = byKey;
  }

  /** No participants yet, for cluster {@code clusterId}. */
  public static Participants none(String clusterId) {
    return new Participants(Objects.requireNonNull(clusterId, "clusterId"), Map.of());
  }

  /**
   * The state after the record {@code key} -> {@code report} (null: a tombstone, the participant closed), read at
   * {@code seenAtMillis}. A record of another cluster, or whose key does not name its participant, changes nothing.
   */
  public Participants with(String key, ParticipantReport report, long seenAtMillis) {
    if (key == null || !key.startsWith(clusterId + "/")) {
      return this;
    }
    TreeMap<String, Participant> next = new TreeMap<>(byKey);
    if (report == null) {
      next.remove(key);
    } else if (clusterId.equals(report.getClusterId())
        && key.equals(clusterId + "/" + report.getParticipantId())) {
      next.put(key, new Participant(key, report, seenAtMillis));
    } else {
      return this;
    }
    return new Participants(clusterId, java.util.Collections.unmodifiableMap(next));
  }

  /** The participants of {@code clusterId} among {@code reports}, each as its reader saw it. */
  public static Participants of(String clusterId, List<Participant> reports) {
    Participants all = none(clusterId);
    for (Participant p : reports) {
      all = all.with(p.key(), p.report(), p.seenAtMillis());
    }
    return all;
  }

  /** Every participant with a report, live or not, by key. */
  public List<Participant> all() {
    return List.copyOf(byKey.values());
  }

  /** The participants whose lease holds at {@code nowMillis}. */
  public List<Participant> live(long nowMillis) {
    return byKey.values().stream().filter(p -> p.isLive(nowMillis)).toList();
  }

  /** The participants whose lease lapsed (they still have a report: they did not close). */
  public List<Participant> lapsed(long nowMillis) {
    return byKey.values().stream().filter(p -> !p.isLive(nowMillis)).toList();
  }

  /**
   * The live participants that do not route by {@code epoch} in {@code stage} or later yet: whom a barrier into the
   * stage after it waits for, furthest behind first.
   */
  public List<Participant> stragglers(long epoch, TransitionStage stage, long nowMillis) {
    List<Participant> out = new ArrayList<>();
    for (Participant p : byKey.values()) {
      if (p.isLive(nowMillis) && !p.hasReached(epoch, stage)) {
        out.add(p);
      }
    }
    out.sort(Comparator.comparingLong(Participant::epoch).thenComparing(p -> p.stage().order())
        .thenComparing(Participant::id));
    return out;
  }

  /** The live participant with the newest route (highest epoch, then latest stage), if any is live. */
  public Optional<Participant> newest(long nowMillis) {
    return byKey.values().stream().filter(p -> p.isLive(nowMillis))
        .max(Comparator.comparingLong(Participant::epoch).thenComparing(p -> p.stage().order()));
  }

  /** Whether every live participant routes by {@code epoch} in {@code stage} or later. */
  public boolean allReached(long epoch, TransitionStage stage, long nowMillis) {
    return stragglers(epoch, stage, nowMillis).isEmpty();
  }

  /**
   * Why a change must take the fence at its cutover instead of transition stages, if it must: a live participant that
   * does not route by stages, or a live node that took a write without a version within {@code legacyWindow} (a
   * client of before versions, which reports nothing and cannot follow stages).
   */
  public Optional<String> fenceOnlyReason(long nowMillis, Duration legacyWindow) {
    for (Participant p : byKey.values()) {
      if (!p.isLive(nowMillis)) {
        continue;
      }
      if (!p.report().getStagesSupported()) {
        return Optional.of("participant " + p.id() + " does not route by transition stages");
      }
      Long unversioned = p.report().getUnversionedWritesAtMillis();
      // The node's own clock dates it; its report's time is on the same clock.
      if (unversioned != null && p.report().getReportedAtMillis() - unversioned < legacyWindow.toMillis()) {
        return Optional.of("node " + p.id() + " took writes without a version "
            + Duration.ofMillis(Math.max(0, p.report().getReportedAtMillis() - unversioned)).toSeconds()
            + " s before its last report: a client of before versions writes to the cluster");
      }
    }
    return Optional.empty();
  }

  @Override
  public String toString() {
    return "Participants[" + clusterId + ", " + byKey.size() + "]";
  }
}
