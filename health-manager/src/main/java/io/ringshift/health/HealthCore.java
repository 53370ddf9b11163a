package io.ringshift.health;

import io.ringshift.health.internal.Debounce;
import io.ringshift.health.internal.Decider;
import io.ringshift.health.internal.MembershipView;
import io.ringshift.schemas.avro.EpochRecord;
import io.ringshift.schemas.avro.MembershipEvent;
import java.time.Clock;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;

/**
 * The health manager's decisions without Kafka, HTTP or threads: the same view of the cluster (members from
 * {@code ring.epochs}, declared nodes from {@code ring.membership}), debounce and decider (the majority guard, at most
 * one FAIL per life of a node) as {@link HealthManager}, for one round at a time. The deterministic simulation drives
 * it with its own probes, lease and FAIL producer; {@link HealthManager} is the shell that probes over HTTP and writes
 * FAILs in Kafka transactions. Not thread safe.
 */
public final class HealthCore {
  private final MembershipView view;
  private final Decider decider;

  /**
   * @param addressed the nodes this manager has an address for (only those are probed)
   * @param misses consecutive missed probes before a node is failed
   * @param minDown how long a node must have been missing at least
   */
  public HealthCore(String clusterId, Set<String> addressed, int misses, Duration minDown, Clock clock,
      HealthListener listener) {
    this.view = new MembershipView(clusterId);
    this.decider = new Decider(view, addressed, new Debounce(misses, minDown), clock, listener);
  }

  /** A record of {@code ring.epochs}, in topic order. */
  public void onEpoch(EpochRecord record) {
    view.onEpoch(record);
  }

  /** A record of {@code ring.membership}, in topic order. */
  public void onMembershipEvent(MembershipEvent event) {
    view.onMembershipEvent(event);
  }

  /** A record of {@code ring.rejected}: a refused FAIL declared nothing, and the node is watched again. */
  public void onRejected(String clusterId, String requestId) {
    view.onRejected(clusterId, requestId);
  }

  /** The members the next round probes. */
  public Set<String> watched() {
    return decider.watched();
  }

  /**
   * One round: probes the watched members with {@code probe} (node id to whether it answered) and, when
   * {@code decides}, writes a FAIL with {@code fail} (returning its request id; it throws when the write did not happen)
   * for each node due. Returns the nodes failed.
   */
  public List<String> round(Function<Set<String>, Map<String, Boolean>> probe, boolean decides,
      Function<String, String> fail) {
    return decider.round(nodes -> {
      Map<String, Debounce.Probe> out = new HashMap<>();
      probe.apply(nodes).forEach((node, up) -> out.put(node, up ? Debounce.Probe.answered()
          : Debounce.Probe.missed("no answer")));
      return out;
    }, decides, fail::apply);
  }

  /** For reports: the view of the cluster and the FAILs not read back yet. */
  @Override
  public String toString() {
    return "HealthCore[" + view + ", unconfirmed " + decider.unconfirmed() + "]";
  }
}
