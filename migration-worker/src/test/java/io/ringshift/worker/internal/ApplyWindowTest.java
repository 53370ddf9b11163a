package io.ringshift.worker.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class ApplyWindowTest {

  @Test
  void shouldHandBatchEndsBackInSendingOrderWhenLaterAppliesFinishFirst() throws Exception {
    List<String> done = new ArrayList<>();
    CountDownLatch releaseFirst = new CountDownLatch(1);
    AtomicInteger finished = new AtomicInteger();
    try (ApplyWindow<String> window = new ApplyWindow<>(4, done::add)) {
      window.send(() -> {
        awaitLatch(releaseFirst);
        finished.incrementAndGet();
      });
      window.endBatch("first");
      window.send(finished::incrementAndGet);
      window.endBatch("second");
      window.send(finished::incrementAndGet);
      window.endBatch("third");

      await("the second and third applies finish while the first waits").atMost(Duration.ofSeconds(10))
          .untilAsserted(() -> assertThat(finished).hasValue(2));
      assertThat(done).as("nothing is done before the first batch is").isEmpty();
      releaseFirst.countDown();
      window.finish();
    }
    assertThat(done).containsExactly("first", "second", "third");
  }

  @Test
  void shouldKeepAtMostWidthAppliesInFlight() {
    AtomicInteger running = new AtomicInteger();
    List<Integer> seen = new CopyOnWriteArrayList<>();
    List<Integer> batches = new ArrayList<>();
    try (ApplyWindow<Integer> window = new ApplyWindow<>(3, batches::add)) {
      for (int i = 0; i < 30; i++) {
        window.send(() -> {
          seen.add(running.incrementAndGet());
          sleepQuietly(5);
          running.decrementAndGet();
        });
        window.endBatch(i);
      }
      window.finish();
    }
    assertThat(seen).hasSize(30).allSatisfy(n -> assertThat(n).isBetween(1, 3));
    assertThat(seen).as("applies overlap").contains(3);
    assertThat(batches).hasSize(30).isSorted();
  }

  @Test
  void shouldThrowAnApplysFailureAndNotReportTheBatchesFromIt() {
    List<String> done = new ArrayList<>();
    RuntimeException refused = new IllegalStateException("target refused");
    try (ApplyWindow<String> window = new ApplyWindow<>(2, done::add)) {
      window.send(() -> { });
      window.endBatch("ok");
      // Thrown by the first call that finds the failed apply finished: endBatch, send or finish.
      assertThatThrownBy(() -> {
        window.send(() -> {
          throw refused;
        });
        window.endBatch("failed");
        window.send(() -> { });
        window.endBatch("after");
        window.finish();
      }).isSameAs(refused);
    }
    assertThat(done).containsExactly("ok");
  }

  @Test
  void shouldHandBackABatchEndOnceItsPiecesFinishedWhileTheWindowIsNotFull() {
    List<String> done = new ArrayList<>();
    CountDownLatch release = new CountDownLatch(1);
    try (ApplyWindow<String> window = new ApplyWindow<>(4, done::add)) {
      window.send(() -> awaitLatch(release));
      window.endBatch("first");
      assertThat(done).isEmpty();
      release.countDown();
      // The next batch end hands "first" over without waiting, once its piece has finished.
      await("the first batch handed back").atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
        window.endBatch("later");
        assertThat(done).startsWith("first");
      });
    }
  }

  @Test
  void shouldWaitForAppliesStillInFlightWhenClosed() {
    AtomicInteger finished = new AtomicInteger();
    CountDownLatch started = new CountDownLatch(2);
    ApplyWindow<String> window = new ApplyWindow<>(4, b -> { });
    for (int i = 0; i < 2; i++) {
      window.send(() -> {
        started.countDown();
        sleepQuietly(200);
        finished.incrementAndGet();
      });
    }
    awaitLatch(started);
    window.close();
    assertThat(finished).as("close returns only after both applies ended").hasValue(2);
  }

  @Test
  void shouldRefuseAWidthBelowOne() {
    assertThatThrownBy(() -> new ApplyWindow<String>(0, b -> { }))
        .hasMessage("width was 0; it must be >= 1");
  }

  private static void awaitLatch(CountDownLatch latch) {
    try {
      assertThat(latch.await(10, TimeUnit.SECONDS)).as("latch released in time").isTrue();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError(e);
    }
  }

  private static void sleepQuietly(long millis) {
    try {
      TimeUnit.MILLISECONDS.sleep(millis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
