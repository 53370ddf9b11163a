package io.ringshift.client;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.ringshift.protocol.TrustedKeys;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.regex.Pattern;

/**
 * The configuration of a {@link RingClient}: immutable, validated when built. Build it with {@link #builder()};
 * every setting but the bootstrap servers, the cluster id and the trusted keys has a default.
 *
 * @param bootstrapServers Kafka's {@code bootstrap.servers}
 * @param clusterId the one cluster whose snapshots the client follows: the record key on the topic, and the
 *     cluster id inside every accepted snapshot
 * @param topic the snapshots topic; default {@value #DEFAULT_TOPIC}
 * @param trustedKeys the publisher public keys whose signatures the client accepts
 * @param persistFile where the last good snapshot is kept for a cold start without Kafka, or {@code null} for
 *     none (the default)
 * @param meterRegistry where the client's meters go; default a new {@link SimpleMeterRegistry}
 * @param clock the time snapshot ages are measured with; default the system UTC clock
 * @param consumerProperties extra Kafka consumer properties (security settings, {@code client.id}, ...); the
 *     ones the client must control are refused, see {@link Builder#consumerProperty}
 * @param requestTimeout how long one Kafka call (metadata, offsets) may take before it counts as failed;
 *     default 10 s
 * @param retryBackoff the wait between retries while Kafka is unreachable; default 1 s
 * @param probeInterval how long the client reads nothing before it asks Kafka for end offsets to check that it
 *     still answers; default 15 s
 * @param epochsTopic the epochs topic (the audit log) the client reads its floor epoch from before the snapshots:
 *     no snapshot older than the latest epoch a trusted publisher signed PUBLISHED there is routed by, so an old
 *     snapshot replayed on the compacted snapshots topic is refused even by a client that starts without a persist
 *     file; default {@value #DEFAULT_EPOCHS_TOPIC}, {@code null} for no floor ({@link Builder#noEpochFloor()})
 * @param hotKeyCapacity counters of the hot-key sketch ({@link Builder#trackHotKeys}); default 0, off
 * @param readBalanceFactor the bound of bounded-load reads over the mean ({@link Builder#boundedLoadReads});
 *     default 0, reads from the first read-eligible replica
 * @param hotKeyReports where and how often the client reports its hot keys ({@link Builder#reportHotKeys}); default
 *     {@code null}, no reports
 * @param participation how the client reports what it routes by to the transition barrier ({@link Participation});
 *     default: as a client with a random id and a 10 s lease, to {@value #DEFAULT_PARTICIPANTS_TOPIC};
 *     {@code null} ({@link Builder#noParticipation()}) for none
 * @throws IllegalArgumentException when a value breaks its rule; the message names the value and the rule
 */
public record RingClientConfig(
    String bootstrapServers,
    String clusterId,
    String topic,
    TrustedKeys trustedKeys,
    Path persistFile,
    MeterRegistry meterRegistry,
    Clock clock,
    Map<String, String> consumerProperties,
    Duration requestTimeout,
    Duration retryBackoff,
    Duration probeInterval,
    String epochsTopic,
    int hotKeyCapacity,
    double readBalanceFactor,
    HotKeyReports hotKeyReports,
    Participation participation) {

  /** The topic the snapshot publisher writes to. */
  public static final String DEFAULT_TOPIC = "ring.snapshots";
  /** The topic the orchestrator and the publisher write epoch records to. */
  public static final String DEFAULT_EPOCHS_TOPIC = "ring.epochs";
  public static final Duration DEFAULT_REQUEST_TIMEOUT = Duration.ofSeconds(10);
  public static final Duration DEFAULT_RETRY_BACKOFF = Duration.ofSeconds(1);
  public static final Duration DEFAULT_PROBE_INTERVAL = Duration.ofSeconds(15);
  /** Most counters of the hot-key sketch. */
  public static final int MAX_HOT_KEY_CAPACITY = 4096;
  /** Longest cluster id, as for the ring ({@code RingBuilder.MAX_CLUSTER_ID_LENGTH}). */
  public static final int MAX_CLUSTER_ID_LENGTH = 256;

  /** Consumer properties the client sets itself, with the reason each cannot be overridden. */
  static final Map<String, String> RESERVED_PROPERTIES = Map.of(
      "bootstrap.servers", "set it with bootstrapServers(...)",
      "isolation.level", "the client reads read_committed, because the publisher writes in transactions",
      "key.deserializer", "the client reads keys as strings (the cluster id)",
      "value.deserializer", "the client reads values as raw bytes, to verify and count bad ones",
      "enable.auto.commit", "the client assigns partitions and commits nothing");

  private static final Pattern LEGAL_TOPIC = Pattern.compile("[a-zA-Z0-9._-]{1,249}");
  private static final Pattern LEGAL_CLIENT_ID = Pattern.compile("[a-zA-Z0-9._:-]{1,128}");
  /** The topic clients report their hot keys to. */
  public static final String DEFAULT_HOT_KEYS_TOPIC = "ring.hot-keys";
  /** The topic participants report what they route by to. */
  public static final String DEFAULT_PARTICIPANTS_TOPIC = "ring.participants";
  /** How long a participant's report holds unless renewed. */
  public static final Duration DEFAULT_PARTICIPANT_LEASE = Duration.ofSeconds(10);

  public RingClientConfig {
    bootstrapServers = requireText("bootstrapServers", bootstrapServers,
        "the Kafka bootstrap servers, for example localhost:9092");
    clusterId = requireText("clusterId", clusterId, "the id of the cluster whose snapshots to follow");
    if (clusterId.length() > MAX_CLUSTER_ID_LENGTH) {
      throw new IllegalArgumentException("clusterId was " + clusterId.length() + " characters long; a cluster id "
          + "is at most " + MAX_CLUSTER_ID_LENGTH + " characters");
    }
    Objects.requireNonNull(topic, "topic");
    requireTopic("topic", topic);
    if (epochsTopic != null) {
      requireTopic("epochsTopic", epochsTopic);
    }
    if (trustedKeys == null) {
      throw new IllegalArgumentException("trustedKeys was not set; the client accepts only snapshots signed by a "
          + "trusted publisher key: set trustedKeyFiles(...) (PEM public keys) or trustedKeys(...)");
    }
    Objects.requireNonNull(meterRegistry, "meterRegistry");
    Objects.requireNonNull(clock, "clock");
    consumerProperties = Map.copyOf(Objects.requireNonNull(consumerProperties, "consumerProperties"));
    for (String key : consumerProperties.keySet()) {
      String why = RESERVED_PROPERTIES.get(key);
      if (why != null) {
        throw new IllegalArgumentException("consumer property " + key + "=" + consumerProperties.get(key)
            + " cannot be set: " + why);
      }
    }
    requirePositive("requestTimeout", requestTimeout);
    requirePositive("retryBackoff", retryBackoff);
    requirePositive("probeInterval", probeInterval);
    if (hotKeyCapacity < 0 || hotKeyCapacity > MAX_HOT_KEY_CAPACITY) {
      throw new IllegalArgumentException("hotKeyCapacity was " + hotKeyCapacity + "; it must be 0 (off) to "
          + MAX_HOT_KEY_CAPACITY + " counters");
    }
    if (readBalanceFactor != 0 && (!(readBalanceFactor > 1) || Double.isInfinite(readBalanceFactor))) {
      throw new IllegalArgumentException("readBalanceFactor was " + readBalanceFactor + "; it must be 0 (reads "
          + "from the first read-eligible replica) or a number > 1 (bounded-load reads, for example 1.25)");
    }
  }

  /**
   * Reports of the hottest keys to Kafka, for {@code ringshift status}.
   *
   * @param clientId this client's id among the cluster's clients (the report's key is {@code <cluster>/<client id>})
   * @param interval how often a report is written
   * @param topic the topic, {@value #DEFAULT_HOT_KEYS_TOPIC} by default
   */
  public record HotKeyReports(String clientId, Duration interval, String topic) {
    public HotKeyReports {
      if (clientId == null || !LEGAL_CLIENT_ID.matcher(clientId).matches()) {
        throw new IllegalArgumentException("the hot-key report's client id was " + (clientId == null ? "not set"
            : "\"" + clientId + "\"") + "; it must be 1 to 128 of [a-zA-Z0-9._:-]");
      }
      Objects.requireNonNull(interval, "interval");
      if (interval.compareTo(Duration.ofSeconds(1)) < 0) {
        throw new IllegalArgumentException("the hot-key report interval was " + interval + "; it must be at least "
            + "1 s");
      }
      requireTopic("hot-key report topic", topic);
    }
  }

  /**
   * Reports of what the client routes by, on {@code ring.participants} (docs/protocol.md, "The client barrier"): the
   * publisher moves a transition to its next stage only once every live participant routes by the one before. The
   * client renews its report every third of the lease; once none was acknowledged for a lease, it stops serving the
   * ranges a transition moves ({@link RingClientException}) until one is.
   *
   * @param participantId this participant's id among the cluster's (the key is {@code <cluster>/<participantId>})
   * @param node whether the participant is a storage node's view of the ring rather than an application's client
   * @param lease how long a report holds: 3 s to 10 min
   * @param topic the topic, {@value #DEFAULT_PARTICIPANTS_TOPIC} by default
   */
  public record Participation(String participantId, boolean node, Duration lease, String topic) {
    public Participation {
      if (participantId == null || !LEGAL_CLIENT_ID.matcher(participantId.replace('/', '.')).matches()) {
        throw new IllegalArgumentException("the participant id was " + (participantId == null ? "not set"
            : "\"" + participantId + "\"") + "; it must be 1 to 128 of [a-zA-Z0-9._:/-]");
      }
      Objects.requireNonNull(lease, "lease");
      if (lease.compareTo(Duration.ofSeconds(3)) < 0 || lease.compareTo(Duration.ofMinutes(10)) > 0) {
        throw new IllegalArgumentException("the participant lease was " + lease + "; it must be 3 s to 10 min");
      }
      requireTopic("participants topic", topic);
    }
  }

  /** A builder with the defaults documented on the record components. */
  public static Builder builder() {
    return new Builder();
  }

  private static String requireText(String name, String value, String what) {
    if (value == null || value.isBlank()) {
      throw new IllegalArgumentException(name + " was " + (value == null ? "not set" : "\"" + value + "\"")
          + "; it must be " + what);
    }
    return value.strip();
  }

  private static void requireTopic(String name, String topic) {
    if (!LEGAL_TOPIC.matcher(topic).matches() || topic.equals(".") || topic.equals("..")) {
      throw new IllegalArgumentException(name + " was \"" + topic + "\"; a Kafka topic name is 1 to 249 of "
          + "[a-zA-Z0-9._-], and not \".\" or \"..\"");
    }
  }

  private static void requirePositive(String name, Duration value) {
    Objects.requireNonNull(value, name);
    if (value.isNegative() || value.isZero()) {
      throw new IllegalArgumentException(name + " was " + value + "; it must be positive");
    }
  }

  /** Builds a {@link RingClientConfig}; not thread-safe. */
  public static final class Builder {
    private String bootstrapServers;
    private String clusterId;
    private String topic = DEFAULT_TOPIC;
    private String epochsTopic = DEFAULT_EPOCHS_TOPIC;
    private TrustedKeys trustedKeys;
    private final List<Path> trustedKeyFiles = new ArrayList<>();
    private Path persistFile;
    private MeterRegistry meterRegistry;
    private Clock clock = Clock.systemUTC();
    private final Map<String, String> consumerProperties = new LinkedHashMap<>();
    private Duration requestTimeout = DEFAULT_REQUEST_TIMEOUT;
    private Duration retryBackoff = DEFAULT_RETRY_BACKOFF;
    private Duration probeInterval = DEFAULT_PROBE_INTERVAL;
    private int hotKeyCapacity;
    private double readBalanceFactor;
    private String hotKeysClientId;
    private Duration hotKeysInterval;
    private String hotKeysTopic = DEFAULT_HOT_KEYS_TOPIC;
    private boolean participates = true;
    private String participantId;
    private boolean participantIsNode;
    private Duration participantLease = DEFAULT_PARTICIPANT_LEASE;
    private String participantsTopic; // null: beside the snapshots topic, with the same prefix

    private Builder() {}

    public Builder bootstrapServers(String bootstrapServers) {
      this.bootstrapServers = bootstrapServers;
      return this;
    }

    public Builder clusterId(String clusterId) {
      this.clusterId = clusterId;
      return this;
    }

    public Builder topic(String topic) {
      this.topic = topic;
      return this;
    }

    /** The epochs topic the floor epoch is read from; default {@value RingClientConfig#DEFAULT_EPOCHS_TOPIC}. */
    public Builder epochsTopic(String epochsTopic) {
      this.epochsTopic = Objects.requireNonNull(epochsTopic, "epochsTopic");
      return this;
    }

    /**
     * No floor epoch: the client does not read the epochs topic (it has no access to it). A client that then starts
     * without a persist file accepts the latest snapshot on the compacted topic on its signature alone, which may be
     * an old one replayed there (docs/client.md, "Replays, and who may write").
     */
    public Builder noEpochFloor() {
      this.epochsTopic = null;
      return this;
    }

    /** Trusts these keys (replaces earlier ones); the alternative to {@link #trustedKeyFiles}. */
    public Builder trustedKeys(TrustedKeys trustedKeys) {
      this.trustedKeys = Objects.requireNonNull(trustedKeys, "trustedKeys");
      this.trustedKeyFiles.clear();
      return this;
    }

    /**
     * Trusts the public keys in these PEM files ({@code PUBLIC KEY} blocks, as {@code SigningKey.write} writes
     * them), read when {@link #build()} runs. Adds to earlier files.
     */
    public Builder trustedKeyFiles(Path... files) {
      for (Path f : files) {
        trustedKeyFiles.add(Objects.requireNonNull(f, "trusted key file"));
      }
      this.trustedKeys = null;
      return this;
    }

    /** Keeps the last good snapshot in this file and routes from it at start, before Kafka answers. */
    public Builder persistFile(Path persistFile) {
      this.persistFile = Objects.requireNonNull(persistFile, "persistFile");
      return this;
    }

    public Builder meterRegistry(MeterRegistry meterRegistry) {
      this.meterRegistry = Objects.requireNonNull(meterRegistry, "meterRegistry");
      return this;
    }

    public Builder clock(Clock clock) {
      this.clock = Objects.requireNonNull(clock, "clock");
      return this;
    }

    /**
     * Adds a Kafka consumer property, for example security settings. {@code bootstrap.servers},
     * {@code isolation.level}, the deserializers and {@code enable.auto.commit} are the client's own and are
     * refused by {@link #build()}.
     */
    public Builder consumerProperty(String key, String value) {
      consumerProperties.put(Objects.requireNonNull(key, "key"), Objects.requireNonNull(value, "value"));
      return this;
    }

    public Builder requestTimeout(Duration requestTimeout) {
      this.requestTimeout = requestTimeout;
      return this;
    }

    public Builder retryBackoff(Duration retryBackoff) {
      this.retryBackoff = retryBackoff;
      return this;
    }

    public Builder probeInterval(Duration probeInterval) {
      this.probeInterval = probeInterval;
      return this;
    }

    /**
     * Counts key lookups in a bounded sketch of {@code capacity} counters (64 is plenty for a top 10), sampling one
     * lookup in eight: {@link RingClient#hotKeys} and the {@code ringshift.client.hot.key.share} gauges report the
     * hottest keys. 0 (the default) turns it off; lookups then count nothing.
     */
    public Builder trackHotKeys(int capacity) {
      this.hotKeyCapacity = capacity;
      return this;
    }

    /**
     * Chooses read replicas with bounded load ({@link RingClient#readReplica}): the first read-eligible replica in
     * preference order whose recent reads from this client are at most {@code factor} times the mean, for example
     * 1.25. 0 (the default): always the first read-eligible replica.
     */
    public Builder boundedLoadReads(double factor) {
      this.readBalanceFactor = factor;
      return this;
    }

    /**
     * Writes this client's 20 hottest keys to {@value #DEFAULT_HOT_KEYS_TOPIC} every {@code interval} (at least
     * 1 s), keyed {@code <cluster>/<clientId>}, so that {@code ringshift status} shows the cluster's hot keys. Needs
     * {@link #trackHotKeys}. Best effort: a report that fails is logged; lookups never wait for it.
     */
    public Builder reportHotKeys(String clientId, Duration interval) {
      this.hotKeysClientId = clientId;
      this.hotKeysInterval = interval;
      return this;
    }

    /** The topic hot-key reports go to (default {@value #DEFAULT_HOT_KEYS_TOPIC}). */
    public Builder hotKeysTopic(String topic) {
      this.hotKeysTopic = topic;
      return this;
    }

    /** This participant's id in the transition barrier (default: {@code client-} and 12 random hex digits). */
    public Builder participantId(String id) {
      this.participantId = id;
      return this;
    }

    /** Reports as storage node {@code nodeId} (participant id {@code node/<nodeId>}), not as an application client. */
    public Builder reportAsNode(String nodeId) {
      this.participantId = "node/" + nodeId;
      this.participantIsNode = true;
      return this;
    }

    /** How long the client's report holds unless renewed (default 10 s, 3 s to 10 min). */
    public Builder participantLease(Duration lease) {
      this.participantLease = lease;
      return this;
    }

    /**
     * The topic participant reports go to. Default: beside the snapshots topic, with its prefix ({@code
     * x.ring.snapshots} reports to {@code x.ring.participants}), else {@value #DEFAULT_PARTICIPANTS_TOPIC}.
     */
    public Builder participantsTopic(String topic) {
      this.participantsTopic = topic;
      return this;
    }

    /**
     * No reports to the transition barrier: for a tool that only reads the ring (it serves no keys). An application
     * client must participate: a cluster moves ranges through transition stages only once every client that serves
     * keys can be waited for.
     */
    public Builder noParticipation() {
      this.participates = false;
      return this;
    }

    /**
     * Reads the trusted key files and builds the configuration.
     *
     * @throws IllegalArgumentException naming the value when one breaks its rule, or naming the file when a
     *     trusted key file is missing, unreadable or holds no Ed25519 public key
     */
    public RingClientConfig build() {
      TrustedKeys keys = trustedKeys;
      if (keys == null && !trustedKeyFiles.isEmpty()) {
        keys = readKeys(trustedKeyFiles);
      }
      return new RingClientConfig(bootstrapServers, clusterId, topic, keys, persistFile,
          meterRegistry == null ? new SimpleMeterRegistry() : meterRegistry, clock, consumerProperties,
          requestTimeout, retryBackoff, probeInterval, epochsTopic, hotKeyCapacity, readBalanceFactor,
          hotKeysClientId == null && hotKeysInterval == null ? null
              : new HotKeyReports(hotKeysClientId, hotKeysInterval, hotKeysTopic),
          !participates ? null : new Participation(participantId != null ? participantId
              : "client-" + java.util.HexFormat.of().formatHex(java.nio.ByteBuffer.allocate(6)
                  .putShort((short) java.util.concurrent.ThreadLocalRandom.current().nextInt())
                  .putInt(java.util.concurrent.ThreadLocalRandom.current().nextInt()).array()),
              participantIsNode, participantLease, participantsTopic != null ? participantsTopic
                  : besideSnapshots(topic)));
    }

    /** The participants topic beside a snapshots topic: the same prefix. */
    static String besideSnapshots(String snapshotsTopic) {
      String suffix = DEFAULT_TOPIC;
      if (snapshotsTopic != null && snapshotsTopic.endsWith(suffix)) {
        return snapshotsTopic.substring(0, snapshotsTopic.length() - suffix.length()) + DEFAULT_PARTICIPANTS_TOPIC;
      }
      return DEFAULT_PARTICIPANTS_TOPIC;
    }

    private static TrustedKeys readKeys(List<Path> files) {
      for (Path f : files) {
        if (!Files.isRegularFile(f) || !Files.isReadable(f)) {
          throw new IllegalArgumentException("trusted key file " + f + " does not exist or cannot be read; "
              + "it must be a PEM file holding the publisher's PUBLIC KEY");
        }
      }
      try {
        return TrustedKeys.read(files);
      } catch (IOException e) {
        throw new IllegalArgumentException("cannot read trusted key files " + files + ": " + e, e);
      }
    }
  }
}
