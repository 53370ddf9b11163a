package io.ringshift.simulator;

import java.util.Locale;

/**
 * The inputs of one simulation run. Validated in the constructor so that a bad option fails before any work
 * starts: an {@link IllegalArgumentException} whose message names the {@code ringshift simulate} option, the
 * value it had and the rule it broke, fit to show a user as it is.
 *
 * @param seed seed of the workload (key names, value sizes) and of the nodes picked for the changes
 * @param nodes physical nodes of the base fleet
 * @param zones availability zones; node {@code i} is in zone {@code i mod zones}
 * @param vnodes tokens per unit of weight (V) of the ring
 * @param replicas replication factor R
 * @param keys keys in the workload
 * @param partitions logical partitions of the fixed-partition scheme
 * @param zipfExponent exponent s of the Zipf request distribution over keys (0 = uniform)
 * @param valueMedianBytes median value size; sizes are log-normal with this median
 * @param valueSigma sigma of the log-normal value sizes (of the natural log of the size)
 * @param totalQps requests per second over all keys; the reference scenario's 2 million lookups per second
 */
public record SimulationParameters(
    long seed,
    int nodes,
    int zones,
    int vnodes,
    int replicas,
    int keys,
    int partitions,
    double zipfExponent,
    int valueMedianBytes,
    double valueSigma,
    double totalQps) {

  public static final long DEFAULT_SEED = 42;
  public static final int DEFAULT_NODES = 120;
  public static final int DEFAULT_ZONES = 3;
  public static final int DEFAULT_VNODES = 256;
  public static final int DEFAULT_REPLICAS = 3;
  public static final int DEFAULT_KEYS = 1_000_000;
  public static final int DEFAULT_PARTITIONS = 4096;
  public static final double DEFAULT_ZIPF = 1.0;
  public static final int DEFAULT_VALUE_MEDIAN = 1024;
  public static final double DEFAULT_VALUE_SIGMA = 1.0;
  public static final double REFERENCE_QPS = 2_000_000;

  /** Beyond this, rendezvous (one hash per node per key) alone would take minutes. */
  static final int MAX_NODES = 1000;
  /** Key arrays, value sizes and per-scheme assignments stay within about 1 GiB of heap. */
  static final int MAX_KEYS = 10_000_000;
  /** Keeps the largest ring of the run (1:2:4 weights, about 2.3 V tokens per node) under the ring's limit. */
  static final int MAX_VNODES = 4096;
  /**
   * Tokens of the base ring (nodes x V). The run also builds a 1:2:4 ring of about 2.3x that and keeps a
   * ReplicaSet per token, so this bounds the heap at roughly a gigabyte.
   */
  static final int MAX_TOKENS = 1 << 20;
  static final int MAX_REPLICAS = 16;
  static final int MAX_PARTITIONS = 1 << 20;

  /** @throws IllegalArgumentException when a value is out of its range (the message says which and why) */
  public SimulationParameters {
    require(nodes >= 2 && nodes <= MAX_NODES, "--nodes", nodes,
        "must be between 2 and " + MAX_NODES + " (a drain needs a node to remain)");
    require(zones >= 1 && zones <= nodes, "--zones", zones, "must be between 1 and --nodes (" + nodes + ")");
    require(vnodes >= 1 && vnodes <= MAX_VNODES, "--vnodes", vnodes, "must be between 1 and " + MAX_VNODES);
    require((long) nodes * vnodes <= MAX_TOKENS, "--vnodes", vnodes, String.format(Locale.ROOT,
        "with --nodes %d gives %,d tokens; --nodes x --vnodes must be at most %,d", nodes, (long) nodes * vnodes,
        MAX_TOKENS));
    require(replicas >= 1 && replicas <= MAX_REPLICAS && replicas < nodes, "--replicas", replicas,
        "must be between 1 and " + MAX_REPLICAS + " and below --nodes (" + nodes
            + "), so that R distinct nodes remain after a drain");
    require(keys >= 1 && keys <= MAX_KEYS, "--keys", keys, "must be between 1 and " + MAX_KEYS);
    require(partitions >= 1 && partitions <= MAX_PARTITIONS, "--partitions", partitions,
        "must be between 1 and " + MAX_PARTITIONS);
    require(Double.isFinite(zipfExponent) && zipfExponent >= 0 && zipfExponent <= 5, "--zipf", zipfExponent,
        "must be between 0 (uniform) and 5");
    require(valueMedianBytes >= 1 && valueMedianBytes <= (1 << 30), "--value-median", valueMedianBytes,
        "must be between 1 and 1073741824 bytes");
    require(Double.isFinite(valueSigma) && valueSigma >= 0 && valueSigma <= 3, "--value-sigma", valueSigma,
        "must be between 0 and 3");
    require(Double.isFinite(totalQps) && totalQps > 0, "totalQps", totalQps, "must be finite and > 0");
  }

  /** The reference scenario of docs/architecture.md with the default seed. */
  public static SimulationParameters reference() {
    return new SimulationParameters(DEFAULT_SEED, DEFAULT_NODES, DEFAULT_ZONES, DEFAULT_VNODES, DEFAULT_REPLICAS,
        DEFAULT_KEYS, DEFAULT_PARTITIONS, DEFAULT_ZIPF, DEFAULT_VALUE_MEDIAN, DEFAULT_VALUE_SIGMA, REFERENCE_QPS);
  }

  /** A copy with another fleet size and key count, for small test scenarios. */
  public SimulationParameters withScale(int newNodes, int newKeys) {
    return new SimulationParameters(seed, newNodes, zones, vnodes, replicas, newKeys, partitions, zipfExponent,
        valueMedianBytes, valueSigma, totalQps);
  }

  private static void require(boolean ok, String option, Object value, String rule) {
    if (!ok) {
      String shown = value instanceof Double ? String.format(Locale.ROOT, "%s", value) : String.valueOf(value);
      throw new IllegalArgumentException(option + " was " + shown + "; " + option + " " + rule);
    }
  }
}
