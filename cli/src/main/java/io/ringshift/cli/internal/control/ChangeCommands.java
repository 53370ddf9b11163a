package io.ringshift.cli.internal.control;

import io.ringshift.orchestrator.admin.ControlPlaneAdmin;
import io.ringshift.schemas.avro.MembershipAction;
import java.time.Duration;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * {@code ringshift join|drain|fail|set-weight NODE}: writes one membership event and prints its request id;
 * with {@code --wait}, reports the epoch it caused or why it was rejected.
 */
public final class ChangeCommands {
  private ChangeCommands() {}

  /** What the four commands share: the node, the cluster, Kafka and the wait. */
  abstract static class Change implements Callable<Integer> {
    @Spec CommandSpec spec;

    @Parameters(index = "0", paramLabel = "NODE", description = "The node's id (stable; never reused).")
    String node;

    @Mixin ClusterOption cluster;

    @Mixin KafkaOptions kafka;

    @Option(names = "--wait", arity = "0..1", paramLabel = "SECONDS",
        fallbackValue = Requests.DEFAULT_WAIT_SECONDS, preprocessor = Requests.WaitPreprocessor.class,
        description = "Follow the change to PUBLISHED, printing each stage as it is reached (PLANNED, copying "
            + "n/N verified, READY, PUBLISHED; exit 0), or why it was rejected or cancelled (exit 2); exit 1 when it "
            + "is not published within SECONDS (default ${FALLBACK-VALUE}). Without --wait the command waits up to "
            + "15 s for the orchestrator's answer: planned (exit 0), queued behind the epoch in flight (exit 0), "
            + "rejected (exit 2), none (exit 1).")
    Integer waitSeconds;

    abstract ChangeSpec change();

    @Override
    public Integer call() {
      // Everything that can be checked without Kafka is checked before connecting: nothing is written.
      ChangeSpec change = change();
      String clusterId = cluster.id();
      Duration wait = Requests.waitOf(waitSeconds);
      try (ControlPlaneAdmin client = kafka.connect()) {
        var event = change.toEvent(clusterId, Requests.newRequestId(), Requests.requestedBy(),
            System.currentTimeMillis());
        return Requests.write(client, event, change.describe() + " on cluster " + clusterId, wait,
            spec.commandLine().getOut(), spec.commandLine().getErr());
      }
    }
  }

  @Command(name = "join", mixinStandardHelpOptions = true, sortOptions = false,
      description = "Adds NODE to the cluster: the orchestrator plans the next epoch and the tasks that copy the "
          + "ranges NODE gains from their current replicas.")
  public static final class Join extends Change {
    @Option(names = "--zone", paramLabel = "ZONE", description = "The node's availability zone (required).")
    String zone;

    @Option(names = "--weight", paramLabel = "W", description = "The node's weight (default 1): it gets "
        + "round(W * vnodes) tokens.")
    Double weight;

    @Override
    ChangeSpec change() {
      return new ChangeSpec(MembershipAction.JOIN, node, zone, weight);
    }
  }

  @Command(name = "drain", mixinStandardHelpOptions = true, sortOptions = false,
      description = "Plans NODE's removal: everything it holds is copied to the new replicas before it leaves.")
  public static final class Drain extends Change {
    @Override
    ChangeSpec change() {
      return new ChangeSpec(MembershipAction.DRAIN, node, null, null);
    }
  }

  @Command(name = "fail", mixinStandardHelpOptions = true, sortOptions = false,
      description = "Declares NODE dead (confirmed, not merely suspected): its ranges are served by the surviving "
          + "replicas at once and REPAIR tasks rebuild the lost replicas from survivors.")
  public static final class Fail extends Change {
    @Override
    ChangeSpec change() {
      return new ChangeSpec(MembershipAction.FAIL, node, null, null);
    }
  }

  @Command(name = "set-weight", mixinStandardHelpOptions = true, sortOptions = false,
      description = "Changes NODE's weight: only the ranges that change hands move.")
  public static final class SetWeight extends Change {
    @Option(names = "--weight", paramLabel = "W", description = "The new weight (required, finite and > 0).")
    Double weight;

    @Override
    ChangeSpec change() {
      return new ChangeSpec(MembershipAction.SET_WEIGHT, node, null, weight);
    }
  }
}
