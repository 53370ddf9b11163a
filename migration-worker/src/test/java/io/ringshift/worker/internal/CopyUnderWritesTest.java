package io.ringshift.worker.internal;

import static io.ringshift.worker.internal.Harness.copyTask;
import static io.ringshift.worker.internal.Harness.fenceRequested;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.ringshift.ring.RingRange;
import io.ringshift.schemas.avro.RangeCopyTask;
import io.ringshift.schemas.avro.TaskState;
import io.ringshift.storage.Entry;
import io.ringshift.storage.WriteResult;
import io.ringshift.worker.Limits;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Property: under concurrent writes to the moving range, a task that reaches VERIFIED leaves the target with
 * the source's contents at the fence, and every write the source acknowledged is there. Random ranges
 * (wrapping ones included) and random write mixes (new keys, overwrites, deletes, keys inside and outside the
 * range), against real RocksDB stores; a writer thread writes at about 3,000 writes/s with the task's old
 * epoch during the copy, the catch-up and the wait for the fence, and keeps writing after it: from the fence
 * on, its writes to the range are refused with RetryWithEpoch (and not acknowledged).
 *
 * <p>The seed is printed; {@code -Dringshift.seed=N} replays a run, {@code -Dringshift.cases=1} with a case's
 * seed replays one case.
 */
class CopyUnderWritesTest {
  private static final int WRITES_PER_SECOND = 3000;

  @TempDir Path dir;

  @Test
  void shouldVerifyWithEveryAcknowledgedWriteOnTheTarget() throws Exception {
    long seed = Long.getLong("ringshift.seed", System.nanoTime());
    int cases = Integer.getInteger("ringshift.cases", 10);
    System.out.printf("CopyUnderWritesTest: seed %d (replay: -Dringshift.seed=%d)%n", seed, seed);
    Random seeds = new Random(seed);
    for (int i = 0; i < cases; i++) {
      long caseSeed = cases == 1 ? seed : seeds.nextLong();
      Path caseDir = Files.createDirectory(dir.resolve("case-" + i));
      try {
        runCase(caseSeed, caseDir);
      } catch (AssertionError | RuntimeException e) {
        throw new AssertionError("case " + i + " failed; replay it with -Dringshift.seed=" + caseSeed
            + " -Dringshift.cases=1: " + e.getMessage(), e);
      }
    }
  }

  private void runCase(long seed, Path caseDir) throws Exception {
    Random random = new Random(seed);
    RingRange range = randomRange(random);
    long epoch = 5;
    try (StoreFixture nodes = new StoreFixture(caseDir)) {
      StoreFixture.Node source = nodes.node("node-s");
      StoreFixture.Node target = nodes.node("node-t");
      // The initial contents, and the writes' key pool: about half of it inside the range.
      List<byte[]> pool = new ArrayList<>();
      for (int i = 0; i < 6000; i++) {
        pool.add(("key-" + seed + "-" + i).getBytes(StandardCharsets.UTF_8));
      }
      Map<String, Optional<String>> acknowledged = new HashMap<>();
      long rangeBytes = 0;
      for (int i = 0; i < 4000; i++) {
        byte[] key = pool.get(random.nextInt(pool.size()));
        byte[] value = randomValue(random);
        source.put(key, value, epoch - 1);
        acknowledged.put(text(key), Optional.of(HexFormat.of().formatHex(value)));
      }
      for (var e : acknowledged.entrySet()) {
        if (range.contains(Entry.positionOf(e.getKey().getBytes(StandardCharsets.UTF_8)))) {
          rangeBytes += e.getKey().length() + e.getValue().orElseThrow().length() / 2;
        }
      }
      // Throttled so that the snapshot copy takes a few tenths of a second under the writer's load, yet well
      // above the rate at which the writer changes the range (about 3,000 x 160 B/s x the range's share), or
      // catch-up could never close the gap.
      long rate = Math.max(1 << 20, rangeBytes * 3);
      try (Harness h = new Harness(nodes.stores(), Limits.unlimited().withRates(0, rate), Harness.FAST,
          Clock.systemUTC(), Duration.ZERO)) {
        Writer writer = new Writer(source, pool, new Random(random.nextLong()), epoch - 1, range, acknowledged);
        Thread writerThread = new Thread(writer, "writer");
        writerThread.start();
        try {
          RangeCopyTask task = copyTask(epoch, range, List.of("node-s"), "node-t");
          TaskRun run = h.run(task);
          h.awaitState(task.getTaskId(), TaskState.CAUGHT_UP);
          long atCaughtUp = writer.applied.get();
          await("the writer goes on while the task tails the feed").atMost(Harness.WAIT)
              .until(() -> writer.applied.get() > atCaughtUp + 200);
          run.update(fenceRequested(task));
          h.awaitState(task.getTaskId(), TaskState.VERIFIED);
          await("the writer is refused by the fence").atMost(Harness.WAIT).until(() -> writer.refused.get() > 0);
        } finally {
          writer.stop.set(true);
          writerThread.join();
        }
        if (writer.failure != null) {
          throw new AssertionError("the writer failed", writer.failure);
        }

        assertThat(target.digest(range).sameContentAs(source.digest(range)))
            .as("digests of %s: source %s, target %s", range, source.digest(range), target.digest(range)).isTrue();
        int checked = 0;
        for (var e : acknowledged.entrySet()) {
          byte[] key = e.getKey().getBytes(StandardCharsets.UTF_8);
          if (range.contains(Entry.positionOf(key))) {
            Optional<String> onTarget = target.get(key).map(v -> HexFormat.of().formatHex(v));
            assertThat(onTarget).as("key %s in %s", e.getKey(), range).isEqualTo(e.getValue());
            checked++;
          }
        }
        if (!range.isWhole()) { // the whole ring has no outside; (end, start] would be the whole ring again
          RingRange outside = RingRange.of(range.end(), range.start());
          assertThat(target.contents(outside)).as("keys outside %s on the target", range).isEmpty();
        }
        System.out.printf("  case %d: range %s, %d keys checked, %d writes acknowledged, %d refused by the fence%n",
            seed, range, checked, writer.applied.get(), writer.refused.get());
        assertThat(writer.refusedInside).as("only writes inside the range are refused").isTrue();
      }
    }
  }

  /** A random range covering 20% to 80% of the ring, wrapping past the top when it must. */
  /** Mostly a fifth to four fifths of the ring at a random start (so often wrapping), sometimes the whole ring or a sliver. */
  private static RingRange randomRange(Random random) {
    long start = random.nextLong();
    double shape = random.nextDouble();
    if (shape < 0.15) {
      return RingRange.of(start, start); // the whole ring
    }
    double fraction = shape < 0.3 ? 0.005 + 0.025 * random.nextDouble() : 0.2 + 0.6 * random.nextDouble();
    long length = (long) (fraction * 0x1p64) ;
    // (long) of a double above 2^63 saturates: build the unsigned length from two halves instead.
    if (fraction >= 0.5) {
      length = Long.MAX_VALUE + (long) ((fraction - 0.5) * 0x1p64);
    }
    return RingRange.of(start, start + length);
  }

  private static byte[] randomValue(Random random) {
    byte[] value = new byte[10 + random.nextInt(290)];
    random.nextBytes(value);
    return value;
  }

  private static String text(byte[] key) {
    return new String(key, StandardCharsets.UTF_8);
  }

  /**
   * Writes puts, overwrites and deletes with the old epoch, paced at {@link #WRITES_PER_SECOND} by a token
   * bucket (the load has a rate; nothing here waits for a condition), and records the latest acknowledged
   * value of each key.
   */
  private static final class Writer implements Runnable {
    final StoreFixture.Node store;
    final List<byte[]> pool;
    final Random random;
    final long epoch;
    final RingRange range;
    final Map<String, Optional<String>> acknowledged;
    final AtomicBoolean stop = new AtomicBoolean();
    final AtomicLong applied = new AtomicLong();
    final AtomicLong refused = new AtomicLong();
    volatile boolean refusedInside = true;
    volatile Throwable failure;

    Writer(StoreFixture.Node store, List<byte[]> pool, Random random, long epoch, RingRange range,
        Map<String, Optional<String>> acknowledged) {
      this.store = store;
      this.pool = pool;
      this.random = random;
      this.epoch = epoch;
      this.range = range;
      this.acknowledged = acknowledged;
    }

    @Override
    public void run() {
      TokenBucket pace = new TokenBucket(WRITES_PER_SECOND, Ticker.system());
      Sleeper park = java.util.concurrent.locks.LockSupport::parkNanos;
      try {
        while (!stop.get()) {
          pace.acquire(1, park);
          byte[] key = pool.get(random.nextInt(pool.size()));
          boolean delete = random.nextInt(5) == 0;
          byte[] value = delete ? null : randomValue(random);
          WriteResult result = delete ? store.delete(key, epoch) : store.put(key, value, epoch);
          if (result instanceof WriteResult.Applied) {
            synchronized (acknowledged) {
              acknowledged.put(text(key), delete ? Optional.empty() : Optional.of(HexFormat.of().formatHex(value)));
            }
            applied.incrementAndGet();
          } else {
            refused.incrementAndGet();
            if (!range.contains(Entry.positionOf(key))) {
              refusedInside = false;
            }
          }
        }
      } catch (Throwable t) {
        failure = t;
      }
    }
  }
}
