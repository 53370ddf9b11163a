package io.ringshift.protocol;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.MockConsumer;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;

/**
 * Reading a topic to its end, on a mock consumer and an injected time that moves a second per poll: progress is
 * the position, so a long run of aborted transactions' markers (the position moves, no record comes) is not
 * "nothing arrived".
 */
class ReadToEndTest {
  private static final TopicPartition TASKS = new TopicPartition("ring.tasks", 0);
  private static final Duration TIMEOUT = Duration.ofMillis(500);

  private final MockConsumer<String, byte[]> consumer = new MockConsumer<>("earliest");
  private final List<ConsumerRecord<String, byte[]>> read = new ArrayList<>();
  private long now;

  private long tick() {
    now += Duration.ofSeconds(1).toNanos();
    return now;
  }

  @Test
  void shouldKeepReadingWhileThePositionMovesWithoutRecords() {
    assignWithEnd(40);
    for (int i = 1; i <= 3; i++) {
      long position = 10L * i;
      consumer.schedulePollTask(() -> consumer.seek(TASKS, position)); // markers of aborted transactions
    }
    consumer.schedulePollTask(() -> consumer.addRecord(new ConsumerRecord<>(TASKS.topic(), 0, 39, "task", null)));

    ReadToEnd.read(consumer, read::add, TIMEOUT, this::tick, "ring.tasks");

    assertThat(read).extracting(ConsumerRecord::offset).containsExactly(39L);
    assertThat(consumer.position(TASKS)).isEqualTo(40);
  }

  @Test
  void shouldFailNamingThePositionsWhenNoPositionMoves() {
    assignWithEnd(40);

    assertThatThrownBy(() -> ReadToEnd.read(consumer, read::add, TIMEOUT, this::tick, "ring.tasks"))
        .isInstanceOf(IllegalStateException.class)
        .hasMessage("could not read ring.tasks to its end: no position moved for PT0.5S (positions {ring.tasks-0=0}, "
            + "end offsets {ring.tasks-0=40})");
  }

  private void assignWithEnd(long end) {
    consumer.assign(List.of(TASKS));
    consumer.updateBeginningOffsets(Map.of(TASKS, 0L));
    consumer.updateEndOffsets(Map.of(TASKS, end));
    consumer.seekToBeginning(List.of(TASKS));
  }
}
