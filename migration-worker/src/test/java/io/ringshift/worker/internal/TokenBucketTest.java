package io.ringshift.worker.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.ringshift.worker.FakeTime;
import io.ringshift.worker.Limits;
import java.util.List;
import java.util.Locale;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Throttle accuracy on a fake clock: a copy loop that takes every batch from the bucket, checked over every
 * 10 s window (sliding by 1 s) against the limit. Nothing sleeps for real.
 */
class TokenBucketTest {
  private static final long SECOND = 1_000_000_000L;
  private static final long MIB = 1024 * 1024;
  private static final double TOLERANCE = 0.05;

  @ParameterizedTest(name = "{0} B/s in batches of up to {1} B")
  @CsvSource({
      "65536, 4096", "65536, 1048576",
      "1048576, 4096", "1048576, 65536", "1048576, 1048576",
      "20000000, 4096", "20000000, 65536", "20000000, 1048576",
      "209715200, 65536", "209715200, 1048576"})
  void shouldKeepEveryTenSecondWindowWithinFivePercentOfTheLimit(long limit, long batch) throws Exception {
    FakeTime time = FakeTime.stopped();
    TokenBucket bucket = new TokenBucket(limit, time);
    long request = Math.min(batch, TokenBucket.maxRequestBytes(limit));
    Copy copy = Copy.run(time, 60, t -> bucket.acquire(request, time), request);

    double worst = 0;
    for (int start = 0; start + 10 <= 60; start++) {
      long bytes = copy.bytesBetween(start, start + 10);
      worst = Math.max(worst, Math.abs(bytes / (limit * 10.0) - 1));
      assertWithinTolerance(bytes, limit * 10.0,
          String.format(Locale.ROOT, "bytes in [%d s, %d s) at %d B/s, requests of %d B", start, start + 10, limit,
              request));
    }
    System.out.printf(Locale.ROOT, "throttle %d B/s, requests of %d B: worst 10 s window off by %.2f%%%n", limit,
        request, worst * 100);
  }

  @ParameterizedTest(name = "{0} -> {1} B/s")
  @CsvSource({"10485760, 2097152", "2097152, 10485760", "104857600, 65536", "65536, 104857600"})
  void shouldApplyALimitChangeWithinOneSecond(long before, long after) throws Exception {
    FakeTime time = FakeTime.stopped();
    TokenBucket bucket = new TokenBucket(before, time);
    long changeAt = 20;
    time.at(changeAt * SECOND, () -> bucket.setRate(after));
    // Requests sized for the slower of the two limits, as the copier sizes them for the current limit.
    long request = TokenBucket.maxRequestBytes(Math.min(before, after));
    Copy copy = Copy.run(time, 45, t -> bucket.acquire(request, time), request);

    assertWithinTolerance(copy.bytesBetween(changeAt - 10, changeAt), before * 10.0, "the 10 s before the change");
    for (long start = changeAt + 1; start + 10 <= 45; start++) {
      assertWithinTolerance(copy.bytesBetween(start, start + 10), after * 10.0,
          "bytes in [" + start + " s, " + (start + 10) + " s), the change at " + changeAt + " s");
    }
  }

  /**
   * Through {@link Throttles}, as a copy sends: batches of 1 MiB (read while unlimited, and kept at 1 MiB after
   * the change, unlike production, which reads smaller ones then) of 4 KiB entries, applied at 100 MiB/s. The
   * limit drops from unlimited to 64 KiB/s while a batch is being applied; the batches after it must pass at
   * the new limit, not as whole requests granted into debt.
   */
  @ParameterizedTest(name = "lowered on the {0}")
  @CsvSource({"worker", "source"})
  void shouldHoldALimitLoweredFromUnlimitedForBatchesReadBeforeTheChange(String which) throws Exception {
    FakeTime time = FakeTime.stopped();
    Throttles throttles = new Throttles(Limits.unlimited(), time);
    long limit = 64 * 1024;
    long changeAt = 20;
    int seconds = 60;
    time.at(changeAt * SECOND, () -> throttles.setLimits(
        which.equals("worker") ? Limits.unlimited().withRates(limit, 0) : Limits.unlimited().withRates(0, limit)));
    List<Long> batch = java.util.Collections.nCopies(256, 4096L);
    long[] perMilli = new long[seconds * 1000];
    while (time.nanos() < seconds * SECOND) {
      throttles.send(batch, e -> e, "node-a", time, (soFar, holder) -> { }, piece -> {
        long bytes = piece.stream().mapToLong(Long::longValue).sum();
        int slot = (int) (time.nanos() / 1_000_000);
        if (slot < perMilli.length) {
          perMilli[slot] += bytes;
        }
        time.advance(bytes * SECOND / (100 * MIB));
      });
    }
    Copy copy = new Copy(perMilli);

    assertThat(copy.bytesBetween(0, changeAt)).as("bytes before the change, unlimited").isGreaterThan(100 * MIB);
    double worst = 0;
    for (long start = changeAt + 1; start + 10 <= seconds; start++) {
      long bytes = copy.bytesBetween(start, start + 10);
      worst = Math.max(worst, Math.abs(bytes / (limit * 10.0) - 1));
      assertWithinTolerance(bytes, limit * 10.0,
          "bytes in [" + start + " s, " + (start + 10) + " s), the " + which + " limit lowered at " + changeAt + " s");
    }
    System.out.printf(Locale.ROOT, "unlimited -> 64 KiB/s on the %s in 1 MiB batches: worst 10 s window off by %.2f%%%n",
        which, worst * 100);
  }

  @Test
  void shouldLetATaskAlreadyWaitingGoWithinOneSecondOfARaisedLimit() throws Exception {
    FakeTime time = FakeTime.stopped();
    TokenBucket bucket = new TokenBucket(10 * 1024, time);
    // One big entry drives the bucket 100 s into debt at 10 KiB/s.
    assertThat(bucket.tryAcquire(MIB)).isZero();
    long raisedAt = 3 * SECOND;
    time.at(raisedAt, () -> bucket.setRate(100 * MIB));

    bucket.acquire(4096, time);

    assertThat(time.nanos() - raisedAt).as("wait after the limit was raised, ns").isLessThan(SECOND);
  }

  @Test
  void shouldNotStallForTheOldDebtWhenTheLimitIsLowered() throws Exception {
    FakeTime time = FakeTime.stopped();
    TokenBucket bucket = new TokenBucket(100 * MIB, time);
    assertThat(bucket.tryAcquire(10 * MIB)).isZero(); // 0.1 s of debt at the old limit
    bucket.setRate(64 * 1024); // the same debt would take 160 s at the new one

    bucket.acquire(4096, time);

    assertThat(time.nanos()).as("waited, ns").isLessThanOrEqualTo(SECOND / 10 + TokenBucket.MAX_WAIT_NANOS);
  }

  @Test
  void shouldStartEmptyAndRefillAtMostOneSecondOfTheRate() throws Exception {
    FakeTime time = FakeTime.stopped();
    TokenBucket bucket = new TokenBucket(MIB, time);
    assertThat(bucket.tryAcquire(4096)).as("the first request passes (into debt)").isZero();
    assertThat(bucket.tryAcquire(4096)).as("a new bucket has no tokens to burst with").isPositive();

    time.advance(30 * SECOND);
    long granted = 0;
    while (bucket.tryAcquire(4096) == 0) {
      granted += 4096;
    }
    assertThat(granted).as("bytes granted at once after 30 s idle").isBetween(MIB, MIB + 4096);
  }

  @Test
  void shouldNeverWaitWhenUnlimited() throws Exception {
    FakeTime time = FakeTime.stopped();
    TokenBucket bucket = new TokenBucket(0, time);
    for (int i = 0; i < 1000; i++) {
      assertThat(bucket.acquire(100 * MIB, time)).isZero();
    }
    assertThat(time.nanos()).isZero();
    assertThat(TokenBucket.maxRequestBytes(0)).isEqualTo(Long.MAX_VALUE);
  }

  @Test
  void shouldRefuseANegativeRateNamingIt() {
    assertThatThrownBy(() -> new TokenBucket(-5, FakeTime.stopped()))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("rate was -5 bytes/s; a rate must be > 0 bytes/s, or 0 for unlimited");
    TokenBucket bucket = new TokenBucket(10, FakeTime.stopped());
    assertThatThrownBy(() -> bucket.setRate(-1)).hasMessageContaining("rate was -1 bytes/s");
    assertThat(bucket.rate()).isEqualTo(10);
  }

  /**
   * Tasks that share buckets the way the worker shares them: every batch takes from the worker's bucket and
   * then from its source's. A discrete-event loop on the fake clock interleaves the tasks.
   */
  @ParameterizedTest(name = "worker {0} B/s")
  @CsvSource({"10485760", "5242880", "0"})
  void shouldHoldEachSourceAndTheWorkerToTheirLimitsWhenTasksShareThem(long workerLimit) {
    FakeTime time = FakeTime.stopped();
    TokenBucket worker = new TokenBucket(workerLimit, time);
    TokenBucket sourceA = new TokenBucket(4 * MIB, time);
    TokenBucket sourceB = new TokenBucket(3 * MIB, time);
    List<SimTask> tasks = List.of(new SimTask(sourceA), new SimTask(sourceA), new SimTask(sourceB));
    long request = 64 * 1024;
    long end = 60 * SECOND;
    long measureFrom = 10 * SECOND;
    while (true) {
      SimTask next = tasks.stream().min((a, b) -> Long.compare(a.readyAt, b.readyAt)).orElseThrow();
      if (next.readyAt >= end) {
        break;
      }
      time.advance(next.readyAt - time.nanos());
      long wait = next.tookWorker ? next.source.tryAcquire(request) : worker.tryAcquire(request);
      if (wait > 0) {
        next.readyAt = time.nanos() + wait;
      } else if (!next.tookWorker) {
        next.tookWorker = true;
      } else {
        next.tookWorker = false;
        if (time.nanos() >= measureFrom) {
          next.bytes += request;
        }
      }
    }
    double seconds = (end - measureFrom) / (double) SECOND;
    double a = (tasks.get(0).bytes + tasks.get(1).bytes) / seconds;
    double b = tasks.get(2).bytes / seconds;
    if (workerLimit == 0 || workerLimit >= 7 * MIB) {
      assertWithinTolerance(a, 4.0 * MIB, "two tasks on source A (4 MiB/s), B/s");
      assertWithinTolerance(b, 3.0 * MIB, "one task on source B (3 MiB/s), B/s");
    } else {
      assertWithinTolerance(a + b, workerLimit, "all tasks under the worker's limit, B/s");
      assertThat(a).as("source A, B/s").isLessThanOrEqualTo(4.0 * MIB * (1 + TOLERANCE));
      assertThat(b).as("source B, B/s").isLessThanOrEqualTo(3.0 * MIB * (1 + TOLERANCE));
    }
  }

  private static void assertWithinTolerance(double actual, double expected, String what) {
    assertThat(actual).as("%s: %.0f, limit %.0f", what, actual, expected)
        .isBetween(expected * (1 - TOLERANCE), expected * (1 + TOLERANCE));
  }

  private static final class SimTask {
    final TokenBucket source;
    long readyAt;
    boolean tookWorker;
    long bytes;

    SimTask(TokenBucket source) {
      this.source = source;
    }
  }

  @FunctionalInterface
  private interface Step {
    void take(long now) throws InterruptedException;
  }

  /** Bytes copied per millisecond of fake time by a loop that takes {@code request} bytes per batch. */
  private record Copy(long[] bytesPerMilli) {
    static Copy run(FakeTime time, int seconds, Step step, long request) throws InterruptedException {
      long[] perMilli = new long[seconds * 1000];
      while (time.nanos() < seconds * SECOND) {
        step.take(time.nanos());
        int slot = (int) (time.nanos() / 1_000_000);
        if (slot < perMilli.length) {
          perMilli[slot] += request;
        }
      }
      return new Copy(perMilli);
    }

    long bytesBetween(long fromSecond, long toSecond) {
      long sum = 0;
      for (int i = (int) (fromSecond * 1000); i < toSecond * 1000; i++) {
        sum += bytesPerMilli[i];
      }
      return sum;
    }
  }
}
