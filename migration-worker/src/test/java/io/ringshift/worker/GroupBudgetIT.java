package io.ringshift.worker;

import static io.ringshift.worker.ItKafka.task;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.ringshift.devkit.junit.EmbeddedKafkaExtension;
import io.ringshift.ring.RingRange;
import io.ringshift.schemas.avro.RangeCopyTask;
import io.ringshift.schemas.avro.TaskKind;
import io.ringshift.schemas.avro.TaskState;
import io.ringshift.schemas.avro.TaskStatus;
import io.ringshift.schemas.avro.WorkerBudgets;
import io.ringshift.storage.Entry;
import io.ringshift.worker.internal.StoreFixture;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.stream.Collectors;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * A group budget holds for the whole group (docs/worker.md, "Group budgets"): three workers of one group copy six
 * ranges of one source to three targets, each worker with no limit of its own (and caps that let it run all its
 * tasks at once, however the tasks' partitions fall among the workers), under a budget for the source set
 * on {@code ring.worker-budgets}. The bytes all targets applied per second, measured over a window after the
 * start-up burst, stay within 10% of the budget; then the budget is halved while they copy, and the next window
 * stays within 10% of the new one. Without the group budget the three workers would read three times a
 * per-worker limit.
 */
class GroupBudgetIT {
  @RegisterExtension static final EmbeddedKafkaExtension KAFKA = new EmbeddedKafkaExtension();

  private static final long BUDGET = 3L << 20;
  private static final Duration SETTLE = Duration.ofSeconds(4);
  private static final Duration WINDOW = Duration.ofSeconds(8);

  @TempDir Path dir;
  private StoreFixture nodes;
  private final List<MigrationWorker> workers = new ArrayList<>();
  /** Every apply to a target: (nanoTime, bytes). */
  private final ConcurrentLinkedQueue<long[]> applied = new ConcurrentLinkedQueue<>();

  @AfterEach
  void tearDown() {
    workers.forEach(MigrationWorker::close);
    if (nodes != null) {
      nodes.close();
    }
  }

  @Test
  void shouldHoldASourcesBudgetForThreeWorkersTogetherAndFollowALiveChange() {
    nodes = new StoreFixture(dir.resolve("nodes"));
    StoreFixture.Node source = nodes.node("node-a");
    source.fill("k", 80_000, 1000);
    for (String target : List.of("node-t1", "node-t2", "node-t3")) {
      nodes.node(target).onApplied(entries ->
          applied.add(new long[] {System.nanoTime(), entries.stream().mapToLong(Entry::size).sum()}));
    }
    try (ItKafka kafka = new ItKafka(KAFKA.bootstrapServers(), KAFKA.topicPrefix());
        KafkaProducer<String, WorkerBudgets> budgets = budgetProducer(kafka)) {
      String group = KAFKA.applicationId() + "-workers";
      setBudget(budgets, kafka, group, BUDGET);
      for (int i = 1; i <= 3; i++) {
        WorkerConfig config = WorkerConfig.of(KAFKA.bootstrapServers(), "worker-" + i, NodeDirectory.empty())
            .withTopics(kafka.topics).withGroupId(group).withLimits(Limits.unlimited().withCaps(8, 8, 8));
        workers.add(new MigrationWorker(config, nodes.stores(), Clock.systemUTC()).start());
      }
      List<RangeCopyTask> tasks = new ArrayList<>();
      List<RingRange> pieces = new ArrayList<>(RingRange.of(0, Long.MAX_VALUE).split(3));
      pieces.addAll(RingRange.of(Long.MAX_VALUE, 0).split(3));
      for (int i = 0; i < pieces.size(); i++) {
        tasks.add(task(TaskKind.COPY, 2, pieces.get(i), List.of("node-a"), "node-t" + (i % 3 + 1)));
      }
      kafka.emit(tasks.toArray(RangeCopyTask[]::new));
      await("every task copying").atMost(Duration.ofSeconds(60)).until(() -> tasks.stream().allMatch(t ->
          kafka.statuses(t.getTaskId()).stream().anyMatch(s -> s.getState() == TaskState.COPYING)));

      double first = rateOver(SETTLE, WINDOW);
      Set<String> copying = kafka.statuses().stream().filter(s -> s.getState() == TaskState.COPYING)
          .map(TaskStatus::getWorkerId).collect(Collectors.toSet());

      setBudget(budgets, kafka, group, BUDGET / 2);
      double second = rateOver(SETTLE, WINDOW);

      System.out.printf(Locale.ROOT, "GroupBudgetIT: workers copying %s; source budget %.1f MiB/s: %.2f MiB/s "
              + "(%+.1f%%); changed live to %.1f MiB/s: %.2f MiB/s (%+.1f%%)%n", copying, BUDGET / 1048576.0,
          first / 1048576, 100 * (first / BUDGET - 1), BUDGET / 2 / 1048576.0, second / 1048576,
          100 * (second / (BUDGET / 2.0) - 1));
      assertThat(copying).as("workers of the group copying from the source").hasSizeGreaterThan(1);
      assertThat(first).as("bytes/s the group read from node-a").isBetween(BUDGET * 0.9, BUDGET * 1.1);
      assertThat(second).as("bytes/s after the budget was halved").isBetween(BUDGET / 2 * 0.9, BUDGET / 2 * 1.1);
    }
  }

  /** The bytes per second the targets applied over {@code window}, starting {@code settle} from now. */
  private double rateOver(Duration settle, Duration window) {
    long from = System.nanoTime() + settle.toNanos();
    long to = from + window.toNanos();
    await("the measuring window ends").atMost(settle.plus(window).plusSeconds(10)).pollInterval(Duration.ofMillis(100))
        .until(() -> System.nanoTime() >= to);
    long bytes = applied.stream().filter(a -> a[0] >= from && a[0] < to).mapToLong(a -> a[1]).sum();
    return bytes * 1e9 / (to - from);
  }

  private static KafkaProducer<String, WorkerBudgets> budgetProducer(ItKafka kafka) {
    Properties p = new Properties();
    p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, KAFKA.bootstrapServers());
    return new KafkaProducer<>(p, new StringSerializer(), kafka.topics.workerBudgets().valueSerde().serializer());
  }

  private static void setBudget(KafkaProducer<String, WorkerBudgets> producer, ItKafka kafka, String group,
      long perSource) {
    WorkerBudgets record = WorkerBudgets.newBuilder().setGroupId(group).setPerSourceBytesPerSecond(perSource)
        .setSourceBytesPerSecond(Map.of()).setPerZoneLinkBytesPerSecond(0).setZoneLinkBytesPerSecond(Map.of())
        .setTimestampMillis(System.currentTimeMillis()).build();
    producer.send(new ProducerRecord<>(kafka.topics.workerBudgets().name(), group, record));
    producer.flush();
  }
}
