package io.ringshift.cli.internal.control;

import io.ringshift.cli.BadInputException;
import io.ringshift.orchestrator.MembershipChange;
import io.ringshift.orchestrator.admin.AdminException;
import io.ringshift.orchestrator.admin.PlanPreview;
import io.ringshift.ring.Member;
import io.ringshift.ring.MemberState;
import io.ringshift.ring.RingException;
import io.ringshift.schemas.avro.MembershipAction;
import io.ringshift.schemas.avro.MembershipEvent;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * One membership change an operator asks for (join, drain, fail, set-weight), checked for what is wrong whatever
 * the cluster looks like: a blank node id, a weight that is not finite and &gt; 0, a join without a zone, an
 * option that does not apply to the action. Whether the change fits the current membership (a join of a node
 * that is already a member) is the orchestrator's decision, which {@link #applyTo} repeats for {@code plan}.
 *
 * @param zone the joining node's zone; null for other actions
 * @param weight the joining node's weight (null: 1) or the new weight; null for drain and fail
 */
record ChangeSpec(MembershipAction action, String nodeId, String zone, Double weight) {
  /** The actions the command line writes. */
  static final Set<MembershipAction> ACTIONS =
      Set.of(MembershipAction.JOIN, MembershipAction.DRAIN, MembershipAction.FAIL, MembershipAction.SET_WEIGHT);

  /** @throws BadInputException naming the option and the rule it breaks */
  ChangeSpec {
    if (!ACTIONS.contains(action)) {
      throw new IllegalArgumentException("action was " + action + "; the command line writes " + ACTIONS);
    }
    String verb = verb(action);
    if (nodeId == null || nodeId.isBlank()) {
      throw new BadInputException(String.format(Locale.ROOT, "%s: node id was \"%s\"; a node id must not be blank",
          verb, nodeId == null ? "" : nodeId));
    }
    if (zone != null && action != MembershipAction.JOIN) {
      throw new BadInputException(String.format(Locale.ROOT,
          "%s of %s: --zone applies to join only (a member keeps its zone)", verb, nodeId));
    }
    if (weight != null && action != MembershipAction.JOIN && action != MembershipAction.SET_WEIGHT) {
      throw new BadInputException(String.format(Locale.ROOT,
          "%s of %s: --weight applies to join and set-weight only", verb, nodeId));
    }
    if (weight != null && !(Double.isFinite(weight) && weight > 0)) {
      throw new BadInputException(String.format(Locale.ROOT,
          "%s of %s: --weight was %s; weight must be finite and > 0", verb, nodeId, weight));
    }
    if (action == MembershipAction.JOIN) {
      if (zone == null || zone.isBlank()) {
        throw new BadInputException(String.format(Locale.ROOT,
            "join of %s: --zone was %s; a joining node needs a zone", nodeId, zone == null ? "missing" : "blank"));
      }
      try {
        new Member(nodeId, zone, weight == null ? 1.0 : weight, MemberState.ACTIVE);
      } catch (RingException e) {
        // The ring's message shows the id safely (control characters as '?'); the raw id may not print.
        throw new BadInputException("join: " + e.getMessage(), e);
      }
    }
    if (action == MembershipAction.SET_WEIGHT && weight == null) {
      throw new BadInputException("set-weight of " + nodeId + ": --weight is missing; give the new weight");
    }
  }

  /** The command's name for an action: join, drain, fail, set-weight. */
  static String verb(MembershipAction action) {
    return action.name().toLowerCase(Locale.ROOT).replace('_', '-');
  }

  /** The action a command name stands for. */
  static MembershipAction action(String verb) {
    for (MembershipAction a : ACTIONS) {
      if (verb(a).equals(verb)) {
        return a;
      }
    }
    throw new BadInputException("action was \"" + verb + "\"; it must be one of join, drain, fail, set-weight");
  }

  /** The event to write. */
  MembershipEvent toEvent(String clusterId, String requestId, String requestedBy, long timestampMillis) {
    return MembershipEvent.newBuilder()
        .setClusterId(clusterId)
        .setNodeId(nodeId)
        .setAction(action)
        .setZone(zone)
        .setWeight(weight)
        .setRequestId(requestId)
        .setRequestedBy(requestedBy)
        .setTimestampMillis(timestampMillis)
        .build();
  }

  /** "JOIN of node-012 (zone az-2, weight 1.0)". */
  String describe() {
    StringBuilder s = new StringBuilder(action.name()).append(" of ").append(nodeId);
    List<String> details = new ArrayList<>();
    if (zone != null) {
      details.add("zone " + zone);
    }
    if (action == MembershipAction.JOIN || weight != null) {
      details.add("weight " + (weight == null ? 1.0 : weight));
    }
    if (!details.isEmpty()) {
      s.append(" (").append(String.join(", ", details)).append(')');
    }
    return s.toString();
  }

  /**
   * The membership after this change, by the orchestrator's rules (docs/cli.md, "plan").
   *
   * @throws BadInputException when the orchestrator would reject the change, with the reason it would give
   */
  List<Member> applyTo(String clusterId, List<Member> members) {
    try {
      return PlanPreview.applyTo(toChange(), clusterId, members);
    } catch (AdminException e) {
      throw new BadInputException(e.getMessage(), e);
    }
  }

  /** The orchestrator's view of this change, as {@code plan} replays it (request id "plan"). */
  MembershipChange toChange() {
    return new MembershipChange(MembershipChange.Action.valueOf(action.name()), nodeId, zone, weight, "plan");
  }
}
