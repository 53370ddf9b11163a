package io.ringshift.worker.internal;

import io.ringshift.ring.RingRange;
import io.ringshift.storage.Fence;
import io.ringshift.storage.StoreException;
import io.ringshift.worker.NodeStores;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Lifts the fences of tasks that will not verify any more, and keeps at it until they are lifted.
 *
 * <h2>Why</h2>
 * A fence is keyed by (range, epoch), not by task, so the fence of a dropped task stays while a live task of the same
 * epoch fences an overlapping range on the node (a re-plan that keeps it reads behind that fence). Which tasks are
 * live is this worker's view of {@code ring.tasks} ({@link ControlState}), read by a reader of its own that may lag
 * behind the tombstones the dispatcher sees, and a task's tombstone may reach another worker's dispatcher only. Two
 * tasks of a cancelled epoch that fenced overlapping ranges on one source then kept the fence for each other, nothing
 * tried again, and clients of the active epoch were refused on that range until a later epoch was published: after a
 * cancel with nothing queued, never. A node that did not answer kept its fence the same way.
 *
 * <h2>How</h2>
 * <ul>
 *   <li>A lift that is held back by a live task, or by a node that does not answer, is kept and tried again at every
 *       {@link #retry} (the worker's sweep), until it is done or the epoch is published (then its fences refuse only
 *       stale writes, and the nodes prune them).
 *   <li>Tasks the dispatcher saw dropped count as dropped here at once ({@link ControlState#onDropped}).
 *   <li>An epoch that can no longer be published (a CANCELLED or REJECTED record on {@code ring.epochs}; their numbers
 *       are never used again) has its fences lifted on every node of its cluster this worker reaches, whoever set them
 *       and whatever this worker remembers, once no task of that epoch is live: {@link #retry} asks the nodes for their
 *       fences. So a fence of such an epoch outlives neither a lost tombstone nor a worker restart. An epoch is watched
 *       for {@link #DEAD_EPOCH_WATCH} and until one pass found none of its fences left on any node of the cluster.
 * </ul>
 * Thread safe: lifts come from task threads and the scheduler's pool, retries from the worker's sweep.
 */
public final class FenceLifts {
  private static final Logger LOG = LoggerFactory.getLogger(FenceLifts.class);
  /** How long an epoch that can no longer be published is watched for fences at least (a late run may set one). */
  static final Duration DEAD_EPOCH_WATCH = Duration.ofMinutes(10);

  /** A fence to lift: of {@code range} at {@code epoch} on {@code node}, set by dropped task {@code taskId}. */
  private record Lift(String clusterId, long epoch, RingRange range, String node, String taskId) {}

  private final ControlState control;
  private final NodeStores stores;
  private final Clock clock;
  private final Set<Lift> pending = ConcurrentHashMap.newKeySet();

  public FenceLifts(ControlState control, NodeStores stores, Clock clock) {
    this.control = control;
    this.stores = stores;
    this.clock = clock;
  }

  /**
   * Lifts the fence of {@code range} at {@code epoch} that dropped task {@code taskId} set on each of {@code nodes},
   * where it can now; the others are tried again by {@link #retry}.
   */
  public void lift(String clusterId, long epoch, RingRange range, Collection<String> nodes, String taskId) {
    for (String node : nodes) {
      Lift lift = new Lift(clusterId, epoch, range, node, taskId);
      if (!tryLift(lift)) {
        pending.add(lift);
      }
    }
  }

  /** Lifts still to be done. */
  public int pending() {
    return pending.size();
  }

  /**
   * Tries the lifts held back again, then lifts the fences of epochs that can no longer be published; returns how many
   * fences it lifted. Calls the nodes: run it off the poll thread.
   */
  public int retry() {
    int lifted = 0;
    for (Lift lift : List.copyOf(pending)) {
      if (tryLift(lift)) {
        pending.remove(lift);
        lifted++;
      }
    }
    return lifted + reapDeadEpochs();
  }

  /** Whether the lift is done: lifted now, or no longer needed; false when a live task or the node holds it back. */
  private boolean tryLift(Lift lift) {
    if (control.published(lift.clusterId(), lift.epoch())) {
      // Published: the fence refuses only writes of older epochs, which the move made stale, and lifting it could let
      // such a write through on a node whose ring lags. The nodes prune it (docs/storage.md).
      return true;
    }
    String keeper = control.liveTaskFencing(lift.clusterId(), lift.epoch(), lift.range(), lift.node(), lift.taskId());
    if (keeper != null) {
      LOG.info("task {} dropped: keeping the fence of {} at epoch {} on {} for now: live task {} moves that range too; "
          + "trying again at the next sweep", lift.taskId(), lift.range(), lift.epoch(), lift.node(), keeper);
      return false;
    }
    try {
      stores.store(lift.node()).unfence(lift.range(), lift.epoch());
      LOG.info("task {} dropped: lifted the fence of {} at epoch {} on {}", lift.taskId(), lift.range(), lift.epoch(),
          lift.node());
      return true;
    } catch (StoreException e) {
      LOG.warn("task {} dropped: could not lift the fence of {} at epoch {} on {}, trying again at the next sweep: {}",
          lift.taskId(), lift.range(), lift.epoch(), lift.node(), e.getMessage());
      return false;
    }
  }

  /**
   * Lifts every fence of an epoch that can no longer be published, on every node of its cluster in the directory,
   * unless a live task of the epoch still fences that range on that node (its tombstone is on its way).
   */
  private int reapDeadEpochs() {
    int lifted = 0;
    long now = clock.millis();
    for (Map.Entry<String, Map<Long, Long>> cluster : control.deadEpochs().entrySet()) {
      String clusterId = cluster.getKey();
      Set<Long> dead = cluster.getValue().keySet();
      java.util.Set<Long> seen = new java.util.HashSet<>();
      boolean everyNodeAnswered = true;
      for (String node : control.knownMembers(clusterId)) {
        if (!stores.knows(node)) {
          continue;
        }
        List<Fence> fences;
        try {
          fences = stores.store(node).fences();
        } catch (StoreException e) {
          everyNodeAnswered = false;
          continue;
        }
        for (Fence f : fences) {
          if (!dead.contains(f.epoch()) || control.publishedAt(clusterId, f.epoch()).isPresent()) {
            continue;
          }
          seen.add(f.epoch());
          String keeper = control.liveTaskFencing(clusterId, f.epoch(), f.range(), node, null);
          if (keeper != null) {
            continue;
          }
          try {
            stores.store(node).unfence(f.range(), f.epoch());
            lifted++;
            LOG.info("lifted the fence of {} at epoch {} on {}: epoch {} of cluster {} can no longer be published",
                f.range(), f.epoch(), node, f.epoch(), clusterId);
          } catch (StoreException e) {
            everyNodeAnswered = false;
          }
        }
      }
      for (Map.Entry<Long, Long> epoch : cluster.getValue().entrySet()) {
        if (everyNodeAnswered && !seen.contains(epoch.getKey())
            && now - epoch.getValue() >= DEAD_EPOCH_WATCH.toMillis()) {
          // None of its fences left anywhere, and watched long enough that no run of it is left to set one.
          control.forgetDeadEpoch(clusterId, epoch.getKey());
        }
      }
    }
    return lifted;
  }

  /** The clusters' epochs this worker watches for fences to lift (for tests and metrics). */
  public List<String> watched() {
    List<String> out = new ArrayList<>();
    control.deadEpochs().forEach((c, epochs) -> epochs.keySet().forEach(e -> out.add(c + "/" + e)));
    return out;
  }
}
