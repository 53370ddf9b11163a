package io.ringshift.cli;

import io.ringshift.cli.internal.LogSettings;
import io.ringshift.cli.internal.RingCommand;
import io.ringshift.cli.internal.audit.AuditCommand;
import io.ringshift.cli.internal.control.CancelCommand;
import io.ringshift.cli.internal.kafka.KafkaCommand;
import io.ringshift.cli.internal.control.ChangeCommands;
import io.ringshift.cli.internal.data.GetCommand;
import io.ringshift.cli.internal.data.LoadCommand;
import io.ringshift.cli.internal.data.PutCommand;
import io.ringshift.cli.internal.control.DevCommand;
import io.ringshift.cli.internal.dashboard.DashboardCommand;
import io.ringshift.cli.internal.demo.DemoCommand;
import io.ringshift.cli.internal.control.EpochsCommand;
import io.ringshift.cli.internal.control.InitCommand;
import io.ringshift.cli.internal.control.PlanCommand;
import io.ringshift.cli.internal.control.StatusCommand;
import io.ringshift.cli.internal.node.NodeCommand;
import io.ringshift.cli.internal.orchestrator.OrchestratorCommand;
import io.ringshift.cli.internal.publisher.KeygenCommand;
import io.ringshift.cli.internal.publisher.PublisherCommand;
import io.ringshift.cli.internal.health.HealthManagerCommand;
import io.ringshift.cli.internal.simulate.SimulateCommand;
import io.ringshift.cli.internal.topics.TopicsCommand;
import io.ringshift.cli.internal.worker.BudgetsCommand;
import io.ringshift.cli.internal.worker.WorkerCommand;
import io.ringshift.orchestrator.admin.AdminException;
import io.ringshift.ring.RingException;
import io.ringshift.protocol.CodecException;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/**
 * The {@code ringshift} command line. Exit codes: 0 success, 2 bad input (missing or unreadable file,
 * malformed JSON, invalid member, corrupt snapshot, bad option, a change the orchestrator rejected) or Kafka
 * unreachable, 1 an unexpected internal error or a {@code --wait} that saw no outcome in time, 3 an audit that
 * found a discrepancy ({@link #EXIT_AUDIT_FAILED}).
 */
@Command(
    name = "ringshift",
    mixinStandardHelpOptions = true,
    versionProvider = Ringshift.Version.class,
    description = "Control plane for consistent-hash rings of virtual nodes.",
    subcommands = {
      RingCommand.class,
      DemoCommand.class,
      SimulateCommand.class,
      DevCommand.class,
      DashboardCommand.class,
      KafkaCommand.class,
      InitCommand.class,
      ChangeCommands.Join.class,
      ChangeCommands.Drain.class,
      ChangeCommands.Fail.class,
      ChangeCommands.SetWeight.class,
      CancelCommand.class,
      StatusCommand.class,
      EpochsCommand.class,
      PlanCommand.class,
      OrchestratorCommand.class,
      TopicsCommand.class,
      PutCommand.class,
      GetCommand.class,
      LoadCommand.class,
      NodeCommand.class,
      WorkerCommand.class,
      BudgetsCommand.class,
      PublisherCommand.class,
      HealthManagerCommand.class,
      KeygenCommand.class,
      AuditCommand.class
    })
public final class Ringshift {
  /** Exit code for bad input: the message names the problem and nothing was written. */
  public static final int EXIT_BAD_INPUT = 2;

  /**
   * Exit code of {@code ringshift audit} when the audit log does not prove a published snapshot: stderr names the
   * cluster, the epoch, the check and both values.
   */
  public static final int EXIT_AUDIT_FAILED = 3;

  private Ringshift() {}

  public static void main(String[] args) {
    // Before anything creates a logger: the simple logger reads its configuration once.
    LogSettings.configure(args);
    System.exit(run(args));
  }

  /** Runs the command line in-process and returns its exit code (used by tests). */
  public static int run(String... args) {
    return newCommandLine().execute(args);
  }

  /** The configured command line: bad input maps to exit code 2 with a one-line message. */
  public static CommandLine newCommandLine() {
    CommandLine cli = new CommandLine(new Ringshift());
    cli.setExecutionExceptionHandler(
        (e, commandLine, parseResult) -> {
          if (e instanceof BadInputException || e instanceof RingException || e instanceof CodecException
              || e instanceof KafkaUnavailableException || e instanceof AdminException) {
            commandLine.getErr().println("ringshift: " + e.getMessage());
            return EXIT_BAD_INPUT;
          }
          commandLine.getErr().println("ringshift: internal error: " + e);
          for (Throwable cause = e.getCause(); cause != null; cause = cause.getCause()) {
            commandLine.getErr().println("  caused by: " + cause);
          }
          return 1;
        });
    cli.setParameterExceptionHandler(
        (e, args) -> {
          CommandLine commandLine = e.getCommandLine();
          commandLine.getErr().println("ringshift: " + e.getMessage());
          commandLine.getErr().println("Try '" + commandLine.getCommandSpec().qualifiedName() + " --help'.");
          return EXIT_BAD_INPUT;
        });
    return cli;
  }

  static final class Version implements CommandLine.IVersionProvider {
    @Override
    public String[] getVersion() {
      String v = Ringshift.class.getPackage().getImplementationVersion();
      return new String[] {"ringshift " + (v == null ? "dev" : v)};
    }
  }
}
