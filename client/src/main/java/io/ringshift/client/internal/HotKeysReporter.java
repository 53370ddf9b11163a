package io.ringshift.client.internal;

import io.ringshift.protocol.RecordSerdes;
import io.ringshift.schemas.avro.HotKeyShare;
import io.ringshift.schemas.avro.HotKeysReport;
import java.nio.ByteBuffer;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Writes a client's hottest keys to {@code ring.hot-keys} every interval (key {@code <cluster>/<client id>}), so
 * that {@code ringshift status} can show a cluster's hot keys from all its reporting clients. Best effort: a report
 * that cannot be written is logged and the next one tried; nothing on the lookup path waits for it.
 */
public final class HotKeysReporter implements AutoCloseable {
  /** Keys per report. */
  public static final int KEYS = 20;
  private static final Logger LOG = LoggerFactory.getLogger(HotKeysReporter.class);

  private final HotKeySketch sketch;
  private final String clusterId;
  private final String clientId;
  private final String topic;
  private final Clock clock;
  private final KafkaProducer<String, byte[]> producer;
  private final ScheduledExecutorService timer;

  public HotKeysReporter(HotKeySketch sketch, String clusterId, String clientId, String topic, Duration interval,
      String bootstrapServers, Map<String, String> clientProperties, Clock clock) {
    this.sketch = sketch;
    this.clusterId = clusterId;
    this.clientId = clientId;
    this.topic = topic;
    this.clock = clock;
    Properties p = new Properties();
    // The client's extra properties carry its security settings; consumer-only ones are ignored with a warning.
    p.putAll(clientProperties);
    p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
    p.put(ProducerConfig.CLIENT_ID_CONFIG, "ringshift-hot-keys-" + clientId);
    p.put(ProducerConfig.ACKS_CONFIG, "1");
    p.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, (int) Math.min(interval.toMillis(), 10_000));
    this.producer = new KafkaProducer<>(p, new StringSerializer(), new ByteArraySerializer());
    this.timer = Executors.newSingleThreadScheduledExecutor(r -> {
      Thread t = new Thread(r, "ringshift-client-hot-keys-" + clusterId);
      t.setDaemon(true);
      return t;
    });
    timer.scheduleWithFixedDelay(this::report, interval.toMillis(), interval.toMillis(), TimeUnit.MILLISECONDS);
  }

  /** The report the next interval writes: the sketch's hottest {@link #KEYS} keys now. */
  public HotKeysReport report(long nowMillis) {
    long total = sketch.total();
    List<HotKeyShare> keys = new ArrayList<>();
    for (HotKeySketch.Entry e : sketch.top(KEYS)) {
      keys.add(new HotKeyShare(ByteBuffer.wrap(e.key()), total == 0 ? 0.0 : (double) e.count() / total,
          total == 0 ? 0.0 : (double) e.error() / total));
    }
    return HotKeysReport.newBuilder().setClusterId(clusterId).setClientId(clientId).setLookups(total)
        .setKeys(keys).setTimestampMillis(nowMillis).build();
  }

  private void report() {
    try {
      HotKeysReport report = report(clock.millis());
      if (report.getLookups() == 0) {
        return;
      }
      producer.send(new ProducerRecord<>(topic, clusterId + "/" + clientId,
          RecordSerdes.hotKeysReport().serialize(report)), (metadata, e) -> {
            if (e != null) {
              LOG.warn("cluster {}: could not report the hot keys of client {} to {}: {}", clusterId, clientId, topic,
                  e.toString());
            }
          });
    } catch (RuntimeException e) {
      LOG.warn("cluster {}: could not report the hot keys of client {} to {}: {}", clusterId, clientId, topic,
          e.toString());
    }
  }

  @Override
  public void close() {
    timer.shutdownNow();
    producer.close(Duration.ofSeconds(5));
  }
}
