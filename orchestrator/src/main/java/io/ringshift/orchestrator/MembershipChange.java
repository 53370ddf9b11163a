package io.ringshift.orchestrator;

import io.ringshift.ring.Member;
import io.ringshift.ring.MemberState;
import io.ringshift.ring.RingException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * One requested change to a cluster's membership, and the rules that decide whether it applies to a given
 * membership. A refused change names the rule it broke and changes nothing.
 *
 * @param action what to do
 * @param nodeId the node, never blank
 * @param zone the zone of a joining node (required for JOIN, ignored otherwise)
 * @param weight the weight of a joining node (default 1) or the new weight (required for SET_WEIGHT)
 * @param requestId the request that asked for it, carried into the epoch record as its cause
 * @param epoch the epoch a CANCEL cancels; null for every other action
 */
public record MembershipChange(
    Action action,
    String nodeId,
    String zone,
    Double weight,
    String requestId,
    String requestedBy,
    long timestampMillis,
    Long epoch) {

  /** A change that names no epoch (every action but CANCEL). */
  public MembershipChange(Action action, String nodeId, String zone, Double weight, String requestId,
      String requestedBy, long timestampMillis) {
    this(action, nodeId, zone, weight, requestId, requestedBy, timestampMillis, null);
  }

  /** A change with no requester or time, for tests and tools. */
  public MembershipChange(Action action, String nodeId, String zone, Double weight, String requestId) {
    this(action, nodeId, zone, weight, requestId, "", 0L);
  }

  /** The changes an operator or health manager can ask for. */
  public enum Action {
    /** Declares a new cluster with its initial membership; never a change to an existing one. */
    INIT,
    JOIN,
    DRAIN,
    FAIL,
    SET_WEIGHT,
    REMOVE,
    /**
     * Abandons the plan of {@link #epoch()} while it is in flight; not a membership change, so it never applies to
     * a membership ({@link #applyTo} refuses it) and is never queued.
     */
    CANCEL
  }

  /** The outcome of applying a change: the new membership, or why the change was refused. */
  public sealed interface Outcome permits Applied, Refused {}

  /** The change applies; {@code members} is the membership after it. */
  public record Applied(List<Member> members) implements Outcome {}

  /** The change was refused; nothing changes. */
  public record Refused(String reason) implements Outcome {}

  /** True for changes that remove a node because it is dead, not because it leaves gracefully. */
  public boolean isFailure() {
    return action == Action.FAIL;
  }

  /** Applies the change to {@code members} of cluster {@code clusterId}. */
  public Outcome applyTo(String clusterId, List<Member> members) {
    if (nodeId == null || nodeId.isBlank()) {
      return new Refused("node id was \"" + (nodeId == null ? "" : nodeId) + "\"; a node id must not be blank");
    }
    if (action == Action.INIT) {
      return refused("INIT of cluster %s: it already exists; init declares a new cluster only", clusterId);
    }
    if (action == Action.CANCEL) {
      return refused("CANCEL of epoch %s: a cancel abandons the plan in flight and changes no membership", epoch);
    }
    int index = indexOf(members, nodeId);
    List<Member> next = new ArrayList<>(members);
    try {
      switch (action) {
        case JOIN -> {
          if (index >= 0) {
            return refused("%s of node %s: it is already a member of cluster %s", action, nodeId, clusterId);
          }
          if (zone == null || zone.isBlank()) {
            return refused("JOIN of node %s: zone was missing; a joining node needs a zone", nodeId);
          }
          next.add(new Member(nodeId, zone, weight == null ? 1.0 : weight, MemberState.ACTIVE));
        }
        case DRAIN, FAIL, REMOVE -> {
          if (index < 0) {
            return refused("%s of node %s: it is not a member of cluster %s", action, nodeId, clusterId);
          }
          if (members.size() == 1) {
            return refused("%s of node %s: it is the last member of cluster %s; a cluster needs at least one",
                action, nodeId, clusterId);
          }
          next.remove(index);
        }
        case SET_WEIGHT -> {
          if (index < 0) {
            return refused("SET_WEIGHT of node %s: it is not a member of cluster %s", nodeId, clusterId);
          }
          if (weight == null) {
            return refused("SET_WEIGHT of node %s: weight was missing", nodeId);
          }
          next.set(index, members.get(index).withWeight(weight));
        }
        default -> throw new IllegalStateException("unhandled action " + action);
      }
    } catch (RingException e) {
      return new Refused(e.getMessage());
    }
    return new Applied(List.copyOf(next));
  }

  private static int indexOf(List<Member> members, String id) {
    for (int i = 0; i < members.size(); i++) {
      if (members.get(i).id().equals(id)) {
        return i;
      }
    }
    return -1;
  }

  private static Refused refused(String format, Object... args) {
    return new Refused(String.format(Locale.ROOT, format, args));
  }
}
