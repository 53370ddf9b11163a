package io.ringshift.client.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class ParticipantReporterTest {
  private static final Duration LEASE = Duration.ofSeconds(3);
  private static final long MS = TimeUnit.MILLISECONDS.toNanos(1);

  /** A reporter whose producer reaches no broker: the test hands it the acknowledgements itself. */
  private static ParticipantReporter reporter() {
    return new ParticipantReporter("c1", "client-1", false, LEASE, "ring.participants", "127.0.0.1:9", Map.of(),
        Clock.systemUTC(), () -> null, () -> -1);
  }

  @Test
  void startsAHoldingPeriodAtTheFirstAcknowledgementAndAgainOnlyAfterALapse() {
    try (ParticipantReporter r = reporter()) {
      List<Long> acquired = new CopyOnWriteArrayList<>();
      r.onLeaseAcquired(acquired::add);
      assertThat(r.period()).isZero();
      assertThat(r.leaseHeld()).isFalse();

      long now = System.nanoTime();
      r.acknowledged(1, now - 100 * MS, now - 90 * MS);
      assertThat(r.period()).isEqualTo(1);
      assertThat(r.leaseHeld()).isTrue();
      r.acknowledged(2, now - 50 * MS, now - 40 * MS);
      r.acknowledged(3, now - 80 * MS, now - 30 * MS); // an older report acknowledged late: the lease still held
      assertThat(r.period()).as("renewals within the lease").isEqualTo(1);

      // The next acknowledgement comes more than a lease after the latest report held it: a lapse, a new period.
      r.acknowledged(4, now + LEASE.toNanos(), now + LEASE.toNanos() - 50 * MS + MS);
      assertThat(r.period()).isEqualTo(2);
      assertThat(acquired).containsExactly(1L, 2L);

      List<Long> late = new CopyOnWriteArrayList<>();
      r.onLeaseAcquired(late::add);
      assertThat(late).as("a listener registered after the lease was taken hears the current period at once")
          .containsExactly(2L);
    }
  }
}
