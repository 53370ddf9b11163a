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

  /** The lines for {@code clusterId} from the raw values of {@code ring.hot-keys}; none when no report is recent. */
  static List<String> lines(String clusterId, Collection<byte[]> values, long nowMillis) {
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
      return List.of();
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
    List<String> lines = new ArrayList<>();
    lines.add(String.format(Locale.ROOT, "hot keys   share of the lookups of %d client%s (reports of the last %d min; "
        + "at most this much overcount)", recent.size(), recent.size() == 1 ? "" : "s", RECENT.toMinutes()));
    for (Merged m : merged.subList(0, Math.min(SHOWN, merged.size()))) {
      lines.add(String.format(Locale.ROOT, "           %6.2f%%  (%.2f%%)  %s", 100 * m.share(), 100 * m.overcount(),
          HotKey.text(m.key())));
    }
    return lines;
  }
}
