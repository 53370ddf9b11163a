package io.ringshift.cli.internal;

import io.ringshift.cli.KafkaUnavailableException;
import io.ringshift.protocol.ReadToEnd;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import org.apache.kafka.clients.CommonClientConfigs;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

/**
 * How the commands that read the control plane's topics reach Kafka: client settings that keep every call within
 * the command's {@code --timeout}, a consumer that reads committed records by hand-assigned partitions, reading
 * partitions to fixed end offsets, and the operator-facing messages when Kafka does not answer.
 */
public final class KafkaAccess {
  private KafkaAccess() {}

  /** Timeouts short enough that no call outlives {@code timeout} by much. */
  public static Properties clientProperties(String bootstrap, Duration timeout, String clientId) {
    int ms = (int) timeout.toMillis();
    Properties p = new Properties();
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
   * @throws KafkaUnavailableException when the client cannot be created (an unresolvable bootstrap address)
   */
  public static KafkaConsumer<byte[], byte[]> consumer(String bootstrap, Duration timeout, String clientId) {
    Properties p = clientProperties(bootstrap, timeout, clientId);
    p.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, IsolationLevel.READ_COMMITTED.toString());
    p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
    p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
    p.put(ConsumerConfig.ALLOW_AUTO_CREATE_TOPICS_CONFIG, false);
    try {
      return new KafkaConsumer<>(p, new ByteArrayDeserializer(), new ByteArrayDeserializer());
    } catch (KafkaException e) {
      throw new KafkaUnavailableException("cannot connect to Kafka at " + bootstrap + ": " + rootMessage(e), e);
    }
  }

  /**
   * Assigns {@code consumer} the partitions of {@code end} and reads each from the beginning to its end offset
   * ({@link ReadToEnd#fromBeginning}).
   *
   * @param reading what is read, for the error message ({@code reading ring.tasks from Kafka at host:9092})
   * @throws KafkaUnavailableException when the read makes no progress for {@code timeout}
   * @throws org.apache.kafka.common.errors.TimeoutException when a position lookup times out
   */
  public static List<ConsumerRecord<byte[], byte[]>> readToEnd(KafkaConsumer<byte[], byte[]> consumer,
      Map<TopicPartition, Long> end, Duration timeout, String reading) {
    try {
      return ReadToEnd.fromBeginning(consumer, end, timeout, reading);
    } catch (IllegalStateException e) {
      throw new KafkaUnavailableException(e.getMessage(), e);
    }
  }

  /** The error for a broker that did not answer within {@code timeout}. */
  public static KafkaUnavailableException unreachable(String bootstrap, Duration timeout, Throwable cause) {
    return new KafkaUnavailableException(String.format(Locale.ROOT,
        "no answer from Kafka at %s within %d s (is the broker running there? `ringshift dev` starts one): %s",
        bootstrap, timeout.toSeconds(), rootMessage(cause)), cause);
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
