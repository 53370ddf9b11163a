package io.ringshift.protocol;

import java.time.Duration;
import java.util.Locale;
import java.util.Properties;
import org.apache.kafka.clients.CommonClientConfigs;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

/**
 * Kafka clients for tools that read and write the control plane's topics within a deadline (the admin client,
 * audit, the command line): settings that keep every call within the tool's timeout, a consumer that reads
 * committed records by hand-assigned partitions, and the operator-facing message when Kafka does not answer.
 */
public final class KafkaClients {
  private KafkaClients() {}

  /**
   * {@code properties} (the operator's security settings), then timeouts short enough that no call outlives {@code
   * timeout} by much.
   */
  public static Properties boundedProperties(String bootstrap, KafkaProperties properties, Duration timeout,
      String clientId) {
    int ms = (int) timeout.toMillis();
    Properties p = properties.applyTo(new Properties());
    p.put(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    p.put(CommonClientConfigs.CLIENT_ID_CONFIG, clientId);
    p.put(CommonClientConfigs.REQUEST_TIMEOUT_MS_CONFIG, ms);
    p.put(CommonClientConfigs.DEFAULT_API_TIMEOUT_MS_CONFIG, ms);
    p.put(CommonClientConfigs.SOCKET_CONNECTION_SETUP_TIMEOUT_MS_CONFIG, (long) Math.min(ms, 10_000));
    p.put(CommonClientConfigs.SOCKET_CONNECTION_SETUP_TIMEOUT_MAX_MS_CONFIG, (long) Math.min(ms, 10_000));
    p.put(CommonClientConfigs.RECONNECT_BACKOFF_MAX_MS_CONFIG, 1000L);
    return p;
  }

  /**
   * A consumer of committed records ({@code read_committed}) for partitions assigned by hand: no group, nothing
   * committed, no topic created by reading it.
   *
   * @throws org.apache.kafka.common.KafkaException when the client cannot be created (an unresolvable address)
   */
  public static KafkaConsumer<byte[], byte[]> readCommittedConsumer(String bootstrap, KafkaProperties properties,
      Duration timeout, String clientId) {
    Properties p = boundedProperties(bootstrap, properties, timeout, clientId);
    p.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, IsolationLevel.READ_COMMITTED.toString());
    p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
    p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
    p.put(ConsumerConfig.ALLOW_AUTO_CREATE_TOPICS_CONFIG, false);
    return new KafkaConsumer<>(p, new ByteArrayDeserializer(), new ByteArrayDeserializer());
  }

  /** What to tell an operator when the brokers at {@code bootstrap} did not answer within {@code timeout}. */
  public static String unreachable(String bootstrap, Duration timeout, Throwable cause) {
    return String.format(Locale.ROOT,
        "no answer from Kafka at %s within %d s (is the broker running there? `ringshift dev` starts one): %s",
        bootstrap, timeout.toSeconds(), rootMessage(cause));
  }

  /** The message of the innermost cause: what an operator can act on. */
  public static String rootMessage(Throwable e) {
    Throwable root = e;
    while (root.getCause() != null && root.getCause() != root) {
      root = root.getCause();
    }
    String message = root.getMessage() == null ? root.getClass().getSimpleName() : root.getMessage();
    return message.strip();
  }
}
