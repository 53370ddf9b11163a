package io.ringshift.cli.internal;

import io.ringshift.ring.Member;
import io.ringshift.ring.ReplicaSet;
import io.ringshift.ring.RingSnapshot;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/** {@code ringshift ring show}: a snapshot as JSON, with the shares each member actually gets. */
@Command(
    name = "show",
    mixinStandardHelpOptions = true,
    description = "Verifies a snapshot file and prints it as JSON: parameters, checksum, members with their token "
        + "counts and keyspace shares, and under-replicated ranges.")
public final class RingShowCommand implements Callable<Integer> {
  @Spec private CommandSpec spec;

  @Parameters(index = "0", paramLabel = "FILE", description = "Snapshot file.")
  private Path file;

  @Override
  public Integer call() {
    SnapshotFiles.Loaded loaded = SnapshotFiles.read(file);
    JsonOutput.print(spec.commandLine().getOut(), describe(loaded.ring(), loaded.bytes()));
    return 0;
  }

  /** The snapshot's parameters, its members with the shares they get, and its under-replicated ranges. */
  record RingJson(String cluster, long epoch, String checksum, String hash, String policy, int vnodes, int replicas,
      int memberCount, List<String> zones, int tokenCount, int snapshotBytes, List<MemberJson> members,
      List<UnderReplicatedJson> underReplicated) {}

  /** {@code keyspaceShare}: the keyspace it is primary for; {@code replicaShare}: that it holds a replica of. */
  record MemberJson(String id, String zone, double weight, String state, int tokens, double weightShare,
      double keyspaceShare, double replicaShare) {}

  record UnderReplicatedJson(String reason, int ranges, double keyspaceFraction, String detail) {}

  static RingJson describe(RingSnapshot ring, int snapshotBytes) {
    double[] primary = new double[ring.memberCount()];
    double[] replica = new double[ring.memberCount()];
    for (int r = 0; r < ring.tokenCount(); r++) {
      double fraction = ring.rangeFraction(r);
      primary[ring.tokenOwner(r)] += fraction;
      ReplicaSet set = ring.replicasOfRange(r);
      for (int j = 0; j < set.size(); j++) {
        replica[set.memberIndex(j)] += fraction;
      }
    }
    List<Member> members = ring.members();
    double totalWeight = members.stream().mapToDouble(Member::weight).sum();
    List<MemberJson> shares = new ArrayList<>();
    for (int i = 0; i < members.size(); i++) {
      Member m = members.get(i);
      shares.add(new MemberJson(m.id(), m.zone(), m.weight(), m.state().name(), ring.tokenCount(i),
          m.weight() / totalWeight, primary[i], replica[i]));
    }
    return new RingJson(ring.clusterId(), ring.epoch(), ring.checksumHex(), ring.hashId(), ring.policyId(),
        ring.vnodes(), ring.replicas(), ring.memberCount(), ring.zones(), ring.tokenCount(), snapshotBytes, shares,
        ring.underReplication().stream().map(u -> new UnderReplicatedJson(u.reason().name(), u.ranges(),
            u.keyspaceFraction(), u.detail())).toList());
  }
}
