package io.ringshift.simulator;

import java.util.List;
import java.util.Map;

/**
 * Everything one simulation run found, as immutable records. The JSON output is this record serialised by
 * Jackson, so record component names are the stable JSON field names documented in docs/simulate.md.
 * Fractions are in [0, 1] (not percent); a ratio that would divide by zero is {@code null}.
 *
 * @param format version of this structure; bumped when a field changes meaning or disappears
 * @param parameters the inputs
 * @param workload what the simulated keys look like
 * @param changes section 1: join, drain, failure and weight change on the ring
 * @param balance section 2: per-node load of the base ring
 * @param weights section 3: realised shares of 1:2:4 weights
 * @param vnodeSweep section 4: balance, size and lookup cost against V
 * @param schemes section 5: the placement schemes side by side
 * @param runtime wall time of the run and of each stage
 */
public record SimulationResult(
    int format,
    SimulationParameters parameters,
    WorkloadSummary workload,
    Section<Change> changes,
    Section<BalanceRow> balance,
    Section<WeightShare> weights,
    Section<VnodeRow> vnodeSweep,
    Section<SchemeRow> schemes,
    Runtime runtime) {

  public static final int FORMAT = 1;

  /**
   * One report section: its rows and the one-line takeaway printed under it.
   *
   * @param title heading
   * @param takeaway one sentence: what the numbers say
   * @param rows the figures
   */
  public record Section<T>(String title, String takeaway, List<T> rows) {
    public Section {
      rows = List.copyOf(rows);
    }
  }

  /**
   * The simulated keys.
   *
   * @param keys number of keys
   * @param keyBytes bytes per key
   * @param exampleKey the first key, to show the format
   * @param zipfExponent Zipf exponent s of the request rates
   * @param totalQps requests per second over all keys
   * @param hottestKeyQpsShare share of all requests that go to the hottest key
   * @param hottestKeyOverNodeMean the hottest key's rate divided by a node's mean request rate
   * @param top1PercentQpsShare share of requests that go to the hottest 1% of keys
   * @param valueMedianBytes log-normal median parameter (e^mu)
   * @param valueSigma log-normal sigma
   * @param totalValueBytes sum of value sizes (one copy)
   * @param meanValueBytes mean value size
   * @param sampleMedianValueBytes median of the generated sizes
   * @param p99ValueBytes 99th percentile of the generated sizes
   * @param maxValueBytes largest generated size
   */
  public record WorkloadSummary(
      int keys,
      int keyBytes,
      String exampleKey,
      double zipfExponent,
      double totalQps,
      double hottestKeyQpsShare,
      double hottestKeyOverNodeMean,
      double top1PercentQpsShare,
      long valueMedianBytes,
      double valueSigma,
      long totalValueBytes,
      double meanValueBytes,
      long sampleMedianValueBytes,
      long p99ValueBytes,
      long maxValueBytes) {}

  /**
   * What a membership change moves. Replica level: a key counts once for every new replica that must receive
   * it; fractions are of all replica copies (keys x R), replica bytes, or request rate. Primary level: keys
   * whose primary owner changed.
   *
   * @param replicaCopies key copies to make (sum over keys of the new replicas)
   * @param keysFraction replicaCopies / (keys x R)
   * @param bytes bytes to copy
   * @param bytesFraction bytes / (value bytes x R)
   * @param qps request rate that moves to another node, reads spread evenly over the R replicas
   * @param qpsFraction qps / total request rate
   * @param primaryKeys keys whose primary owner changed
   * @param primaryKeysFraction primaryKeys / keys
   * @param primaryBytesFraction their bytes / value bytes
   * @param primaryQpsFraction their request rate / total request rate
   * @param idealFraction the weight share gained, summed over nodes: what a perfectly weight-proportional
   *     placement moves
   * @param keysOverIdeal keysFraction / idealFraction
   * @param bytesOverIdeal bytesFraction / idealFraction
   * @param qpsOverIdeal qpsFraction / idealFraction
   * @param primaryOverIdeal primaryKeysFraction / idealFraction
   */
  public record Moved(
      long replicaCopies,
      double keysFraction,
      long bytes,
      double bytesFraction,
      double qps,
      double qpsFraction,
      long primaryKeys,
      double primaryKeysFraction,
      double primaryBytesFraction,
      double primaryQpsFraction,
      double idealFraction,
      Double keysOverIdeal,
      Double bytesOverIdeal,
      Double qpsOverIdeal,
      Double primaryOverIdeal) {}

  /**
   * The ring's own diff, compared with the simulated keys: the keys are a uniform sample of positions, so the
   * simulated fraction should be within a few standard errors of the diff's exact fraction.
   *
   * @param changedRanges ranges (coalesced) whose replica list changed
   * @param changedFraction keyspace fraction whose replica list changed (order included)
   * @param movedReplicaFraction the diff's replica copies as a fraction of all replica data
   * @param primaryMovedFraction the diff's keyspace fraction whose primary changed
   * @param idealMovedFraction the diff's ideal
   * @param simulatedReplicaFraction the keys' replica-level moved fraction
   * @param replicaStandardError its standard error
   * @param replicaZ (simulated - diff) / standard error
   * @param simulatedPrimaryFraction the keys' primary moved fraction
   * @param primaryStandardError its standard error
   * @param primaryZ (simulated - diff) / standard error
   * @param agrees both |z| &lt;= 4
   */
  public record DiffCheck(
      int changedRanges,
      double changedFraction,
      double movedReplicaFraction,
      double primaryMovedFraction,
      double idealMovedFraction,
      double simulatedReplicaFraction,
      double replicaStandardError,
      double replicaZ,
      double simulatedPrimaryFraction,
      double primaryStandardError,
      double primaryZ,
      boolean agrees) {}

  /**
   * Where the copies of a change are read from and written to. Source rule: among the key's old replicas that
   * are still up, one in the new replica's zone, else the first in preference order.
   *
   * @param sourceNodes nodes that send at least one copy
   * @param busiestSource node that sends the most bytes
   * @param busiestSourceShare its share of the bytes copied
   * @param sameZoneShare share of bytes copied within a zone
   * @param targetNodes nodes that receive at least one copy
   * @param busiestTarget node that receives the most bytes
   * @param busiestTargetShare its share of the bytes copied
   * @param keysDegradedFraction keys left with one replica fewer until the copies finish (failure only, else 0)
   * @param keysWithoutSurvivor keys with no surviving replica to copy from (data loss)
   * @param sourceBytesDescending bytes sent per source node, largest first
   */
  public record CopySources(
      int sourceNodes,
      String busiestSource,
      double busiestSourceShare,
      double sameZoneShare,
      int targetNodes,
      String busiestTarget,
      double busiestTargetShare,
      double keysDegradedFraction,
      long keysWithoutSurvivor,
      List<Long> sourceBytesDescending) {}

  /**
   * One membership change of the ring.
   *
   * @param name {@code join}, {@code drain}, {@code failure} or {@code weight}
   * @param description what changed, in words
   * @param node the node that joins, leaves, fails or changes weight
   * @param zone its zone
   * @param nodes nodes before and after, {@code 120 -> 121}
   * @param moved what moves
   * @param diff the ring diff's figures and the agreement check
   * @param sources where copies come from and go to
   */
  public record Change(String name, String description, String node, String zone, String nodes, Moved moved,
      DiffCheck diff, CopySources sources) {}

  /**
   * The spread of one kind of load over the nodes of the base ring. Loads are divided by the node's fair
   * share (weight / total weight), so 1.0 is a perfectly fair node.
   *
   * @param level {@code primary} (counted at the primary only) or {@code replica} (every replica holds the key
   *     and serves 1/R of its requests)
   * @param measure {@code keys}, {@code bytes} or {@code qps}
   * @param maxOverMean the most loaded node's load over the mean
   * @param minOverMean the least loaded node's load over the mean
   * @param cv coefficient of variation (population standard deviation / mean)
   * @param randomFloorCv the CV a uniformly random assignment of these keys would show: the sampling noise of
   *     the workload itself, which no placement beats
   * @param perNodeLoad every node's load over the mean, by node number (for the histogram)
   */
  public record BalanceRow(String level, String measure, double maxOverMean, double minOverMean, double cv,
      double randomFloorCv, List<Double> perNodeLoad) {
    /** The values of {@link #level()} and {@link #measure()}. */
    public static final String PRIMARY = "primary";
    public static final String REPLICA = "replica";
    /** Requests with bounded-load reads over each key's replicas (factor 1.25; docs/simulate.md). */
    public static final String BOUNDED_READS = "bounded-reads";
    public static final String KEYS = "keys";
    public static final String BYTES = "bytes";
    public static final String QPS = "qps";

    /**
     * The row of {@code level} and {@code measure} among {@code rows}.
     *
     * @throws java.util.NoSuchElementException when there is none
     */
    public static BalanceRow find(List<BalanceRow> rows, String level, String measure) {
      return rows.stream().filter(r -> r.level().equals(level) && r.measure().equals(measure)).findFirst()
          .orElseThrow();
    }
  }

  /**
   * Realised shares of one weight class on a ring with mixed weights.
   *
   * @param ring which ring
   * @param weight the class's weight
   * @param nodes nodes of that weight
   * @param expectedShare a node's fair share: weight / total weight
   * @param primaryShare mean share of the keys' primaries per node of the class
   * @param replicaShare mean share of replica copies per node of the class; null when R >= nodes (every node
   *     holds every key, so replica shares cannot follow weight)
   * @param primaryOverExpected primaryShare / expectedShare
   * @param replicaOverExpected replicaShare / expectedShare, or null
   * @param primaryMinOverExpected the class's least loaded node, primary share / expected
   * @param primaryMaxOverExpected the class's most loaded node, primary share / expected
   */
  public record WeightShare(String ring, double weight, int nodes, double expectedShare, double primaryShare,
      Double replicaShare, double primaryOverExpected, Double replicaOverExpected, double primaryMinOverExpected,
      double primaryMaxOverExpected) {}

  /**
   * The ring at one V. Balance here is exact: each node's share of the hash space, from the token table, with
   * no key sampling noise.
   *
   * @param vnodes tokens per node (V)
   * @param tokens tokens in the ring
   * @param buildMillis median time to build the snapshot (tokens, sort, replica sets, checksum)
   * @param footprintBytes in-memory table bytes ({@code RingSnapshot.footprintBytes()})
   * @param rawTokenTableBytes tokens x 12 bytes (8-byte token + 4-byte member index): shipping the table raw
   * @param wireSnapshotBytesEstimate members x 40 bytes: shipping membership only and deriving the tokens
   * @param primaryMaxOverMean the largest primary share over the mean
   * @param primaryCv CV of primary shares
   * @param replicaMaxOverMean the largest replica share over the mean
   * @param replicaCv CV of replica shares
   * @param joinMovedOverIdeal replica data moved by a join (diff) over the ideal
   * @param joinChangedRanges ranges a join changes: roughly the migration tasks to run
   * @param lookupNanos ns per lookup (key hash + replica set), one thread, all keys, after warm-up
   */
  public record VnodeRow(int vnodes, int tokens, double buildMillis, long footprintBytes, long rawTokenTableBytes,
      long wireSnapshotBytesEstimate, double primaryMaxOverMean, double primaryCv, double replicaMaxOverMean,
      double replicaCv, double joinMovedOverIdeal, int joinChangedRanges, double lookupNanos) {}

  /**
   * One placement scheme on the same keys.
   *
   * @param scheme {@code modulo}, {@code ring}, {@code rendezvous}, {@code jump} or {@code partitions}
   * @param zoneAware whether replicas are spread over zones
   * @param join what a join moves
   * @param removal what removing a node moves
   * @param replicaKeysMaxOverMean balance of replica copies per node, max over mean
   * @param replicaKeysCv balance of replica copies per node, CV
   * @param primaryKeysMaxOverMean balance of primaries per node, max over mean
   * @param primaryKeysCv balance of primaries per node, CV
   * @param lookupNanos ns per lookup of all R replicas, key hash included, one thread, after warm-up
   * @param clientState what a client must hold to route
   * @param clientStateBytes its wire size (estimate)
   */
  public record SchemeRow(String scheme, boolean zoneAware, Moved join, Moved removal, double replicaKeysMaxOverMean,
      double replicaKeysCv, double primaryKeysMaxOverMean, double primaryKeysCv, double lookupNanos,
      String clientState, long clientStateBytes) {}

  /**
   * Wall time.
   *
   * @param totalMillis the whole run, workload generation included (JVM start-up excluded)
   * @param stageMillis per stage, in run order
   * @param availableProcessors processors the JVM saw
   */
  public record Runtime(long totalMillis, Map<String, Long> stageMillis, int availableProcessors) {}
}
