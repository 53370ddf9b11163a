package io.ringshift.cli.internal.control;

import io.ringshift.cli.BadInputException;
import io.ringshift.orchestrator.admin.ClusterView;
import io.ringshift.orchestrator.admin.ControlPlaneAdmin;
import io.ringshift.orchestrator.admin.ControlPlaneAdmin.Part;
import io.ringshift.schemas.avro.EpochRecord;
import io.ringshift.schemas.avro.MembershipAction;
import io.ringshift.schemas.avro.MembershipEvent;
import java.io.PrintWriter;
import java.time.Duration;
import java.util.EnumSet;
import java.util.Locale;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/** {@code ringshift cancel [EPOCH]}: abandons the plan in flight before it is published. */
@Command(
    name = "cancel",
    mixinStandardHelpOptions = true,
    sortOptions = false,
    description = {
      "Cancels the epoch in flight (planned, not READY yet): its tasks stop and are tombstoned, the fences they set "
          + "are lifted, what they copied is deleted from the targets, a CANCELLED record goes to ring.epochs, and "
          + "the cluster stays on its active epoch, ready for the next change (changes queued behind the epoch are "
          + "planned from it). The number of a cancelled epoch is never used again.",
      "A plan that repairs a failure cannot be cancelled: clients already route without the dead node, and its "
          + "ranges would stay under-replicated. An epoch that is READY or published cannot either: undo it with the "
          + "opposite change (a drain of a node that joined).",
      "Waits up to 15 s for the orchestrator's answer: exit 0 cancelled, 2 refused (the reason is printed), 1 no "
          + "answer."
    })
public final class CancelCommand implements Callable<Integer> {
  @Spec private CommandSpec spec;

  @Parameters(index = "0", arity = "0..1", paramLabel = "EPOCH",
      description = "The epoch to cancel (default: the epoch in flight); it must be the epoch in flight.")
  private Long epoch;

  @Mixin private ClusterOption cluster;

  @Mixin private KafkaOptions kafka;

  @Override
  public Integer call() {
    String clusterId = cluster.id();
    if (epoch != null && epoch < 1) {
      throw new BadInputException("EPOCH was " + epoch + "; an epoch is >= 1");
    }
    PrintWriter out = spec.commandLine().getOut();
    PrintWriter err = spec.commandLine().getErr();
    try (ControlPlaneAdmin client = kafka.connect()) {
      ControlPlaneAdmin.Contents contents = client.read(EnumSet.of(Part.EPOCHS));
      Requests.warnUnreadable(contents.unreadable(), err);
      ClusterView view = ClusterView.of(clusterId, contents, 0);
      if (!view.exists()) {
        throw new BadInputException("cluster " + clusterId + " has no epoch at " + client.bootstrap()
            + "; nothing to cancel");
      }
      EpochRecord inFlight = view.inFlight();
      if (inFlight == null) {
        EpochRecord active = view.active();
        throw new BadInputException(String.format(Locale.ROOT, "cluster %s has no epoch in flight%s; only a plan in "
            + "flight can be cancelled (undo a published change with the opposite change)", clusterId,
            active == null ? "" : " (it is on epoch " + active.getEpoch() + ")"));
      }
      if (epoch != null && epoch != inFlight.getEpoch()) {
        throw new BadInputException(String.format(Locale.ROOT, "EPOCH was %d, but the epoch in flight of cluster %s "
            + "is %d; only the epoch in flight can be cancelled", epoch, clusterId, inFlight.getEpoch()));
      }
      // The orchestrator decides (it refuses a failure's repair too); the cancel is keyed by the node of the change.
      MembershipEvent event = MembershipEvent.newBuilder()
          .setClusterId(clusterId)
          .setNodeId(inFlight.getCause().getNodeId())
          .setAction(MembershipAction.CANCEL)
          .setEpoch(inFlight.getEpoch())
          .setRequestId(Requests.newRequestId())
          .setRequestedBy(Requests.requestedBy())
          .setTimestampMillis(System.currentTimeMillis())
          .build();
      String written = String.format(Locale.ROOT, "CANCEL of epoch %d (%s of node %s) on cluster %s",
          inFlight.getEpoch(), inFlight.getCause().getAction(), inFlight.getCause().getNodeId(), clusterId);
      return Requests.write(client, event, written, (Duration) null, out, err);
    }
  }
}
