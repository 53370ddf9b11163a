package io.ringshift.storage.internal.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class HandlerPoolTest {
  @Test
  void shouldReuseAnIdleThreadInsteadOfStartingANewOne() throws Exception {
    ThreadPoolExecutor pool = HandlerPool.create("test-reuse", 32, 30, TimeUnit.SECONDS);
    try {
      for (int i = 0; i < 20; i++) {
        pool.submit(() -> { }).get(5, TimeUnit.SECONDS);
      }
      // A task can finish before its thread is back waiting, so the next may start a second thread; never 20.
      assertThat(pool.getPoolSize()).isBetween(1, 5);
    } finally {
      pool.shutdownNow();
    }
  }

  @Test
  void shouldGrowToTheMaximumThenQueueAndServeEveryTask() throws Exception {
    ThreadPoolExecutor pool = HandlerPool.create("test-grow", 3, 30, TimeUnit.SECONDS);
    CountDownLatch release = new CountDownLatch(1);
    CountDownLatch done = new CountDownLatch(8);
    AtomicInteger running = new AtomicInteger();
    AtomicInteger most = new AtomicInteger();
    try {
      for (int i = 0; i < 8; i++) {
        pool.execute(() -> {
          most.accumulateAndGet(running.incrementAndGet(), Math::max);
          try {
            release.await(10, TimeUnit.SECONDS);
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          }
          running.decrementAndGet();
          done.countDown();
        });
      }
      await("the three threads to start their tasks").atMost(Duration.ofSeconds(10))
          .untilAsserted(() -> assertThat(running.get()).isEqualTo(3));
      assertThat(pool.getPoolSize()).isEqualTo(3);
      assertThat(pool.getQueue()).hasSize(5);
      release.countDown();
      assertThat(done.await(10, TimeUnit.SECONDS)).isTrue();
      assertThat(most.get()).isEqualTo(3);
    } finally {
      pool.shutdownNow();
    }
  }

  @Test
  void shouldEndIdleThreadsAfterTheKeepAlive() throws Exception {
    ThreadPoolExecutor pool = HandlerPool.create("test-idle", 4, 50, TimeUnit.MILLISECONDS);
    try {
      pool.submit(() -> { }).get(5, TimeUnit.SECONDS);
      await("the idle thread to end after the 50 ms keep-alive").atMost(Duration.ofSeconds(5))
          .untilAsserted(() -> assertThat(pool.getPoolSize()).isZero());
    } finally {
      pool.shutdownNow();
    }
  }

  @Test
  void shouldRefuseATaskOnceShutDown() {
    ThreadPoolExecutor pool = HandlerPool.create("test-stop", 2, 30, TimeUnit.SECONDS);
    pool.shutdown();
    assertThatThrownBy(() -> pool.execute(() -> { })).isInstanceOf(RejectedExecutionException.class);
  }
}
