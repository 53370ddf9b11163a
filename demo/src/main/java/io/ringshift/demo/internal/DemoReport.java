package io.ringshift.demo.internal;

import io.ringshift.demo.DemoResult;
import io.ringshift.demo.DemoResult.ChangeReport;
import io.ringshift.demo.DemoResult.Mark;
import io.ringshift.ring.ByteUnits;
import java.util.List;
import java.util.Locale;

/**
 * The demo's HTML report ({@code --report FILE.html}): one self-contained page, no scripts and no network, in the
 * style of the simulate report. A timeline of the run with each change as a band from its request to its
 * publication (its stages marked), under it the application's acknowledged writes and reads per second, the write
 * latency (p50 and p99 of each second, retries included) and the write attempts refused at fences or failed on a down
 * node; then the bytes each change moved against the ideal, and the summary table.
 */
public final class DemoReport {
  private static final int WIDTH = 960;
  private static final int LEFT = 64;
  private static final int RIGHT = 16;
  private static final int PLOT = WIDTH - LEFT - RIGHT;
  private static final String[] BAND_COLORS = {"#2166ac", "#e08214", "#1b9e77", "#b8579a", "#6a51a3", "#a9b0ba"};

  private DemoReport() {}

  /** The page for {@code result}, whose workload {@code timeline} recorded. */
  public static String render(DemoResult result, Timeline timeline) {
    StringBuilder h = new StringBuilder(64 * 1024);
    h.append("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>ringshift demo, seed ")
        .append(result.seed()).append("</title>\n<style>").append(CSS).append("</style></head>\n<body><main>\n");
    h.append("<h1>ringshift demo</h1>\n<p class=\"sub\">").append(escape(String.format(Locale.ROOT,
        "%d storage nodes in 3 zones, %d tokens each, 3 replicas; %,d keys (%s); %,d operations/s; throttle %s per "
            + "worker, %d workers; seed %d", result.settings().nodes(), result.settings().vnodes(), result.loaded(),
        ByteUnits.format(result.loadedBytes()), result.settings().rate(), DemoScenario.rate(result.settings()
            .throttle()), result.settings().workers(), result.seed()))).append("</p>\n");
    h.append("<p class=\"verdict ").append(result.passed() ? "pass\">PASSED: every check holds"
        : "fail\">FAILED: " + escape(String.join("; ", result.failures()))).append("</p>\n");
    h.append("<div class=\"cards\">\n");
    card(h, "run", SummaryText.duration(result.elapsedMillis()), "plane start to the last check");
    card(h, "writes", String.format(Locale.ROOT, "%,d", result.writes()), "acknowledged by every replica");
    card(h, "lost writes", String.valueOf(result.lostWrites()), String.format(Locale.ROOT,
        "of %,d (key, replica) pairs read back", result.replicaReads()));
    card(h, "stale reads", String.valueOf(result.staleReads()), String.format(Locale.ROOT, "of %,d reads",
        result.reads()));
    card(h, "filling reads", String.valueOf(result.fillingReads()), "reads before a copy was verified");
    card(h, "audit", result.auditPassed() ? "passed" : "failed", result.auditEpochs() + " snapshots proved");
    h.append("</div>\n");

    List<Timeline.Second> seconds = timeline.seconds();
    int n = Math.max(1, seconds.size());
    long origin = timeline.startMillis();
    h.append("<h2>Timeline</h2>\n<p class=\"note\">Each band is a change, from its request to its publication (or "
        + "cancel); ticks mark its plan, its last task caught up, READY and PUBLISHED. x: seconds since the "
        + "application started.</p>\n");
    h.append("<figure>").append(legend(result.changes())).append(bands(result.changes(), origin, n));
    double[] writes = new double[n];
    double[] reads = new double[n];
    double[] p50 = new double[n];
    double[] p99 = new double[n];
    double[] refused = new double[n];
    double[] failed = new double[n];
    for (int i = 0; i < seconds.size(); i++) {
      Timeline.Second s = seconds.get(i);
      writes[i] = s.acknowledged();
      reads[i] = s.reads();
      float[] latencies = s.latencies();
      p50[i] = latencies.length == 0 ? Double.NaN : latencies[(int) Math.min(latencies.length - 1,
          Math.ceil(0.50 * latencies.length) - 1)];
      p99[i] = latencies.length == 0 ? Double.NaN : latencies[(int) Math.min(latencies.length - 1,
          Math.ceil(0.99 * latencies.length) - 1)];
      refused[i] = s.refused();
      failed[i] = s.failed();
    }
    h.append(chart("operations per second: writes acknowledged, reads", n, result.changes(), origin, false,
        new Series("writes", "#2166ac", writes, false), new Series("reads", "#1b9e77", reads, false)));
    h.append(chart("write latency, ms (log scale): p50, p99 of each second", n, result.changes(), origin, true,
        new Series("p50", "#2166ac", p50, false), new Series("p99", "#c0392b", p99, false)));
    h.append(chart("write attempts per second: refused at a fence or for a newer ring, failed on a down node", n,
        result.changes(), origin, false, new Series("refused", "#e08214", refused, true),
        new Series("failed", "#c0392b", failed, true)));
    h.append("</figure>\n");

    h.append("<h2>Bytes moved against the ideal</h2>\n<p class=\"note\">moved: bytes the change's tasks copied "
        + "(a cancelled change's copies are deleted again); ideal: the weight share that changes hands, times the "
        + "replica bytes when it was asked for.</p>\n<figure>").append(movedBars(result.changes())).append("</figure>\n");

    h.append("<h2>Changes</h2>\n<table><thead><tr><th>change</th><th>epochs</th><th>tasks</th><th>moved</th>"
        + "<th>ideal</th><th>/ideal</th><th>plan</th><th>copy</th><th>verify</th><th>publish</th><th>cleanup</th>"
        + "<th>fence window p50/p99/max</th><th>swap</th></tr></thead><tbody>\n");
    for (ChangeReport c : result.changes()) {
      var phases = c.phases();
      h.append("<tr><th>").append(escape(c.label())).append("</th><td>").append(SummaryText.epochs(c.epochs()))
          .append("PUBLISHED".equals(c.outcome()) ? "" : " " + c.outcome()).append("</td><td>").append(c.tasks())
          .append("</td><td>").append(ByteUnits.format(c.bytesMoved())).append("</td><td>")
          .append(c.idealBytes() > 0 ? ByteUnits.format(c.idealBytes()) : "-").append("</td><td>")
          .append(c.movedToIdeal() < 0 ? "-" : String.format(Locale.ROOT, "%.2f", c.movedToIdeal())).append("</td>");
      for (String phase : new String[] {"planned", "copied", "ready", "published", "cleaned"}) {
        Long ms = phases.get(phase);
        h.append("<td>").append(ms == null ? "-" : SummaryText.seconds(ms)).append("</td>");
      }
      h.append("<td>").append(escape(SummaryText.spread(c.fenceWindows()))).append(c.downWindows().count() > 0
          ? "; node down " + escape(SummaryText.spread(c.downWindows())) : "").append("</td><td>")
          .append(c.swapDelayMillis() < 0 ? "-" : c.swapDelayMillis() + " ms").append("</td></tr>\n");
    }
    h.append("</tbody></table>\n<ul class=\"facts\">\n");
    for (String line : SummaryText.lines(result).subList(result.changes().size() + 3, SummaryText.lines(result)
        .size())) {
      h.append("<li>").append(escape(line.strip())).append("</li>\n");
    }
    h.append("</ul>\n<footer>Made by <code>ringshift demo --seed ").append(result.seed())
        .append(" --report FILE.html</code> (docs/operations.md, \"The demo\").</footer>\n</main></body></html>\n");
    return h.toString();
  }

  private record Series(String name, String color, double[] values, boolean bars) {}

  private static void card(StringBuilder h, String title, String figure, String detail) {
    h.append("<div class=\"card\"><div class=\"ct\">").append(escape(title)).append("</div><div class=\"cf\">")
        .append(escape(figure)).append("</div><div class=\"cd\">").append(escape(detail)).append("</div></div>\n");
  }

  private static String legend(List<ChangeReport> changes) {
    StringBuilder s = new StringBuilder("<div class=\"legend\">");
    for (int i = 0; i < changes.size(); i++) {
      s.append("<span><i class=\"sw\" style=\"background:").append(color(i)).append("\"></i>")
          .append(escape(SummaryText.epochs(changes.get(i).epochs()) + ": " + changes.get(i).label()))
          .append("</span>");
    }
    return s.append("</div>").toString();
  }

  private static String color(int i) {
    return BAND_COLORS[i % BAND_COLORS.length];
  }

  private static double x(long millis, long origin, int seconds) {
    return LEFT + PLOT * Math.max(0, Math.min(1, (millis - origin) / 1000.0 / seconds));
  }

  /** The change bands alone, with their stage ticks and the x axis. */
  private static String bands(List<ChangeReport> changes, long origin, int seconds) {
    int height = 26 + 14 * changes.size();
    StringBuilder s = new StringBuilder(String.format(Locale.ROOT,
        "<svg viewBox=\"0 0 %d %d\" role=\"img\" aria-label=\"changes over time\">", WIDTH, height));
    for (int i = 0; i < changes.size(); i++) {
      ChangeReport c = changes.get(i);
      long from = c.marks().isEmpty() ? origin : c.marks().get(0).millis();
      long to = Math.max(c.at("published"), Math.max(c.at("cancelled"), c.at("ready")));
      if (to < 0) {
        to = c.marks().get(c.marks().size() - 1).millis();
      }
      double y = 4 + 14 * i;
      double x0 = x(from, origin, seconds);
      double x1 = Math.max(x0 + 2, x(to, origin, seconds));
      s.append(String.format(Locale.ROOT, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"10\" rx=\"2\" "
          + "fill=\"%s\" opacity=\".75\"><title>%s</title></rect>", x0, y, x1 - x0, color(i), escape(c.label())));
      for (Mark m : c.marks()) {
        double xm = x(m.millis(), origin, seconds);
        s.append(String.format(Locale.ROOT, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#111\" "
            + "stroke-width=\"1\"><title>%s</title></line>", xm, xm, y - 1, y + 11, escape(m.stage())));
      }
    }
    axis(s, height - 12, seconds);
    return s.append("</svg>").toString();
  }

  private static void axis(StringBuilder s, double y, int seconds) {
    int step = seconds <= 60 ? 10 : seconds <= 300 ? 30 : 60;
    for (int t = 0; t <= seconds; t += step) {
      double x = LEFT + PLOT * (double) t / seconds;
      s.append(String.format(Locale.ROOT, "<text x=\"%.1f\" y=\"%.1f\" class=\"tick\" text-anchor=\"middle\">%d s"
          + "</text>", x, y + 10, t));
    }
  }

  private static String chart(String title, int seconds, List<ChangeReport> changes, long origin, boolean log,
      Series... series) {
    int height = 150;
    int top = 22;
    int bottom = height - 20;
    double max = 0;
    double min = Double.MAX_VALUE;
    for (Series sr : series) {
      for (double v : sr.values()) {
        if (!Double.isNaN(v)) {
          max = Math.max(max, v);
          if (v > 0) {
            min = Math.min(min, v);
          }
        }
      }
    }
    max = max <= 0 ? 1 : max;
    double lo = log ? Math.max(0.1, Math.min(min, 1)) : 0;
    double hi = log ? Math.max(max, lo * 10) : max * 1.1;
    StringBuilder s = new StringBuilder(String.format(Locale.ROOT,
        "<div class=\"mt\">%s</div><svg viewBox=\"0 0 %d %d\" role=\"img\" aria-label=\"%s\">", escape(title), WIDTH,
        height, escape(title)));
    for (int i = 0; i < changes.size(); i++) {
      ChangeReport c = changes.get(i);
      long from = c.marks().isEmpty() ? origin : c.marks().get(0).millis();
      long to = Math.max(c.at("published"), Math.max(c.at("cancelled"), c.at("ready")));
      if (to > 0) {
        double x0 = x(from, origin, seconds);
        s.append(String.format(Locale.ROOT, "<rect x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"%d\" fill=\"%s\" "
            + "opacity=\".10\"/>", x0, top, Math.max(1, x(to, origin, seconds) - x0), bottom - top, color(i)));
      }
    }
    for (int g = 0; g <= 4; g++) {
      double value = log ? lo * Math.pow(hi / lo, g / 4.0) : hi * g / 4.0;
      double y = bottom - (bottom - top) * g / 4.0;
      s.append(String.format(Locale.ROOT, "<line x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\" class=\"grid\"/>"
          + "<text x=\"%d\" y=\"%.1f\" class=\"tick\" text-anchor=\"end\">%s</text>", LEFT, WIDTH - RIGHT, y, y,
          LEFT - 6, y + 4, number(value)));
    }
    double barWidth = Math.max(1, PLOT / (double) seconds / series.length);
    for (int k = 0; k < series.length; k++) {
      Series sr = series[k];
      StringBuilder path = new StringBuilder();
      for (int i = 0; i < sr.values().length; i++) {
        double v = sr.values()[i];
        if (Double.isNaN(v)) {
          continue;
        }
        double frac = log ? (v <= lo ? 0 : Math.log(v / lo) / Math.log(hi / lo)) : v / hi;
        double y = bottom - (bottom - top) * Math.min(1, frac);
        double xi = LEFT + PLOT * (i + 0.5) / seconds;
        if (sr.bars()) {
          if (v > 0) {
            s.append(String.format(Locale.ROOT, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
                + "fill=\"%s\"/>", xi - barWidth * series.length / 2 + k * barWidth, y, barWidth, bottom - y,
                sr.color()));
          }
        } else {
          path.append(path.length() == 0 ? "M" : "L").append(String.format(Locale.ROOT, "%.1f,%.1f", xi, y));
        }
      }
      if (path.length() > 0) {
        s.append("<path d=\"").append(path).append("\" fill=\"none\" stroke=\"").append(sr.color())
            .append("\" stroke-width=\"1.6\"/>");
      }
      s.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"%d\" class=\"tick\" fill=\"%s\" style=\"fill:%s\">"
          + "%s</text>", LEFT + 8 + 90 * k, top - 6, sr.color(), sr.color(), escape(sr.name())));
    }
    axis(s, bottom, seconds);
    return s.append("</svg>").toString();
  }

  private static String movedBars(List<ChangeReport> changes) {
    double max = 1;
    for (ChangeReport c : changes) {
      max = Math.max(max, Math.max(c.bytesMoved(), c.idealBytes()));
    }
    int rowHeight = 34;
    int labelWidth = 300;
    int plot = WIDTH - labelWidth - 250;
    StringBuilder s = new StringBuilder(String.format(Locale.ROOT,
        "<div class=\"legend\"><span><i class=\"sw\" style=\"background:#2166ac\"></i>moved</span><span><i "
            + "class=\"sw\" style=\"background:#a9b0ba\"></i>ideal</span></div><svg viewBox=\"0 0 %d %d\" "
            + "role=\"img\" aria-label=\"bytes moved against the ideal\">", WIDTH, rowHeight * changes.size() + 8));
    for (int i = 0; i < changes.size(); i++) {
      ChangeReport c = changes.get(i);
      double y = 4 + rowHeight * i;
      double moved = plot * c.bytesMoved() / max;
      double ideal = plot * c.idealBytes() / max;
      s.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"%.1f\" class=\"label\" text-anchor=\"end\">%s</text>",
          labelWidth - 8, y + 17, escape(c.label())));
      s.append(String.format(Locale.ROOT, "<rect x=\"%d\" y=\"%.1f\" width=\"%.1f\" height=\"12\" fill=\"#2166ac\"/>"
          + "<rect x=\"%d\" y=\"%.1f\" width=\"%.1f\" height=\"12\" fill=\"#a9b0ba\"/>", labelWidth, y + 2,
          Math.max(1, moved), labelWidth, y + 15, Math.max(c.idealBytes() > 0 ? 1 : 0, ideal)));
      s.append(String.format(Locale.ROOT, "<text x=\"%.1f\" y=\"%.1f\" class=\"tick\">%s%s</text>",
          labelWidth + Math.max(moved, ideal) + 6, y + 17, escape(ByteUnits.format(c.bytesMoved())),
          c.movedToIdeal() < 0 ? "" : String.format(Locale.ROOT, " (%.2fx the ideal %s)", c.movedToIdeal(),
              escape(ByteUnits.format(c.idealBytes())))));
    }
    return s.append("</svg>").toString();
  }

  private static String number(double v) {
    if (v >= 1000) {
      return String.format(Locale.ROOT, "%,.0f", v);
    }
    if (v >= 10) {
      return String.format(Locale.ROOT, "%.0f", v);
    }
    return String.format(Locale.ROOT, "%.1f", v);
  }

  static String escape(String s) {
    StringBuilder out = new StringBuilder(s.length());
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      switch (c) {
        case '<' -> out.append("&lt;");
        case '>' -> out.append("&gt;");
        case '&' -> out.append("&amp;");
        case '"' -> out.append("&quot;");
        default -> out.append(c);
      }
    }
    return out.toString();
  }

  private static final String CSS = """
      :root{--bg:#fbfbfa;--fg:#1d232b;--muted:#5d6673;--card:#fff;--line:#e3e5e8;--grid:#eceef1}
      @media (prefers-color-scheme:dark){:root{--bg:#15181c;--fg:#e6e8eb;--muted:#9aa3ad;--card:#1d2126;
      --line:#2c3238;--grid:#262b31}}
      *{box-sizing:border-box}
      body{margin:0;background:var(--bg);color:var(--fg);font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,
      Arial,sans-serif}
      main{max-width:1000px;margin:0 auto;padding:28px 24px 48px}
      h1{font-size:28px;margin:0 0 2px}
      h2{font-size:20px;margin:32px 0 6px}
      .sub,.note,footer{color:var(--muted)}
      .note{font-size:13px;margin:0 0 8px}
      .verdict{font-weight:650;padding:8px 12px;border-radius:6px}
      .verdict.pass{background:#e3f4ea;color:#14532d}
      .verdict.fail{background:#fde8e6;color:#7f1d1d}
      .cards{display:grid;grid-template-columns:repeat(auto-fit,minmax(150px,1fr));gap:10px;margin:14px 0}
      .card{background:var(--card);border:1px solid var(--line);border-radius:8px;padding:10px 12px}
      .ct{font-size:12px;color:var(--muted);text-transform:uppercase;letter-spacing:.04em}
      .cf{font-size:24px;font-weight:650}
      .cd{font-size:12.5px;color:var(--muted)}
      figure{margin:0 0 16px;background:var(--card);border:1px solid var(--line);border-radius:8px;padding:12px 14px}
      .mt{font-weight:600;font-size:13.5px;margin:10px 0 0}
      .legend{display:flex;flex-wrap:wrap;gap:12px;font-size:12.5px;color:var(--muted);margin:0 0 6px}
      .legend span{display:inline-flex;align-items:center;gap:5px}
      .sw{display:inline-block;width:12px;height:12px;border-radius:2px}
      svg{display:block;max-width:100%;height:auto}
      .grid{stroke:var(--grid);stroke-width:1}
      .tick{font-size:11px;fill:var(--muted)}
      .label{font-size:12.5px;fill:var(--fg)}
      table{border-collapse:collapse;font-size:12.5px;width:100%;font-variant-numeric:tabular-nums}
      th,td{padding:4px 6px;border-bottom:1px solid var(--line);text-align:right;white-space:nowrap}
      thead th{color:var(--muted);font-weight:600}
      tbody th{text-align:left;font-weight:500;white-space:normal}
      .facts{font-size:13.5px}
      code{font-size:13px}
      footer{margin-top:32px;font-size:13px}
      """;
}
