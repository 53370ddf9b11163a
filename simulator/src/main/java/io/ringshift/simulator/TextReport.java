package io.ringshift.simulator;

import io.ringshift.ring.ByteUnits;
import io.ringshift.simulator.SimulationResult.BalanceRow;
import io.ringshift.simulator.SimulationResult.Change;
import io.ringshift.simulator.SimulationResult.CopySources;
import io.ringshift.simulator.SimulationResult.Moved;
import io.ringshift.simulator.SimulationResult.SchemeRow;
import io.ringshift.simulator.SimulationResult.Section;
import io.ringshift.simulator.SimulationResult.VnodeRow;
import io.ringshift.simulator.SimulationResult.WeightShare;
import io.ringshift.simulator.SimulationResult.WorkloadSummary;
import io.ringshift.simulator.internal.TextTable;
import io.ringshift.simulator.internal.Units;
import java.util.Locale;

/**
 * The default output: one aligned table per section, each followed by its one-line takeaway. ASCII only; like
 * {@link HtmlReport}, a pure function of the result.
 */
public final class TextReport {
  private static final String INDENT = "  ";
  /** Prose width: readable in an 80-column terminal with room to spare in a wider one. */
  private static final int WIDTH = 110;
  /** The reference scenario's logical data (docs/architecture.md), to turn fractions into terabytes. */
  private static final double REFERENCE_LOGICAL_BYTES = 24.0 * (1L << 40);

  private TextReport() {}

  /** The tables of {@code r}. */
  public static String render(SimulationResult r) {
    StringBuilder out = new StringBuilder();
    header(out, r);
    changes(out, r.changes(), r.parameters());
    balance(out, r.balance());
    weights(out, r.weights());
    sweep(out, r.vnodeSweep(), r.parameters());
    schemes(out, r.schemes(), r.parameters());
    out.append(String.format(Locale.ROOT, "Simulated in %.1f s on %d processors. Timings are rough in-process "
        + "figures; benchmarks/ (JMH) has the authoritative ones.%n", r.runtime().totalMillis() / 1e3,
        r.runtime().availableProcessors()));
    return out.toString();
  }

  private static void header(StringBuilder out, SimulationResult r) {
    SimulationParameters p = r.parameters();
    WorkloadSummary w = r.workload();
    out.append(String.format(Locale.ROOT,
        "ringshift simulate: %d nodes in %d zones, V = %d, R = %d, %s keys, seed %d%n",
        p.nodes(), p.zones(), p.vnodes(), p.replicas(), Units.count(w.keys()), p.seed()));
    out.append(String.format(Locale.ROOT, "%skeys      %d bytes each, like %s%n", INDENT, w.keyBytes(),
        w.exampleKey()));
    out.append(String.format(Locale.ROOT, "%srequests  Zipf s = %.2f over %s req/s: the hottest key gets %s "
            + "(%.1fx a node's mean), the top 1%% of keys %s%n", INDENT, w.zipfExponent(), Units.rate(w.totalQps()),
        Units.percent(w.hottestKeyQpsShare()), w.hottestKeyOverNodeMean(), Units.percent(w.top1PercentQpsShare())));
    out.append(String.format(Locale.ROOT, "%svalues    log-normal, median %s (mu = ln %d), sigma %.2f: mean %s, "
            + "p99 %s, max %s; %s in all, %s with %d replicas%n", INDENT, ByteUnits.format(w.valueMedianBytes()),
        w.valueMedianBytes(), w.valueSigma(), ByteUnits.format(w.meanValueBytes()), ByteUnits.format(w.p99ValueBytes()),
        ByteUnits.format(w.maxValueBytes()), ByteUnits.format(w.totalValueBytes()),
        ByteUnits.format((double) w.totalValueBytes() * p.replicas()), p.replicas()));
    out.append('\n');
  }

  private static void changes(StringBuilder out, Section<Change> s, SimulationParameters p) {
    title(out, 1, s.title());
    note(out, "Replica level: a key counts once for every new replica that must receive it; % of all replica "
        + "copies (keys x " + p.replicas() + "), replica bytes or requests (reads spread over the replicas). "
        + "Primary: keys whose primary owner changed. ideal = the weight share gained, what a perfectly "
        + "weight-proportional placement moves.");
    TextTable t = new TextTable("<change", "<what", "ideal", "copies", "%", "/ideal", "bytes", "%", "/ideal", "QPS",
        "%", "/ideal", "keys", "%", "/ideal")
        .groups("", "", "", "replica copies", "replica copies", "replica copies", "bytes",
            "bytes", "bytes", "requests", "requests", "requests", "primary", "primary", "primary");
    for (Change c : s.rows()) {
      Moved m = c.moved();
      t.row(c.name(), c.description(), Units.percent(m.idealFraction()), Units.count(m.replicaCopies()),
          Units.percent(m.keysFraction()), Units.ratio(m.keysOverIdeal()), ByteUnits.format(m.bytes()),
          Units.percent(m.bytesFraction()), Units.ratio(m.bytesOverIdeal()), Units.rate(m.qps()),
          Units.percent(m.qpsFraction()), Units.ratio(m.qpsOverIdeal()), Units.count(m.primaryKeys()),
          Units.percent(m.primaryKeysFraction()), Units.ratio(m.primaryOverIdeal()));
    }
    out.append(t.render(INDENT));
    note(out, atReferenceScale(s, p));
    out.append('\n');
    note(out, "Check against the ring's own diff (exact keyspace fractions; the keys are a uniform sample of "
        + "positions, so they should agree within a few standard errors: |z| <= 4).");
    TextTable d = new TextTable("<change", "ranges", "diff", "keys", "z", "diff", "keys", "z", "<check")
        .groups("", "", "replica copies", "replica copies", "replica copies", "primary", "primary", "primary", "");
    for (Change c : s.rows()) {
      SimulationResult.DiffCheck dc = c.diff();
      d.row(c.name(), Units.count(dc.changedRanges()), Units.percent(dc.movedReplicaFraction()),
          Units.percent(dc.simulatedReplicaFraction()), String.format(Locale.ROOT, "%+.1f", dc.replicaZ()),
          Units.percent(dc.primaryMovedFraction()), Units.percent(dc.simulatedPrimaryFraction()),
          String.format(Locale.ROOT, "%+.1f", dc.primaryZ()), dc.agrees() ? "ok" : "MISMATCH");
    }
    out.append(d.render(INDENT)).append('\n');
    note(out, "Where the copies come from: an old replica that is still up, in the new replica's zone if one is.");
    TextTable src = new TextTable("<change", "sources", "<busiest source", "same zone", "targets",
        "<busiest target", "<until copied");
    for (Change c : s.rows()) {
      CopySources cs = c.sources();
      src.row(c.name(), Units.count(cs.sourceNodes()), busiest(cs.busiestSource(), cs.busiestSourceShare()),
          Units.percent(cs.sameZoneShare()), Units.count(cs.targetNodes()),
          busiest(cs.busiestTarget(), cs.busiestTargetShare()),
          cs.keysDegradedFraction() > 0
              ? Units.percent(cs.keysDegradedFraction()) + " of keys on " + (p.replicas() - 1) + " replicas"
                  + (cs.keysWithoutSurvivor() > 0 ? ", " + cs.keysWithoutSurvivor() + " LOST" : "")
              : "-");
    }
    out.append(src.render(INDENT));
    takeaway(out, s.takeaway());
  }

  /** What the change fractions mean at the reference scenario's 24 TiB of logical data. */
  static String atReferenceScale(Section<Change> s, SimulationParameters p) {
    StringBuilder text = new StringBuilder("At the reference 24 TiB of logical data (x" + p.replicas() + " replicas) ");
    for (int i = 0; i < s.rows().size(); i++) {
      Change c = s.rows().get(i);
      text.append(i == 0 ? "" : i == s.rows().size() - 1 ? " and " : ", ").append(c.name()).append(" copies ")
          .append(ByteUnits.format(c.moved().bytesFraction() * p.replicas() * REFERENCE_LOGICAL_BYTES));
    }
    return text.append('.').toString();
  }

  private static String busiest(String node, double share) {
    return node == null ? "-" : node + " " + Units.percent(share);
  }

  private static void balance(StringBuilder out, Section<BalanceRow> s) {
    title(out, 2, s.title());
    note(out, "Per-node load over the mean. Replica level: every replica stores the key and serves 1/R of its "
        + "requests. Random floor: the CV a uniformly random assignment of these keys would show.");
    TextTable t = new TextTable("<level", "<measure", "max/mean", "min/mean", "CV", "random floor CV");
    for (BalanceRow b : s.rows()) {
      t.row(b.level(), b.measure().equals(BalanceRow.QPS) ? "QPS" : b.measure(), Units.fixed(b.maxOverMean(), 3),
          Units.fixed(b.minOverMean(), 3),
          Units.percent(b.cv()), Units.percent(b.randomFloorCv()));
    }
    out.append(t.render(INDENT));
    takeaway(out, s.takeaway());
  }

  private static void weights(StringBuilder out, Section<WeightShare> s) {
    title(out, 3, s.title());
    TextTable t = new TextTable("<ring", "weight", "nodes", "expected", "primary", "/expected", "replica",
        "/expected", "primary min-max /expected");
    for (WeightShare w : s.rows()) {
      t.row(w.ring(), Units.fixed(w.weight(), 0), Units.count(w.nodes()), Units.percent(w.expectedShare()),
          Units.percent(w.primaryShare()), Units.fixed(w.primaryOverExpected(), 3),
          w.replicaShare() == null ? "all keys" : Units.percent(w.replicaShare()),
          w.replicaOverExpected() == null ? "-" : Units.fixed(w.replicaOverExpected(), 3),
          Units.fixed(w.primaryMinOverExpected(), 2) + " - " + Units.fixed(w.primaryMaxOverExpected(), 2));
    }
    out.append(t.render(INDENT));
    takeaway(out, s.takeaway());
  }

  private static void sweep(StringBuilder out, Section<VnodeRow> s, SimulationParameters p) {
    title(out, 4, s.title());
    note(out, "Balance from exact hash-space shares. Memory = RingSnapshot.footprintBytes(); raw table = tokens x "
        + "12 B; wire = the snapshot as RingSnapshotCodec encodes it (membership only).");
    TextTable t = new TextTable("V", "tokens", "build ms", "memory", "raw table", "wire", "max/mean", "CV",
        "max/mean", "CV", "moved/ideal", "ranges", "ns/lookup")
        .groups("", "", "", "", "", "", "primary", "primary", "replica", "replica", "join", "join", "");
    for (VnodeRow v : s.rows()) {
      t.row((v.vnodes() == p.vnodes() ? "*" : "") + v.vnodes(), Units.count(v.tokens()),
          Units.fixed(v.buildMillis(), 1),
          ByteUnits.format(v.footprintBytes()), ByteUnits.format(v.rawTokenTableBytes()),
          ByteUnits.format(v.wireSnapshotBytesEstimate()), Units.fixed(v.primaryMaxOverMean(), 2),
          Units.percent(v.primaryCv()), Units.fixed(v.replicaMaxOverMean(), 2), Units.percent(v.replicaCv()),
          Units.fixed(v.joinMovedOverIdeal(), 2), Units.count(v.joinChangedRanges()), Units.fixed(v.lookupNanos(), 0));
    }
    out.append(t.render(INDENT));
    note(out, "* = the V of this run. ns/lookup: key hash + replica set, one thread, streaming over all keys "
        + "after a warm-up pass; rough.");
    takeaway(out, s.takeaway());
  }

  private static void schemes(StringBuilder out, Section<SchemeRow> s, SimulationParameters p) {
    title(out, 5, s.title());
    note(out, String.format(Locale.ROOT, "Same keys, R = %d. Moved = replica copies; /ideal against the weight "
        + "share gained. Balance: replica copies per node. ns/lookup: key hash + all R replicas, one thread.",
        p.replicas()));
    TextTable t = new TextTable("<scheme", "<zones", "moved", "/ideal", "primary", "moved", "/ideal",
        "primary", "max/mean", "CV", "ns/lookup", "<client state")
        .groups("", "", "join", "join", "join", "removal", "removal", "removal", "balance", "balance", "", "");
    for (SchemeRow r : s.rows()) {
      t.row(r.scheme(), r.zoneAware() ? "aware" : "no", Units.percent(r.join().keysFraction()),
          Units.ratio(r.join().keysOverIdeal()), Units.percent(r.join().primaryKeysFraction()),
          Units.percent(r.removal().keysFraction()), Units.ratio(r.removal().keysOverIdeal()),
          Units.percent(r.removal().primaryKeysFraction()), Units.fixed(r.replicaKeysMaxOverMean(), 3),
          Units.percent(r.replicaKeysCv()), Units.fixed(r.lookupNanos(), 0),
          r.clientState() + ", " + ByteUnits.format(r.clientStateBytes()));
    }
    out.append(t.render(INDENT));
    takeaway(out, s.takeaway());
  }

  private static void title(StringBuilder out, int number, String title) {
    out.append(number).append(". ").append(title).append('\n');
  }

  private static void note(StringBuilder out, String text) {
    wrap(out, INDENT, INDENT, text);
  }

  private static void takeaway(StringBuilder out, String text) {
    wrap(out, INDENT + "=> ", INDENT + "   ", text);
    out.append('\n');
  }

  /** Word-wraps prose to {@link #WIDTH} columns; tables are left as wide as they need. */
  private static void wrap(StringBuilder out, String first, String rest, String text) {
    StringBuilder line = new StringBuilder(first);
    int start = line.length();
    for (String word : text.split(" ")) {
      if (line.length() > start && line.length() + 1 + word.length() > WIDTH) {
        out.append(line).append('\n');
        line = new StringBuilder(rest);
        start = line.length();
      }
      if (line.length() > start) {
        line.append(' ');
      }
      line.append(word);
    }
    out.append(line).append('\n');
  }
}
