package io.ringshift.client.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class OutageTrackerTest {
  private final AtomicLong nanos = new AtomicLong(1_000);
  private final OutageTracker tracker = new OutageTracker(nanos::get);

  @Test
  void reportsTheFirstFailureOfAnOutageOnly() {
    assertThat(tracker.failed()).isTrue();
    nanos.addAndGet(Duration.ofSeconds(1).toNanos());
    assertThat(tracker.failed()).isFalse();
    assertThat(tracker.failed()).isFalse();
    assertThat(tracker.inOutage()).isTrue();
  }

  @Test
  void reportsTheLengthOfAnOutageWhenItEnds() {
    tracker.failed();
    nanos.addAndGet(Duration.ofSeconds(42).toNanos());
    tracker.failed();

    assertThat(tracker.succeeded()).isEqualTo(Duration.ofSeconds(42));
    assertThat(tracker.inOutage()).isFalse();
  }

  @Test
  void reportsNothingForSuccessesOutsideAnOutage() {
    assertThat(tracker.succeeded()).isNull();
    tracker.failed();
    tracker.succeeded();
    assertThat(tracker.succeeded()).isNull();
  }

  @Test
  void reportsTheNextOutageAgain() {
    tracker.failed();
    tracker.succeeded();

    assertThat(tracker.failed()).isTrue();
  }
}
