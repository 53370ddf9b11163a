package io.ringshift.cli.internal.publisher;

import io.ringshift.cli.BadInputException;
import io.ringshift.cli.KafkaUnavailableException;
import io.ringshift.cli.internal.Durations;
import io.ringshift.cli.internal.LongRunningCommand;
import io.ringshift.cli.internal.MetricsEndpoint;
import io.ringshift.cli.internal.MetricsOptions;
import io.ringshift.cli.internal.RunUntilStopped;
import io.ringshift.cli.internal.control.KafkaOptions;
import io.ringshift.cli.internal.control.TopicCreationOptions;
import io.ringshift.publisher.PublisherConfig;
import io.ringshift.protocol.TrustedKeys;
import java.security.PublicKey;
import java.util.ArrayList;
import java.util.List;
import io.ringshift.publisher.PublisherListener;
import io.ringshift.publisher.SnapshotPublisher;
import io.ringshift.protocol.SigningKey;
import io.ringshift.schemas.avro.EpochRecord;
import io.ringshift.schemas.avro.EpochState;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.ByteBuffer;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HexFormat;
import java.util.Locale;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code ringshift publisher}: runs the snapshot publisher (docs/publisher.md) until SIGINT or SIGTERM, printing a
 * line per epoch it publishes or rejects. Stopping lets a transaction in progress finish; an epoch not decided yet
 * is decided by the next publisher to start.
 */
@Command(
    name = "publisher",
    mixinStandardHelpOptions = true,
    sortOptions = false,
    description = {
      "Runs the snapshot publisher: for every READY epoch on ring.epochs it rebuilds the ring from the epoch's "
          + "membership and parameters, checks it (checksum, distinct replicas and zones, epoch = last published "
          + "+ 1 with the previous checksum, every task VERIFIED, every added replica filled or marked filling), "
          + "and in one Kafka transaction publishes the signed snapshot to ring.snapshots and writes the epoch "
          + "PUBLISHED; or it writes the epoch REJECTED with the reason. Prints a line per decision; runs until "
          + "Ctrl-C or SIGTERM.",
      "Run one per deployment: a publisher started with the same --transactional-id fences the one running, which "
          + "then stops with exit code 1. Make a key with 'ringshift keygen --out FILE'."
    })
public final class PublisherCommand extends LongRunningCommand implements Callable<Integer> {

  @Spec private CommandSpec spec;

  @Mixin private KafkaOptions kafka;

  @Option(names = "--signing-key", required = true, paramLabel = "FILE",
      description = "The publisher's signing key, as 'ringshift keygen' writes it.")
  private Path signingKey;

  @Option(names = "--transactional-id", paramLabel = "ID", defaultValue = PublisherConfig.DEFAULT_TRANSACTIONAL_ID,
      description = "The producer's transactional id, the same across restarts (default: ${DEFAULT-VALUE}).")
  private String transactionalId;

  @Mixin private TopicCreationOptions topicCreation;

  @Mixin private MetricsOptions metricsOptions;

  @Option(names = "--lease-timeout", paramLabel = "DURATION", defaultValue = "10s",
      description = "Publishers with the same --transactional-id elect one to publish; the others stand by. A "
          + "standby takes over at once when the active one stops, and this long after it stopped answering (a "
          + "kill, a lost host). 0 turns the election off: each new publisher fences the one before, which stops "
          + "(default: ${DEFAULT-VALUE}; at least the brokers' group.min.session.timeout.ms, 6 s by default).")
  private String leaseTimeout;

  @Option(names = "--previous-key", paramLabel = "FILE",
      description = "The public key (PEM) of an earlier signing key whose PUBLISHED records ring.epochs holds, after "
          + "a key rotation; repeat for several. PUBLISHED records signed by any other key are ignored.")
  private List<Path> previousKeys = new ArrayList<>();

  @Option(names = "--no-transition-stages",
      description = "Publish every change at its fence, as before transition stages: writes to the moving ranges "
          + "pause at each cutover. By default a change that moves ranges is published in stages, with no pause, "
          + "unless a participant cannot follow them (docs/protocol.md).")
  private boolean noStages;

  public PublisherCommand() {}

  PublisherCommand(CountDownLatch stopRequested, boolean onSignals) {
    super(stopRequested, onSignals);
  }

  @Override
  public Integer call() throws InterruptedException {
    PublisherConfig config = config();
    AtomicBoolean bannerPrinted = new AtomicBoolean();
    PrintWriter out = spec.commandLine().getOut();
    PrintWriter err = spec.commandLine().getErr();
    MetricsEndpoint metrics = metricsOptions.start();
    SnapshotPublisher publisher = new SnapshotPublisher(config, new PublisherListener() {
      @Override
      public void published(EpochRecord r) {
        out.printf(Locale.ROOT, "published epoch %d of cluster %s (checksum %s, %d members, %d filling marks)%n",
            r.getEpoch(), r.getClusterId(), shortHex(r.getTargetChecksum()), r.getMembers().size(),
            r.getFilling().size());
        out.flush();
      }

      @Override
      public void rejected(EpochRecord r) {
        out.printf(Locale.ROOT, "REJECTED epoch %d of cluster %s: %s%n", r.getEpoch(), r.getClusterId(),
            r.getReason());
        out.flush();
      }

      @Override
      public void transition(EpochRecord r) {
        out.printf(Locale.ROOT, "%s epoch %d of cluster %s%s%n", r.getState() == EpochState.STAGED
            ? "published stage " + r.getStage() + " of" : r.getState().name(), r.getEpoch(), r.getClusterId(),
            r.getReason() == null ? "" : ": " + r.getReason());
        out.flush();
      }

      @Override
      public void activeChanged(boolean active) {
        if (!bannerPrinted.get()) {
          return; // the banner says which it is
        }
        out.println(active ? "active: this publisher holds the lease of " + config.transactionalId() + " and publishes"
            : "standing by: another publisher holds the lease of " + config.transactionalId());
        out.flush();
      }
    }, metrics.registry());
    try {
      publisher.start();
    } catch (IllegalStateException | org.apache.kafka.common.KafkaException e) {
      publisher.close();
      metrics.close();
      throw new KafkaUnavailableException("the publisher could not start against Kafka at "
          + config.bootstrapServers() + ": " + e.getMessage(), e);
    }
    // On SIGINT or SIGTERM the publisher closes in a shutdown hook, so that a transaction in progress commits or
    // aborts before the JVM exits (a killed one is aborted by the next publisher anyway).
    RunUntilStopped run = runUntilStopped("publisher", () -> {
      publisher.close();
      metrics.close();
      err.printf(Locale.ROOT, "ringshift publisher: stopped after publishing %d and rejecting %d epochs%n",
          publisher.publishedCount(), publisher.rejectedCount());
      err.flush();
    });
    out.printf(Locale.ROOT, "ringshift publisher: signing with key %s (%s), transactional id %s, Kafka at %s; "
            + "%s -> %s%s%n", config.signingKey().id(), signingKey, config.transactionalId(),
        config.bootstrapServers(), config.topics().epochs().name(), config.topics().snapshots().name(),
        metrics.banner());
    if (!publisher.active()) {
      out.println("standing by: another publisher holds the lease of " + config.transactionalId()
          + "; this one takes over when it stops.");
    }
    out.println("Ctrl-C stops it.");
    out.flush();
    bannerPrinted.set(true);
    Optional<Throwable> failure = run.await(publisher.terminated());
    if (failure.isPresent()) {
      err.println("ringshift publisher: stopped by an error: " + failure.get()
          + " (another publisher with transactional id " + config.transactionalId() + " may have taken over)");
      err.flush();
      return 1;
    }
    return 0;
  }

  /** The validated configuration; bad options are {@link BadInputException}s naming the option. */
  PublisherConfig config() {
    SigningKey key = readKey(signingKey);
    int partitions = topicCreation.partitions();
    short replicationFactor = topicCreation.replicationFactor();
    if (transactionalId.isBlank()) {
      throw new BadInputException("--transactional-id was empty; give the id every run of this publisher shares");
    }
    List<PublicKey> previous = new ArrayList<>();
    if (!previousKeys.isEmpty()) {
      TrustedKeys earlier;
      try {
        earlier = TrustedKeys.read(previousKeys);
      } catch (IOException e) {
        throw new BadInputException("--previous-key: cannot read " + previousKeys + ": " + e, e);
      } catch (IllegalArgumentException e) {
        throw new BadInputException("--previous-key: " + e.getMessage(), e);
      }
      previous.addAll(earlier.publicKeys());
    }
    return PublisherConfig.of(kafka.bootstrap(), key)
        .withPreviousKeys(previous)
        .withTopics(kafka.topics())
        .withKafkaProperties(kafka.kafkaProperties())
        .withTransactionalId(transactionalId)
        .withTopicCreation(partitions, replicationFactor)
        .withTimeout(kafka.timeout())
        .withLeaseTimeout(leaseTimeout())
        .withTransitionStages(!noStages);
  }

  private Duration leaseTimeout() {
    Duration d;
    try {
      d = Durations.parse("--lease-timeout", leaseTimeout);
    } catch (IllegalArgumentException e) {
      throw new BadInputException(e.getMessage(), e);
    }
    if (d.isNegative() || (!d.isZero() && d.toMillis() < 1000)) {
      throw new BadInputException("--lease-timeout was " + leaseTimeout + "; it must be 0 (no election) or at least "
          + "1s");
    }
    return d;
  }

  /** The key of a key file; an unreadable or wrong file is a {@link BadInputException} naming it. */
  static SigningKey readKey(Path file) {
    try {
      return SigningKey.read(file);
    } catch (NoSuchFileException e) {
      throw new BadInputException("--signing-key: " + file + " does not exist; make one with 'ringshift keygen "
          + "--out " + file + "'", e);
    } catch (IOException e) {
      throw new BadInputException("--signing-key: cannot read " + file + ": " + e, e);
    } catch (IllegalArgumentException e) {
      throw new BadInputException("--signing-key: " + e.getMessage(), e);
    }
  }

  private static String shortHex(ByteBuffer checksum) {
    ByteBuffer b = checksum.duplicate();
    byte[] bytes = new byte[Math.min(6, b.remaining())];
    b.get(bytes);
    return HexFormat.of().formatHex(bytes);
  }
}
