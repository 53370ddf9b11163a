package io.ringshift.cli.internal.control;

import io.ringshift.orchestrator.admin.ControlPlaneAdmin;
import io.ringshift.cli.BadInputException;
import io.ringshift.schemas.avro.MembershipEvent;
import java.io.PrintWriter;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Stack;
import java.util.UUID;
import picocli.CommandLine.IParameterPreprocessor;
import picocli.CommandLine.Model.ArgSpec;
import picocli.CommandLine.Model.CommandSpec;

/** Writing a request and, with {@code --wait}, reporting what became of it: shared by init and the changes. */
final class Requests {
  /** {@code --wait} without a value. */
  static final String DEFAULT_WAIT_SECONDS = "600";

  /** Exit code when {@code --wait} saw no outcome in time: the request was written, its fate is unknown. */
  static final int EXIT_NO_OUTCOME = 1;

  private Requests() {}

  /**
   * Lets {@code --wait} take an optional number of seconds anywhere on the line: {@code join --wait node-7}
   * waits the default time for node-7 instead of failing to read "node-7" as seconds. A value is taken only
   * when it is attached ({@code --wait=10}) or the next argument is a number ({@code --wait 10}).
   */
  static final class WaitPreprocessor implements IParameterPreprocessor {
    @Override
    public boolean preprocess(Stack<String> args, CommandSpec commandSpec, ArgSpec argSpec, Map<String, Object> info) {
      if (" ".equals(info.get("separator")) && (args.isEmpty() || !args.peek().matches("\\d+"))) {
        args.push(DEFAULT_WAIT_SECONDS);
      }
      return false; // picocli goes on to read the value
    }
  }

  static String newRequestId() {
    return UUID.randomUUID().toString();
  }

  static String requestedBy() {
    String user = System.getProperty("user.name");
    return user == null || user.isBlank() ? "unknown" : user;
  }

  /** The wait, or null without {@code --wait}. */
  static Duration waitOf(Integer seconds) {
    if (seconds == null) {
      return null;
    }
    if (seconds < 1 || seconds > 86_400) {
      throw new BadInputException("--wait was " + seconds + "; it must be between 1 and 86400 seconds");
    }
    return Duration.ofSeconds(seconds);
  }

  /**
   * Writes {@code event}, prints {@code written} with its request id, and follows it ({@link RequestFollower}): without
   * a wait to the orchestrator's answer, with one to PUBLISHED.
   *
   * @return the exit code: 0 planned (published, with a wait) or queued, 2 rejected, 1 no outcome in time
   */
  static int write(ControlPlaneAdmin client, MembershipEvent event, String written, Duration wait,
      PrintWriter out, PrintWriter err) {
    return RequestFollower.writeAndFollow(client, event, written, wait, out, err);
  }

  /** Describes records that could not be decoded, on stderr: they are skipped, not fatal. */
  static void warnUnreadable(List<String> unreadable, PrintWriter err) {
    int shown = Math.min(3, unreadable.size());
    for (String u : unreadable.subList(0, shown)) {
      err.println("ringshift: warning: skipped an unreadable record: " + u);
    }
    if (unreadable.size() > shown) {
      err.printf(Locale.ROOT, "ringshift: warning: skipped %d more unreadable records%n", unreadable.size() - shown);
    }
    err.flush();
  }
}
