package io.ringshift.cli.internal.audit;

import io.ringshift.cli.internal.JsonOption;
import io.ringshift.cli.BadInputException;
import io.ringshift.cli.KafkaUnavailableException;
import io.ringshift.cli.Ringshift;
import io.ringshift.audit.AuditException;
import io.ringshift.audit.AuditLog;
import io.ringshift.audit.AuditReplay;
import io.ringshift.audit.WhatIf;
import io.ringshift.cli.internal.JsonOutput;
import io.ringshift.cli.internal.TrustedKeyFiles;
import io.ringshift.audit.AuditLog.Contents;
import io.ringshift.audit.AuditLog.Unreadable;
import io.ringshift.audit.AuditReplay.Failure;
import io.ringshift.audit.AuditReplay.Result;
import io.ringshift.audit.WhatIf.ClusterWhatIf;
import io.ringshift.cli.internal.control.ClusterOption;
import io.ringshift.cli.internal.control.KafkaOptions;
import io.ringshift.ring.PlacementPolicy;
import io.ringshift.ring.RingBuilder;
import io.ringshift.ring.RingException;
import io.ringshift.protocol.CodecException;
import io.ringshift.protocol.KafkaClients;
import io.ringshift.protocol.TrustedKeys;
import io.ringshift.schemas.avro.EpochState;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.KafkaException;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code ringshift audit}: replays {@code ring.epochs} and {@code ring.snapshots} and proves every published
 * snapshot ({@link AuditReplay}), or with {@code --what-if} replays the published membership history under other
 * ring parameters ({@link WhatIf}). Reads only; writes nothing.
 */
@Command(
    name = "audit",
    mixinStandardHelpOptions = true,
    sortOptions = false,
    description = {
      "Proves every published ring snapshot from the audit log: reads ring.epochs and ring.snapshots from the "
          + "beginning to their current end (read_committed) and, for every PUBLISHED epoch record in log order, "
          + "rebuilds the snapshot from the record alone and checks its checksum, the epoch sequence and hash "
          + "chain, the replica sets, the filling marks, the signature against the trusted keys, and that the "
          + "bytes still on ring.snapshots (older epochs are compacted away) equal the rebuilt encoding byte for "
          + "byte. One line per epoch; exit 0 when everything checks, 3 at the first discrepancy, which stderr "
          + "names (cluster, epoch, check, expected and found values).",
      "With --what-if: replays the published memberships under --vnodes (and --replicas) and prints per epoch the "
          + "replica data moved and the balance under both the recorded and the what-if parameters."
    })
public final class AuditCommand implements Callable<Integer> {
  @Spec private CommandSpec spec;

  @Option(names = "--cluster", paramLabel = "ID",
      description = "Audit only this cluster (default: every cluster on ring.epochs).")
  private String cluster;

  @Mixin private KafkaOptions kafka;

  @Option(names = "--trusted-key", paramLabel = "FILE",
      description = "A trusted publisher public key: a PEM file with a PUBLIC KEY block (a key pair file works "
          + "too); repeat for rotated keys. Required unless --what-if.")
  private List<Path> trustedKeys = new ArrayList<>();

  @Option(names = "--what-if", description = "Replay the published memberships under other ring parameters instead "
      + "of auditing.")
  private boolean whatIf;

  @Option(names = "--vnodes", paramLabel = "V", description = "--what-if: tokens per unit of weight.")
  private Integer vnodes;

  @Option(names = "--replicas", paramLabel = "R",
      description = "--what-if: replication factor (default: each epoch's recorded one).")
  private Integer replicas;

  @Option(names = "--policy", paramLabel = "POLICY",
      description = "--what-if: placement policy of the what-if rings, hashed or balanced (default: each epoch's "
          + "recorded one); balanced builds each ring from the previous one's tokens, as the orchestrator would.")
  private String policyName;

  @Mixin private JsonOption json;

  @Override
  public Integer call() {
    String only = clusterOption();
    TrustedKeys trusted = whatIf ? null : trustedKeys();
    if (whatIf) {
      requireWhatIfParameters();
    } else if (vnodes != null || replicas != null || policyName != null) {
      throw new BadInputException((vnodes != null ? "--vnodes" : replicas != null ? "--replicas" : "--policy")
          + " was given without --what-if; "
          + "the audit itself rebuilds every epoch with its recorded parameters");
    }
    String bootstrap = kafka.bootstrap();
    Contents contents = read(bootstrap, only);
    if (contents.epochs().isEmpty() && contents.unreadableEpochs().isEmpty() && contents.snapshots().isEmpty()) {
      throw new BadInputException(only == null
          ? String.format(Locale.ROOT, "ring.epochs at %s holds no epoch record (%d records read); there is nothing "
              + "to audit", bootstrap, contents.epochRecordsRead())
          : String.format(Locale.ROOT, "cluster %s has no epoch record on ring.epochs at %s; is the cluster id "
              + "right?", only, bootstrap));
    }
    return whatIf ? whatIf(contents, only, bootstrap) : audit(contents, trusted);
  }

  private Contents read(String bootstrap, String only) {
    KafkaConsumer<byte[], byte[]> consumer;
    try {
      consumer = KafkaClients.readCommittedConsumer(bootstrap, kafka.kafkaProperties(), kafka.timeout(),
          "ringshift-audit");
    } catch (KafkaException e) {
      throw new KafkaUnavailableException("cannot connect to Kafka at " + bootstrap + ": "
          + KafkaClients.rootMessage(e), e);
    }
    try (consumer) {
      return AuditLog.read(consumer, kafka.topics(), kafka.timeout(), only, "Kafka at " + bootstrap);
    } catch (AuditException e) {
      throw e.retriable() ? new KafkaUnavailableException(e.getMessage(), e) : new BadInputException(e.getMessage());
    } catch (org.apache.kafka.common.errors.TimeoutException e) {
      throw new KafkaUnavailableException(KafkaClients.unreachable(bootstrap, kafka.timeout(), e), e);
    }
  }

  private int audit(Contents contents, TrustedKeys trusted) {
    Result result;
    if (!contents.unreadableEpochs().isEmpty()) {
      // A record audit cannot decode might be a PUBLISHED one: nothing after it can be trusted to be complete.
      Unreadable u = contents.unreadableEpochs().get(0);
      result = new Result(List.of(), AuditReplay.unreadable(u.key(), u.where(), u.problem()));
    } else {
      result = AuditReplay.verify(contents.epochs(), contents.snapshots(), trusted);
    }
    PrintWriter out = spec.commandLine().getOut();
    if (json.on()) {
      JsonOutput.print(out, AuditReport.auditJson(result));
    } else {
      AuditReport.auditText(result).forEach(out::println);
      out.flush();
    }
    Failure failure = result.failure();
    if (failure == null) {
      return 0;
    }
    spec.commandLine().getErr().println("ringshift: audit failed: " + failure.message());
    spec.commandLine().getErr().flush();
    return Ringshift.EXIT_AUDIT_FAILED;
  }

  private int whatIf(Contents contents, String only, String bootstrap) {
    if (contents.epochs().stream().noneMatch(e -> e.getState() == EpochState.PUBLISHED)) {
      throw new BadInputException(String.format(Locale.ROOT, "%s at %s has no PUBLISHED epoch record; --what-if "
          + "replays published memberships", only == null ? "ring.epochs" : "cluster " + only, bootstrap));
    }
    List<ClusterWhatIf> clusters;
    try {
      clusters = WhatIf.replay(contents.epochs(), vnodes, replicas,
          policyName == null ? null : PlacementPolicy.parse(policyName));
    } catch (CodecException e) {
      throw new BadInputException("--what-if with --vnodes " + vnodes + (replicas == null ? "" : " --replicas "
          + replicas) + ": " + e.getMessage(), e);
    }
    PrintWriter out = spec.commandLine().getOut();
    if (json.on()) {
      JsonOutput.print(out, AuditReport.whatIfJson(clusters));
    } else {
      AuditReport.whatIfText(clusters).forEach(out::println);
      out.flush();
    }
    return 0;
  }

  private String clusterOption() {
    return cluster == null ? null : ClusterOption.check(cluster);
  }

  private void requireWhatIfParameters() {
    if (vnodes == null) {
      throw new BadInputException("--what-if needs --vnodes V: the tokens per unit of weight to replay the history "
          + "with");
    }
    if (vnodes < 1) {
      throw new BadInputException("--vnodes was " + vnodes + "; it must be at least 1");
    }
    if (policyName != null) {
      try {
        PlacementPolicy.parse(policyName);
      } catch (RingException e) {
        throw new BadInputException("--policy: " + e.getMessage(), e);
      }
    }
    if (replicas != null && (replicas < 1 || replicas > RingBuilder.MAX_REPLICAS)) {
      throw new BadInputException("--replicas was " + replicas + "; it must be between 1 and "
          + RingBuilder.MAX_REPLICAS);
    }
  }

  private TrustedKeys trustedKeys() {
    if (trustedKeys.isEmpty()) {
      throw new BadInputException("--trusted-key was missing; audit verifies every signature against the "
          + "publisher's public keys: give each with --trusted-key FILE (or use --what-if, which checks nothing)");
    }
    return TrustedKeyFiles.read(trustedKeys);
  }
}
