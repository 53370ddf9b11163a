package io.ringshift.demo.internal;

import io.ringshift.orchestrator.admin.ClusterView;
import io.ringshift.orchestrator.admin.ClusterView.TaskView;
import io.ringshift.orchestrator.admin.EpochProgress;
import io.ringshift.ring.ByteUnits;
import io.ringshift.schemas.avro.EpochRecord;
import io.ringshift.schemas.avro.EpochState;
import io.ringshift.schemas.avro.TaskState;
import java.io.PrintWriter;
import java.util.EnumMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.StringJoiner;
import java.util.function.LongSupplier;

/**
 * The live line of the epoch in flight: its stage, bytes copied of the estimate, the copy rate, the ETA, the
 * workers' throttle, its tasks by state and the most common reasons tasks wait. On a terminal it redraws one line
 * twice a second; otherwise (a log, a pipe) it prints a line every five seconds when something changed, so a log of
 * the run stays readable.
 */
public final class ProgressPrinter implements AutoCloseable {
  private static final long TERMINAL_MILLIS = 500;
  private static final long LOG_MILLIS = 5_000;

  private final PlaneWatch watch;
  private final PrintWriter out;
  private final boolean terminal;
  private final LongSupplier throttle;
  private final int workers;
  private final java.util.concurrent.ScheduledExecutorService ticker;
  private volatile long epoch = -1;
  private volatile String label = "";
  private String last = "";
  private long lastLog;
  private boolean drawn;

  /**
   * @param throttle each worker's copy rate now (bytes/s, 0 for unlimited)
   * @param terminal whether {@code out} is a terminal, where the line is redrawn in place
   */
  public ProgressPrinter(PlaneWatch watch, PrintWriter out, boolean terminal, LongSupplier throttle, int workers) {
    this.watch = watch;
    this.out = out;
    this.terminal = terminal;
    this.throttle = throttle;
    this.workers = workers;
    this.ticker = java.util.concurrent.Executors.newSingleThreadScheduledExecutor(r -> {
      Thread t = new Thread(r, "ringshift-demo-progress");
      t.setDaemon(true);
      return t;
    });
    ticker.scheduleAtFixedRate(this::tick, TERMINAL_MILLIS, TERMINAL_MILLIS,
        java.util.concurrent.TimeUnit.MILLISECONDS);
  }

  /** Shows the progress of {@code epochNumber}, under {@code what} (one word or two). */
  public synchronized void follow(long epochNumber, String what) {
    epoch = epochNumber;
    label = what;
    last = "";
  }

  /** Stops showing progress: ends the redrawn line with the latest state, then prints {@code line}. */
  public synchronized void done(String line) {
    if (epoch >= 0) {
      draw(true);
    }
    epoch = -1;
    if (drawn && terminal) {
      out.println();
    }
    drawn = false;
    out.println(line);
    out.flush();
  }

  /** Prints a line of its own, between progress lines. */
  public synchronized void println(String line) {
    if (drawn && terminal) {
      out.print("\r\033[K");
    }
    drawn = false;
    out.println(line);
    out.flush();
    last = "";
  }

  private synchronized void tick() {
    if (epoch < 0) {
      return;
    }
    try {
      long now = System.currentTimeMillis();
      if ((terminal || now - lastLog >= LOG_MILLIS) && draw(false)) {
        lastLog = now;
      }
    } catch (RuntimeException e) {
      // A view the line cannot be drawn from must not end the ticker; the next tick draws again.
      last = "";
    }
  }

  /** Draws the line when it changed (or when {@code force}); whether it printed. */
  private boolean draw(boolean force) {
    ClusterView view = watch.view();
    if (view == null) {
      return false;
    }
    String line = "  " + line(view, epoch, label, System.currentTimeMillis(), throttle.getAsLong(), workers);
    if (!force && line.equals(last)) {
      return false;
    }
    if (terminal) {
      out.print("\r" + line + "\033[K");
      drawn = true;
    } else if (!line.equals(last)) {
      out.println(line);
    }
    out.flush();
    last = line;
    return true;
  }

  /**
   * One progress line of {@code epoch}: {@code epoch 2 join: copying [######....] 41.0% 12.0 MiB of 29.3 MiB at 18.2
   * MiB/s ETA 1 s | throttle 50.0 MiB/s x 2 | tasks 380 PENDING, 8 COPYING, 150 VERIFIED | waiting: throttled 4}.
   */
  static String line(ClusterView view, long epoch, String label, long nowMillis, long throttle, int workers) {
    StringBuilder s = new StringBuilder(String.format(Locale.ROOT, "epoch %d %s: ", epoch, label));
    boolean inFlight = view.inFlight() != null && view.inFlight().getEpoch() == epoch;
    if (!inFlight) {
      long published = view.published() == null ? -1 : view.published().getEpoch();
      long active = view.active() == null ? -1 : view.active().getEpoch();
      EpochRecord last = null;
      for (EpochRecord e : view.history()) {
        if (e.getEpoch() == epoch) {
          last = e;
        }
      }
      if (last != null && (last.getState() == EpochState.CANCELLED || last.getState() == EpochState.REJECTED
          || last.getState() == EpochState.SUPERSEDED)) {
        s.append(last.getState());
      } else {
        s.append(published >= epoch ? "PUBLISHED" : active >= epoch ? "READY, waiting for the publisher"
            : "planning");
      }
      return s.toString();
    }
    List<TaskView> tasks = view.tasks();
    EpochProgress progress = EpochProgress.of(tasks, nowMillis);
    Map<TaskState, Integer> byState = new EnumMap<>(TaskState.class);
    tasks.forEach(t -> byState.merge(t.state(), 1, Integer::sum));
    String stage = tasks.isEmpty() ? "planned"
        : byState.getOrDefault(TaskState.FENCED, 0) > 0 || tasks.stream().allMatch(t -> t.state() == TaskState.CAUGHT_UP
            || t.state() == TaskState.FENCED || t.state() == TaskState.VERIFIED) ? "fencing" : "copying";
    s.append(stage).append(' ').append(progress.line());
    s.append(" | throttle ").append(throttle == 0 ? "none" : ByteUnits.format(throttle) + "/s")
        .append(" x ").append(workers);
    StringJoiner states = new StringJoiner(", ", " | tasks ", "");
    byState.forEach((state, n) -> states.add(n + " " + state));
    s.append(states);
    if (!progress.waiting().isEmpty()) {
      StringJoiner waiting = new StringJoiner(", ", " | waiting: ", "");
      progress.waiting().entrySet().stream().limit(2)
          .forEach(e -> waiting.add(shorten(e.getKey()) + " " + e.getValue()));
      s.append(waiting);
    }
    return s.toString();
  }

  private static String shorten(String reason) {
    return reason.length() <= 60 ? reason : reason.substring(0, 57) + "...";
  }

  @Override
  public void close() {
    ticker.shutdownNow();
  }
}
