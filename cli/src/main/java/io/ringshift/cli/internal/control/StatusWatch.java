package io.ringshift.cli.internal.control;

import io.ringshift.cli.BadInputException;
import io.ringshift.orchestrator.admin.ClusterView;
import io.ringshift.orchestrator.admin.ControlPlaneAdmin;
import io.ringshift.orchestrator.admin.ControlPlaneAdmin.Contents;
import io.ringshift.orchestrator.admin.ControlPlaneAdmin.Part;
import io.ringshift.schemas.avro.TaskState;
import java.io.PrintWriter;
import java.time.Duration;
import java.util.EnumSet;
import java.util.List;

/**
 * {@code status --watch}: one consumer follows the topics ({@link ControlPlaneAdmin#follow}); every interval the status
 * is drawn again when it changed, in place on a terminal (the screen cleared with ANSI escapes), else as a new block
 * under a blank line, so a log of it reads top to bottom.
 */
final class StatusWatch {
  private static final String CLEAR = "\033[H\033[2J";
  private static final Duration HOT_KEYS_EVERY = Duration.ofSeconds(10);

  private StatusWatch() {}

  static int run(KafkaOptions kafka, String clusterId, Duration every, boolean untilIdle, int limit, int rejected,
      PrintWriter out, PrintWriter err) {
    boolean terminal = System.console() != null && System.getenv("TERM") != null
        && !"dumb".equals(System.getenv("TERM"));
    try (ControlPlaneAdmin client = kafka.connect();
        ControlPlaneAdmin.Follower follower = client.follow(EnumSet.allOf(Part.class))) {
      List<String> shown = null;
      List<String> hotKeys = List.of();
      long hotKeysReadAt = 0;
      boolean hotKeysWarned = false;
      int warned = 0;
      Duration wait = Duration.ZERO;
      while (!Thread.currentThread().isInterrupted()) {
        long until = System.nanoTime() + wait.toNanos();
        Contents contents = follower.poll(wait);
        // Anything that arrives within the interval is taken before drawing: one redraw per interval at most.
        while (System.nanoTime() - until < 0) {
          contents = follower.poll(Duration.ofNanos(Math.max(1_000_000, until - System.nanoTime())));
        }
        wait = every;
        if (contents.unreadable().size() > warned) {
          Requests.warnUnreadable(contents.unreadable().subList(warned, contents.unreadable().size()), err);
          warned = contents.unreadable().size();
        }
        ClusterView view = ClusterView.of(clusterId, contents, rejected);
        if (!view.exists()) {
          if (shown == null) {
            throw new BadInputException("cluster " + clusterId + " has no epoch at " + client.bootstrap()
                + " (declare it with `ringshift init`)");
          }
          continue;
        }
        long now = System.currentTimeMillis();
        List<String> lines = new java.util.ArrayList<>(Reports.statusText(view, limit, now));
        // The participants and the clients' hot keys, read again at most every HOT_KEYS_EVERY (reports come every few
        // seconds at most).
        if (hotKeysReadAt == 0 || now - hotKeysReadAt >= HOT_KEYS_EVERY.toMillis()) {
          hotKeysReadAt = now;
          try {
            List<String> read = new java.util.ArrayList<>(LatestRecords.read(kafka,
                    kafka.topics().participants().name(), k -> k.startsWith(clusterId + "/"))
                .map(reports -> ParticipantsSection.lines(clusterId, reports, now)).orElse(List.of()));
            read.addAll(LatestRecords.read(kafka, kafka.topics().hotKeys().name(), k -> k.startsWith(clusterId + "/"))
                .map(reports -> HotKeysSection.lines(clusterId, reports.values(), now)).orElse(List.of()));
            hotKeys = read;
            hotKeysWarned = false;
          } catch (RuntimeException e) {
            // The watch goes on with the hot keys it had; the topics it follows say what Kafka is up to.
            if (!hotKeysWarned) {
              err.println("ringshift: could not read the participants and hot keys (" + e.getMessage() + "); showing "
                  + "the last ones read");
              err.flush();
              hotKeysWarned = true;
            }
          }
        }
        lines.addAll(hotKeys);
        if (!lines.equals(shown)) {
          if (terminal) {
            out.print(CLEAR);
          } else if (shown != null) {
            out.println();
          }
          lines.forEach(out::println);
          out.flush();
          shown = lines;
        }
        if (untilIdle && idle(view)) {
          return 0;
        }
      }
      return 0;
    }
  }

  /** Nothing in flight, and every cleanup finished (VERIFIED or FAILED). */
  static boolean idle(ClusterView view) {
    return view.inFlight() == null && view.cleanups().stream()
        .allMatch(t -> t.state() == TaskState.VERIFIED || t.state() == TaskState.FAILED);
  }
}
