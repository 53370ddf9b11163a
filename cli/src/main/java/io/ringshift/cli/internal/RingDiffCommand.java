package io.ringshift.cli.internal;

import io.ringshift.cli.BadInputException;
import io.ringshift.ring.NodeMovement;
import io.ringshift.ring.RingDiff;
import io.ringshift.ring.RingException;
import io.ringshift.ring.RingSnapshot;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/** {@code ringshift ring diff}: what a change from one snapshot to another moves, against the ideal. */
@Command(
    name = "diff",
    mixinStandardHelpOptions = true,
    description = {
      "Summarises the ranges whose replica set changes from FROM to TO: how many, the fraction of the keyspace "
          + "changed in total, of replica data moved and of primaries moved, and per node the fraction gained "
          + "and lost.",
      "ideal is what a placement with shares exactly proportional to weight must move for this membership change "
          + "(sum of the positive changes of weight share); ratio = replica data moved / ideal. Zone-aware replica "
          + "placement can move more or less than that ideal when zones differ in total weight."
    })
public final class RingDiffCommand implements Callable<Integer> {
  @Spec private CommandSpec spec;

  @Parameters(index = "0", paramLabel = "FROM", description = "Snapshot file before the change.")
  private Path from;

  @Parameters(index = "1", paramLabel = "TO", description = "Snapshot file after the change.")
  private Path to;

  @Mixin private JsonOption json;

  @Override
  public Integer call() {
    RingSnapshot before = SnapshotFiles.read(from).ring();
    RingSnapshot after = SnapshotFiles.read(to).ring();
    RingDiff diff;
    try {
      diff = before.diffTo(after);
    } catch (RingException e) {
      throw new BadInputException("cannot diff " + from + " and " + to + ": " + e.getMessage(), e);
    }
    PrintWriter out = spec.commandLine().getOut();
    if (json.on()) {
      JsonOutput.print(out, toJson(before, after, diff));
    } else {
      printTable(out, before, after, diff);
    }
    return 0;
  }

  /** {@code ratio} is null when the ideal is 0; {@code perNode} lists the nodes that gain or lose anything. */
  record DiffJson(String cluster, long fromEpoch, long toEpoch, String fromChecksum, String toChecksum,
      int fromMembers, int toMembers, int changedRanges, double changedFraction, double movedReplicaFraction,
      double primaryMovedFraction, double idealMovedFraction, Double ratio, List<NodeJson> perNode) {}

  record NodeJson(String id, double gained, double lost, double primaryGained, double primaryLost,
      double idealGained, double idealLost) {}

  static DiffJson toJson(RingSnapshot before, RingSnapshot after, RingDiff diff) {
    return new DiffJson(after.clusterId(), diff.fromEpoch(), diff.toEpoch(), before.checksumHex(),
        after.checksumHex(), before.memberCount(), after.memberCount(), diff.changes().size(),
        diff.changedFraction(), diff.movedReplicaFraction(), diff.primaryMovedFraction(), diff.idealMovedFraction(),
        diff.movedToIdeal(), diff.perNode().values().stream().map(m -> new NodeJson(m.nodeId(), m.gained(), m.lost(),
            m.primaryGained(), m.primaryLost(), m.idealGained(), m.idealLost())).toList());
  }

  private static void printTable(PrintWriter out, RingSnapshot before, RingSnapshot after, RingDiff diff) {
    out.printf(Locale.ROOT, "cluster %s: epoch %d -> %d, %d -> %d members, %d -> %d replicas%n",
        after.clusterId(), diff.fromEpoch(), diff.toEpoch(), before.memberCount(), after.memberCount(),
        before.replicas(), after.replicas());
    out.printf(Locale.ROOT, "  from checksum %s%n  to checksum   %s%n", before.checksumHex(), after.checksumHex());
    out.printf(Locale.ROOT, "changed ranges      %d%n", diff.changes().size());
    out.printf(Locale.ROOT, "keyspace changed    %s  (replica list differs in any way)%n",
        percent(diff.changedFraction()));
    Double ratio = diff.movedToIdeal();
    out.printf(Locale.ROOT, "replica data moved  %s  ideal %s  ratio %s%n", percent(diff.movedReplicaFraction()),
        percent(diff.idealMovedFraction()), ratio == null ? "n/a (ideal is 0)" : String.format(Locale.ROOT,
            "%.3f", ratio));
    out.printf(Locale.ROOT, "primaries moved     %s%n", percent(diff.primaryMovedFraction()));
    if (diff.perNode().isEmpty()) {
      out.printf("per node: no node gains or loses anything%n");
      out.flush();
      return;
    }
    int width = "node".length();
    for (String id : diff.perNode().keySet()) {
      width = Math.max(width, id.length());
    }
    String row = "  %-" + width + "s  %9s  %11s  %9s  %11s  %15s  %15s%n";
    out.printf("per node (percent of the keyspace; ideal = what its weight share alone would make it gain or lose)%n");
    out.printf(Locale.ROOT, row, "node", "gained", "ideal gain", "lost", "ideal loss", "primary gained",
        "primary lost");
    for (NodeMovement m : diff.perNode().values()) {
      out.printf(Locale.ROOT, row, m.nodeId(), percent(m.gained()), percent(m.idealGained()), percent(m.lost()),
          percent(m.idealLost()), percent(m.primaryGained()), percent(m.primaryLost()));
    }
    out.flush();
  }

  private static String percent(double fraction) {
    return String.format(Locale.ROOT, "%.4f%%", 100 * fraction);
  }
}
