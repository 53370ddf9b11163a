package io.ringshift.simulation.internal;

import io.ringshift.health.HealthCore;
import io.ringshift.health.HealthListener;
import io.ringshift.protocol.RecordSerdes;
import io.ringshift.schemas.avro.MembershipAction;
import io.ringshift.schemas.avro.MembershipEvent;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A health manager: its production core ({@link HealthCore}: the view of the cluster, debounce, decider with its
 * majority guard) inside a shell that does what {@code HealthManager} does: it reads ring.membership and ring.epochs,
 * probes every watched member every second over the simulated network, and, only while it holds the lease (after
 * fencing the manager before it), writes a FAIL in a transaction of its own.
 */
final class SimHealth implements LeaseMember {
  static final String TRANSACTIONAL_ID = "health";
  private static final long ROUND = 1_000;

  private final World w;
  final String id;
  boolean up;
  boolean holdsLease;
  private int life;
  private SimClock clock;
  private HealthCore core;
  private SimKafka.Reader reader;
  private int producerEpoch = -1;
  private int fails;

  SimHealth(World w, String id) {
    this.w = w;
    this.id = id;
  }

  @Override
  public String id() {
    return id;
  }

  @Override
  public boolean up() {
    return up;
  }

  @Override
  public boolean holdsLease() {
    return holdsLease;
  }

  @Override
  public void loseLease() {
    holdsLease = false;
  }

  @Override
  public void start() {
    life++;
    up = true;
    holdsLease = false;
    producerEpoch = -1;
    if (clock == null) {
      clock = w.newClock();
    }
    core = new HealthCore(World.CLUSTER, w.nodes.keySet(), 3, Duration.ofSeconds(5), clock, new HealthListener() {});
    reader = w.kafka.reader().assignAll(World.MEMBERSHIP, World.EPOCHS, World.REJECTED);
    scheduleRound();
  }

  @Override
  public void crash() {
    if (!up) {
      return;
    }
    up = false;
    holdsLease = false;
    life++;
    w.loop.after(SimPublisher.PublisherLease.TIMEOUT, "health lease expires", w::electHealth);
  }

  @Override
  public void takeLease() {
    holdsLease = true;
    producerEpoch = -1;
    w.trace.note(w.loop.now(), id + " holds the health lease");
  }

  private void scheduleRound() {
    int at = life;
    w.loop.after(ROUND, id + " probes", () -> {
      if (up && life == at) {
        round();
        scheduleRound();
      }
    });
  }

  private void round() {
    boolean connected = w.connected(id);
    if (connected) {
      reader.readToEnd(r -> {
        if (r.value == null) {
          return;
        }
        if (r.topic.equals(World.EPOCHS)) {
          core.onEpoch(World.epochOf(r));
        } else if (r.topic.equals(World.REJECTED)) {
          io.ringshift.schemas.avro.RejectedEvent rejected = RecordSerdes.rejectedEvent().deserialize(r.value);
          core.onRejected(rejected.getClusterId(), rejected.getRequestId());
        } else {
          core.onMembershipEvent(RecordSerdes.membershipEvent().deserialize(r.value));
        }
      });
    }
    boolean decides = holdsLease && connected;
    if (decides && producerEpoch < 0) {
      producerEpoch = w.kafka.initTransactions(TRANSACTIONAL_ID); // fences the manager before it
    }
    try {
      core.round(nodes -> {
        Map<String, Boolean> up = new LinkedHashMap<>();
        for (String node : nodes) {
          SimNode n = w.nodes.get(node);
          up.put(node, n != null && n.up && w.reaches(id, node));
        }
        return up;
      }, decides, this::fail);
    } catch (FailNotWritten e) {
      // As HealthManager: a fenced manager stands by; one cut off tries again at the next round.
      w.trace.note(w.loop.now(), id + ": " + e.getMessage());
    }
  }

  /** A FAIL that did not commit. */
  private static final class FailNotWritten extends RuntimeException {
    FailNotWritten(String why) {
      super(why, null, false, false);
    }
  }

  private String fail(String node) {
    if (!w.connected(id)) {
      throw new FailNotWritten("cut off from Kafka");
    }
    String requestId = id + "-fail-" + (++fails);
    MembershipEvent event = World.membershipEvent(node, MembershipAction.FAIL, null, null, requestId,
        "health-manager", clock.millis(), null);
    try {
      SimKafka.Txn txn = w.kafka.begin(TRANSACTIONAL_ID, producerEpoch);
      w.kafka.send(txn, World.MEMBERSHIP, World.membershipKey(event), World.encodeEvent(event), clock.millis());
      w.kafka.commit(txn);
    } catch (SimKafka.Fenced f) {
      holdsLease = false;
      throw new FailNotWritten("fenced: " + f.getMessage());
    }
    w.count("FAILs by a health manager");
    w.trace.note(w.loop.now(), id + " wrote FAIL of " + node);
    return requestId;
  }

  /** Which nodes this manager watches, for the report. */
  List<String> watched() {
    return List.copyOf(core.watched());
  }
}
