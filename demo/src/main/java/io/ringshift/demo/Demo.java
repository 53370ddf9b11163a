package io.ringshift.demo;

import io.ringshift.client.RingClient;
import io.ringshift.demo.internal.DemoReport;
import io.ringshift.demo.internal.DemoScenario;
import io.ringshift.demo.internal.SummaryText;
import io.ringshift.localplane.LocalControlPlane;
import io.ringshift.localplane.LocalNodes;
import io.ringshift.worker.Limits;
import io.ringshift.worker.TaskTuning;
import io.ringshift.protocol.AtomicFiles;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Locale;
import java.util.Map;

/**
 * {@code ringshift demo}: the system working, from one command. It starts the whole control plane in this process
 * (an embedded KRaft broker, the orchestrator, the snapshot publisher, the migration workers and the storage nodes,
 * each talking to the others only through Kafka and the nodes' HTTP API, as deployed), loads the keys, runs an
 * application that writes and reads through {@link RingClient} at a steady rate, and walks a scenario: a scale-out, a
 * join made by mistake and cancelled, a drain, a weight change and a confirmed failure with its repair. Each change is
 * followed live. At the end it reads back every acknowledged write from every replica of the final ring, runs the
 * audit and reports what each change cost ({@link DemoResult}).
 *
 * <p>Use: {@link #start}, then {@link #run}, then {@link #close} (or keep the plane running for the dashboard first).
 */
public final class Demo implements AutoCloseable {
  /** The cluster the demo declares. */
  public static final String CLUSTER = "demo";
  /** Tasks each worker runs at once, from one source and to one target: a demo's nodes serve nothing else. */
  static final Limits CAPS = Limits.DEFAULTS.withCaps(16, 8, 8);
  /**
   * A caught-up task reads its source's change feed while it waits for its fence, every tail interval; each read
   * costs the source a seek in its log (a few ms), and a join at 256 tokens has 540 tasks waiting at once. Every 5 s
   * instead of every second leaves the two cores to the application and the other roles; the drain after the fence
   * reads what the longer interval left, a few seconds of writes to one range.
   */
  static final TaskTuning TUNING = TaskTuning.DEFAULTS.withIntervals(Duration.ofSeconds(5),
      TaskTuning.DEFAULTS.retryInterval());

  private final DemoSettings settings;
  private final LocalControlPlane plane;
  private final DemoScenario scenario;
  private final PrintWriter out;

  private Demo(DemoSettings settings, LocalControlPlane plane, DemoScenario scenario, PrintWriter out) {
    this.settings = settings;
    this.plane = plane;
    this.scenario = scenario;
    this.out = out;
  }

  /**
   * Starts the plane (every part, as {@link LocalControlPlane} wires them) and prints where it runs.
   *
   * @param terminal whether {@code out} is a terminal, where progress lines are redrawn in place
   * @throws io.ringshift.localplane.LocalPlaneException when a part cannot start (nothing is left running)
   */
  public static Demo start(DemoSettings settings, PrintWriter out, boolean terminal) {
    long begin = System.nanoTime();
    out.printf(Locale.ROOT, "ringshift demo: %d storage nodes in 3 zones (and 2 spares), %d tokens each, 3 replicas; "
        + "%,d keys; %,d operations/s (half writes, half reads); throttle %s per worker, %d workers; seed %d%n",
        settings.nodes(), settings.vnodes(), settings.keys(), settings.rate(), DemoScenario.rate(settings.throttle()),
        settings.workers(), settings.seed());
    String warning = settings.loadWarning(Runtime.getRuntime().availableProcessors());
    if (warning != null) {
      out.println(warning);
    }
    out.flush();
    LocalControlPlane plane = LocalControlPlane.builder()
        .port(0)
        .clusterId(CLUSTER)
        .nodes(settings.nodes(), 0)
        .spares(2)
        .worker(settings.grace())
        .workers(settings.workers())
        .workerLimits(CAPS.withRates(settings.throttle(), 0))
        .workerTuning(TUNING)
        .startupTimeout(Duration.ofSeconds(120))
        .start();
    try {
      out.printf(Locale.ROOT, "plane up in %.1f s: Kafka at %s (embedded, KRaft), the orchestrator, the snapshot "
          + "publisher, %d migration workers and %d storage nodes (%d handler threads each)%n",
          (System.nanoTime() - begin) / 1e9, plane.bootstrapServers(), settings.workers(),
          plane.nodes().orElseThrow().nodes().size(), LocalNodes.threadsFor(settings.nodes() + 2));
      out.flush();
      return new Demo(settings, plane, new DemoScenario(settings, plane, out, terminal), out);
    } catch (RuntimeException e) {
      plane.close();
      throw e;
    }
  }

  /** The running plane (its bootstrap address, nodes, workers). */
  public LocalControlPlane plane() {
    return plane;
  }

  /** The epoch the demo's application routes by, under its name, once its client runs (for the dashboard). */
  public Map<String, Long> clientEpochs() {
    return scenario.clientEpochs();
  }

  public DemoSettings settings() {
    return settings;
  }

  /**
   * Runs the scenario and the checks, printing progress and the summary; the plane keeps running after.
   *
   * @throws DemoException when a step does not happen in time, or Kafka or a node fails in a way the scenario does
   *     not expect (the message says which step and why)
   */
  public DemoResult run() throws InterruptedException {
    DemoResult result = scenario.run();
    SummaryText.lines(result).forEach(out::println);
    out.flush();
    return result;
  }

  /**
   * Writes the HTML report of {@code result} (a run of this demo) to {@code file}, atomically.
   *
   * @throws java.io.UncheckedIOException when it cannot be written
   */
  public void writeReport(DemoResult result, Path file) {
    try {
      AtomicFiles.write(file, DemoReport.render(result, scenario.timeline()).getBytes(StandardCharsets.UTF_8), false);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot write the report " + file + ": " + e.getMessage(), e);
    }
  }

  /** Stops the application client and the plane, and deletes its temporary directories. */
  @Override
  public void close() {
    try {
      scenario.close();
    } finally {
      plane.close();
    }
  }
}
