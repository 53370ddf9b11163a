package io.ringshift.simulation.internal;

import io.ringshift.client.SnapshotRouter;
import io.ringshift.protocol.PublishedSnapshot;
import io.ringshift.ring.RingSnapshot;
import io.ringshift.storage.MemoryStore;
import io.ringshift.storage.OwnershipCheckedStore;
import io.ringshift.storage.RingView;
import java.time.Duration;

/**
 * A storage node: its durable state (an in-memory store that outlives a crash of the process, as a data directory
 * does), the production ownership check on top of it, and its view of the ring, which it follows on
 * {@code ring.snapshots} through the client's production gate ({@link SnapshotRouter}), as {@code ringshift node}
 * does. A node lost for good loses its data; one that crashes keeps it.
 */
final class SimNode {
  final World w;
  final String id;
  final String zone;
  MemoryStore.Durable state;
  MemoryStore store;
  OwnershipCheckedStore checked;
  SnapshotRouter router;
  SimKafka.Reader snapshots;
  SimParticipant participant;
  boolean up;
  boolean lost;
  /** Bumped at every start and crash: events of an earlier life of the process do nothing. */
  int life;
  private boolean pollScheduled;

  /** As a node's default: far longer than any scenario, so the simulation never purges a tombstone. */
  static final Duration TOMBSTONE_RETENTION = Duration.ofHours(24);

  SimNode(World w, String id, String zone) {
    this.w = w;
    this.id = id;
    this.zone = zone;
    w.kafka.onVisible(World.SNAPSHOTS, this::schedulePoll);
  }

  void start() {
    if (lost) {
      return;
    }
    life++;
    if (state == null) {
      // The machine's clock: it stamps the writes that carry no version and dates tombstones, across restarts.
      SimClock machine = w.newClock();
      store = MemoryStore.create(id, zone, w.incarnation(), machine::millis, TOMBSTONE_RETENTION);
    } else {
      store = MemoryStore.open(state);
    }
    state = store.durable();
    router = new SnapshotRouter(World.CLUSTER, w.trusted);
    SnapshotRouter view = router;
    checked = OwnershipCheckedStore.wrapPrunedByCaller(store, new RingView() {
      @Override
      public RingSnapshot current() {
        PublishedSnapshot current = view.current();
        return current == null ? null : current.ring();
      }

      @Override
      public RoutedRings rings() {
        // The simulation runs on one thread: a snapshot read here cannot be swapped under the caller.
        PublishedSnapshot current = view.current();
        return current == null || current.previous() == null ? null
            : new RoutedRings(current.ring(), current.previous(), !current.stage().readsNew());
      }
    });
    snapshots = w.kafka.reader().assignAll(World.SNAPSHOTS);
    boolean muted = participant != null && participant.muted;
    participant = new SimParticipant(w, "node/" + id, true, view::current);
    participant.muted = muted;
    participant.start();
    up = true;
    pollScheduled = false;
    schedulePoll();
  }

  void crash() {
    if (!up) {
      return;
    }
    up = false;
    life++;
    participant.stop();
    store.close();
  }

  /** Lost for good: the process and its data are gone. */
  void lose() {
    crash();
    lost = true;
    state = null;
  }

  private void schedulePoll() {
    if (!up || pollScheduled) {
      return;
    }
    pollScheduled = true;
    int at = life;
    w.loop.after(w.random.between(1, 80), "node " + id + " reads snapshots", () -> {
      pollScheduled = false;
      if (up && life == at) {
        poll();
      }
    });
  }

  private void poll() {
    snapshots.readToEnd(r -> {
      if (!World.CLUSTER.equals(r.key)) {
        return;
      }
      SnapshotRouter.Outcome outcome = router.offer(r.value, r.timestamp);
      if (outcome instanceof SnapshotRouter.Swapped) {
        checked.pruneFences();
        participant.swapped();
      } else if (outcome instanceof SnapshotRouter.Refused refused) {
        w.checks.violation("node " + id + " refused published snapshot of epoch " + refused.epoch() + ": "
            + refused.reason() + " " + refused.message());
      }
    });
  }
}
