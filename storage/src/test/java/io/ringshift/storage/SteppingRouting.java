package io.ringshift.storage;

import io.ringshift.ring.RingSnapshot;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * A client's routing that a test steps by hand: it routes by the first of its rings, and {@link #awaitEpoch} moves
 * it to the first later ring of at least that epoch, at once (nothing waits), unless the test holds the newer
 * rings back ({@link #withholdNewerRings()}). It records every call.
 */
final class SteppingRouting implements Routing {
  private final List<RingSnapshot> rings;
  private final List<Long> awaited = new ArrayList<>();
  private final List<Duration> waits = new ArrayList<>();
  private int current;
  private int routes;
  private boolean withheld;

  SteppingRouting(RingSnapshot... rings) {
    this.rings = List.of(rings);
  }

  /** From now on the newer rings do not arrive: {@link #awaitEpoch} times out. */
  synchronized SteppingRouting withholdNewerRings() {
    withheld = true;
    return this;
  }

  @Override
  public synchronized Route route(byte[] key) {
    routes++;
    return Route.of(rings.get(current), key);
  }

  @Override
  public synchronized boolean awaitEpoch(long epoch, Duration timeout) {
    awaited.add(epoch);
    waits.add(timeout);
    while (!withheld && rings.get(current).epoch() < epoch && current < rings.size() - 1) {
      current++;
    }
    return rings.get(current).epoch() >= epoch;
  }

  synchronized long epoch() {
    return rings.get(current).epoch();
  }

  synchronized int routes() {
    return routes;
  }

  synchronized List<Long> awaited() {
    return List.copyOf(awaited);
  }

  synchronized List<Duration> waits() {
    return List.copyOf(waits);
  }
}
