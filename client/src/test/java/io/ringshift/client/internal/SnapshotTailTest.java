package io.ringshift.client.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.MockConsumer;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.InterruptException;
import org.apache.kafka.common.errors.TimeoutException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class SnapshotTailTest {
  private static final String TOPIC = "ring.snapshots";
  private static final TopicPartition P0 = new TopicPartition(TOPIC, 0);
  private static final TopicPartition P1 = new TopicPartition(TOPIC, 1);

  private final MockConsumer<String, byte[]> consumer = new MockConsumer<>("earliest");
  private final Recorder recorder = new Recorder();
  private final SnapshotTail tail = new SnapshotTail(consumer, TOPIC, "c1", recorder, Duration.ofSeconds(1),
      Duration.ofMillis(10), Duration.ofSeconds(15), "mock");

  /** Records what the tail hands over, as "value/catchingUp" and "caught-up". */
  static class Recorder implements SnapshotTail.Handler {
    final List<String> calls = new CopyOnWriteArrayList<>();

    @Override
    public void onRecord(byte[] value, long timestampMillis, String origin, boolean catchingUp) {
      calls.add(new String(value, StandardCharsets.UTF_8) + "/" + (catchingUp ? "catching-up" : "live"));
    }

    @Override
    public void onCaughtUp() {
      calls.add("caught-up");
    }

    @Override
    public void onSynced(long token) {
      calls.add("synced-" + token);
    }

    @Override
    public long epoch() {
      return -1;
    }
  }

  private void topicWithTwoPartitions(long endOfP0, long endOfP1) {
    // Offsets first, partitions last: a tail already running (waitsForAMissingTopic) must not see the
    // partitions before the mock knows their offsets, which a real broker never shows.
    consumer.updateBeginningOffsets(Map.of(P0, 0L, P1, 0L));
    consumer.updateEndOffsets(Map.of(P0, endOfP0, P1, endOfP1));
    Node node = new Node(1, "localhost", 9092);
    consumer.updatePartitions(TOPIC, List.of(
        new PartitionInfo(TOPIC, 0, node, new Node[] {node}, new Node[] {node}),
        new PartitionInfo(TOPIC, 1, node, new Node[] {node}, new Node[] {node})));
  }

  private static ConsumerRecord<String, byte[]> record(TopicPartition tp, long offset, String key, String value) {
    return new ConsumerRecord<>(tp.topic(), tp.partition(), offset, key, value.getBytes(StandardCharsets.UTF_8));
  }

  @AfterEach
  void close() {
    tail.close();
  }

  @Test
  void handsOverTheClusterRecordsOfAllPartitionsThenCatchesUpOnceThenTails() {
    topicWithTwoPartitions(2, 1);
    consumer.schedulePollTask(() -> {
      consumer.addRecord(record(P0, 0, "c1", "a"));
      consumer.addRecord(record(P0, 1, "other-cluster", "x"));
      consumer.addRecord(record(P1, 0, "c1", "b"));
    });
    consumer.schedulePollTask(() -> consumer.addRecord(record(P1, 1, "c1", "c")));

    tail.start();

    await("the live record after catch-up").atMost(Duration.ofSeconds(10))
        .until(() -> recorder.calls.contains("c/live"));
    // Kafka orders records within a partition only; one cluster's records all live in one partition.
    assertThat(recorder.calls.subList(0, 2)).containsExactlyInAnyOrder("a/catching-up", "b/catching-up");
    assertThat(recorder.calls.subList(2, recorder.calls.size())).containsExactly("caught-up", "c/live");
  }

  @Test
  void syncsOnlyOnceItHasReadUpToTheEndOffsetsOfAfterTheRequest() {
    topicWithTwoPartitions(0, 0);
    tail.start();
    await("caught up").atMost(Duration.ofSeconds(10)).until(() -> recorder.calls.contains("caught-up"));

    // A snapshot was published before the sync is asked for, and reaches the tail only on a later poll.
    consumer.updateEndOffsets(Map.of(P0, 1L, P1, 0L));
    tail.requestSync(7);
    consumer.schedulePollTask(() -> { });
    consumer.schedulePollTask(() -> consumer.addRecord(record(P0, 0, "c1", "d")));

    await("synced").atMost(Duration.ofSeconds(10)).until(() -> recorder.calls.contains("synced-7"));
    assertThat(recorder.calls).containsExactly("caught-up", "d/live", "synced-7");
  }

  @Test
  void catchesUpAtOnceOnAnEmptyTopic() {
    topicWithTwoPartitions(0, 0);

    tail.start();

    await("caught up").atMost(Duration.ofSeconds(10)).until(() -> recorder.calls.contains("caught-up"));
    assertThat(recorder.calls).containsExactly("caught-up");
  }

  @Test
  void retriesAFailedOffsetsCall() {
    topicWithTwoPartitions(0, 0);
    consumer.setOffsetsException(new TimeoutException("broker unreachable"));

    tail.start();

    await("caught up after the retry").atMost(Duration.ofSeconds(10))
        .until(() -> recorder.calls.contains("caught-up"));
  }

  @Test
  void waitsForAMissingTopic() {
    tail.start();
    await("the tail asked for the topic's partitions").atMost(Duration.ofSeconds(10))
        .until(() -> consumer.assignment().isEmpty() && !recorder.calls.contains("caught-up"));

    topicWithTwoPartitions(0, 0);

    await("caught up once the topic exists").atMost(Duration.ofSeconds(10))
        .until(() -> recorder.calls.contains("caught-up"));
    assertThat(consumer.assignment()).containsExactlyInAnyOrder(P0, P1);
  }

  @Test
  void goesOnWithNewRecordsWhenTheHandlerFailsAtTheEndOfTheCatchUp() {
    Recorder failing = new Recorder() {
      @Override
      public void onCaughtUp() {
        super.onCaughtUp();
        throw new IllegalStateException("the routing table could not be built");
      }
    };
    SnapshotTail failingTail = new SnapshotTail(consumer, TOPIC, "c1", failing, Duration.ofSeconds(1),
        Duration.ofMillis(10), Duration.ofSeconds(15), "mock");
    topicWithTwoPartitions(1, 0);
    consumer.schedulePollTask(() -> consumer.addRecord(record(P0, 0, "c1", "a")));
    consumer.schedulePollTask(() -> consumer.addRecord(record(P0, 1, "c1", "b")));

    try {
      failingTail.start();

      await("the live record after the failed catch-up").atMost(Duration.ofSeconds(10))
          .until(() -> failing.calls.contains("b/live"));
      assertThat(failing.calls).containsExactly("a/catching-up", "caught-up", "b/live");
    } finally {
      failingTail.close();
    }
  }

  @Test
  void stopsAndClosesTheConsumerWhenItsThreadIsInterrupted() {
    topicWithTwoPartitions(0, 0);
    // Kafka throws InterruptException from a call on an interrupted thread (and sets the thread's flag).
    consumer.schedulePollTask(() -> {
      throw new InterruptException("interrupted");
    });

    tail.start();

    await("the tail stops and closes its consumer").atMost(Duration.ofSeconds(10)).until(consumer::closed);
  }

  @Test
  void closesTheConsumer() {
    topicWithTwoPartitions(0, 0);
    tail.start();

    tail.close();

    assertThat(consumer.closed()).isTrue();
  }

  @Test
  void closesTheConsumerOfATailThatNeverStarted() {
    tail.close();

    assertThat(consumer.closed()).isTrue();
  }
}
