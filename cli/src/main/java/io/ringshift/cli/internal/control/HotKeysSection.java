package io.ringshift.cli.internal.control;

import io.ringshift.client.HotKey;
import io.ringshift.protocol.RecordSerdes;
import io.ringshift.schemas.avro.HotKeyShare;
import io.ringshift.schemas.avro.HotKeysReport;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The hot keys of a cluster in {@code ringshift status}: the recent reports its clients wrote to {@code
 * ring.hot-keys} (docs/client.md, "Hot keys"), merged. A key's share is the lookup-weighted mean of its shares in
 * the reports (a report without the key counts as 0 there, so a key hot at one client of many ranks by its share
 * of all their lookups).
 */
final class HotKeysSection {
  /** Reports older than this are left out (a client that stopped reporting). */
  static final Duration RECENT = Duration.ofMinutes(10);
  static final int SHOWN = 10;

  private HotKeysSection() {}

  private record Merged(byte[] key, double share, double overcount) {}

  /** The merged hot keys of the recent reports, hottest first, and how many clients reported. */
  private record Ranking(int clients, List<Merged> keys) {}

  /** One hot key in {@code ringshift status --json}: the key as status prints it, its share and overcount. */
  record HotKeyJson(String key, double share, double maxOvercount) {}

  /**
   * The hot keys in {@code ringshift status --json}: how many clients reported within the last {@code
   * windowMinutes}, and the {@link #SHOWN} hottest keys of their merged reports.
   */
  record HotKeysJson(int clients, long windowMinutes, List<HotKeyJson> keys) {
    /** No client reported (or the topic could not be read). */
    static final HotKeysJson NONE = new HotKeysJson(0, RECENT.toMinutes(), List.of());
  }

  /** The JSON of the merged hot keys. */
  static HotKeysJson json(String clusterId, Collection<byte[]> values, long nowMillis) {
    Ranking ranking = rank(clusterId, values, nowMillis);
    List<HotKeyJson> keys = new ArrayList<>();
    for (Merged m : ranking.keys().subList(0, Math.min(SHOWN, ranking.keys().size()))) {
      keys.add(new HotKeyJson(HotKey.text(m.key()), m.share(), m.overcount()));
    }
    return new HotKeysJson(ranking.clients(), RECENT.toMinutes(), List.copyOf(keys));
  }

  /** The lines for {@code clusterId} from the raw values of {@code ring.hot-keys}; none when no report is recent. */
  static List<String> lines(String clusterId, Collection<byte[]> values, long nowMillis) {
    Ranking ranking = rank(clusterId, values, nowMillis);
    if (ranking.clients() == 0) {
      return List.of();
    }
    List<String> lines = new ArrayList<>();
    lines.add(String.format(Locale.ROOT, "hot keys   share of the lookups of %d client%s (reports of the last %d min; "
        + "at most this much overcount)", ranking.clients(), ranking.clients() == 1 ? "" : "s", RECENT.toMinutes()));
    for (Merged m : ranking.keys().subList(0, Math.min(SHOWN, ranking.keys().size()))) {
      lines.add(String.format(Locale.ROOT, "           %6.2f%%  (%.2f%%)  %s", 100 * m.share(), 100 * m.overcount(),
          HotKey.text(m.key())));
    }
    return lines;
  }

  private static Ranking rank(String clusterId, Collection<byte[]> values, long nowMillis) {
    List<HotKeysReport> recent = new ArrayList<>();
    for (byte[] value : values) {
      HotKeysReport r;
      try {
        r = RecordSerdes.hotKeysReport().deserialize(value);
      } catch (RuntimeException e) {
        continue; // not ours to judge here; the status is about the cluster
      }
      if (r.getClusterId().equals(clusterId) && nowMillis - r.getTimestampMillis() <= RECENT.toMillis()
          && r.getLookups() > 0) {
        recent.add(r);
      }
    }
    if (recent.isEmpty()) {
      return new Ranking(0, List.of());
    }
    double lookups = recent.stream().mapToLong(HotKeysReport::getLookups).sum();
    Map<ByteBuffer, double[]> sums = new HashMap<>();
    for (HotKeysReport r : recent) {
      for (HotKeyShare k : r.getKeys()) {
        double[] sum = sums.computeIfAbsent(k.getKey().duplicate(), b -> new double[2]);
        sum[0] += k.getShare() * r.getLookups();
        sum[1] += k.getMaxOvercount() * r.getLookups();
      }
    }
    List<Merged> merged = new ArrayList<>();
    sums.forEach((key, sum) -> {
      byte[] bytes = new byte[key.remaining()];
      key.duplicate().get(bytes);
      merged.add(new Merged(bytes, sum[0] / lookups, sum[1] / lookups));
    });
    merged.sort((a, b) -> Double.compare(b.share(), a.share()));
    return new Ranking(recent.size(), merged);
  }
}
