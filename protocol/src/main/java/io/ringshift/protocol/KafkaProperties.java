package io.ringshift.protocol;

import java.io.IOException;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;

/**
 * Kafka client properties an operator gives every client of a role (its producers, consumers, admin clients and
 * Kafka Streams): how to reach and authenticate to the brokers, such as {@code security.protocol}, {@code
 * sasl.*} and {@code ssl.*}. They are applied first; each client then sets what it needs on top (its serializers,
 * group, transactions, timeouts).
 *
 * <p>The keys a role depends on for correctness are refused here rather than silently overridden later: {@link
 * #RESERVED} (the bootstrap servers come from their own option, the rest is what exactly-once publishing, fenced
 * reads and the workers' consumer group rely on).
 *
 * @param values the properties, by key; never null, immutable
 */
public record KafkaProperties(Map<String, String> values) {
  /** The keys ringshift sets on each client itself, with why an operator may not. */
  public static final Map<String, String> RESERVED = Map.ofEntries(
      Map.entry("bootstrap.servers", "give the brokers with --bootstrap (or RINGSHIFT_BOOTSTRAP)"),
      Map.entry("key.serializer", "each topic's serializers are fixed by its schema"),
      Map.entry("value.serializer", "each topic's serializers are fixed by its schema"),
      Map.entry("key.deserializer", "each topic's deserializers are fixed by its schema"),
      Map.entry("value.deserializer", "each topic's deserializers are fixed by its schema"),
      Map.entry("default.key.serde", "the orchestrator passes every serde explicitly"),
      Map.entry("default.value.serde", "the orchestrator passes every serde explicitly"),
      Map.entry("group.id", "a role's consumer group is its own option (--group-id, --application-id)"),
      Map.entry("group.instance.id", "a worker's static membership comes from --worker-id"),
      Map.entry("group.protocol", "workers use the classic protocol, whose static members take their tasks back at once"),
      Map.entry("partition.assignment.strategy", "workers rebalance cooperatively, so running tasks keep running"),
      Map.entry("application.id", "the orchestrator's application id is --application-id"),
      Map.entry("transactional.id", "the publisher's transactional id is --transactional-id"),
      Map.entry("isolation.level", "every reader of the control plane reads committed records only"),
      Map.entry("enable.auto.commit", "positions are committed with the work they belong to"),
      Map.entry("enable.idempotence", "exactly-once writes need the idempotent producer"),
      Map.entry("acks", "a control-plane record counts once every in-sync replica has it (acks=all)"),
      Map.entry("processing.guarantee", "the orchestrator runs exactly_once_v2"),
      Map.entry("state.dir", "the orchestrator's state directory is --state-dir"),
      Map.entry("auto.offset.reset", "every role reads its topics from the beginning"),
      Map.entry("allow.auto.create.topics", "reading a topic must never create it"));

  /** Kafka Streams' prefixes for the properties of one of its clients ({@code producer.acks}). */
  private static final List<String> CLIENT_PREFIXES = List.of("main.consumer.", "restore.consumer.",
      "global.consumer.", "consumer.", "producer.", "admin.");

  private static final KafkaProperties NONE = new KafkaProperties(Map.of());

  /** @throws IllegalArgumentException naming a blank or reserved key, or a null value */
  public KafkaProperties {
    Objects.requireNonNull(values, "values");
    TreeMap<String, String> copy = new TreeMap<>();
    values.forEach((key, value) -> {
      if (key == null || key.isBlank()) {
        throw new IllegalArgumentException("a Kafka client property had a blank name");
      }
      String name = key.strip();
      String why = RESERVED.get(unprefixed(name));
      if (why != null) {
        throw new IllegalArgumentException("Kafka client property " + name + " is set by ringshift itself: " + why);
      }
      if (value == null) {
        throw new IllegalArgumentException("Kafka client property " + name + " had no value");
      }
      copy.put(name, value.strip());
    });
    values = Collections.unmodifiableMap(copy);
  }

  private static String unprefixed(String name) {
    for (String prefix : CLIENT_PREFIXES) {
      if (name.startsWith(prefix)) {
        return name.substring(prefix.length());
      }
    }
    return name;
  }

  /** No properties: the clients' defaults (plaintext). */
  public static KafkaProperties none() {
    return NONE;
  }

  public static KafkaProperties of(Map<String, String> values) {
    return values.isEmpty() ? NONE : new KafkaProperties(values);
  }

  /**
   * Reads a Java properties file ({@code key=value} lines, {@code #} comments), as Kafka's own tools take with
   * {@code --command-config}.
   *
   * @throws IllegalArgumentException naming the file when it cannot be read, or the key that is not allowed
   */
  public static KafkaProperties load(Path file) {
    Properties loaded = new Properties();
    try (Reader in = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
      loaded.load(in);
    } catch (NoSuchFileException e) {
      throw new IllegalArgumentException("Kafka client properties file " + file + " does not exist");
    } catch (IOException | IllegalArgumentException e) {
      throw new IllegalArgumentException("cannot read Kafka client properties file " + file + ": " + e.getMessage(),
          e);
    }
    TreeMap<String, String> values = new TreeMap<>();
    for (String name : loaded.stringPropertyNames()) {
      values.put(name, loaded.getProperty(name));
    }
    try {
      return of(values);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(file + ": " + e.getMessage(), e);
    }
  }

  /** Puts every property into {@code target} (before the client sets its own) and returns it. */
  public Properties applyTo(Properties target) {
    target.putAll(values);
    return target;
  }

  /** The keys, without their values (which may hold secrets): for logs and errors. */
  public Set<String> names() {
    return values.keySet();
  }

  /** Names only: a {@code sasl.jaas.config} holds a password and must not reach a log. */
  @Override
  public String toString() {
    return "KafkaProperties" + names();
  }
}
