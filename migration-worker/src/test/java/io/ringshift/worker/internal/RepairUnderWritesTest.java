package io.ringshift.worker.internal;

import static io.ringshift.worker.internal.Harness.fenceRequested;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.ringshift.ring.RingRange;
import io.ringshift.schemas.avro.RangeCopyTask;
import io.ringshift.schemas.avro.TaskKind;
import io.ringshift.schemas.avro.TaskState;
import io.ringshift.storage.Entry;
import io.ringshift.storage.RoutedWriter;
import io.ringshift.storage.Routing;
import io.ringshift.storage.Store;
import io.ringshift.storage.StoreException;
import io.ringshift.worker.Limits;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.HashMap;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A REPAIR after a failure epoch F, under a live writer routing by F: the repair's target is a filling replica of F,
 * so the writer sends every write to the surviving replica (the source) and to the target, as
 * {@link RoutedWriter} does, and a write is acknowledged only when both applied it. The task fences at F + 1; from
 * its fence on, writes routed by F are refused (and, since F + 1 is not published here, never acknowledged). The
 * task must reach VERIFIED with the target holding exactly the source's contents, and every write acknowledged on
 * both. (It used to fence only the sources: the target kept applying F-epoch writes the source refused, the
 * digests differed, and the task stayed BLOCKED for good, with the range fenced.)
 */
class RepairUnderWritesTest {
  private static final long FAILURE_EPOCH = 5;
  private static final RingRange RANGE = RingRange.of(0, Long.MAX_VALUE);

  @TempDir Path dir;

  @Test
  void shouldVerifyARepairWhileClientsOfTheFailureEpochWriteToItsTarget() throws Exception {
    repairUnderWrites(3000, 200, Harness.FAST);
  }

  /**
   * The same with a range of about 8 MB copied in bulk loads of 4 MiB: the target takes the writer's writes while
   * it is loaded, so it may ingest a chunk (no key of it in between yet) or write it (a client's key or a cleared
   * key's deletion in between), and must end with the source's contents either way.
   */
  @Test
  void shouldVerifyARepairLoadedInBulkWhileClientsWriteToItsTarget() throws Exception {
    repairUnderWrites(1000, 16 * 1024, Harness.FAST.withBatch(256 * 1024, 1000)
        .withLoadBytes(io.ringshift.worker.TaskTuning.MIN_LOAD_BYTES));
  }

  private void repairUnderWrites(int keys, int valueBytes, io.ringshift.worker.TaskTuning tuning) throws Exception {
    long seed = Long.getLong("ringshift.seed", System.nanoTime());
    System.out.printf("RepairUnderWritesTest: seed %d (replay: -Dringshift.seed=%d)%n", seed, seed);
    Random random = new Random(seed);
    try (StoreFixture nodes = new StoreFixture(dir);
        Harness h = new Harness(nodes.stores(), Limits.unlimited().withRates(0, 4 << 20), tuning,
            Clock.systemUTC(), Duration.ZERO)) {
      StoreFixture.Node source = nodes.node("node-s");
      StoreFixture.Node target = nodes.node("node-t");
      source.fill("before", keys, valueBytes);
      // The target first, as in preference order a filling replica may well be: it applies a write before the
      // source refuses it.
      Routing byFailureEpoch = new FixedRouting(new Routing.Route(FAILURE_EPOCH, List.of("node-t", "node-s")));
      RoutedWriter writer = RoutedWriter.create(byFailureEpoch, id -> (Store) nodes.stores().store(id))
          .withEpochWait(Duration.ZERO);
      Load load = new Load(writer, new Random(random.nextLong()));
      Thread thread = new Thread(load, "writer");
      thread.start();
      try {
        RangeCopyTask task = Harness.task(TaskKind.REPAIR, FAILURE_EPOCH + 1, RANGE, List.of("node-s"), "node-t");
        TaskRun run = h.run(task);
        h.awaitState(task.getTaskId(), TaskState.CAUGHT_UP);
        long atCaughtUp = load.acknowledged.get();
        await("the writer goes on while the task tails the feed").atMost(Harness.WAIT)
            .until(() -> load.acknowledged.get() > atCaughtUp + 300);
        run.update(fenceRequested(task));
        try {
          h.awaitState(task.getTaskId(), TaskState.VERIFIED);
        } catch (org.awaitility.core.ConditionTimeoutException e) {
          List<io.ringshift.schemas.avro.TaskStatus> seen = h.statuses(task.getTaskId());
          throw new AssertionError("the repair did not verify; its last status: " + seen.get(seen.size() - 1), e);
        }
        await("writes routed by the failure epoch are refused").atMost(Harness.WAIT)
            .until(() -> load.refused.get() > 0);
      } finally {
        load.stop.set(true);
        thread.join();
      }
      assertThat(load.failure).as("the writer's own failure").isNull();

      assertThat(target.contents(RANGE)).as("the target holds the source's contents").isEqualTo(source.contents(RANGE));
      int checked = 0;
      for (var e : load.latest.entrySet()) {
        if (load.uncertain.contains(e.getKey())) {
          continue; // a later write was refused on one replica: either value may stand
        }
        byte[] key = e.getKey().getBytes(StandardCharsets.UTF_8);
        for (StoreFixture.Node node : List.of(source, target)) {
          assertThat(node.get(key).map(v -> HexFormat.of().formatHex(v)))
              .as("acknowledged key %s on %s", e.getKey(), node.id).isEqualTo(e.getValue());
        }
        checked++;
      }
      System.out.printf("  %d writes acknowledged, %d refused, %d keys checked on both replicas; %d bulk loads%n",
          load.acknowledged.get(), load.refused.get(), checked, target.loads());
      assertThat(checked).isPositive();
    }
  }

  /** A client that routes by one epoch for good: the repair epoch is not published in this test. */
  private record FixedRouting(Routing.Route route) implements Routing {
    @Override
    public Route route(byte[] key) {
      return route;
    }

    @Override
    public boolean awaitEpoch(long epoch, Duration timeout) {
      return epoch <= route.epoch();
    }
  }

  /**
   * Puts and deletes of keys inside the range at about 2,000 writes/s through the writer, recording each key's last
   * acknowledged value, and the keys a write was refused or failed for after it (their value is uncertain).
   */
  private static final class Load implements Runnable {
    final RoutedWriter writer;
    final Random random;
    final AtomicBoolean stop = new AtomicBoolean();
    final AtomicLong acknowledged = new AtomicLong();
    final AtomicLong refused = new AtomicLong();
    final Map<String, Optional<String>> latest = new HashMap<>();
    final Set<String> uncertain = new HashSet<>();
    volatile Throwable failure;

    Load(RoutedWriter writer, Random random) {
      this.writer = writer;
      this.random = random;
    }

    @Override
    public void run() {
      TokenBucket pace = new TokenBucket(2000, Ticker.system());
      Sleeper park = java.util.concurrent.locks.LockSupport::parkNanos;
      try {
        while (!stop.get()) {
          pace.acquire(1, park);
          String key = keyInRange(random);
          boolean delete = random.nextInt(5) == 0;
          byte[] value = new byte[20 + random.nextInt(200)];
          random.nextBytes(value);
          byte[] k = key.getBytes(StandardCharsets.UTF_8);
          try {
            if (delete) {
              writer.delete(k);
            } else {
              writer.put(k, value);
            }
            latest.put(key, delete ? Optional.empty() : Optional.of(HexFormat.of().formatHex(value)));
            uncertain.remove(key);
            acknowledged.incrementAndGet();
          } catch (StoreException.StaleEpoch | StoreException.ReplicasFailed e) {
            uncertain.add(key);
            refused.incrementAndGet();
          }
        }
      } catch (Throwable t) {
        failure = t;
      }
    }

    private static String keyInRange(Random random) {
      while (true) {
        String key = "live-" + random.nextInt(4000);
        if (RANGE.contains(Entry.positionOf(key.getBytes(StandardCharsets.UTF_8)))) {
          return key;
        }
      }
    }
  }
}
