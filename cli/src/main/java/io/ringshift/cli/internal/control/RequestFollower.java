package io.ringshift.cli.internal.control;

import io.ringshift.protocol.Cutover;
import io.ringshift.cli.Ringshift;
import io.ringshift.orchestrator.admin.ClusterView;
import io.ringshift.orchestrator.admin.ControlPlaneAdmin;
import io.ringshift.orchestrator.admin.ControlPlaneAdmin.Contents;
import io.ringshift.orchestrator.admin.ControlPlaneAdmin.Part;
import io.ringshift.orchestrator.admin.EpochProgress;
import io.ringshift.schemas.avro.EpochRecord;
import io.ringshift.schemas.avro.EpochState;
import io.ringshift.schemas.avro.MemberSpec;
import io.ringshift.schemas.avro.MembershipAction;
import io.ringshift.schemas.avro.MembershipEvent;
import io.ringshift.schemas.avro.RejectedEvent;
import java.io.PrintWriter;
import java.time.Duration;
import java.util.EnumSet;
import java.util.List;
import java.util.Locale;
import java.util.Objects;

/**
 * Writes a request and follows it on the topics from one consumer ({@link ControlPlaneAdmin#follow}), printing each
 * stage once as it is reached: the orchestrator's answer (PLANNED, or the rejection), then with {@code --wait} the
 * copy progress, READY and PUBLISHED.
 *
 * <p>Which epoch carries the request out: the first record naming its request id, and after that any later epoch
 * whose membership has the request's effect (the node joined, left, or has the new weight). So a re-plan (a FAIL
 * while the change was in flight moves it to the next number; a rollback plans it again under a new one) is
 * followed too. A change queued behind an epoch in flight has no record until its turn; without {@code --wait}
 * the command says so and exits 0.
 */
final class RequestFollower {
  /** How long a change command without {@code --wait} waits for the orchestrator's answer. */
  static final Duration ANSWER_WAIT = Duration.ofSeconds(15);

  /** Progress lines are printed when the verified count changes, and at least this often. */
  private static final Duration PROGRESS_EVERY = Duration.ofSeconds(10);

  private static final Duration POLL = Duration.ofMillis(250);
  /** While task statuses stream in, the progress is computed at most once per this. */
  private static final Duration GATHER = Duration.ofMillis(100);

  private final ControlPlaneAdmin client;
  private final MembershipEvent request;
  private final PrintWriter out;
  private final PrintWriter err;
  private final String clusterId;
  private int epochsSeen;
  private int rejectedSeen;

  private RequestFollower(ControlPlaneAdmin client, MembershipEvent request, PrintWriter out, PrintWriter err) {
    this.client = client;
    this.request = request;
    this.out = out;
    this.err = err;
    this.clusterId = request.getClusterId();
  }

  /**
   * Writes {@code request} and follows it: without {@code wait}, to the orchestrator's answer; with it, to PUBLISHED.
   *
   * @return 0 planned (or published, with a wait) or queued; 2 rejected, cancelled, or the publisher rejected its
   *     epoch; 1 no answer (or not published) in time
   */
  static int writeAndFollow(ControlPlaneAdmin client, MembershipEvent request, String written, Duration wait,
      PrintWriter out, PrintWriter err) {
    try (ControlPlaneAdmin.Follower follower = client.follow(EnumSet.allOf(Part.class))) {
      RequestFollower f = new RequestFollower(client, request, out, err);
      // Read to the end before writing: every record after this point is news, however fast the orchestrator is.
      Contents before = follower.poll(Duration.ZERO);
      f.epochsSeen = before.epochs().size();
      f.rejectedSeen = before.rejected().size();
      client.send(request);
      out.printf(Locale.ROOT, "request %s: %s written to %s at %s%n", request.getRequestId(), written,
          client.topics().membership().name(), client.bootstrap());
      out.flush();
      return f.follow(follower, wait);
    }
  }

  private int follow(ControlPlaneAdmin.Follower follower, Duration wait) {
    long start = System.nanoTime();
    Duration answerWait = wait == null ? ANSWER_WAIT : wait;
    List<EpochRecord> answer = List.of();
    Contents contents = null;
    while (answer.isEmpty() && System.nanoTime() - start < answerWait.toNanos()) {
      contents = follower.poll(POLL);
      Integer rejected = rejection(contents);
      if (rejected != null) {
        return rejected;
      }
      answer = namingRequest(contents);
    }
    if (answer.isEmpty()) {
      return noAnswer(contents, answerWait);
    }
    answer.forEach(e -> out.println(Reports.outcome(e)));
    out.flush();
    EpochRecord planned = answer.get(answer.size() - 1);
    if (planned.getState() == EpochState.CANCELLED) {
      return 0;
    }
    if (wait == null) {
      out.printf(Locale.ROOT, "follow it with: ringshift status --watch --cluster %s (or run the command with "
          + "--wait to follow it to PUBLISHED)%n", clusterId);
      out.flush();
      return 0;
    }
    return toPublished(follower, planned, start, wait);
  }

  /** 2 when a new record of ring.rejected refuses the request (printed); 0 when it withdrew a queued join; else null. */
  private Integer rejection(Contents contents) {
    List<RejectedEvent> rejected = contents.rejected();
    for (int i = rejectedSeen; i < rejected.size(); i++) {
      RejectedEvent r = rejected.get(i);
      if (request.getRequestId().equals(r.getRequestId())) {
        err.printf(Locale.ROOT, "ringshift: request %s was rejected: %s%n", request.getRequestId(), r.getReason());
        err.flush();
        return Ringshift.EXIT_BAD_INPUT;
      }
      if (r.getReason() != null && r.getReason().contains("(FAIL request " + request.getRequestId() + ")")) {
        out.printf(Locale.ROOT, "request %s withdrew request %s: %s%n", request.getRequestId(), r.getRequestId(),
            r.getReason());
        out.flush();
        return 0;
      }
    }
    rejectedSeen = rejected.size();
    return null;
  }

  /**
   * The new records naming the request, the last of each epoch, in log order: a change that moves nothing is PLANNED
   * and READY in one transaction (READY is the better answer); a FAIL of a member is a failure epoch (PLANNED and
   * READY) and the plan of its repair, the epoch to follow.
   */
  private List<EpochRecord> namingRequest(Contents contents) {
    List<EpochRecord> epochs = contents.epochs();
    java.util.LinkedHashMap<Long, EpochRecord> found = new java.util.LinkedHashMap<>();
    int next = epochs.size();
    for (int i = epochsSeen; i < epochs.size(); i++) {
      EpochRecord e = epochs.get(i);
      if (clusterId.equals(e.getClusterId()) && e.getCause() != null
          && request.getRequestId().equals(e.getCause().getRequestId())) {
        found.put(e.getEpoch(), e);
        next = i + 1; // what comes after the answer (a quick PUBLISHED) is followed next
      }
    }
    epochsSeen = next;
    return List.copyOf(found.values());
  }

  private int noAnswer(Contents contents, Duration waited) {
    ClusterView view = contents == null ? null : ClusterView.of(clusterId, contents, 0);
    if (view != null && view.inFlight() != null) {
      out.printf(Locale.ROOT, "request %s is queued behind epoch %d, which is in flight: the orchestrator plans it "
          + "when that epoch is READY (it would have refused it at once if it did not apply); `ringshift status "
          + "--watch --cluster %s` follows both%n", request.getRequestId(), view.inFlight().getEpoch(), clusterId);
      out.flush();
      return 0;
    }
    err.printf(Locale.ROOT, "ringshift: no answer to request %s within %d s; is the orchestrator running? "
        + "(`ringshift dev` runs one; `ringshift status` shows what it did)%n", request.getRequestId(),
        waited.toSeconds());
    err.flush();
    return Requests.EXIT_NO_OUTCOME;
  }

  /** After the answer: the copy progress, READY and PUBLISHED of the epoch that carries the request out. */
  private int toPublished(ControlPlaneAdmin.Follower follower, EpochRecord planned, long start, Duration wait) {
    long following = planned.getEpoch();
    Integer planVersion = planned.getPlanVersion();
    boolean ready = planned.getState() == EpochState.READY;
    int lastVerified = -1;
    long lastProgress = 0;
    while (System.nanoTime() - start < wait.toNanos()) {
      Contents contents = follower.poll(POLL, GATHER);
      Integer rejected = rejection(contents);
      if (rejected != null) {
        return rejected;
      }
      List<EpochRecord> epochs = contents.epochs();
      for (int i = epochsSeen; i < epochs.size(); i++) {
        EpochRecord e = epochs.get(i);
        epochsSeen = i + 1;
        if (!clusterId.equals(e.getClusterId()) || e.getEpoch() < following) {
          continue;
        }
        boolean ours = carriesOut(e);
        switch (e.getState()) {
          case PUBLISHED -> {
            if (ours) {
              out.printf(Locale.ROOT, "epoch %d PUBLISHED at %s by key %s: clients route by it%n", e.getEpoch(),
                  Text.time(e.getTimestampMillis()), e.getSigningKeyId());
              out.flush();
              return 0;
            }
          }
          case READY -> {
            if (ours && (!ready || e.getEpoch() != following)) {
              following = e.getEpoch();
              ready = true;
              out.printf(Locale.ROOT, "epoch %d READY: every task verified; waiting for the publisher%n",
                  e.getEpoch());
              out.flush();
            }
          }
          case PLANNED -> {
            if (ours && (e.getEpoch() != following || !Objects.equals(e.getPlanVersion(), planVersion))) {
              following = e.getEpoch();
              planVersion = e.getPlanVersion();
              ready = false;
              lastVerified = -1;
              out.println(Reports.outcome(e) + (e.getReason() == null ? "" : "; " + e.getReason()));
              out.flush();
            }
          }
          case STAGED -> {
            if (ours && e.getEpoch() == following) {
              out.printf(Locale.ROOT, "epoch %d stage %s published at %s: clients write both rings and read the %s "
                  + "one, with no write pause%n", e.getEpoch(), e.getStage() != null && e.getStage() == 1
                      ? "WRITE_BOTH_READ_OLD" : "WRITE_BOTH_READ_NEW", Text.time(e.getTimestampMillis()),
                  e.getStage() != null && e.getStage() == 1 ? "previous" : "new");
              out.flush();
            }
          }
          case CONVERGED -> {
            if (ours && e.getEpoch() == following) {
              out.printf(Locale.ROOT, "epoch %d barrier: %s%n", e.getEpoch(), e.getReason());
              out.flush();
            }
          }
          case FENCE_CUTOVER -> {
            if (ours && e.getEpoch() == following) {
              out.printf(Locale.ROOT, "epoch %d is %s%s%n", e.getEpoch(), e.getReason(),
                  Cutover.isInPlaceNote(e) ? "" : ": writes to its moving ranges wait at the cutover");
              out.flush();
            }
          }
          case REVERTED -> {
            if (e.getEpoch() == following) {
              out.printf(Locale.ROOT, "epoch %d REVERTED: %s%n", e.getEpoch(), e.getReason());
              out.flush();
            }
          }
          case SUPERSEDED -> {
            if (e.getEpoch() == following) {
              out.printf(Locale.ROOT, "epoch %d plan %s SUPERSEDED: %s%n", e.getEpoch(), e.getPlanVersion(),
                  e.getReason());
              out.flush();
            }
          }
          case CANCELLED -> {
            if (e.getEpoch() == following) {
              err.printf(Locale.ROOT, "ringshift: epoch %d was CANCELLED: %s%n", e.getEpoch(), e.getReason());
              err.flush();
              return Ringshift.EXIT_BAD_INPUT;
            }
          }
          case REJECTED -> {
            if (e.getEpoch() == following && ready) {
              err.printf(Locale.ROOT, "ringshift: epoch %d was REJECTED by the publisher: %s; the orchestrator rolls "
                  + "back and plans the change again (`ringshift status` shows it)%n", e.getEpoch(), e.getReason());
              err.flush();
              return Ringshift.EXIT_BAD_INPUT;
            }
          }
          default -> { }
        }
      }
      if (!ready) {
        ClusterView view = ClusterView.of(clusterId, contents, 0);
        if (view.inFlight() != null && view.inFlight().getEpoch() == following) {
          EpochProgress p = EpochProgress.of(view.tasks(), System.currentTimeMillis());
          long now = System.nanoTime();
          if (p.verified() != lastVerified || now - lastProgress > PROGRESS_EVERY.toNanos()) {
            lastVerified = p.verified();
            lastProgress = now;
            out.printf(Locale.ROOT, "epoch %d copying %d/%d verified  %s%n", following, p.verified(), p.tasks(),
                p.line());
            out.flush();
          }
        }
      }
    }
    err.printf(Locale.ROOT, "ringshift: epoch %d was not PUBLISHED within %d s (%s); the request stands: "
        + "`ringshift status --watch --cluster %s` follows it%n", following, wait.toSeconds(),
        ready ? "it is READY: is the publisher running?" : "its tasks are still copying", clusterId);
    err.flush();
    return Requests.EXIT_NO_OUTCOME;
  }

  /** Whether epoch record {@code e} has the request's effect (or names the request): it carries the request out. */
  private boolean carriesOut(EpochRecord e) {
    if (e.getCause() != null && request.getRequestId().equals(e.getCause().getRequestId())) {
      return true;
    }
    MembershipAction action = request.getAction();
    MemberSpec member = e.getMembers().stream().filter(m -> m.getId().equals(request.getNodeId())).findFirst()
        .orElse(null);
    return switch (action) {
      case JOIN -> member != null;
      case DRAIN, FAIL, REMOVE -> member == null;
      case SET_WEIGHT -> member != null && request.getWeight() != null && member.getWeight() == request.getWeight();
      default -> false;
    };
  }
}
