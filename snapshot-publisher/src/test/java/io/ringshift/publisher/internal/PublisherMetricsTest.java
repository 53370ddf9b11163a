package io.ringshift.publisher.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.ringshift.publisher.ClusterScript;
import io.ringshift.schemas.avro.EpochRecord;
import io.ringshift.schemas.avro.EpochState;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** The publisher's meters follow its decisions and the history it reads (docs/metrics.md). */
class PublisherMetricsTest {
  private final MeterRegistry registry = new SimpleMeterRegistry();
  private final AtomicLong now = new AtomicLong(1_000_000);
  private final AtomicBoolean active = new AtomicBoolean(true);
  private final PublisherMetrics metrics = new PublisherMetrics(registry, new Clock() {
    @Override
    public ZoneOffset getZone() {
      return ZoneOffset.UTC;
    }

    @Override
    public Clock withZone(java.time.ZoneId zone) {
      return this;
    }

    @Override
    public Instant instant() {
      return Instant.ofEpochMilli(now.get());
    }
  }, active::get);

  private static EpochRecord decided(EpochState state, long epoch, long millis, String reason) {
    EpochRecord ready = new ClusterScript("c1").init(6).ready();
    return EpochRecord.newBuilder(ready).setState(state).setEpoch(epoch).setTimestampMillis(millis)
        .setReason(reason).build();
  }

  private double refusals(String reason) {
    return registry.get(PublisherMetrics.REFUSALS).tag("reason", reason).counter().count();
  }

  @Test
  void shouldShowEachClustersLastPublishedEpochAndTheAgeOfItsSnapshot() {
    metrics.seen(decided(EpochState.PUBLISHED, 3, 990_000, null));
    assertThat(registry.get(PublisherMetrics.EPOCH).tag("cluster", "c1").gauge().value()).isEqualTo(3);
    assertThat(registry.get(PublisherMetrics.SNAPSHOT_AGE).tag("cluster", "c1").gauge().value()).isEqualTo(10.0);

    metrics.published(decided(EpochState.PUBLISHED, 4, 999_000, null));
    metrics.seen(decided(EpochState.PUBLISHED, 3, 990_000, null));
    now.addAndGet(4_000);

    assertThat(registry.get(PublisherMetrics.EPOCH).tag("cluster", "c1").gauge().value())
        .as("an older record read back changes nothing").isEqualTo(4);
    assertThat(registry.get(PublisherMetrics.SNAPSHOT_AGE).tag("cluster", "c1").gauge().value()).isEqualTo(5.0);
    assertThat(registry.get(PublisherMetrics.PUBLISHED).counter().count()).isEqualTo(1);
  }

  @Test
  void shouldCountRefusalsByTheCheckThatFailed() {
    metrics.rejected(decided(EpochState.REJECTED, 5, 0, "TASKS: 2 of 7 tasks are not VERIFIED"));
    metrics.rejected(decided(EpochState.REJECTED, 6, 0, "CHECKSUM: the rebuilt ring's checksum is 00ff"));
    metrics.rejected(decided(EpochState.REJECTED, 7, 0, "a reason of another writer"));
    metrics.waiting();

    assertThat(refusals("tasks")).isEqualTo(1);
    assertThat(refusals("checksum")).isEqualTo(1);
    assertThat(refusals("other")).isEqualTo(1);
    assertThat(refusals("sequence")).isZero();
    assertThat(registry.get(PublisherMetrics.REFUSALS).counters()).hasSize(Check.values().length + 1);
    assertThat(registry.get(PublisherMetrics.WAITS).counter().count()).isEqualTo(1);
  }

  @Test
  void shouldShowWhetherItIsActiveAndRemoveItsMetersOnClose() {
    assertThat(registry.get(PublisherMetrics.ACTIVE).gauge().value()).isEqualTo(1);
    active.set(false);
    assertThat(registry.get(PublisherMetrics.ACTIVE).gauge().value()).isZero();

    metrics.seen(decided(EpochState.PUBLISHED, 3, 0, null));
    metrics.close();

    assertThat(registry.getMeters()).isEmpty();
  }
}
