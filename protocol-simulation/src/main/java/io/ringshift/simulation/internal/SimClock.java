package io.ringshift.simulation.internal;

import java.time.Clock;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;

/**
 * One process's wall clock in the simulated world: the virtual time, plus an offset and a drift of its own, so that two
 * roles' clocks disagree as two hosts' do (a worker a second ahead of the publisher).
 */
public final class SimClock extends Clock {
  /** The wall time the virtual clock starts at: 2026-01-01T00:00:00Z. */
  public static final long BASE_MILLIS = 1_767_225_600_000L;

  private final EventLoop loop;
  private final long offsetMillis;
  private final double driftPpm;

  public SimClock(EventLoop loop, long offsetMillis, double driftPpm) {
    this.loop = loop;
    this.offsetMillis = offsetMillis;
    this.driftPpm = driftPpm;
  }

  @Override
  public long millis() {
    long now = loop.now();
    return BASE_MILLIS + now + offsetMillis + (long) (now * driftPpm / 1_000_000);
  }

  @Override
  public Instant instant() {
    return Instant.ofEpochMilli(millis());
  }

  @Override
  public ZoneId getZone() {
    return ZoneOffset.UTC;
  }

  @Override
  public Clock withZone(ZoneId zone) {
    return this;
  }

  public long offsetMillis() {
    return offsetMillis;
  }
}
