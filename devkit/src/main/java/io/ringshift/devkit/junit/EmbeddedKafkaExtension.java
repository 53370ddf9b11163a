package io.ringshift.devkit.junit;

import io.ringshift.devkit.EmbeddedKafka;
import io.ringshift.devkit.internal.TopicReader;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.UnaryOperator;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.Deserializer;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionConfigurationException;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * One {@link EmbeddedKafka} broker per test class, for {@code *IT} classes:
 *
 * <pre>{@code
 * class OrchestratorIT {
 *   @RegisterExtension
 *   static final EmbeddedKafkaExtension KAFKA = new EmbeddedKafkaExtension();
 *
 *   @Test
 *   void shouldPlanAJoin() {
 *     String input = KAFKA.topic("ring.membership");        // unique to this test
 *     KAFKA.createTopics(input);
 *     Properties streams = new Properties();
 *     streams.put("application.id", KAFKA.applicationId()); // unique to this test
 *     streams.put("bootstrap.servers", KAFKA.bootstrapServers());
 *     ...
 *     List<ConsumerRecord<byte[], byte[]>> out =
 *         KAFKA.consume(output, 1, Duration.ofSeconds(30), IsolationLevel.READ_COMMITTED);
 *   }
 * }
 * }</pre>
 *
 * <p>Register it on a {@code static} field: the broker starts before the first test of the class and stops
 * (deleting its temporary data) after the last one, {@code @Nested} classes included. Tests of a class share
 * the broker, so each test takes its topic names and application id from {@link #topic(String)} and
 * {@link #applicationId()}, which differ for every test method and every repetition of one.
 *
 * <p>The helpers are meant for test methods that run one at a time (JUnit's default within a class).
 */
public final class EmbeddedKafkaExtension
    implements BeforeAllCallback, AfterAllCallback, BeforeEachCallback, AfterEachCallback {
  private static final int MAX_ID_LENGTH = 100;

  private final UnaryOperator<EmbeddedKafka.Builder> configuration;
  private final AtomicInteger testCount = new AtomicInteger();
  private EmbeddedKafka kafka;
  private int classDepth;
  private volatile String testId;

  /** A broker on a free port with a temporary data directory. */
  public EmbeddedKafkaExtension() {
    this(UnaryOperator.identity());
  }

  /**
   * A broker configured by {@code configuration}, for example
   * {@code new EmbeddedKafkaExtension(b -> b.brokerProperty("log.retention.ms", "60000"))}.
   */
  public EmbeddedKafkaExtension(UnaryOperator<EmbeddedKafka.Builder> configuration) {
    this.configuration = Objects.requireNonNull(configuration, "configuration");
  }

  @Override
  public void beforeAll(ExtensionContext context) {
    // A @Nested class runs the callbacks again inside its enclosing class: keep the broker it already has.
    if (classDepth++ == 0) {
      kafka = configuration.apply(EmbeddedKafka.builder()).build().start();
    }
  }

  @Override
  public void afterAll(ExtensionContext context) {
    if (--classDepth == 0 && kafka != null) {
      kafka.close();
      kafka = null;
    }
  }

  @Override
  public void beforeEach(ExtensionContext context) {
    if (kafka == null) {
      throw new ExtensionConfigurationException("EmbeddedKafkaExtension has no broker: register it on a static "
          + "field (@RegisterExtension static final EmbeddedKafkaExtension KAFKA = ...) so that one broker "
          + "serves the whole test class");
    }
    String name = context.getRequiredTestClass().getSimpleName() + "-" + context.getRequiredTestMethod().getName();
    testId = sanitize(name) + "-" + testCount.incrementAndGet();
  }

  @Override
  public void afterEach(ExtensionContext context) {
    testId = null;
  }

  /** The running broker of this test class. */
  public EmbeddedKafka kafka() {
    if (kafka == null) {
      throw new IllegalStateException("the broker runs only between the class's @BeforeAll and @AfterAll; "
          + "is EmbeddedKafkaExtension registered on a static field?");
    }
    return kafka;
  }

  /** {@code 127.0.0.1:<port>} of this class's broker. */
  public String bootstrapServers() {
    return kafka().bootstrapServers();
  }

  /**
   * An id unique to the running test, such as {@code OrchestratorIT-shouldPlanAJoin-3}: use it as the Streams
   * {@code application.id}, a consumer {@code group.id} or a transactional id prefix. Stable within the test.
   *
   * @throws IllegalStateException outside a test method (in {@code @BeforeAll}, for example)
   */
  public String applicationId() {
    String id = testId;
    if (id == null) {
      throw new IllegalStateException("applicationId() and topic() name the running test; call them from a "
          + "test method or @BeforeEach/@AfterEach, not from @BeforeAll/@AfterAll");
    }
    return id;
  }

  /** {@link #applicationId()} followed by a dot: prefix every topic of the test with it. */
  public String topicPrefix() {
    return applicationId() + ".";
  }

  /** {@code name} prefixed with {@link #topicPrefix()}, for example {@code OrchestratorIT-shouldPlan-3.ring.tasks}. */
  public String topic(String name) {
    return topicPrefix() + Objects.requireNonNull(name, "name");
  }

  /** Creates each topic with one partition and one replica on this class's broker. */
  public void createTopics(String... topics) {
    kafka().createTopics(topics);
  }

  /** {@link #consume(String, int, Duration, IsolationLevel, Deserializer, Deserializer)} as raw bytes. */
  public List<ConsumerRecord<byte[], byte[]>> consume(String topic, int count, Duration timeout,
      IsolationLevel isolation) {
    return consume(topic, count, timeout, isolation, new ByteArrayDeserializer(), new ByteArrayDeserializer());
  }

  /**
   * Reads {@code topic} from its beginning until at least {@code count} records have arrived, and returns every
   * record read by then (so a test can assert that there are not more). Uses a new consumer group that commits
   * nothing, so each call reads the whole topic again. A topic that does not exist yet is waited for.
   *
   * <p>With {@link IsolationLevel#READ_COMMITTED} only records of committed transactions (and
   * non-transactional records) are returned: what an {@code exactly_once_v2} application has really
   * published.
   *
   * @throws AssertionError if fewer than {@code count} records arrive within {@code timeout}; the message
   *     names the topic, the isolation level and the records that did arrive
   */
  public <K, V> List<ConsumerRecord<K, V>> consume(String topic, int count, Duration timeout,
      IsolationLevel isolation, Deserializer<K> keys, Deserializer<V> values) {
    return TopicReader.read(bootstrapServers(), topic, count, timeout, isolation, keys, values);
  }

  private static String sanitize(String name) {
    // Topic names and application ids allow [a-zA-Z0-9._-]; '.' separates the prefix from the topic name.
    String safe = name.replaceAll("[^A-Za-z0-9-]+", "-");
    return safe.length() > MAX_ID_LENGTH ? safe.substring(0, MAX_ID_LENGTH) : safe;
  }
}
