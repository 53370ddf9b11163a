package io.ringshift.cli.internal.control;

import io.ringshift.cli.internal.JsonOption;
import io.ringshift.orchestrator.admin.ClusterView;
import io.ringshift.cli.BadInputException;
import io.ringshift.cli.internal.JsonOutput;
import io.ringshift.orchestrator.admin.ControlPlaneAdmin.Part;
import java.io.PrintWriter;
import java.time.Duration;
import java.util.EnumSet;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** {@code ringshift status}: the active epoch, the epoch in flight with its tasks, and the latest rejections. */
@Command(
    name = "status",
    mixinStandardHelpOptions = true,
    sortOptions = false,
    description = {
      "Shows a cluster as the topics describe it: the active epoch (the latest READY), the epoch in flight (the "
          + "latest PLANNED that is not READY yet, with any plans of it that were SUPERSEDED), its tasks with "
          + "their latest state from ring.task-status (PENDING while no worker has reported), the task count per "
          + "state, and the latest rejected requests with their reasons.",
      "Reads ring.epochs, ring.tasks, ring.task-status and ring.rejected from the beginning up to their current "
          + "end (read_committed) and stops there; writes nothing. Exit 2 when the cluster has no epoch."
    })
public final class StatusCommand implements Callable<Integer> {
  @Spec private CommandSpec spec;

  @Mixin private ClusterOption cluster;

  @Mixin private KafkaOptions kafka;

  @Mixin private JsonOption json;

  @Option(names = "--limit", paramLabel = "N", defaultValue = "20",
      description = "Tasks listed in the text (default: ${DEFAULT-VALUE}; 0 lists all).")
  private int limit;

  @Option(names = "--rejected", paramLabel = "N", defaultValue = "5",
      description = "Latest rejected requests shown (default: ${DEFAULT-VALUE}).")
  private int rejected;

  @Option(names = "--watch", arity = "0..1", paramLabel = "SECONDS", fallbackValue = "2",
      description = "Keep the status up to date from one process: read the topics once, then only what is appended, "
          + "and redraw every SECONDS (default ${FALLBACK-VALUE}) when something changed (in place on a terminal, "
          + "as a new block otherwise). Runs until interrupted, or see --until-idle.")
  private Integer watchSeconds;

  @Option(names = "--until-idle", description = "With --watch: exit 0 once nothing is in flight and no cleanup "
      + "task is left unfinished.")
  private boolean untilIdle;

  @Override
  public Integer call() {
    String clusterId = cluster.id();
    if (limit < 0 || rejected < 0) {
      throw new BadInputException("--limit and --rejected must be >= 0 (were " + limit + " and " + rejected + ")");
    }
    if (watchSeconds != null && (watchSeconds < 1 || watchSeconds > 3600)) {
      throw new BadInputException("--watch was " + watchSeconds + "; it must be between 1 and 3600 seconds");
    }
    if (untilIdle && watchSeconds == null) {
      throw new BadInputException("--until-idle applies to --watch only");
    }
    if (watchSeconds != null) {
      if (json.on()) {
        throw new BadInputException("--watch and --json do not go together: --json prints one status");
      }
      return StatusWatch.run(kafka, clusterId, Duration.ofSeconds(watchSeconds), untilIdle, limit, rejected,
          spec.commandLine().getOut(), spec.commandLine().getErr());
    }
    ClusterView view = kafka.view(clusterId, EnumSet.allOf(Part.class), rejected, spec.commandLine().getErr());
    PrintWriter out = spec.commandLine().getOut();
    if (json.on()) {
      long now = System.currentTimeMillis();
      HotKeysSection.HotKeysJson hotKeys = LatestRecords.read(kafka, kafka.topics().hotKeys().name(),
              k -> k.startsWith(clusterId + "/"))
          .map(reports -> HotKeysSection.json(clusterId, reports.values(), now))
          .orElse(HotKeysSection.HotKeysJson.NONE);
      ParticipantsSection.ParticipantsJson participants = LatestRecords.read(kafka,
              kafka.topics().participants().name(), k -> k.startsWith(clusterId + "/"))
          .map(reports -> ParticipantsSection.json(clusterId, reports, now))
          .orElse(ParticipantsSection.ParticipantsJson.NONE);
      JsonOutput.print(out, Reports.statusJson(view, now).withHotKeys(hotKeys).withParticipants(participants));
    } else {
      Reports.statusText(view, limit, System.currentTimeMillis()).forEach(out::println);
      // What the clients and nodes route by, and who holds a transition back (a missing topic shows nothing).
      LatestRecords.read(kafka, kafka.topics().participants().name(), k -> k.startsWith(clusterId + "/"))
          .ifPresent(reports -> ParticipantsSection.lines(clusterId, reports, System.currentTimeMillis())
              .forEach(out::println));
      // The clients' hot keys, when some report them (a topic that does not exist yet shows nothing).
      LatestRecords.read(kafka, kafka.topics().hotKeys().name(), k -> k.startsWith(clusterId + "/"))
          .ifPresent(reports -> HotKeysSection.lines(clusterId, reports.values(), System.currentTimeMillis())
              .forEach(out::println));
      out.flush();
    }
    return 0;
  }
}
