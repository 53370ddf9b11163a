package io.ringshift.simulation.internal;

import io.ringshift.client.Placement;
import io.ringshift.client.SnapshotRouter;
import io.ringshift.ring.Member;
import io.ringshift.storage.HybridClock;
import io.ringshift.storage.RoutedWriter;
import io.ringshift.storage.Routing;
import io.ringshift.storage.StoreException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * An application process that follows the documented client protocol: it routes by the ring it verified on
 * {@code ring.snapshots} (the client's production gate and placements, {@link SnapshotRouter}), writes through the
 * production {@link RoutedWriter} (every replica of the route, tagged with the route's epoch, one retry with a newer
 * epoch when a node says so), and reads from one readable replica. A writer owns its keys and writes each one at a time,
 * values numbered in order, so the checks can tell an older value from a newer one.
 */
final class SimClient {
  private final World w;
  final String id;
  private final List<String> keys;
  private final boolean writer;
  SnapshotRouter router;
  SimParticipant participant;
  private SimKafka.Reader snapshots;
  private RoutedWriter routed;
  private final Set<String> writing = new HashSet<>();
  private int counter;
  private boolean pollScheduled;
  /** The lease period a read of the snapshots topic to its end was asked for, and the last one done. */
  private long syncAsked;
  private long synced;

  SimClient(World w, String id, List<String> keys, boolean writer) {
    this.w = w;
    this.id = id;
    this.keys = keys;
    this.writer = writer;
    w.kafka.onVisible(World.SNAPSHOTS, this::schedulePoll);
  }

  boolean writer() {
    return writer;
  }

  void start() {
    router = new SnapshotRouter(World.CLUSTER, w.trusted);
    snapshots = w.kafka.reader().assignAll(World.SNAPSHOTS);
    SnapshotRouter view = router;
    Routing routing = new Routing() {
      @Override
      public Route route(byte[] key) {
        Placement p = serving(view.placement(key));
        return new Route(p.epoch(), p.ownerIds());
      }

      @Override
      public boolean awaitEpoch(long epoch, Duration timeout) {
        // The world does not wait inside an event: the client has the epoch now or it does not; a write it cannot
        // route yet fails StaleEpoch, and the application writes again later, as it would after the timeout.
        return view.epoch() >= epoch;
      }
    };
    SimClock clock = w.newClock();
    routed = RoutedWriter.create(routing, node -> w.storeFor(id, node)).sequential()
        .withClock(HybridClock.of("client/" + id, clock::millis));
    syncAsked = 0;
    synced = 0;
    participant = new SimParticipant(w, id, false, view::current);
    participant.onAcquired = period -> {
      // As the production client: after taking its lease it reads the snapshots topic to its end before it serves a
      // moving range again.
      syncAsked = period;
      schedulePoll();
    };
    participant.start();
    schedulePoll();
    scheduleNext();
  }

  /**
   * {@code p}, unless a transition moves it and this client's lease in the barrier lapsed: then, as the production
   * client, it does not serve the range (the publisher may have moved on without it).
   */
  private Placement serving(Placement p) {
    if (p.moving() && !participant.leaseHeld()) {
      w.count("client operations refused: lease lapsed on a moving range");
      throw new IllegalStateException("client " + id + ": lease lapsed on a moving range");
    }
    if (p.moving() && synced != participant.period) {
      w.count("client operations refused: lease taken again, snapshots not read to the end since");
      throw new IllegalStateException("client " + id + ": lease taken again, snapshots not read to the end since");
    }
    return p;
  }

  private void schedulePoll() {
    if (pollScheduled || snapshots == null) {
      return;
    }
    pollScheduled = true;
    // Clients lag behind each other: most swap within tens of ms, some much later.
    long delay = w.random.chance(0.1) ? w.random.between(500, 5_000) : w.random.between(1, 100);
    w.loop.after(delay, "client " + id + " reads snapshots", () -> {
      pollScheduled = false;
      long syncing = syncAsked;
      snapshots.readToEnd(r -> {
        if (!World.CLUSTER.equals(r.key)) {
          return;
        }
        SnapshotRouter.Outcome o = router.offer(r.value, r.timestamp);
        if (o instanceof SnapshotRouter.Swapped) {
          participant.swapped();
        } else if (o instanceof SnapshotRouter.Refused refused) {
          w.checks.violation("client " + id + " refused published snapshot of epoch " + refused.epoch() + ": "
              + refused.reason() + " " + refused.message());
        }
      });
      synced = Math.max(synced, syncing);
    });
  }

  private void scheduleNext() {
    long gap = w.active ? w.random.between(100, 600) : w.random.between(2_000, 6_000);
    w.loop.after(gap, "client " + id + " operates", () -> {
      if (router.epoch() >= 1) {
        if (writer) {
          writeNow();
        } else {
          readNow();
        }
      }
      scheduleNext();
    });
  }

  /** One write of one of its keys not being written now, if any: the next value of the key. */
  void writeNow() {
    if (!writer || router.epoch() < 1) {
      return;
    }
    String key = keys.get(w.random.nextInt(keys.size()));
    if (!writing.add(key)) {
      return;
    }
    try {
      int index = w.checks.nextIndex(key);
      byte[] value = (id + "|" + key + "|" + index).getBytes(StandardCharsets.UTF_8);
      try {
        RoutedWriter.Written written = routed.put(key.getBytes(StandardCharsets.UTF_8), value);
        w.checks.acknowledged(key, index, written.epoch());
        w.count("writes acknowledged");
      } catch (StoreException e) {
        w.count("writes failed");
      } catch (IllegalStateException e) {
        w.count("writes failed");
      }
    } finally {
      writing.remove(key);
    }
  }

  /** One read of a key any writer writes, from one readable replica of the ring it routes by. */
  void readNow() {
    String key = w.checks.anyWrittenKey();
    if (key == null) {
      return;
    }
    Placement p = router.placement(key.getBytes(StandardCharsets.UTF_8));
    if (p.readable().isEmpty()) {
      return;
    }
    try {
      serving(p);
    } catch (IllegalStateException e) {
      return;
    }
    // A reader in a transition stage whose lease holds: the barrier keeps every writer within one stage of it.
    boolean inStage = router.current() != null && router.current().stage().writesBoth() && participant.leaseHeld();
    Member replica = p.readable().get(w.random.nextInt(p.readable().size()));
    long startedAt = w.loop.now();
    try {
      Optional<byte[]> value = w.storeFor(id, replica.id()).get(key.getBytes(StandardCharsets.UTF_8));
      w.checks.read(id, key, replica.id(), p.epoch(), startedAt,
          value.map(v -> new String(v, StandardCharsets.UTF_8)).orElse(null), inStage);
      w.count("reads");
    } catch (StoreException e) {
      w.count("reads failed");
    }
  }
}
