package io.ringshift.cli.internal.control;

import io.ringshift.cli.internal.InputFiles;
import io.ringshift.orchestrator.admin.MembersFile;
import io.ringshift.orchestrator.admin.ControlPlaneAdmin;
import io.ringshift.protocol.EpochRecords;
import io.ringshift.cli.BadInputException;
import io.ringshift.orchestrator.admin.ControlPlaneAdmin.Part;
import io.ringshift.ring.Member;
import io.ringshift.ring.PlacementPolicy;
import io.ringshift.ring.RingBuilder;
import io.ringshift.ring.RingException;
import io.ringshift.ring.RingSnapshot;
import io.ringshift.ring.UnderReplication;
import io.ringshift.schemas.avro.EpochRecord;
import io.ringshift.schemas.avro.MembershipAction;
import io.ringshift.schemas.avro.MembershipEvent;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.time.Duration;
import java.util.EnumSet;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** {@code ringshift init}: declares a new cluster's initial membership as its first epoch. */
@Command(
    name = "init",
    mixinStandardHelpOptions = true,
    sortOptions = false,
    description = {
      "Declares a new cluster: writes an INIT event with the initial membership to ring.membership, and prints "
          + "its request id. The orchestrator makes it epoch 1 (PLANNED and READY at once: a new cluster holds no "
          + "data, so nothing is copied).",
      "The members file is checked first, by building the ring locally: an invalid member or parameter exits "
          + "with 2 and writes nothing. A cluster that already has an epoch on ring.epochs is refused (exit 2); "
          + "so is a second INIT that races this one, by the orchestrator."
    })
public final class InitCommand implements Callable<Integer> {
  @Spec private CommandSpec spec;

  @Option(names = "--members", required = true, paramLabel = "FILE",
      description = "JSON members file (as for `ring build`).")
  private Path members;

  @Mixin private ClusterOption cluster;

  @Option(names = "--vnodes", paramLabel = "V", defaultValue = "" + RingBuilder.DEFAULT_VNODES,
      description = "Tokens per unit of weight (default: ${DEFAULT-VALUE}).")
  private int vnodes;

  @Option(names = "--replicas", paramLabel = "R", defaultValue = "" + RingBuilder.DEFAULT_REPLICAS,
      description = "Replicas per key (default: ${DEFAULT-VALUE}).")
  private int replicas;

  @Option(names = "--policy", paramLabel = "POLICY", defaultValue = "hashed",
      description = "Placement policy of the cluster's rings: hashed (tokens derived from node ids) or balanced "
          + "(tokens chosen by the balanced allocator, docs/placement.md section 12; fewer tokens per node for the "
          + "same balance). Fixed for the cluster's life (default: ${DEFAULT-VALUE}).")
  private String policyName;

  @Mixin private KafkaOptions kafka;

  @Option(names = "--wait", arity = "0..1", paramLabel = "SECONDS", fallbackValue = Requests.DEFAULT_WAIT_SECONDS,
      preprocessor = Requests.WaitPreprocessor.class,
      description = "Follow epoch 1 to PUBLISHED (exit 0), or print why it was rejected (exit 2); exit 1 when it is "
          + "not published within SECONDS (default ${FALLBACK-VALUE}). Without --wait the command waits up to 15 s "
          + "for the orchestrator's answer.")
  private Integer waitSeconds;

  @Override
  public Integer call() {
    String clusterId = cluster.id();
    List<Member> memberList = MembersFile.parse(members.toString(), InputFiles.read(members, "members file"));
    RingSnapshot ring;
    try {
      PlacementPolicy policy = PlacementPolicy.parse(policyName);
      ring = RingSnapshot.builder().clusterId(clusterId).epoch(1).policy(policy).vnodes(vnodes).replicas(replicas)
          .members(memberList).build();
    } catch (RingException e) {
      throw new BadInputException("cannot build the ring: " + e.getMessage(), e);
    }
    Duration wait = Requests.waitOf(waitSeconds);
    PrintWriter out = spec.commandLine().getOut();
    PrintWriter err = spec.commandLine().getErr();
    try (ControlPlaneAdmin client = kafka.connect()) {
      ControlPlaneAdmin.Contents contents = client.read(EnumSet.of(Part.EPOCHS));
      Requests.warnUnreadable(contents.unreadable(), err);
      refuseAnExistingCluster(clusterId, contents.epochs(), client.bootstrap());
      MembershipEvent event = MembershipEvent.newBuilder()
          .setClusterId(clusterId)
          .setNodeId("")
          .setAction(MembershipAction.INIT)
          .setRequestId(Requests.newRequestId())
          .setRequestedBy(Requests.requestedBy())
          .setTimestampMillis(System.currentTimeMillis())
          .setInitialMembers(EpochRecords.specs(ring.members()))
          .setPolicyId(ring.policy() == PlacementPolicy.HASHED ? null : ring.policyId())
          .setVnodes(vnodes)
          .setReplicas(replicas)
          .build();
      String written = String.format(Locale.ROOT,
          "INIT of cluster %s (%d members in %d zones, vnodes %d, replicas %d%s, checksum %.12s)",
          clusterId, ring.memberCount(), ring.zones().size(), ring.vnodes(), ring.replicas(),
          ring.policy() == PlacementPolicy.HASHED ? "" : ", policy balanced", ring.checksumHex());
      for (UnderReplication u : ring.underReplication()) {
        err.printf(Locale.ROOT, "ringshift: warning: under-replicated: %s (%d ranges, %.1f%% of the keyspace)%n",
            u.detail(), u.ranges(), 100 * u.keyspaceFraction());
      }
      err.flush();
      return Requests.write(client, event, written, wait, out, err);
    }
  }

  private static void refuseAnExistingCluster(String clusterId, List<EpochRecord> epochs, String bootstrap) {
    EpochRecord latest = null;
    for (EpochRecord e : epochs) {
      if (clusterId.equals(e.getClusterId())) {
        latest = e;
      }
    }
    if (latest != null) {
      throw new BadInputException(String.format(Locale.ROOT,
          "cluster %s already exists at %s (latest epoch record: epoch %d %s at %s); init declares a new cluster "
              + "only: use join, drain, fail or set-weight to change it", clusterId, bootstrap, latest.getEpoch(),
          latest.getState(), Text.time(latest.getTimestampMillis())));
    }
  }
}
