package io.ringshift.protocol;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.LongSupplier;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.TopicPartition;

/**
 * Reads partitions up to fixed end offsets: with {@code read_committed}, the last stable offsets. Every role that
 * rebuilds its view from a control topic (the publisher's history, audit, the admin client's reads) reads this way,
 * so a read never waits for records that do not exist yet.
 *
 * <p>Progress is the consumer's position, not the records returned: a run of aborted transactions' records and
 * markers moves the position without returning a record, and must not count as "nothing arrived". A read gives up
 * only when no position moves for the whole timeout.
 */
public final class ReadToEnd {
  private static final Duration POLL = Duration.ofMillis(100);

  private ReadToEnd() {}

  /**
   * Reads {@code consumer}'s assigned partitions, from their current positions, to their end offsets of now,
   * handing every record polled to {@code handler}.
   *
   * @param timeout how long the positions may stand still before the end is reached; also the timeout of the
   *     end offsets request
   * @param nanoTime the time, on the scale of {@link System#nanoTime()}
   * @param what names the topics in the error message
   * @throws IllegalStateException when no position moves for {@code timeout} while the end is not reached
   */
  public static <K, V> void read(Consumer<K, V> consumer, java.util.function.Consumer<ConsumerRecord<K, V>> handler,
      Duration timeout, LongSupplier nanoTime, String what) {
    readTo(consumer, consumer.endOffsets(consumer.assignment(), timeout), handler, timeout, nanoTime, what);
  }

  /**
   * Assigns {@code consumer} the partitions of {@code ends}, seeks them to the beginning and reads each to its end
   * offset: every record below it, in the order polled (offset order within a partition).
   *
   * @throws IllegalStateException when no position moves for {@code timeout} while the end is not reached
   * @throws org.apache.kafka.common.errors.TimeoutException when a position lookup times out
   */
  public static <K, V> List<ConsumerRecord<K, V>> fromBeginning(Consumer<K, V> consumer,
      Map<TopicPartition, Long> ends, Duration timeout, String what) {
    consumer.assign(ends.keySet());
    consumer.seekToBeginning(ends.keySet());
    List<ConsumerRecord<K, V>> read = new ArrayList<>();
    readTo(consumer, ends, r -> {
      if (r.offset() < ends.get(new TopicPartition(r.topic(), r.partition()))) {
        read.add(r);
      }
    }, timeout, System::nanoTime, what);
    return read;
  }

  private static <K, V> void readTo(Consumer<K, V> consumer, Map<TopicPartition, Long> ends,
      java.util.function.Consumer<ConsumerRecord<K, V>> handler, Duration timeout, LongSupplier nanoTime,
      String what) {
    Map<TopicPartition, Long> positions = positions(consumer, ends, timeout);
    long lastProgress = nanoTime.getAsLong();
    while (!reached(positions, ends)) {
      consumer.poll(POLL).forEach(handler);
      Map<TopicPartition, Long> now = positions(consumer, ends, timeout);
      if (!now.equals(positions)) {
        positions = now;
        lastProgress = nanoTime.getAsLong();
      } else if (nanoTime.getAsLong() - lastProgress > timeout.toNanos()) {
        throw new IllegalStateException("could not read " + what + " to its end: no position moved for "
            + timeout + " (positions " + positions + ", end offsets " + ends + ")");
      }
    }
  }

  private static Map<TopicPartition, Long> positions(Consumer<?, ?> consumer, Map<TopicPartition, Long> ends,
      Duration timeout) {
    Map<TopicPartition, Long> out = new HashMap<>();
    for (TopicPartition tp : ends.keySet()) {
      out.put(tp, consumer.position(tp, timeout));
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
