package io.ringshift.cli.internal;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.ringshift.ring.Member;
import io.ringshift.ring.ReplicaSet;
import io.ringshift.ring.RingSnapshot;
import io.ringshift.ring.UnderReplication;
import java.nio.file.Path;
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

  static ObjectNode describe(RingSnapshot ring, int snapshotBytes) {
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

    ObjectNode root = JsonOutput.object();
    root.put("cluster", ring.clusterId());
    root.put("epoch", ring.epoch());
    root.put("checksum", ring.checksumHex());
    root.put("hash", ring.hashId());
    root.put("policy", ring.policyId());
    root.put("vnodes", ring.vnodes());
    root.put("replicas", ring.replicas());
    root.put("memberCount", ring.memberCount());
    ArrayNode zones = root.putArray("zones");
    ring.zones().forEach(zones::add);
    root.put("tokenCount", ring.tokenCount());
    root.put("snapshotBytes", snapshotBytes);
    ArrayNode memberArray = root.putArray("members");
    for (int i = 0; i < members.size(); i++) {
      Member m = members.get(i);
      ObjectNode node = memberArray.addObject();
      node.put("id", m.id());
      node.put("zone", m.zone());
      node.put("weight", m.weight());
      node.put("state", m.state().name());
      node.put("tokens", ring.tokenCount(i));
      node.put("weightShare", m.weight() / totalWeight);
      node.put("keyspaceShare", primary[i]);
      node.put("replicaShare", replica[i]);
    }
    ArrayNode under = root.putArray("underReplicated");
    for (UnderReplication u : ring.underReplication()) {
      ObjectNode node = under.addObject();
      node.put("reason", u.reason().name());
      node.put("ranges", u.ranges());
      node.put("keyspaceFraction", u.keyspaceFraction());
      node.put("detail", u.detail());
    }
    return root;
  }
}
