package io.ringshift.demo;

import io.ringshift.ring.PlacementPolicy;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Locale;

/**
 * How {@code ringshift demo} runs ({@link #defaults()}: 12 nodes in 3 zones, 200,000 keys, 2,000 operations/s, 50
 * MiB/s per worker, 32 tokens per node). Validates in its constructor; each message names the option, its value
 * and the rule, as the command line shows it.
 *
 * <p>Why 32 tokens, not the ring's usual 256: a change costs a task per changed range (a join at 12 x 256 tokens has
 * about 540), and each task costs its nodes requests to copy, fence and verify; on two cores, beside the
 * application's 2,000 operations/s, the whole scenario at 12 x 256 takes about 6.5 minutes, at 32 tokens about two
 * (docs/operations.md, "The demo"). {@code --vnodes 256} runs the ring as deployed, slower.
 *
 * @param nodes storage nodes of the first ring, in zones az-1, az-2, az-3 in turn; two spares run besides them to join
 * @param keys keys loaded before the first change, and written and read after
 * @param rate operations per second of the application, half writes and half reads, for the whole scenario
 * @param throttle each worker's copy rate in bytes per second, 0 for unlimited
 * @param seed draws the nodes the scenario drains, reweights and fails, and the workload's keys and values
 * @param vnodes tokens per unit of weight
 * @param workers migration workers, sharing the tasks
 * @param grace how long after publication old replicas keep moved ranges before cleanup deletes them
 * @param report where to write the HTML report, or null for none
 * @param keep whether the plane keeps running after the summary, until Ctrl-C
 * @param dashboardPort the dashboard's port on 127.0.0.1; 0 picks a free one, -1 runs none
 * @param policy the cluster's placement policy (docs/placement.md): hashed tokens, or the balanced allocator's
 */
public record DemoSettings(int nodes, int keys, int rate, long throttle, long seed, int vnodes, int workers,
    Duration grace, Path report, boolean keep, int dashboardPort, PlacementPolicy policy) {

  public static final int MIN_NODES = 6;
  /** The reference shape; with the two spares the plane runs 122 storage nodes. */
  public static final int MAX_NODES = 120;
  public static final int MAX_KEYS = 10_000_000;
  public static final int MAX_RATE = 100_000;
  public static final int DEFAULT_DASHBOARD_PORT = 8080;

  public DemoSettings {
    require(nodes >= MIN_NODES && nodes <= MAX_NODES, "--nodes was %d; it must be %d..%d (a drain and a failure must "
        + "leave at least three nodes in three zones)", nodes, MIN_NODES, MAX_NODES);
    require(keys >= 1 && keys <= MAX_KEYS, "--keys was %d; it must be 1..%d", keys, MAX_KEYS);
    require(rate >= 2 && rate <= MAX_RATE, "--rate was %d; it must be 2..%d operations/s (half writes, half reads)",
        rate, MAX_RATE);
    require(throttle >= 0, "--throttle was %d bytes/s; it must be 0 (unlimited) or more", throttle);
    require(throttle == 0 || throttle >= 64 * 1024, "--throttle was %d bytes/s; give at least 64KiB/s, or 0 for "
        + "unlimited", throttle);
    require(vnodes >= 1 && vnodes <= 4096, "--vnodes was %d; it must be 1..4096", vnodes);
    require(workers >= 1 && workers <= 16, "--workers was %d; it must be 1..16", workers);
    if (grace == null || grace.isNegative() || grace.compareTo(Duration.ofMinutes(10)) > 0) {
      throw new IllegalArgumentException("--grace was " + grace + "; it must be 0 to 10 min (the demo waits for "
          + "every cleanup before it checks the replicas)");
    }
    require(dashboardPort >= -1 && dashboardPort <= 65_535, "--dashboard-port was %d; it must be 0 (a free port), "
        + "1..65535, or -1 for no dashboard", dashboardPort);
  }

  /** The defaults, with a random seed. */
  public static DemoSettings defaults() {
    return new DemoSettings(12, 200_000, 2_000, 50L << 20, new java.util.Random().nextLong(), 32, 2,
        Duration.ofSeconds(5), null, false, DEFAULT_DASHBOARD_PORT, PlacementPolicy.HASHED);
  }

  /** Above this many nodes on a small machine, an application rate above {@link #LARGE_SHAPE_RATE} is too much. */
  static final int LARGE_SHAPE_NODES = 48;
  /** The application rate advised for large shapes on a small machine. */
  static final int LARGE_SHAPE_RATE = 200;
  /** Cores from which the whole plane at a large shape has room beside the application. */
  static final int ROOMY_CORES = 8;

  /**
   * A warning for a run that will crawl on this machine, or null: with many nodes, every node an HTTP server in
   * this process, the application's requests spread over all of them leave the broker too little CPU on a few
   * cores, and each epoch waits minutes on its transactions (measured: 120 nodes x 256 tokens on 2 cores at 2,000
   * operations/s, a join took 7.5 min; at 200 operations/s the whole scenario took 4 min 22 s).
   */
  public String loadWarning(int cores) {
    if (nodes <= LARGE_SHAPE_NODES || rate <= LARGE_SHAPE_RATE || cores >= ROOMY_CORES) {
      return null;
    }
    return String.format(Locale.ROOT, "note: %d nodes serving %,d operations/s in one process on %d cores leave the "
        + "broker little CPU, and each change can take many minutes; --rate %d runs this shape in a few minutes",
        nodes, rate, cores, LARGE_SHAPE_RATE);
  }

  public DemoSettings withNodes(int n) {
    return new DemoSettings(n, keys, rate, throttle, seed, vnodes, workers, grace, report, keep, dashboardPort, policy);
  }

  public DemoSettings withKeys(int n) {
    return new DemoSettings(nodes, n, rate, throttle, seed, vnodes, workers, grace, report, keep, dashboardPort, policy);
  }

  public DemoSettings withRate(int opsPerSecond) {
    return new DemoSettings(nodes, keys, opsPerSecond, throttle, seed, vnodes, workers, grace, report, keep,
        dashboardPort, policy);
  }

  public DemoSettings withThrottle(long bytesPerSecond) {
    return new DemoSettings(nodes, keys, rate, bytesPerSecond, seed, vnodes, workers, grace, report, keep,
        dashboardPort, policy);
  }

  public DemoSettings withSeed(long s) {
    return new DemoSettings(nodes, keys, rate, throttle, s, vnodes, workers, grace, report, keep, dashboardPort, policy);
  }

  public DemoSettings withVnodes(int v) {
    return new DemoSettings(nodes, keys, rate, throttle, seed, v, workers, grace, report, keep, dashboardPort, policy);
  }

  public DemoSettings withWorkers(int w) {
    return new DemoSettings(nodes, keys, rate, throttle, seed, vnodes, w, grace, report, keep, dashboardPort, policy);
  }

  public DemoSettings withGrace(Duration g) {
    return new DemoSettings(nodes, keys, rate, throttle, seed, vnodes, workers, g, report, keep, dashboardPort, policy);
  }

  public DemoSettings withReport(Path file) {
    return new DemoSettings(nodes, keys, rate, throttle, seed, vnodes, workers, grace, file, keep, dashboardPort, policy);
  }

  public DemoSettings withKeep(boolean k) {
    return new DemoSettings(nodes, keys, rate, throttle, seed, vnodes, workers, grace, report, k, dashboardPort, policy);
  }

  public DemoSettings withPolicy(PlacementPolicy p) {
    return new DemoSettings(nodes, keys, rate, throttle, seed, vnodes, workers, grace, report, keep, dashboardPort,
        java.util.Objects.requireNonNull(p, "policy"));
  }

  public DemoSettings withDashboardPort(int port) {
    return new DemoSettings(nodes, keys, rate, throttle, seed, vnodes, workers, grace, report, keep, port, policy);
  }

  private static void require(boolean ok, String format, Object... args) {
    if (!ok) {
      throw new IllegalArgumentException(String.format(Locale.ROOT, format, args));
    }
  }
}
