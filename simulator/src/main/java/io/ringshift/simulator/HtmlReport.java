package io.ringshift.simulator;

import static io.ringshift.simulator.internal.Charts.escape;

import io.ringshift.ring.ByteUnits;
import io.ringshift.simulator.SimulationResult.BalanceRow;
import io.ringshift.simulator.SimulationResult.Change;
import io.ringshift.simulator.SimulationResult.CopySources;
import io.ringshift.simulator.SimulationResult.Moved;
import io.ringshift.simulator.SimulationResult.SchemeRow;
import io.ringshift.simulator.SimulationResult.VnodeRow;
import io.ringshift.simulator.SimulationResult.WeightShare;
import io.ringshift.simulator.SimulationResult.WorkloadSummary;
import io.ringshift.simulator.internal.Charts;
import io.ringshift.simulator.internal.Charts.Group;
import io.ringshift.simulator.internal.Charts.Line;
import io.ringshift.simulator.internal.Charts.Scale;
import io.ringshift.simulator.internal.Units;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.function.ToDoubleFunction;

/**
 * The {@code --report} page: one self-contained HTML file (inline CSS and inline SVG, no script, no external
 * reference of any kind) with headline figures, a chart per question and the full tables folded under each
 * section. It follows the reader's light or dark colour scheme.
 *
 * <p>A pure function of the result: the same result gives the same bytes. The page quotes the result's own
 * timings (build ms, ns/lookup, run time) but reads no clock.
 */
public final class HtmlReport {
  private static final String[] CHANGE_SERIES = {"s0", "s1", "s2", "s3"};
  /** Chart widths in CSS pixels: a full-width figure and a half of a two-column grid. */
  private static final int FULL = 900;
  private static final int HALF = 430;

  private HtmlReport() {}

  /** The page for {@code r}, ending with a newline. */
  public static String render(SimulationResult r) {
    SimulationParameters p = r.parameters();
    StringBuilder h = new StringBuilder(256 * 1024);
    h.append("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n")
        .append("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n")
        .append("<title>ringshift simulate: ").append(p.nodes()).append(" nodes, V = ").append(p.vnodes())
        .append(", R = ").append(p.replicas()).append("</title>\n<style>").append(CSS)
        .append("</style>\n</head>\n<body>\n<main>\n");
    header(h, r);
    changes(h, r);
    balance(h, r);
    weights(h, r);
    sweep(h, r);
    schemes(h, r);
    footer(h, r);
    h.append("</main>\n</body>\n</html>\n");
    return h.toString();
  }

  // ---- header ----

  private static void header(StringBuilder h, SimulationResult r) {
    SimulationParameters p = r.parameters();
    WorkloadSummary w = r.workload();
    h.append("<header>\n<h1>ringshift simulate</h1>\n<p class=\"sub\">")
        .append(p.nodes()).append(" nodes in ").append(p.zones()).append(" zones &middot; V = ").append(p.vnodes())
        .append(" &middot; R = ").append(p.replicas()).append(" &middot; ").append(Units.count(w.keys()))
        .append(" keys &middot; seed ").append(p.seed()).append("</p>\n");
    Change join = r.changes().rows().get(0);
    Change failure = r.changes().rows().get(2);
    SchemeRow modulo = scheme(r, "modulo");
    SchemeRow ring = scheme(r, "ring");
    BalanceRow replicaBytes = BalanceRow.find(r.balance().rows(), BalanceRow.REPLICA, BalanceRow.BYTES);
    h.append("<div class=\"cards\">\n");
    card(h, "a join copies", Units.percent(join.moved().keysFraction()),
        "of all replica data, " + Units.ratio(join.moved().keysOverIdeal()) + "&times; the ideal "
            + Units.percent(join.moved().idealFraction()));
    card(h, "a failure rebuilds from", Units.count(failure.sources().sourceNodes()) + " nodes",
        "busiest sends " + Units.percent(failure.sources().busiestSourceShare()) + "; "
            + (failure.sources().keysWithoutSurvivor() == 0 ? "no key lost" : failure.sources().keysWithoutSurvivor()
                + " keys lost"));
    card(h, "busiest node holds", Units.fixed(replicaBytes.maxOverMean(), 2) + "&times;",
        "the mean of replica bytes at V = " + p.vnodes() + " (CV " + Units.percent(replicaBytes.cv()) + ")");
    card(h, "modulo would copy", Units.percent(modulo.join().keysFraction()),
        "on the same join: " + Units.fixed(modulo.join().keysOverIdeal() == null ? 0 : modulo.join().keysOverIdeal(), 0)
            + "&times; the ideal");
    card(h, "a lookup costs", Units.fixed(ring.lookupNanos(), 0) + " ns",
        "key hash + " + p.replicas() + " replicas, in-process, rough");
    h.append("</div>\n<p class=\"workload\"><b>Workload.</b> ").append(w.keyBytes())
        .append("-byte keys like <code>").append(escape(w.exampleKey())).append("</code>; requests Zipf s = ")
        .append(Units.fixed(w.zipfExponent(), 2)).append(" over ").append(Units.rate(w.totalQps()))
        .append(" req/s (the hottest key gets ").append(Units.percent(w.hottestKeyQpsShare())).append(", ")
        .append(Units.fixed(w.hottestKeyOverNodeMean(), 1)).append("&times; a node's mean); values log-normal, median ")
        .append(ByteUnits.format(w.valueMedianBytes())).append(", &sigma; ").append(Units.fixed(w.valueSigma(), 2))
        .append(" (mean ").append(ByteUnits.format(w.meanValueBytes()))
        .append(", p99 ").append(ByteUnits.format(w.p99ValueBytes()))
        .append("), ").append(ByteUnits.format(w.totalValueBytes())).append(" in all.</p>\n</header>\n");
  }

  private static void card(StringBuilder h, String title, String figure, String detail) {
    h.append("<div class=\"card\"><div class=\"ct\">").append(escape(title)).append("</div><div class=\"cf\">")
        .append(figure).append("</div><div class=\"cd\">").append(detail).append("</div></div>\n");
  }

  // ---- 1. changes ----

  private static void changes(StringBuilder h, SimulationResult r) {
    var s = r.changes();
    section(h, "changes", 1, s.title(), s.takeaway());
    List<Group> groups = new ArrayList<>();
    double max = 0;
    for (Change c : s.rows()) {
      Moved m = c.moved();
      double[] v = {m.keysFraction(), m.bytesFraction(), m.qpsFraction(), m.primaryKeysFraction()};
      String[] labels = new String[v.length];
      for (int i = 0; i < v.length; i++) {
        labels[i] = Units.percent(v[i]);
        max = Math.max(max, v[i]);
      }
      max = Math.max(max, m.idealFraction());
      groups.add(new Group(c.name(), c.node() + " " + c.zone(), v, labels, m.idealFraction()));
    }
    figureStart(h, "What each change moves, as a share of all replica data (primary: of all keys)");
    legend(h, new String[] {"s0", "s1", "s2", "s3", "marker"},
        new String[] {"keys (replica copies)", "bytes", "requests", "primary owners", "ideal"});
    h.append(Charts.hbars(groups, CHANGE_SERIES, Scale.linear(max * 1.08), Units::percentTick, FULL,
        "bars of moved keys, bytes, requests and primaries per change, with the ideal marked"));
    figureEnd(h, "The dashed line is the ideal: the weight share the change hands over, what a perfectly "
        + "weight-proportional placement moves (zone spread can make slightly less possible). Replica level: "
        + "a key counts once for each new replica that must receive it. "
        + escape(TextReport.atReferenceScale(s, r.parameters())));

    List<String> labels = new ArrayList<>();
    List<List<Long>> parts = new ArrayList<>();
    List<String> captions = new ArrayList<>();
    for (Change c : s.rows()) {
      CopySources cs = c.sources();
      labels.add(c.name());
      parts.add(cs.sourceBytesDescending());
      captions.add(cs.sourceNodes() + (cs.sourceNodes() == 1 ? " source" : " sources") + ", busiest "
          + Units.percent(cs.busiestSourceShare()) + ", " + Units.percent(cs.sameZoneShare()) + " in-zone");
    }
    figureStart(h, "Who sends the copies: one segment per source node, largest first");
    h.append(Charts.segments(labels, parts, captions, "s1", FULL, "bytes sent per source node for each change"));
    figureEnd(h, "Sources are old replicas still up, in the receiver's zone when one is. A drain streams from the "
        + "leaving node; a failure cannot, so its rebuild reads from the surviving replicas, spread over many "
        + "nodes and, with R = zones, always across zones.");

    details(h);
    h.append("<table><thead><tr><th></th><th></th><th></th><th colspan=\"3\">replica copies</th>"
        + "<th colspan=\"3\">bytes</th><th colspan=\"3\">requests</th><th colspan=\"3\">primary</th></tr>"
        + "<tr><th>change</th><th>what</th><th>ideal</th><th>copies</th><th>%</th><th>/ideal</th><th>bytes</th>"
        + "<th>%</th><th>/ideal</th><th>QPS</th><th>%</th><th>/ideal</th><th>keys</th><th>%</th><th>/ideal</th>"
        + "</tr></thead><tbody>\n");
    for (Change c : s.rows()) {
      Moved m = c.moved();
      row(h, c.name(), escape(c.description()), Units.percent(m.idealFraction()), Units.count(m.replicaCopies()),
          Units.percent(m.keysFraction()), Units.ratio(m.keysOverIdeal()), ByteUnits.format(m.bytes()),
          Units.percent(m.bytesFraction()), Units.ratio(m.bytesOverIdeal()), Units.rate(m.qps()),
          Units.percent(m.qpsFraction()), Units.ratio(m.qpsOverIdeal()), Units.count(m.primaryKeys()),
          Units.percent(m.primaryKeysFraction()), Units.ratio(m.primaryOverIdeal()));
    }
    h.append("</tbody></table>\n<table><thead><tr><th></th><th></th><th colspan=\"3\">replica copies</th>"
        + "<th colspan=\"3\">primary</th><th></th><th colspan=\"3\">copies</th></tr>"
        + "<tr><th>change</th><th>diff ranges</th><th>diff</th><th>keys</th><th>z</th><th>diff</th><th>keys</th>"
        + "<th>z</th><th>check</th><th>sources</th><th>same zone</th><th>keys degraded</th></tr></thead><tbody>\n");
    for (Change c : s.rows()) {
      SimulationResult.DiffCheck d = c.diff();
      CopySources cs = c.sources();
      row(h, c.name(), Units.count(d.changedRanges()), Units.percent(d.movedReplicaFraction()),
          Units.percent(d.simulatedReplicaFraction()), String.format(Locale.ROOT, "%+.1f", d.replicaZ()),
          Units.percent(d.primaryMovedFraction()), Units.percent(d.simulatedPrimaryFraction()),
          String.format(Locale.ROOT, "%+.1f", d.primaryZ()), d.agrees() ? "ok" : "MISMATCH",
          Units.count(cs.sourceNodes()), Units.percent(cs.sameZoneShare()),
          cs.keysDegradedFraction() > 0 ? Units.percent(cs.keysDegradedFraction()) : "-");
    }
    h.append("</tbody></table>\n<p class=\"note\">diff: the ring's own diff, exact. z: (keys &minus; diff) / "
        + "standard error; the keys are a uniform sample of positions, so |z| &le; 4 means they agree.</p>\n");
    detailsEnd(h);
    h.append("</section>\n");
  }

  // ---- 2. balance ----

  private static void balance(StringBuilder h, SimulationResult r) {
    var s = r.balance();
    section(h, "balance", 2, s.title(), s.takeaway());
    figureStart(h, "Per-node load over the mean, one bar per bucket of nodes");
    h.append("<div class=\"grid3\">\n");
    String[] css = {"s0", "s1", "s2"};
    for (BalanceRow b : s.rows()) {
      double[] values = b.perNodeLoad().stream().mapToDouble(Double::doubleValue).toArray();
      double lo = Math.min(0.8, Math.floor(b.minOverMean() * 20) / 20);
      double hi = Math.max(1.2, Math.ceil(b.maxOverMean() * 20) / 20);
      int m = b.measure().equals(BalanceRow.KEYS) ? 0 : b.measure().equals(BalanceRow.BYTES) ? 1 : 2;
      String measure = b.measure().equals(BalanceRow.QPS) ? "requests" : b.measure();
      h.append("<div class=\"mini\"><div class=\"mt\">").append(b.level()).append(" &middot; ").append(measure)
          .append("</div>");
      h.append(Charts.histogram(values, lo, hi, 24, css[m], 1.0, v -> Units.fixed(v, hi - lo > 2 ? 0 : 1), 300, 150,
          "histogram of per-node " + b.level() + " " + b.measure() + " load"));
      h.append("<div class=\"md\">max/mean ").append(Units.fixed(b.maxOverMean(), 2)).append(" &middot; CV ")
          .append(Units.percent(b.cv())).append(" &middot; random floor ").append(Units.percent(b.randomFloorCv()))
          .append("</div></div>\n");
    }
    h.append("</div>\n");
    figureEnd(h, "x: a node's load divided by the mean (1.0, dashed); y: nodes. Keys and bytes spread by the "
        + "ring's token shares; requests follow a few hot keys, so their spread is the workload's, not the "
        + "placement's (compare with the random floor).");
    details(h);
    h.append("<table><thead><tr><th>level</th><th>measure</th><th>max/mean</th><th>min/mean</th><th>CV</th>"
        + "<th>random floor CV</th></tr></thead><tbody>\n");
    for (BalanceRow b : s.rows()) {
      row(h, b.level(), b.measure(), Units.fixed(b.maxOverMean(), 3), Units.fixed(b.minOverMean(), 3),
          Units.percent(b.cv()), Units.percent(b.randomFloorCv()));
    }
    h.append("</tbody></table>\n");
    detailsEnd(h);
    h.append("</section>\n");
  }

  // ---- 3. weights ----

  private static void weights(StringBuilder h, SimulationResult r) {
    var s = r.weights();
    section(h, "weights", 3, s.title(), s.takeaway());
    List<String> rings = s.rows().stream().map(WeightShare::ring).distinct().toList();
    figureStart(h, "Expected and realised share per node, by weight");
    legend(h, new String[] {"s5", "s0", "s1"}, new String[] {"expected (weight / total)", "primary", "replica copies"});
    h.append("<div class=\"grid2\">\n");
    for (String ring : rings) {
      List<Group> groups = new ArrayList<>();
      double max = 0;
      boolean replicas = true;
      for (WeightShare w : s.rows()) {
        if (w.ring().equals(ring)) {
          replicas &= w.replicaShare() != null;
        }
      }
      for (WeightShare w : s.rows()) {
        if (!w.ring().equals(ring)) {
          continue;
        }
        double[] v = replicas ? new double[] {w.expectedShare(), w.primaryShare(), w.replicaShare()}
            : new double[] {w.expectedShare(), w.primaryShare()};
        String[] labels = new String[v.length];
        for (int i = 0; i < v.length; i++) {
          labels[i] = Units.percent(v[i]);
          max = Math.max(max, v[i]);
        }
        groups.add(new Group("weight " + Units.fixed(w.weight(), 0), w.nodes() + (w.nodes() == 1 ? " node" : " nodes"),
            v, labels, null));
      }
      h.append("<div><div class=\"mt\">").append(escape(ring)).append("</div>");
      h.append(Charts.hbars(groups, replicas ? new String[] {"s5", "s0", "s1"} : new String[] {"s5", "s0"},
          Scale.linear(max * 1.1), Units::percentTick, HALF, "expected and realised shares for " + ring));
      h.append("</div>\n");
    }
    h.append("</div>\n");
    boolean hidden = s.rows().stream().anyMatch(w -> w.replicaShare() == null);
    figureEnd(h, "A node of weight w gets round(w &times; V) tokens." + (hidden ? " Replica shares are not shown "
        + "where R &ge; nodes: every node then holds every key." : ""));
    details(h);
    h.append("<table><thead><tr><th>ring</th><th>weight</th><th>nodes</th><th>expected</th><th>primary</th>"
        + "<th>/expected</th><th>replica</th><th>/expected</th><th>primary min&ndash;max /expected</th></tr>"
        + "</thead><tbody>\n");
    for (WeightShare w : s.rows()) {
      row(h, w.ring(), Units.fixed(w.weight(), 0), Units.count(w.nodes()), Units.percent(w.expectedShare()),
          Units.percent(w.primaryShare()), Units.fixed(w.primaryOverExpected(), 3),
          w.replicaShare() == null ? "-" : Units.percent(w.replicaShare()),
          w.replicaOverExpected() == null ? "-" : Units.fixed(w.replicaOverExpected(), 3),
          Units.fixed(w.primaryMinOverExpected(), 2) + " &ndash; " + Units.fixed(w.primaryMaxOverExpected(), 2));
    }
    h.append("</tbody></table>\n");
    detailsEnd(h);
    h.append("</section>\n");
  }

  // ---- 4. V sweep ----

  private static void sweep(StringBuilder h, SimulationResult r) {
    var s = r.vnodeSweep();
    List<VnodeRow> rows = s.rows();
    section(h, "sweep", 4, s.title(), s.takeaway());
    double[] xs = rows.stream().mapToDouble(VnodeRow::vnodes).toArray();
    String[] xl = rows.stream().map(v -> Integer.toString(v.vnodes())).toArray(String[]::new);
    Double run = (double) r.parameters().vnodes();
    h.append("<div class=\"grid2\">\n");

    double maxRatio = rows.stream().mapToDouble(v -> Math.max(v.primaryMaxOverMean(), v.replicaMaxOverMean())).max()
        .orElse(2);
    panel(h, "Busiest node over the mean", new String[] {"s0", "s1"}, new String[] {"primary", "replica"},
        Charts.lines(xs, xl, List.of(
            new Line("primary", "s0", col(rows, VnodeRow::primaryMaxOverMean), false),
            new Line("replica", "s1", col(rows, VnodeRow::replicaMaxOverMean), false)),
            Scale.linear(1, maxRatio), v -> Units.fixed(v, 1), run, HALF, 240,
            "max over mean against V"));

    VnodeRow chosen = rows.stream().filter(v -> v.vnodes() == r.parameters().vnodes()).findFirst()
        .orElse(rows.get(rows.size() - 1));
    double[] reference = new double[rows.size()];
    for (int i = 0; i < reference.length; i++) {
      reference[i] = chosen.replicaCv() * Math.sqrt((double) chosen.vnodes() / rows.get(i).vnodes());
    }
    double[] primaryCv = col(rows, VnodeRow::primaryCv);
    double[] replicaCv = col(rows, VnodeRow::replicaCv);
    panel(h, "Coefficient of variation (log scale)", new String[] {"s0", "s1", "s5"},
        new String[] {"primary", "replica", "1/&radic;V"},
        Charts.lines(xs, xl, List.of(new Line("1/sqrt(V)", "s5", reference, true),
            new Line("primary", "s0", primaryCv, false), new Line("replica", "s1", replicaCv, false)),
            Scale.log(Math.min(min(primaryCv), min(replicaCv)), Math.max(max(primaryCv), max(replicaCv))),
            Units::percentTick, run, HALF, 240, "coefficient of variation against V, log scale"));

    double[] memory = col(rows, v -> v.footprintBytes());
    double[] raw = col(rows, v -> v.rawTokenTableBytes());
    double[] wire = col(rows, v -> v.wireSnapshotBytesEstimate());
    panel(h, "Bytes (log scale)", new String[] {"s0", "s1", "s2"},
        new String[] {"in memory", "raw token table", "membership snapshot"},
        Charts.lines(xs, xl, List.of(new Line("memory", "s0", memory, false), new Line("raw", "s1", raw, false),
            new Line("wire", "s2", wire, false)),
            Scale.log(Math.min(min(wire), min(raw)), max(memory), 32), Units::bytesTick, run, HALF, 240,
            "bytes against V, log scale"));

    double[] nanos = col(rows, VnodeRow::lookupNanos);
    panel(h, "Lookup cost: ns per lookup", new String[] {"s3"},
        new String[] {"key hash + " + r.parameters().replicas() + " replicas, one thread, rough"},
        Charts.lines(xs, xl, List.of(new Line("ns", "s3", nanos, false)), Scale.linear(max(nanos)),
            v -> Units.fixed(v, 0), run, HALF, 240, "lookup nanoseconds against V"));
    h.append("</div>\n<p class=\"note\">x: V, tokens per node (log scale); the shaded column is this run's V. "
        + "Balance is exact (hash-space shares from the token table, no sampling). The membership snapshot is measured "
        + "as <code>RingSnapshotCodec</code> encodes it (membership and parameters only). Lookup and build times "
        + "are rough in-process figures (one thread, streaming all keys, after a warm-up pass); JMH in "
        + "<code>benchmarks/</code> is the authoritative one.</p>\n");
    details(h);
    h.append("<table><thead><tr><th>V</th><th>tokens</th><th>build ms</th><th>memory</th><th>raw table</th>"
        + "<th>wire</th><th>primary max/mean</th><th>primary CV</th><th>replica max/mean</th><th>replica CV</th>"
        + "<th>join/ideal</th><th>join ranges</th><th>ns/lookup</th></tr></thead><tbody>\n");
    for (VnodeRow v : rows) {
      row(h, (v.vnodes() == r.parameters().vnodes() ? "&#9656; " : "") + v.vnodes(), Units.count(v.tokens()),
          Units.fixed(v.buildMillis(), 1), ByteUnits.format(v.footprintBytes()), ByteUnits.format(v.rawTokenTableBytes()),
          ByteUnits.format(v.wireSnapshotBytesEstimate()), Units.fixed(v.primaryMaxOverMean(), 2),
          Units.percent(v.primaryCv()), Units.fixed(v.replicaMaxOverMean(), 2), Units.percent(v.replicaCv()),
          Units.fixed(v.joinMovedOverIdeal(), 2), Units.count(v.joinChangedRanges()), Units.fixed(v.lookupNanos(), 0));
    }
    h.append("</tbody></table>\n");
    detailsEnd(h);
    h.append("</section>\n");
  }

  private static void panel(StringBuilder h, String title, String[] css, String[] names, String svg) {
    h.append("<figure class=\"panel\"><figcaption>").append(title).append("</figcaption>");
    legend(h, css, names);
    h.append(svg).append("</figure>\n");
  }

  // ---- 5. schemes ----

  private static void schemes(StringBuilder h, SimulationResult r) {
    var s = r.schemes();
    section(h, "schemes", 5, s.title(), s.takeaway());
    List<Group> moved = new ArrayList<>();
    List<Group> balance = new ArrayList<>();
    List<Group> cost = new ArrayList<>();
    double maxRatio = 1;
    double minRatio = 1;
    double maxExcess = 0;
    double maxNanos = 1;
    double minNanos = Double.POSITIVE_INFINITY;
    for (SchemeRow row : s.rows()) {
      double join = row.join().keysOverIdeal() == null ? 0 : row.join().keysOverIdeal();
      double removal = row.removal().keysOverIdeal() == null ? 0 : row.removal().keysOverIdeal();
      maxRatio = Math.max(maxRatio, Math.max(join, removal));
      minRatio = Math.min(minRatio, Math.min(join, removal));
      String sub = row.zoneAware() ? "zone-aware" : "not zone-aware";
      moved.add(new Group(row.scheme(), sub, new double[] {join, removal},
          new String[] {Units.fixed(join, 2) + "\u00d7", Units.fixed(removal, 2) + "\u00d7"}, 1.0));
      double replicaExcess = row.replicaKeysMaxOverMean() - 1;
      double primaryExcess = row.primaryKeysMaxOverMean() - 1;
      maxExcess = Math.max(maxExcess, Math.max(replicaExcess, primaryExcess));
      balance.add(new Group(row.scheme(), null, new double[] {replicaExcess, primaryExcess},
          new String[] {"+" + Units.percent(replicaExcess), "+" + Units.percent(primaryExcess)}, null));
      maxNanos = Math.max(maxNanos, row.lookupNanos());
      minNanos = Math.min(minNanos, row.lookupNanos());
      cost.add(new Group(row.scheme(), row.clientState() + ", " + ByteUnits.format(row.clientStateBytes()),
          new double[] {row.lookupNanos()}, new String[] {Units.fixed(row.lookupNanos(), 0) + " ns"}, null));
    }
    figureStart(h, "Copies moved over the ideal (log scale; 1&times; is the ideal, dashed)");
    legend(h, new String[] {"s0", "s1", "marker"}, new String[] {"join", "removal of one node", "ideal"});
    h.append(Charts.hbars(moved, new String[] {"s0", "s1"}, Scale.log(Math.min(0.5, minRatio), maxRatio * 1.5),
        v -> Units.fixed(v, v < 1 ? 1 : 0) + "\u00d7", FULL, "moved over ideal per scheme, log scale"));
    figureEnd(h, "Modulo remaps almost everything. Jump can only drop its last bucket, so removing another node "
        + "renumbers one bucket and moves two nodes' keys.");
    h.append("<div class=\"grid2\">\n");
    h.append("<figure class=\"panel\"><figcaption>Busiest node above the mean</figcaption>");
    legend(h, new String[] {"s0", "s3"}, new String[] {"replica copies", "primaries"});
    h.append(Charts.hbars(balance, new String[] {"s0", "s3"}, Scale.linear(Math.max(0.01, maxExcess * 1.1)),
        Units::percentTick, HALF, "busiest node above the mean per scheme"));
    h.append("</figure>\n<figure class=\"panel\"><figcaption>ns per lookup, key hash + all replicas (log scale)"
        + "</figcaption>");
    legend(h, new String[] {"s4"}, new String[] {"in-process, one thread, rough"});
    h.append(Charts.hbars(cost, new String[] {"s4"}, Scale.log(Math.min(1, minNanos), maxNanos * 1.5),
        v -> v >= 1000 ? Units.fixed(v / 1000, 0) + "k" : Units.fixed(v, 0), HALF,
        "nanoseconds per lookup per scheme, log scale"));
    h.append("</figure>\n</div>\n");
    details(h);
    h.append("<table><thead><tr><th>scheme</th><th>zones</th><th>join moved</th><th>/ideal</th><th>primary</th>"
        + "<th>join bytes</th><th>removal moved</th><th>/ideal</th><th>primary</th><th>max/mean</th><th>CV</th>"
        + "<th>ns/lookup</th><th>client state</th></tr></thead><tbody>\n");
    for (SchemeRow row : s.rows()) {
      row(h, row.scheme(), row.zoneAware() ? "aware" : "no", Units.percent(row.join().keysFraction()),
          Units.ratio(row.join().keysOverIdeal()), Units.percent(row.join().primaryKeysFraction()),
          ByteUnits.format(row.join().bytes()), Units.percent(row.removal().keysFraction()),
          Units.ratio(row.removal().keysOverIdeal()), Units.percent(row.removal().primaryKeysFraction()),
          Units.fixed(row.replicaKeysMaxOverMean(), 3), Units.percent(row.replicaKeysCv()),
          Units.fixed(row.lookupNanos(), 0), escape(row.clientState()) + ", " + ByteUnits.format(row.clientStateBytes()));
    }
    h.append("</tbody></table>\n");
    detailsEnd(h);
    h.append("</section>\n");
  }

  // ---- footer ----

  private static void footer(StringBuilder h, SimulationResult r) {
    SimulationParameters p = r.parameters();
    String command = String.format(Locale.ROOT, "./ringshift simulate --seed %d --nodes %d --zones %d --vnodes %d "
            + "--replicas %d --keys %d --partitions %d --zipf %s --value-median %d --value-sigma %s",
        p.seed(), p.nodes(), p.zones(), p.vnodes(), p.replicas(), p.keys(), p.partitions(), p.zipfExponent(),
        p.valueMedianBytes(), p.valueSigma());
    h.append("<footer><p>Reproduce with <code>").append(escape(command)).append("</code>. Every figure except "
        + "timings is deterministic for the seed. Simulated in ")
        .append(Units.fixed(r.runtime().totalMillis() / 1e3, 1))
        .append(" s on ").append(r.runtime().availableProcessors())
        .append(" processors. What each figure means: <code>docs/simulate.md</code>.</p></footer>\n");
  }

  // ---- helpers ----

  private static void section(StringBuilder h, String id, int number, String title, String takeaway) {
    h.append("<section id=\"").append(id).append("\">\n<h2><span class=\"n\">").append(number).append("</span>")
        .append(escape(title)).append("</h2>\n<p class=\"takeaway\">").append(escape(takeaway)).append("</p>\n");
  }

  private static void figureStart(StringBuilder h, String caption) {
    h.append("<figure><figcaption>").append(caption).append("</figcaption>\n");
  }

  private static void figureEnd(StringBuilder h, String note) {
    h.append("<p class=\"note\">").append(note).append("</p></figure>\n");
  }

  private static void details(StringBuilder h) {
    h.append("<details><summary>The numbers</summary>\n");
  }

  private static void detailsEnd(StringBuilder h) {
    h.append("</details>\n");
  }

  private static void legend(StringBuilder h, String[] css, String[] names) {
    h.append("<div class=\"legend\">");
    for (int i = 0; i < css.length; i++) {
      h.append("<span><i class=\"sw ").append(css[i]).append("\"></i>").append(names[i]).append("</span>");
    }
    h.append("</div>\n");
  }

  /** Cells are trusted report text: numbers and names built here, escaped where they come from input. */
  private static void row(StringBuilder h, String... cells) {
    h.append("<tr>");
    for (int i = 0; i < cells.length; i++) {
      h.append(i == 0 ? "<th>" : "<td>").append(cells[i]).append(i == 0 ? "</th>" : "</td>");
    }
    h.append("</tr>\n");
  }

  private static SchemeRow scheme(SimulationResult r, String name) {
    return r.schemes().rows().stream().filter(s -> s.scheme().equals(name)).findFirst().orElseThrow();
  }

  private static double[] col(List<VnodeRow> rows, ToDoubleFunction<VnodeRow> f) {
    return rows.stream().mapToDouble(f).toArray();
  }

  private static double min(double[] values) {
    double m = Double.POSITIVE_INFINITY;
    for (double v : values) {
      if (v > 0) {
        m = Math.min(m, v);
      }
    }
    return m == Double.POSITIVE_INFINITY ? 1e-3 : m;
  }

  private static double max(double[] values) {
    double m = 0;
    for (double v : values) {
      m = Math.max(m, v);
    }
    return m;
  }

  private static final String CSS = """
      :root{--bg:#fbfbfa;--fg:#1d232b;--muted:#5d6673;--card:#fff;--line:#e3e5e8;--grid:#eceef1;--band:#eef3fb;
      --marker:#c0392b;--c0:#2166ac;--c1:#e08214;--c2:#1b9e77;--c3:#b8579a;--c4:#6a51a3;--c5:#a9b0ba}
      @media (prefers-color-scheme:dark){:root{--bg:#15181c;--fg:#e6e8eb;--muted:#9aa3ad;--card:#1d2126;
      --line:#2c3238;--grid:#262b31;--band:#1f2a38;--marker:#ff6b5b;--c0:#5aa2e6;--c1:#f0a24a;--c2:#3cc496;
      --c3:#e07cc4;--c4:#a08be0;--c5:#6b7480}}
      *{box-sizing:border-box}
      body{margin:0;background:var(--bg);color:var(--fg);font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,
      "Helvetica Neue",Arial,sans-serif}
      main{max-width:1000px;margin:0 auto;padding:28px 24px 48px}
      h1{font-size:28px;margin:0 0 2px;letter-spacing:-.01em}
      .sub{color:var(--muted);margin:0 0 18px}
      h2{font-size:20px;margin:40px 0 6px;display:flex;align-items:center;gap:10px}
      h2 .n{display:inline-grid;place-items:center;width:28px;height:28px;border-radius:50%;background:var(--c0);
      color:#fff;font-size:15px}
      .takeaway{font-size:16px;margin:0 0 14px;padding:10px 14px;background:var(--card);border-left:4px solid var(--c0);
      border-radius:4px}
      .cards{display:grid;grid-template-columns:repeat(auto-fit,minmax(175px,1fr));gap:12px;margin-bottom:14px}
      .card{background:var(--card);border:1px solid var(--line);border-radius:8px;padding:12px 14px}
      .ct{font-size:12.5px;color:var(--muted);text-transform:uppercase;letter-spacing:.04em}
      .cf{font-size:28px;font-weight:650;margin:2px 0}
      .cd{font-size:13px;color:var(--muted)}
      .workload{font-size:14px;color:var(--muted)}
      figure{margin:0 0 18px;background:var(--card);border:1px solid var(--line);border-radius:8px;padding:12px 14px}
      figure.panel{margin:0}
      figcaption,.mt{font-weight:600;font-size:14px;margin-bottom:4px}
      .note{font-size:13px;color:var(--muted);margin:6px 0 0}
      .legend{display:flex;flex-wrap:wrap;gap:14px;font-size:12.5px;color:var(--muted);margin:2px 0 6px}
      .legend span{display:inline-flex;align-items:center;gap:5px}
      .sw{display:inline-block;width:12px;height:12px;border-radius:2px;background:currentColor}
      .sw.marker{width:14px;height:0;border-top:2px dashed var(--marker);border-radius:0;background:none}
      .grid2{display:grid;grid-template-columns:repeat(auto-fit,minmax(400px,1fr));gap:14px;margin-bottom:18px}
      .grid3{display:grid;grid-template-columns:repeat(auto-fit,minmax(300px,1fr));gap:10px}
      .mini .mt{font-size:13px;font-weight:600;margin:0}
      .md{font-size:12px;color:var(--muted)}
      svg{display:block;max-width:100%;height:auto;overflow:visible}
      svg text{font-family:inherit}
      .grid{stroke:var(--grid);stroke-width:1}
      .axis{stroke:var(--muted);stroke-width:1}
      .tick{font-size:11px;fill:var(--muted)}
      .label{font-size:12.5px;fill:var(--fg);font-weight:600}
      .sublabel{font-size:10.5px;fill:var(--muted)}
      .value{font-size:11px;fill:var(--fg)}
      .marker{stroke:var(--marker);stroke-width:2;stroke-dasharray:4 3}
      .band{fill:var(--band)}
      .s0{fill:var(--c0);stroke:var(--c0);color:var(--c0)}
      .s1{fill:var(--c1);stroke:var(--c1);color:var(--c1)}
      .s2{fill:var(--c2);stroke:var(--c2);color:var(--c2)}
      .s3{fill:var(--c3);stroke:var(--c3);color:var(--c3)}
      .s4{fill:var(--c4);stroke:var(--c4);color:var(--c4)}
      .s5{fill:var(--c5);stroke:var(--c5);color:var(--c5)}
      rect.s0,rect.s1,rect.s2,rect.s3,rect.s4,rect.s5{stroke:none}
      rect.alt{opacity:.62}
      .stroke{fill:none;stroke-width:2.2}
      .dashed{stroke-dasharray:5 4;stroke-width:1.6}
      .dot{stroke:var(--card);stroke-width:1}
      details{margin:4px 0 0}
      summary{cursor:pointer;color:var(--muted);font-size:13.5px}
      table{border-collapse:collapse;font-size:12.5px;margin:8px 0;width:100%;font-variant-numeric:tabular-nums}
      th,td{padding:4px 8px;border-bottom:1px solid var(--line);text-align:right;white-space:nowrap}
      thead th{color:var(--muted);font-weight:600}
      tbody th{text-align:left}
      code{font-size:13px;background:var(--card);border:1px solid var(--line);border-radius:4px;padding:0 4px}
      footer{margin-top:40px;font-size:13px;color:var(--muted)}
      """;
}
