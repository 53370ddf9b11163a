package io.ringshift.cli.internal.control;

import io.ringshift.protocol.Participants;
import io.ringshift.protocol.RecordSerdes;
import io.ringshift.protocol.TransitionStage;
import io.ringshift.schemas.avro.ParticipantReport;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

/**
 * The participants of a cluster in {@code ringshift status}: what the clients and nodes that report to {@code
 * ring.participants} route by, who is live, and who holds a transition back (docs/protocol.md, "The client barrier").
 * A one-shot read cannot know when each report arrived, so a lease is timed here from the participant's own report
 * time: good enough to show, not what the publisher's barrier decides by.
 */
final class ParticipantsSection {
  /** Stragglers listed by name. */
  static final int SHOWN = 10;
  /** How far back a node's write without a version keeps the cluster to the fence. */
  static final Duration LEGACY_WINDOW = io.ringshift.protocol.Cutover.LEGACY_WINDOW;

  private ParticipantsSection() {}

  /** One participant in {@code --json}. */
  record ParticipantJson(String id, String kind, long epoch, String stage, boolean live) {}

  /**
   * The participants in {@code ringshift status --json}: how many are live and lapsed, the newest (epoch, stage) a
   * live one routes by, the live ones behind it (at most {@link #SHOWN}), and why the cluster keeps the fence, if it
   * does.
   */
  record ParticipantsJson(int live, int lapsed, long newestEpoch, String newestStage, List<ParticipantJson> behind,
      String fenceOnlyReason) {
    static final ParticipantsJson NONE = new ParticipantsJson(0, 0, -1, null, List.of(), null);
  }

  private static Participants read(String clusterId, Map<String, byte[]> values) {
    Participants p = Participants.none(clusterId);
    for (Map.Entry<String, byte[]> e : new TreeMap<>(values).entrySet()) {
      ParticipantReport r;
      try {
        r = e.getValue() == null ? null : RecordSerdes.participantReport().deserialize(e.getValue());
      } catch (RuntimeException ex) {
        continue; // not ours to judge here; the status is about the cluster
      }
      p = p.with(e.getKey(), r, r == null ? 0 : r.getReportedAtMillis());
    }
    return p;
  }

  static ParticipantsJson json(String clusterId, Map<String, byte[]> values, long nowMillis) {
    Participants p = read(clusterId, values);
    List<Participants.Participant> live = p.live(nowMillis);
    Participants.Participant newest = p.newest(nowMillis).orElse(null);
    if (p.all().isEmpty()) {
      return ParticipantsJson.NONE;
    }
    List<ParticipantJson> behind = new ArrayList<>();
    if (newest != null) {
      for (Participants.Participant s : p.stragglers(newest.epoch(), newest.stage(), nowMillis)) {
        if (behind.size() < SHOWN) {
          behind.add(new ParticipantJson(s.id(), s.isNode() ? "node" : "client", s.epoch(), s.stage().name(), true));
        }
      }
    }
    return new ParticipantsJson(live.size(), p.lapsed(nowMillis).size(), newest == null ? -1 : newest.epoch(),
        newest == null ? null : newest.stage().name(), List.copyOf(behind),
        p.fenceOnlyReason(nowMillis, LEGACY_WINDOW).orElse(null));
  }

  /** The lines for {@code clusterId} from the raw values of {@code ring.participants}; none without a report. */
  static List<String> lines(String clusterId, Map<String, byte[]> values, long nowMillis) {
    Participants p = read(clusterId, values);
    if (p.all().isEmpty()) {
      return List.of();
    }
    List<Participants.Participant> live = p.live(nowMillis);
    long nodes = live.stream().filter(Participants.Participant::isNode).count();
    List<String> lines = new ArrayList<>();
    Participants.Participant newest = p.newest(nowMillis).orElse(null);
    lines.add(String.format(Locale.ROOT, "participants %d live (%d client%s, %d node%s), %d lapsed%s", live.size(),
        live.size() - nodes, live.size() - nodes == 1 ? "" : "s", nodes, nodes == 1 ? "" : "s",
        p.lapsed(nowMillis).size(), newest == null ? ""
            : "; newest route: epoch " + newest.epoch() + describe(newest.stage())));
    if (newest != null) {
      List<Participants.Participant> stragglers = p.stragglers(newest.epoch(), newest.stage(), nowMillis);
      if (!stragglers.isEmpty()) {
        lines.add(String.format(Locale.ROOT, "  behind   %d: %s%s", stragglers.size(),
            String.join(", ", stragglers.stream().limit(SHOWN).map(Participants.Participant::toString).toList()),
            stragglers.size() > SHOWN ? ", ..." : ""));
      }
    }
    p.fenceOnlyReason(nowMillis, LEGACY_WINDOW).ifPresent(why -> lines.add("  fence    changes take the fence at "
        + "cutover: " + why));
    return lines;
  }

  private static String describe(TransitionStage stage) {
    return stage == TransitionStage.FINAL ? "" : " in stage " + stage;
  }
}
