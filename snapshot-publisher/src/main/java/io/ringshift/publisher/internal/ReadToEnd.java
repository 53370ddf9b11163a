package io.ringshift.publisher.internal;

import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.function.LongSupplier;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.TopicPartition;

/**
 * Reads every assigned partition of a consumer up to its end offset as of the call: with read_committed, the last
 * stable offset.
 *
 * <p>Progress is the consumer's position, not the records returned: a run of aborted transactions' records and
 * markers moves the position without returning a record, and must not count as "nothing arrived".
 */
final class ReadToEnd {
  private static final Duration POLL = Duration.ofMillis(100);

  private ReadToEnd() {}

  /**
   * Reads {@code consumer}'s partitions to their end offsets of now, handing every record to {@code handler}.
   *
   * @param timeout how long the positions may stand still before the end is reached; also the timeout of the
   *     end offsets request
   * @param nanoTime the time, on the scale of {@link System#nanoTime()}
   * @param what names the topics in the error message
   * @throws IllegalStateException when no position moves for {@code timeout} while the end is not reached
   */
  static void read(Consumer<String, byte[]> consumer, java.util.function.Consumer<ConsumerRecord<String, byte[]>>
      handler, Duration timeout, LongSupplier nanoTime, String what) {
    Map<TopicPartition, Long> ends = consumer.endOffsets(consumer.assignment(), timeout);
    Map<TopicPartition, Long> positions = positions(consumer, ends);
    long lastProgress = nanoTime.getAsLong();
    while (!reached(positions, ends)) {
      consumer.poll(POLL).forEach(handler);
      Map<TopicPartition, Long> now = positions(consumer, ends);
      if (!now.equals(positions)) {
        positions = now;
        lastProgress = nanoTime.getAsLong();
      } else if (nanoTime.getAsLong() - lastProgress > timeout.toNanos()) {
        throw new IllegalStateException("could not read " + what + " to its end: no position moved for "
            + timeout + " (positions " + positions + ", end offsets " + ends + ")");
      }
    }
  }

  private static Map<TopicPartition, Long> positions(Consumer<String, byte[]> consumer,
      Map<TopicPartition, Long> ends) {
    Map<TopicPartition, Long> out = new HashMap<>();
    for (TopicPartition tp : ends.keySet()) {
      out.put(tp, consumer.position(tp));
    }
    return out;
  }

  private static boolean reached(Map<TopicPartition, Long> positions, Map<TopicPartition, Long> ends) {
    for (Map.Entry<TopicPartition, Long> e : ends.entrySet()) {
      if (positions.get(e.getKey()) < e.getValue()) {
        return false;
      }
    }
    return true;
  }
}
