package io.ringshift.cli.internal.topics;

import io.ringshift.cli.KafkaUnavailableException;
import io.ringshift.cli.internal.control.KafkaOptions;
import io.ringshift.cli.internal.control.TopicCreationOptions;
import io.ringshift.protocol.KafkaClients;
import io.ringshift.protocol.TopicReplication;
import io.ringshift.protocol.Topics;
import java.io.PrintWriter;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.common.KafkaException;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/** {@code ringshift topics check|create}: the control plane's topics as the roles need them. */
@Command(
    name = "topics",
    mixinStandardHelpOptions = true,
    description = "Check or create the control plane's topics (ring.membership, ring.epochs, ring.tasks, "
        + "ring.task-status, ring.rejected, ring.snapshots).",
    subcommands = {TopicsCommand.Check.class, TopicsCommand.Create.class})
public final class TopicsCommand {
  private TopicsCommand() {}

  private static Admin admin(KafkaOptions kafka) {
    String bootstrap = kafka.bootstrap();
    try {
      return Admin.create(KafkaClients.boundedProperties(bootstrap, kafka.kafkaProperties(), kafka.timeout(),
          "ringshift-topics"));
    } catch (KafkaException e) {
      throw new KafkaUnavailableException("cannot connect to Kafka at " + bootstrap + ": "
          + KafkaClients.rootMessage(e), e);
    }
  }

  /** {@code topics check}: exit 0 when every topic is as the roles need it, 3 with a line per difference. */
  @Command(
      name = "check",
      mixinStandardHelpOptions = true,
      description = {
        "Reports every control-plane topic that is missing or whose configuration differs from what the roles "
            + "need: cleanup policy (compaction), retention (ring.epochs keeps everything), compaction lag, and a "
            + "replication factor or min.insync.replicas below what the cluster allows (3 and 2 on 3 brokers or "
            + "more).",
        "Exit code 0 when nothing differs, 3 when something does (a line each on stdout), 2 when Kafka cannot "
            + "be reached."
      })
  static final class Check implements Callable<Integer> {
    @Spec private CommandSpec spec;

    @Mixin private KafkaOptions kafka;

    @Override
    public Integer call() {
      Topics topics = kafka.topics();
      Duration timeout = kafka.timeout();
      PrintWriter out = spec.commandLine().getOut();
      List<String> differences;
      TopicReplication expected;
      try (Admin admin = admin(kafka)) {
        expected = Topics.replicationFor(admin, timeout);
        differences = topics.differences(admin, expected, timeout);
      } catch (IllegalStateException e) {
        throw new KafkaUnavailableException(e.getMessage() + " (Kafka at " + kafka.bootstrap() + ")", e);
      }
      if (differences.isEmpty()) {
        out.printf(Locale.ROOT, "The %d topics at %s are as the roles need them (replication factor %d or more, "
            + "min.insync.replicas %d or more).%n", topics.all().size(), kafka.bootstrap(), expected.factor(),
            expected.minInSync());
        out.flush();
        return 0;
      }
      differences.forEach(out::println);
      out.printf(Locale.ROOT, "%d difference(s); topics are created by `ringshift topics create` or the "
          + "orchestrator at start, and changed with kafka-configs.sh (a replication factor with "
          + "kafka-reassign-partitions.sh).%n", differences.size());
      out.flush();
      return 3;
    }
  }

  /** {@code topics create}: creates the topics that are missing; leaves existing ones alone. */
  @Command(
      name = "create",
      mixinStandardHelpOptions = true,
      description = "Creates the control-plane topics that do not exist yet, each with its configuration (the "
          + "orchestrator does the same when it starts); existing topics are left as they are (see `topics check`).")
  static final class Create implements Callable<Integer> {
    @Spec private CommandSpec spec;

    @Mixin private KafkaOptions kafka;

    @Mixin private TopicCreationOptions topicCreation;

    @Override
    public Integer call() {
      Topics topics = kafka.topics();
      Duration timeout = kafka.timeout();
      int partitions = topicCreation.partitions();
      short factor = topicCreation.replicationFactor();
      TopicReplication replication;
      try (Admin admin = admin(kafka)) {
        replication = factor == 0 ? Topics.replicationFor(admin, timeout) : TopicReplication.ofFactor(factor);
        topics.createMissing(admin, partitions, replication, timeout);
      } catch (IllegalStateException e) {
        throw new KafkaUnavailableException(e.getMessage() + " (Kafka at " + kafka.bootstrap() + ")", e);
      }
      PrintWriter out = spec.commandLine().getOut();
      out.printf(Locale.ROOT, "The %d topics exist at %s (created with %d partitions, replication factor %d, "
          + "min.insync.replicas %d where they were missing).%n", topics.all().size(), kafka.bootstrap(), partitions,
          replication.factor(), replication.minInSync());
      out.flush();
      return 0;
    }
  }
}
