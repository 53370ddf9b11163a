package io.ringshift.cli.internal;

import io.ringshift.orchestrator.admin.MembersFile;
import io.ringshift.cli.BadInputException;
import io.ringshift.ring.Member;
import io.ringshift.ring.RingBuilder;
import io.ringshift.ring.RingException;
import io.ringshift.ring.RingSnapshot;
import io.ringshift.ring.UnderReplication;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** {@code ringshift ring build}: members file in, verified snapshot file out. */
@Command(
    name = "build",
    mixinStandardHelpOptions = true,
    description = {
      "Builds a ring snapshot from a members file and writes it (Avro single-object encoding of the RingSnapshot "
          + "schema). The file is written atomically: on any error no output file is left.",
      "Members file: a JSON array of {\"id\": \"node-001\", \"zone\": \"az-1\", \"weight\": 1.0, \"state\": "
          + "\"ACTIVE\"}; weight (default 1) and state (ACTIVE or FILLING, default ACTIVE) are optional."
    })
public final class RingBuildCommand implements Callable<Integer> {
  @Spec private CommandSpec spec;

  @Option(names = "--members", required = true, paramLabel = "FILE", description = "JSON members file.")
  private Path members;

  @Option(names = "--vnodes", paramLabel = "V", defaultValue = "" + RingBuilder.DEFAULT_VNODES,
      description = "Tokens per unit of weight (default: ${DEFAULT-VALUE}).")
  private int vnodes;

  @Option(names = "--replicas", paramLabel = "R", defaultValue = "" + RingBuilder.DEFAULT_REPLICAS,
      description = "Replicas per key (default: ${DEFAULT-VALUE}).")
  private int replicas;

  @Option(names = "--epoch", paramLabel = "N", defaultValue = "0", description = "Ring epoch (default: 0).")
  private long epoch;

  @Option(names = "--cluster", paramLabel = "ID", defaultValue = RingBuilder.DEFAULT_CLUSTER,
      description = "Cluster id (default: ${DEFAULT-VALUE}).")
  private String cluster;

  @Option(names = "--out", required = true, paramLabel = "FILE", description = "Snapshot file to write.")
  private Path out;

  @Override
  public Integer call() {
    refuseOverwritingTheMembersFile();
    List<Member> memberList = MembersFile.parse(members.toString(), InputFiles.read(members, "members file"));
    RingSnapshot ring;
    try {
      ring = RingSnapshot.builder()
          .clusterId(cluster)
          .epoch(epoch)
          .vnodes(vnodes)
          .replicas(replicas)
          .members(memberList)
          .build();
    } catch (RingException e) {
      throw new BadInputException("cannot build the ring: " + e.getMessage(), e);
    }
    byte[] bytes = SnapshotFiles.encode(ring);
    SnapshotFiles.writeAtomically(out, bytes);

    PrintWriter stdout = spec.commandLine().getOut();
    stdout.printf(Locale.ROOT, "wrote %s: cluster %s, epoch %d, %d members in %d zones, %d tokens, %d replicas, "
            + "%d bytes, checksum %s%n",
        out, ring.clusterId(), ring.epoch(), ring.memberCount(), ring.zones().size(), ring.tokenCount(),
        ring.replicas(), bytes.length, ring.checksumHex());
    stdout.flush();
    PrintWriter stderr = spec.commandLine().getErr();
    for (UnderReplication u : ring.underReplication()) {
      stderr.printf(Locale.ROOT, "ringshift: warning: under-replicated: %s (%d ranges, %.1f%% of the keyspace)%n",
          u.detail(), u.ranges(), 100 * u.keyspaceFraction());
    }
    stderr.flush();
    return 0;
  }

  private void refuseOverwritingTheMembersFile() {
    try {
      if (Files.exists(out) && Files.exists(members) && Files.isSameFile(out, members)) {
        throw new BadInputException("--out " + out + " is the members file; choose another output file");
      }
    } catch (IOException e) {
      throw new BadInputException("cannot compare --out " + out + " with --members " + members + ": "
          + e.getMessage(), e);
    }
  }
}
