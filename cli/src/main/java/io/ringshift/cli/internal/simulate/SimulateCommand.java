package io.ringshift.cli.internal.simulate;

import io.ringshift.cli.internal.JsonOption;
import io.ringshift.protocol.AtomicFiles;
import io.ringshift.cli.BadInputException;
import io.ringshift.cli.internal.ReportFiles;
import io.ringshift.cli.internal.JsonOutput;
import io.ringshift.protocol.RingSnapshotCodec;
import io.ringshift.ring.ByteUnits;
import io.ringshift.simulator.HtmlReport;
import io.ringshift.simulator.Simulation;
import io.ringshift.simulator.SimulationParameters;
import io.ringshift.simulator.SimulationProgress;
import io.ringshift.simulator.SimulationResult;
import io.ringshift.simulator.TextReport;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code ringshift simulate}: the reference-scenario placement simulation (docs/simulate.md).
 *
 * <p>Every option is checked before any work starts, the report path included (a probe file is created and
 * deleted in its directory), so a bad option fails at once with one line naming it, exit code 2, and no file.
 * The report is written to a temporary file in the target directory and moved into place, so a reader never
 * sees half a report.
 */
@Command(
    name = "simulate",
    mixinStandardHelpOptions = true,
    sortOptions = false,
    description = {
      "Simulates the reference scenario: what a join, drain, failure and weight change move against the ideal, "
          + "how balanced the ring is, what 1:2:4 weights realise, what V buys, and how modulo, the ring, "
          + "rendezvous, jump and fixed partitions compare on the same keys. Deterministic for a seed (timings "
          + "aside). Progress goes to stderr; the table (or --json) to stdout. See docs/simulate.md.",
      ""
    })
public final class SimulateCommand implements Callable<Integer> {
  @Spec CommandSpec spec;

  @Option(names = "--seed", paramLabel = "N", defaultValue = "" + SimulationParameters.DEFAULT_SEED,
      description = "Seed of the keys, value sizes and changed nodes (default: ${DEFAULT-VALUE}).")
  long seed;

  @Option(names = "--nodes", paramLabel = "N", defaultValue = "" + SimulationParameters.DEFAULT_NODES,
      description = "Physical nodes before the changes (default: ${DEFAULT-VALUE}).")
  int nodes;

  @Option(names = "--zones", paramLabel = "N", defaultValue = "" + SimulationParameters.DEFAULT_ZONES,
      description = "Availability zones; node i is in zone i mod zones (default: ${DEFAULT-VALUE}, at most --nodes).")
  int zones;

  @Option(names = "--vnodes", paramLabel = "V", defaultValue = "" + SimulationParameters.DEFAULT_VNODES,
      description = "Tokens per unit of weight, V (default: ${DEFAULT-VALUE}).")
  int vnodes;

  @Option(names = "--replicas", paramLabel = "R", defaultValue = "" + SimulationParameters.DEFAULT_REPLICAS,
      description = "Replication factor R (default: ${DEFAULT-VALUE}, below --nodes).")
  int replicas;

  @Option(names = "--keys", paramLabel = "N", defaultValue = "" + SimulationParameters.DEFAULT_KEYS,
      description = "Keys in the workload (default: ${DEFAULT-VALUE}).")
  int keys;

  @Option(names = "--partitions", paramLabel = "N", defaultValue = "" + SimulationParameters.DEFAULT_PARTITIONS,
      description = "Logical partitions of the fixed-partition scheme (default: ${DEFAULT-VALUE}).")
  int partitions;

  @Option(names = "--zipf", paramLabel = "S", defaultValue = "" + SimulationParameters.DEFAULT_ZIPF,
      description = "Zipf exponent s of the request rates; 0 is uniform (default: ${DEFAULT-VALUE}).")
  double zipf;

  @Option(names = "--value-median", paramLabel = "BYTES", defaultValue = "" + SimulationParameters.DEFAULT_VALUE_MEDIAN,
      description = "Median value size of the log-normal sizes, e^mu (default: ${DEFAULT-VALUE}).")
  int valueMedian;

  @Option(names = "--value-sigma", paramLabel = "SIGMA", defaultValue = "" + SimulationParameters.DEFAULT_VALUE_SIGMA,
      description = "Sigma of the log-normal value sizes (default: ${DEFAULT-VALUE}).")
  double valueSigma;

  @Mixin private JsonOption json;

  @Option(names = "--report", paramLabel = "FILE.html",
      description = "Also write a self-contained HTML report with charts (no network, no scripts).")
  String report;

  @Option(names = {"-q", "--quiet"}, description = "No progress on stderr.")
  boolean quiet;

  @Override
  public Integer call() throws IOException {
    // Defaults give way to a small --nodes (--nodes 2 alone should run), explicit values are taken as given.
    var parsed = spec.commandLine().getParseResult();
    int zoneCount = parsed.hasMatchedOption("--zones") ? zones : Math.max(1, Math.min(zones, nodes));
    int replicaCount = parsed.hasMatchedOption("--replicas") ? replicas : Math.max(1, Math.min(replicas, nodes - 1));
    SimulationParameters parameters;
    try {
      parameters = new SimulationParameters(seed, nodes, zoneCount, vnodes, replicaCount, keys, partitions, zipf,
          valueMedian, valueSigma, SimulationParameters.REFERENCE_QPS);
    } catch (IllegalArgumentException e) {
      // The message already names the option, its value and the rule.
      throw new BadInputException(e.getMessage(), e);
    }
    checkHeap(parameters.keys());
    Path reportPath = report == null ? null : ReportFiles.check("--report", report);
    PrintWriter err = spec.commandLine().getErr();
    SimulationProgress progress = new SimulationProgress(err, SimulationProgress.stderrIsTerminal(), quiet);
    RingSnapshotCodec codec = new RingSnapshotCodec();
    SimulationResult result = Simulation.run(parameters, progress, snapshot -> codec.encode(snapshot).length);
    PrintWriter out = spec.commandLine().getOut();
    if (json.on()) {
      // Field names are the record component names (docs/simulate.md), printed like every command's JSON.
      JsonOutput.print(out, result);
    } else {
      out.print(TextReport.render(result));
    }
    out.flush();
    if (reportPath != null) {
      writeAtomically(reportPath, HtmlReport.render(result));
      if (!quiet) {
        err.println("simulate: report written to " + reportPath);
        err.flush();
      }
    }
    return 0;
  }

  /**
   * Fails now, rather than minutes later with an OutOfMemoryError, when the heap cannot hold the run. Measured:
   * one million keys run in a 200 MiB heap, ten million in 1.6 GiB.
   */
  private static void checkHeap(int keys) {
    long needed = (48L << 20) + 150L * keys;
    long max = Runtime.getRuntime().maxMemory();
    if (max != Long.MAX_VALUE && max < needed) {
      throw new BadInputException(String.format(java.util.Locale.ROOT, "--keys was %d; that needs about %s of "
          + "heap and this JVM may use %s (set RINGSHIFT_JAVA_OPTS=-Xmx%dm or use fewer keys)", keys,
          ByteUnits.format(needed), ByteUnits.format(max), (needed >> 20) + 64));
    }
  }

  /** Written atomically, so no reader sees a partial file. */
  private static void writeAtomically(Path target, String content) throws IOException {
    AtomicFiles.write(target, content.getBytes(StandardCharsets.UTF_8), false);
  }
}
