package io.ringshift.health.internal;

import io.ringshift.schemas.avro.EpochRecord;
import io.ringshift.schemas.avro.MemberSpec;
import io.ringshift.schemas.avro.MembershipAction;
import io.ringshift.schemas.avro.MembershipEvent;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * What the health manager knows of one cluster from Kafka alone, so that a manager that takes over decides as the
 * one before would have: who the members are ({@code ring.epochs}) and which nodes were already declared dead
 * ({@code ring.membership}). Thread safe: the reader thread feeds it, the probing thread asks it.
 *
 * <p>The members are those of the orchestrator's active epoch (the latest READY, or PUBLISHED, record; after the
 * publisher REJECTED it, the last PUBLISHED one) together with those of the plan in flight (the latest PLANNED record
 * of a later epoch, unless it was CANCELLED), so a draining and a joining node are watched too. A node is declared when its latest
 * membership event (the topic is compacted per node, so it is the one that survives) is a FAIL or a REMOVE: a FAIL
 * is written at most once per life of a node, and a later JOIN starts a new life.
 */
public final class MembershipView {
  private final String clusterId;
  private final Map<String, MembershipEvent> latestEvents = new HashMap<>();
  private EpochRecord active;
  private EpochRecord published;
  private EpochRecord planned;
  /** Request ids the orchestrator refused (ring.rejected): a refused FAIL declared nothing. */
  private final Set<String> refused = new LinkedHashSet<>();
  private static final int REFUSED_KEPT = 10_000;
  /** The request ids of the latest membership events read (as many as {@link #REFUSED_KEPT}), in reading order. */
  private final Set<String> read = new LinkedHashSet<>();

  public MembershipView(String clusterId) {
    this.clusterId = clusterId;
  }

  /** A record of {@code ring.epochs}, in topic order; other clusters' records are ignored. */
  public synchronized void onEpoch(EpochRecord record) {
    if (!clusterId.equals(record.getClusterId())) {
      return;
    }
    long epoch = record.getEpoch();
    switch (record.getState()) {
      case PLANNED -> planned = record;
      case READY -> active = newer(active, record);
      case PUBLISHED -> {
        published = newer(published, record);
        active = newer(active, record);
      }
      case REJECTED -> {
        if (active != null && active.getEpoch() == epoch) {
          active = published;
        }
        if (planned != null && planned.getEpoch() == epoch) {
          planned = null; // a rejected plan removes nobody
        }
      }
      case SUPERSEDED -> {
        if (planned != null && planned.getEpoch() == epoch && planned.getPlanVersion() == record.getPlanVersion()) {
          planned = null; // the re-plan's PLANNED record, if any, follows
        }
      }
      case CANCELLED -> {
        // An operator cancelled the plan in flight: its joining node (perhaps one nobody started) is not watched.
        if (planned != null && planned.getEpoch() == epoch) {
          planned = null;
        }
      }
      default -> { } // UNKNOWN is from a newer writer
    }
    if (planned != null && active != null && planned.getEpoch() <= active.getEpoch()) {
      planned = null;
    }
  }

  /** An event of {@code ring.membership}, in topic order; other clusters' events and INITs are ignored. */
  public synchronized void onMembershipEvent(MembershipEvent event) {
    if (!clusterId.equals(event.getClusterId()) || event.getAction() == MembershipAction.INIT
        || event.getNodeId().isEmpty()) {
      return;
    }
    latestEvents.put(event.getNodeId(), event);
    if (event.getRequestId() != null && read.add(event.getRequestId()) && read.size() > REFUSED_KEPT) {
      read.remove(read.iterator().next());
    }
  }

  /**
   * Whether the event of request {@code requestId} was read, also when a later event of its node (an operator's CANCEL
   * or SET_WEIGHT naming it) covers it already.
   */
  public synchronized boolean hasRead(String requestId) {
    return read.contains(requestId);
  }

  /** The members the manager watches: of the active epoch and of the plan in flight. */
  public synchronized Set<String> members() {
    Set<String> members = new TreeSet<>();
    for (EpochRecord record : new EpochRecord[] {active, planned}) {
      if (record != null) {
        for (MemberSpec member : record.getMembers()) {
          members.add(member.getId());
        }
      }
    }
    return members;
  }

  /** The epoch of the active ring, -1 before the cluster has one. */
  public synchronized long activeEpoch() {
    return active == null ? -1 : active.getEpoch();
  }

  /**
   * A record of {@code ring.rejected}: the orchestrator refused request {@code requestId} of {@code clusterId}. A refused
   * FAIL declared nothing (after repeated rejections the cluster holds and refuses FAILs, asking for them again).
   */
  public synchronized void onRejected(String clusterId, String requestId) {
    if (requestId == null || !this.clusterId.equals(clusterId)) {
      return;
    }
    refused.add(requestId);
    if (refused.size() > REFUSED_KEPT) {
      refused.remove(refused.iterator().next());
    }
  }

  /**
   * Whether {@code node}'s latest membership event declares it dead (FAIL or REMOVE), and that took: the orchestrator did
   * not refuse it, or a plan in flight removes the node anyway (a second FAIL of a node whose repair is in flight is
   * refused as one that already failed). After repeated rejections the orchestrator holds and refuses FAILs, asking for
   * them again: such a node is not declared, and is watched (and failed) again.
   */
  public synchronized boolean declared(String node) {
    MembershipEvent latest = latestEvents.get(node);
    if (latest == null || (latest.getAction() != MembershipAction.FAIL
        && latest.getAction() != MembershipAction.REMOVE)) {
      return false;
    }
    return !refused.contains(latest.getRequestId()) || plannedWithout(node);
  }

  /** Whether a plan in flight (a later epoch than the active one) leaves {@code node} out. */
  private boolean plannedWithout(String node) {
    return planned != null && planned.getMembers().stream().noneMatch(m -> m.getId().equals(node));
  }

  /**
   * The nodes whose latest membership event is a FAIL written at or after {@code sinceMillis} (by the writer's clock:
   * a manager's or an operator's), in id order.
   */
  public synchronized Set<String> failedSince(long sinceMillis) {
    Set<String> failed = new TreeSet<>();
    latestEvents.forEach((node, e) -> {
      if (e.getAction() == MembershipAction.FAIL && e.getTimestampMillis() >= sinceMillis) {
        failed.add(node);
      }
    });
    return failed;
  }

  private static EpochRecord newer(EpochRecord current, EpochRecord candidate) {
    return current == null || candidate.getEpoch() >= current.getEpoch() ? candidate : current;
  }

  /** For tests and messages: the states this view was built from. */
  @Override
  public synchronized String toString() {
    return "MembershipView[" + clusterId + ": active " + describe(active) + ", planned " + describe(planned)
        + ", published " + describe(published) + ", " + latestEvents.size() + " nodes with events]";
  }

  private static String describe(EpochRecord r) {
    return r == null ? "none" : r.getEpoch() + " " + r.getState();
  }
}
