package io.ringshift.orchestrator.admin;

import static io.ringshift.protocol.KafkaClients.rootMessage;

import io.ringshift.protocol.Topic;
import io.ringshift.protocol.Topics;
import io.ringshift.protocol.CodecException;
import io.ringshift.protocol.KafkaClients;
import io.ringshift.protocol.KafkaProperties;
import io.ringshift.protocol.ReadToEnd;
import io.ringshift.protocol.RecordKeys;
import io.ringshift.protocol.Participants;
import io.ringshift.protocol.RecordSerdes;
import io.ringshift.schemas.avro.EpochRecord;
import io.ringshift.schemas.avro.MembershipEvent;
import io.ringshift.schemas.avro.RangeCopyTask;
import io.ringshift.schemas.avro.RejectedEvent;
import io.ringshift.schemas.avro.TaskStatus;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.DescribeClusterOptions;
import org.apache.kafka.clients.admin.ListTopicsOptions;
import org.apache.kafka.clients.consumer.CloseOptions;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * A tool's connection to the control plane's topics (the admin API the command line, the local plane and the
 * dashboard use): reads them to their current end, writes
 * membership events, and waits for the outcome of one.
 *
 * <p>Design: every read is {@code read_committed} (the orchestrator writes with exactly-once transactions, so
 * only committed epochs and tasks exist) and from the beginning, with partitions assigned by hand (no consumer
 * group, nothing committed). A read stops at the end offsets taken when it starts, which for
 * {@code read_committed} are the last stable offsets: it never waits for records that do not exist yet, and
 * gives up when it makes no progress for the timeout. {@link #connect} first asks the cluster to describe
 * itself, so that an address without a broker fails in one line and within the timeout rather than in the
 * first read.
 */
public final class ControlPlaneAdmin implements AutoCloseable {
  private static final Duration POLL = Duration.ofMillis(100);
  private static final String CLIENT_ID = "ringshift-cli";
  private static final Duration CLOSE = Duration.ofSeconds(2);

  private final String bootstrap;
  private final KafkaProperties properties;
  private final Topics topics;
  private final Duration timeout;
  private final Admin admin;
  private KafkaConsumer<byte[], byte[]> consumer;
  private KafkaProducer<byte[], byte[]> producer;

  private ControlPlaneAdmin(String bootstrap, KafkaProperties properties, Topics topics, Duration timeout,
      Admin admin) {
    this.bootstrap = bootstrap;
    this.properties = properties;
    this.topics = topics;
    this.timeout = timeout;
    this.admin = admin;
  }

  /**
   * Connects and checks that the control plane's topics exist.
   *
   * @throws AdminException {@link AdminException.Reason#UNAVAILABLE} when no broker answers at {@code bootstrap}
   *     within {@code timeout}; {@link AdminException.Reason#BAD_REQUEST} when the broker answers but a topic is missing (no orchestrator ever ran there,
   *     or a different topic prefix)
   */
  public static ControlPlaneAdmin connect(String bootstrap, Topics topics, Duration timeout) {
    return connect(bootstrap, KafkaProperties.none(), topics, timeout);
  }

  /**
   * Connects with the operator's client {@code properties} (security, SASL, SSL) and checks that the control
   * plane's topics exist.
   *
   * @see #connect(String, Topics, Duration)
   */
  public static ControlPlaneAdmin connect(String bootstrap, KafkaProperties properties, Topics topics,
      Duration timeout) {
    Admin admin;
    try {
      admin = Admin.create(KafkaClients.boundedProperties(bootstrap, properties, timeout, CLIENT_ID));
    } catch (KafkaException e) {
      throw AdminException.unavailable("cannot connect to Kafka at " + bootstrap + ": " + rootMessage(e), e);
    }
    ControlPlaneAdmin client = new ControlPlaneAdmin(bootstrap, properties, topics, timeout, admin);
    try {
      client.checkTopics();
      return client;
    } catch (RuntimeException e) {
      client.close();
      throw e;
    }
  }

  public Topics topics() {
    return topics;
  }

  public String bootstrap() {
    return bootstrap;
  }

  private void checkTopics() {
    int ms = (int) timeout.toMillis();
    Set<String> existing;
    try {
      admin.describeCluster(new DescribeClusterOptions().timeoutMs(ms)).nodes()
          .get(ms + 1000L, TimeUnit.MILLISECONDS);
      existing = admin.listTopics(new ListTopicsOptions().timeoutMs(ms)).names()
          .get(ms + 1000L, TimeUnit.MILLISECONDS);
    } catch (ExecutionException | java.util.concurrent.TimeoutException e) {
      throw unreachable(e instanceof ExecutionException ? e.getCause() : e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw AdminException.unavailable("interrupted while connecting to Kafka at " + bootstrap, e);
    }
    Set<String> missing = new TreeSet<>();
    for (Topic<?, ?> topic : topics.all()) {
      if (!existing.contains(topic.name())) {
        missing.add(topic.name());
      }
    }
    if (!missing.isEmpty()) {
      throw AdminException.badRequest(String.format(Locale.ROOT,
          "Kafka at %s has no topic%s %s: the orchestrator creates them when it starts (`ringshift dev` runs "
              + "one); is this the control plane's broker?", bootstrap, missing.size() == 1 ? "" : "s",
          String.join(", ", missing)));
    }
  }

  // ---- reading ----

  /**
   * What a read found, decoded; records that could not be decoded are described in {@code unreadable}.
   *
   * @param participants the latest report of each participant on {@code ring.participants} (a tombstone removes
   *     one), seen at its record's timestamp; empty when the part was not read or the topic does not exist
   */
  public record Contents(
      List<EpochRecord> epochs,
      List<RangeCopyTask> tasks,
      List<TaskStatus> statuses,
      List<RejectedEvent> rejected,
      List<String> unreadable,
      List<Participants.Participant> participants) {

    /** Contents without participants. */
    public Contents(List<EpochRecord> epochs, List<RangeCopyTask> tasks, List<TaskStatus> statuses,
        List<RejectedEvent> rejected, List<String> unreadable) {
      this(epochs, tasks, statuses, rejected, unreadable, List.of());
    }
  }

  /**
   * Which topics a read covers. {@link #PARTICIPANTS} is optional: a cluster set up before transition stages has no
   * {@code ring.participants}, and a read then finds none instead of failing.
   */
  public enum Part { EPOCHS, TASKS, TASK_STATUS, REJECTED, PARTICIPANTS }

  /** Reads the chosen topics from the beginning to their current end ({@code read_committed}). */
  public Contents read(Set<Part> parts) {
    Map<String, Part> names = new LinkedHashMap<>();
    for (Part part : parts) {
      names.put(topicName(part), part);
    }
    Map<String, List<ConsumerRecord<byte[], byte[]>>> raw = readToEnd(names.keySet());
    List<String> unreadable = new ArrayList<>();
    Map<String, Participants.Participant> participants = new LinkedHashMap<>();
    List<ConsumerRecord<byte[], byte[]>> reports = raw.get(topics.participants().name());
    if (reports != null) {
      reports.forEach(r -> participant(participants, r, unreadable));
    }
    return new Contents(
        decode(raw.get(topics.epochs().name()), RecordSerdes.epochRecord()::deserialize, unreadable),
        latestPerKey(raw.get(topics.tasks().name()), RecordSerdes.rangeCopyTask()::deserialize, unreadable),
        latestPerKey(raw.get(topics.taskStatus().name()), RecordSerdes.taskStatus()::deserialize, unreadable),
        decode(raw.get(topics.rejected().name()), RecordSerdes.rejectedEvent()::deserialize, unreadable),
        unreadable, List.copyOf(participants.values()));
  }

  /**
   * Follows the chosen topics: the first {@link Follower#poll} reads them from the beginning to their current end, and
   * each later one only what was appended since, so a watch redraws from one process without reading the history
   * again. It has a consumer of its own; close it.
   */
  public Follower follow(Set<Part> parts) {
    List<String> names = parts.stream().map(this::topicName).toList();
    List<TopicPartition> partitions = partitionsOf(names);
    KafkaConsumer<byte[], byte[]> c;
    try {
      c = KafkaClients.readCommittedConsumer(bootstrap, properties, timeout, CLIENT_ID + "-follow");
    } catch (KafkaException e) {
      throw AdminException.unavailable("cannot connect to Kafka at " + bootstrap + ": " + rootMessage(e), e);
    }
    return new Follower(c, partitions, names);
  }

  /** The decoded contents of the followed topics, kept up to date by {@link #poll}. Not thread safe. */
  public final class Follower implements AutoCloseable {
    private final KafkaConsumer<byte[], byte[]> consumer;
    private final List<TopicPartition> partitions;
    private final String what;
    private final List<EpochRecord> epochs = new ArrayList<>();
    private final Map<String, RangeCopyTask> tasks = new LinkedHashMap<>();
    private final Map<String, TaskStatus> statuses = new LinkedHashMap<>();
    private final List<RejectedEvent> rejected = new ArrayList<>();
    private final List<String> unreadable = new ArrayList<>();
    private final Map<String, Participants.Participant> participants = new LinkedHashMap<>();
    private boolean started;

    private Follower(KafkaConsumer<byte[], byte[]> consumer, List<TopicPartition> partitions, List<String> names) {
      this.consumer = consumer;
      this.partitions = partitions;
      this.what = String.join(", ", names);
    }

    /**
     * Reads what was appended since the last call (the first call: everything up to the current end), waiting up
     * to {@code wait} for something new, and returns the contents so far.
     */
    public Contents poll(Duration wait) {
      return poll(wait, Duration.ZERO);
    }

    /**
     * As {@link #poll(Duration)}, but once something new arrived it goes on reading for {@code gather} before it
     * returns, so that a reader that rebuilds a view from the contents rebuilds it at most once per {@code gather}
     * while records stream in (a change at 120 x 256 writes thousands of task statuses within seconds, in batches
     * that each end a poll), instead of once per batch.
     */
    public Contents poll(Duration wait, Duration gather) {
      try {
        if (!started) {
          // Every record polled is applied, those past the end offsets too: the consumer's position has moved past
          // them, and the next poll would not return them again (fromBeginning drops them, and a watch that started
          // while a cleanup finished never saw its VERIFIED status, and never became idle).
          consumer.assign(partitions);
          consumer.seekToBeginning(partitions);
          try {
            ReadToEnd.read(consumer, this::apply, timeout, System::nanoTime, "reading " + what + " from Kafka at "
                + bootstrap);
          } catch (IllegalStateException e) {
            throw AdminException.unavailable(e.getMessage(), e);
          }
          started = true;
        } else {
          var first = consumer.poll(wait);
          first.forEach(this::apply);
          if (!first.isEmpty() && gather.compareTo(Duration.ZERO) > 0) {
            long until = System.nanoTime() + gather.toNanos();
            for (long left = gather.toNanos(); left > 0; left = until - System.nanoTime()) {
              consumer.poll(Duration.ofNanos(left)).forEach(this::apply);
            }
          }
        }
      } catch (org.apache.kafka.common.errors.TimeoutException e) {
        throw unreachable(e);
      }
      return new Contents(List.copyOf(epochs), List.copyOf(tasks.values()), List.copyOf(statuses.values()),
          List.copyOf(rejected), List.copyOf(unreadable), List.copyOf(participants.values()));
    }

    private void apply(ConsumerRecord<byte[], byte[]> r) {
      String topic = r.topic();
      String key = r.key() == null ? "" : new String(r.key(), StandardCharsets.UTF_8);
      try {
        if (topic.equals(topics.epochs().name())) {
          if (r.value() != null) {
            epochs.add(RecordSerdes.epochRecord().deserialize(r.value()));
          }
        } else if (topic.equals(topics.tasks().name())) {
          latest(tasks, key, r.value() == null ? null : RecordSerdes.rangeCopyTask().deserialize(r.value()));
        } else if (topic.equals(topics.taskStatus().name())) {
          latest(statuses, key, r.value() == null ? null : RecordSerdes.taskStatus().deserialize(r.value()));
        } else if (topic.equals(topics.rejected().name()) && r.value() != null) {
          rejected.add(RecordSerdes.rejectedEvent().deserialize(r.value()));
        } else if (topic.equals(topics.participants().name())) {
          participant(participants, r, unreadable);
        }
      } catch (CodecException e) {
        unreadable.add(String.format(Locale.ROOT, "%s partition %d offset %d: %s", topic, r.partition(), r.offset(),
            e.getMessage()));
      }
    }

    /** As {@link #latestPerKey}: the latest value of a key wins, in the order keys were last written. */
    private <V> void latest(Map<String, V> map, String key, V value) {
      map.remove(key);
      if (value != null) {
        map.put(key, value);
      }
    }

    @Override
    public void close() {
      consumer.close(CloseOptions.timeout(CLOSE));
    }
  }

  private String topicName(Part part) {
    return switch (part) {
      case EPOCHS -> topics.epochs().name();
      case TASKS -> topics.tasks().name();
      case TASK_STATUS -> topics.taskStatus().name();
      case REJECTED -> topics.rejected().name();
      case PARTICIPANTS -> topics.participants().name();
    };
  }

  /** Keeps the latest report of {@code r}'s participant (a tombstone removes it); an unreadable one is noted. */
  private static void participant(Map<String, Participants.Participant> out, ConsumerRecord<byte[], byte[]> r,
      List<String> unreadable) {
    String key = r.key() == null ? "" : new String(r.key(), StandardCharsets.UTF_8);
    if (r.value() == null) {
      out.remove(key);
      return;
    }
    try {
      out.put(key, new Participants.Participant(key, RecordSerdes.participantReport().deserialize(r.value()),
          r.timestamp()));
    } catch (CodecException e) {
      unreadable.add(String.format(Locale.ROOT, "%s partition %d offset %d: %s", r.topic(), r.partition(),
          r.offset(), e.getMessage()));
    }
  }

  private static <V> List<V> decode(List<ConsumerRecord<byte[], byte[]>> records, Function<byte[], V> decoder,
      List<String> unreadable) {
    List<V> values = new ArrayList<>();
    if (records == null) {
      return values;
    }
    for (ConsumerRecord<byte[], byte[]> r : records) {
      if (r.value() == null) {
        continue; // a tombstone on a compacted topic: the key was deleted
      }
      try {
        values.add(decoder.apply(r.value()));
      } catch (CodecException e) {
        unreadable.add(String.format(Locale.ROOT, "%s partition %d offset %d: %s", r.topic(), r.partition(),
            r.offset(), e.getMessage()));
      }
    }
    return values;
  }

  /**
   * The current value of every key of a compacted topic, as compaction will leave it: the latest record of each
   * key wins and a tombstone (null value) deletes the key. {@code ring.tasks} needs this: a re-plan re-emits
   * the tasks it keeps under the same id and writes a tombstone for each task it drops. Records of one key
   * share a partition, so their order in {@code records} is the order they were written.
   */
  public static <V> List<V> latestPerKey(List<ConsumerRecord<byte[], byte[]>> records, Function<byte[], V> decoder,
      List<String> unreadable) {
    Map<String, V> latest = new LinkedHashMap<>();
    if (records == null) {
      return List.of();
    }
    for (ConsumerRecord<byte[], byte[]> r : records) {
      String key = r.key() == null ? "" : new String(r.key(), StandardCharsets.UTF_8);
      if (r.value() == null) {
        latest.remove(key);
        continue;
      }
      try {
        latest.remove(key); // re-inserted last: the map keeps the order in which keys were last written
        latest.put(key, decoder.apply(r.value()));
      } catch (CodecException e) {
        unreadable.add(String.format(Locale.ROOT, "%s partition %d offset %d: %s", r.topic(), r.partition(),
            r.offset(), e.getMessage()));
      }
    }
    return new ArrayList<>(latest.values());
  }

  /**
   * Every committed record of {@code names}, per topic, in offset order within each partition (so all records
   * of one key are in the order they were written).
   */
  private Map<String, List<ConsumerRecord<byte[], byte[]>>> readToEnd(Collection<String> names) {
    KafkaConsumer<byte[], byte[]> c = consumer();
    List<TopicPartition> partitions = partitionsOf(names);
    Map<String, List<ConsumerRecord<byte[], byte[]>>> out = new HashMap<>();
    names.forEach(n -> out.put(n, new ArrayList<>()));
    try {
      Map<TopicPartition, Long> end = c.endOffsets(partitions, timeout);
      List<ConsumerRecord<byte[], byte[]>> records;
      try {
        records = ReadToEnd.fromBeginning(c, end, timeout, "reading " + String.join(", ", names) + " from Kafka at "
            + bootstrap);
      } catch (IllegalStateException e) {
        throw AdminException.unavailable(e.getMessage(), e);
      }
      records.forEach(r -> out.get(r.topic()).add(r));
      c.assign(List.of());
      return out;
    } catch (org.apache.kafka.common.errors.TimeoutException e) {
      throw unreachable(e);
    }
  }

  private List<TopicPartition> partitionsOf(Collection<String> names) {
    List<TopicPartition> partitions = new ArrayList<>();
    try {
      for (String name : names) {
        List<PartitionInfo> infos = consumer().partitionsFor(name, timeout);
        if ((infos == null || infos.isEmpty()) && name.equals(topics.participants().name())) {
          continue; // optional (Part.PARTICIPANTS): a cluster set up before transition stages has none
        }
        if (infos == null || infos.isEmpty()) {
          throw AdminException.badRequest("Kafka at " + bootstrap + " has no topic " + name);
        }
        infos.forEach(i -> partitions.add(new TopicPartition(i.topic(), i.partition())));
      }
    } catch (org.apache.kafka.common.errors.TimeoutException e) {
      throw unreachable(e);
    }
    return partitions;
  }

  // ---- writing and waiting ----

  /**
   * Writes a membership event, keyed as the orchestrator expects ({@link RecordKeys#membershipKey}), and waits
   * until Kafka has it.
   *
   * @throws AdminException {@link AdminException.Reason#UNAVAILABLE} when Kafka does not acknowledge it in time
   */
  public void send(MembershipEvent event) {
    byte[] key = RecordKeys.membershipKey(event).getBytes(StandardCharsets.UTF_8);
    byte[] value = RecordSerdes.membershipEvent().serialize(event);
    String topic = topics.membership().name();
    try {
      producer().send(new ProducerRecord<>(topic, key, value)).get(timeout.toMillis() + 1000L, TimeUnit.MILLISECONDS);
    } catch (ExecutionException e) {
      throw AdminException.unavailable(String.format(Locale.ROOT,
          "writing request %s to %s at %s failed: %s", event.getRequestId(), topic, bootstrap,
          rootMessage(e.getCause())), e.getCause());
    } catch (java.util.concurrent.TimeoutException | org.apache.kafka.common.errors.TimeoutException e) {
      throw AdminException.unavailable(String.format(Locale.ROOT,
          "writing request %s to %s at %s was not acknowledged within %d s; it may or may not have been written "
              + "(`ringshift status` shows)", event.getRequestId(), topic, bootstrap, timeout.toSeconds()), e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw AdminException.unavailable("interrupted while writing request " + event.getRequestId(), e);
    }
  }

  /** Where the outcome of a request written after this call will be: the current ends of epochs and rejects. */
  public Map<TopicPartition, Long> outcomePositions() {
    try {
      return new HashMap<>(consumer().endOffsets(
          partitionsOf(List.of(topics.epochs().name(), topics.rejected().name())), timeout));
    } catch (org.apache.kafka.common.errors.TimeoutException e) {
      throw unreachable(e);
    }
  }

  /** What became of a request. */
  public sealed interface Outcome permits Planned, Rejected, Withdrew, NoOutcome {}

  /** The request caused this epoch record (PLANNED, or READY for a change that moves nothing). */
  public record Planned(EpochRecord epoch) implements Outcome {}

  /** The orchestrator refused the request. */
  public record Rejected(RejectedEvent rejected) implements Outcome {}

  /**
   * The request (a FAIL) withdrew a queued JOIN of the same node, whose rejection names it: nothing was planned or
   * copied for the node, and no epoch follows.
   */
  public record Withdrew(RejectedEvent join) implements Outcome {}

  /** How the rejection of a JOIN withdrawn by a FAIL names the FAIL's request (ClusterAggregate writes it). */
  static String withdrawnBy(String failRequestId) {
    return "(FAIL request " + failRequestId + ")";
  }

  /** Nothing about the request appeared within the wait. */
  public record NoOutcome() implements Outcome {}

  /**
   * Follows {@code ring.epochs} and {@code ring.rejected} from {@code from} (taken with
   * {@link #outcomePositions} before the request was written, so nothing is missed) until a record names
   * {@code requestId} or {@code wait} has passed.
   */
  public Outcome awaitOutcome(String requestId, Map<TopicPartition, Long> from, Duration wait) {
    KafkaConsumer<byte[], byte[]> c = consumer();
    String epochs = topics.epochs().name();
    long deadline = System.nanoTime() + wait.toNanos();
    try {
      c.assign(from.keySet());
      from.forEach(c::seek);
      while (System.nanoTime() - deadline < 0) {
        long leftMs = Math.max(1, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime()));
        // The last match of a batch wins: an INIT, or a change that moves nothing, is PLANNED and READY in one
        // transaction, and READY is the more useful answer.
        Planned planned = null;
        for (ConsumerRecord<byte[], byte[]> r : c.poll(Duration.ofMillis(Math.min(leftMs, POLL.toMillis())))) {
          Outcome outcome = outcomeOf(r, requestId, epochs);
          if (outcome instanceof Rejected || outcome instanceof Withdrew) {
            return outcome;
          }
          if (outcome instanceof Planned p) {
            planned = p;
          }
        }
        if (planned != null) {
          return planned;
        }
      }
      return new NoOutcome();
    } catch (org.apache.kafka.common.errors.TimeoutException e) {
      throw unreachable(e);
    } finally {
      c.assign(List.of());
    }
  }

  /** The outcome {@code r} reports for {@code requestId}, or null when it is about something else. */
  static Outcome outcomeOf(ConsumerRecord<byte[], byte[]> r, String requestId, String epochs) {
    if (r.value() == null) {
      return null;
    }
    try {
      if (r.topic().equals(epochs)) {
        EpochRecord e = RecordSerdes.epochRecord().deserialize(r.value());
        return e.getCause() != null && requestId.equals(e.getCause().getRequestId()) ? new Planned(e) : null;
      }
      RejectedEvent rejected = RecordSerdes.rejectedEvent().deserialize(r.value());
      if (requestId.equals(rejected.getRequestId())) {
        return new Rejected(rejected);
      }
      return rejected.getReason() != null && rejected.getReason().contains(withdrawnBy(requestId))
          ? new Withdrew(rejected) : null;
    } catch (CodecException e) {
      // Not ours: we wrote our request with this version's schema, and its outcome decodes.
      return null;
    }
  }

  /** End offsets of every control-plane topic, to show that a command wrote nothing. */
  public Map<TopicPartition, Long> endOffsetsOfAllTopics() {
    List<String> names = topics.all().stream().map(Topic::name).toList();
    try {
      return new HashMap<>(consumer().endOffsets(partitionsOf(names), timeout));
    } catch (org.apache.kafka.common.errors.TimeoutException e) {
      throw unreachable(e);
    }
  }

  // ---- clients ----

  private KafkaConsumer<byte[], byte[]> consumer() {
    if (consumer == null) {
      try {
        consumer = KafkaClients.readCommittedConsumer(bootstrap, properties, timeout, CLIENT_ID);
      } catch (KafkaException e) {
        throw AdminException.unavailable("cannot connect to Kafka at " + bootstrap + ": " + rootMessage(e), e);
      }
    }
    return consumer;
  }

  private KafkaProducer<byte[], byte[]> producer() {
    if (producer == null) {
      Properties p = KafkaClients.boundedProperties(bootstrap, properties, timeout, CLIENT_ID);
      int ms = (int) timeout.toMillis();
      p.put(ProducerConfig.ACKS_CONFIG, "all");
      p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
      p.put(ProducerConfig.LINGER_MS_CONFIG, 0);
      p.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, ms);
      // delivery.timeout.ms must be >= linger.ms + request.timeout.ms.
      p.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, ms);
      try {
        producer = new KafkaProducer<>(p, new ByteArraySerializer(), new ByteArraySerializer());
      } catch (KafkaException e) {
        throw AdminException.unavailable("cannot connect to Kafka at " + bootstrap + ": " + rootMessage(e), e);
      }
    }
    return producer;
  }

  private AdminException unreachable(Throwable cause) {
    return AdminException.unavailable(KafkaClients.unreachable(bootstrap, timeout, cause), cause);
  }

  @Override
  public void close() {
    if (consumer != null) {
      consumer.close(CloseOptions.timeout(CLOSE));
      consumer = null;
    }
    if (producer != null) {
      producer.close(CLOSE);
      producer = null;
    }
    admin.close(CLOSE);
  }
}
