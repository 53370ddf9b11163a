package io.ringshift.cli.internal.kafka;

import io.ringshift.cli.BadInputException;
import io.ringshift.cli.internal.LongRunningCommand;
import io.ringshift.cli.internal.RunUntilStopped;
import io.ringshift.devkit.EmbeddedKafkaCluster;
import io.ringshift.devkit.EmbeddedKafkaException;
import java.io.PrintWriter;
import java.util.Locale;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code ringshift kafka --brokers 3}: a real Apache Kafka cluster of KRaft nodes in one process, to try a
 * deployment of every role as its own process on a multi-broker cluster without Docker (docs/operations.md). Not for
 * production: one process holds every broker, its data is temporary, it listens on 127.0.0.1 only.
 */
@Command(
    name = "kafka",
    mixinStandardHelpOptions = true,
    sortOptions = false,
    description = {
      "Runs a local Apache Kafka cluster of N KRaft nodes (each a broker and a controller) in this process, on "
          + "127.0.0.1 with free ports, until Ctrl-C, and prints its bootstrap address: to try every role as its own "
          + "process on a multi-broker cluster without Docker. With 3 brokers or more the roles create their topics "
          + "with 3 replicas and min.insync.replicas=2, as on a production cluster.",
      "Not for production: its data lives in temporary directories deleted when it stops."
    })
public final class KafkaCommand extends LongRunningCommand implements Callable<Integer> {
  @Spec private CommandSpec spec;

  @Option(names = "--brokers", paramLabel = "N", defaultValue = "3",
      description = "How many brokers, 1 to 9 (default: ${DEFAULT-VALUE}).")
  private int brokers;

  public KafkaCommand() {}

  /** For tests: stops when {@code stop} opens instead of on a signal. */
  public KafkaCommand(CountDownLatch stop, boolean onSignals) {
    super(stop, onSignals);
  }

  @Override
  public Integer call() throws InterruptedException {
    if (brokers < 1 || brokers > 9) {
      throw new BadInputException("--brokers was " + brokers + "; it must be 1 to 9");
    }
    PrintWriter out = spec.commandLine().getOut();
    PrintWriter err = spec.commandLine().getErr();
    long started = System.nanoTime();
    EmbeddedKafkaCluster kafka;
    try {
      kafka = EmbeddedKafkaCluster.builder().brokers(brokers).build().start();
    } catch (EmbeddedKafkaException e) {
      throw new BadInputException("the Kafka cluster did not start: " + e.getMessage(), e);
    }
    RunUntilStopped run = runUntilStopped("kafka", () -> {
      kafka.close();
      err.println("ringshift kafka: stopped");
      err.flush();
    });
    out.printf(Locale.ROOT, "ringshift kafka: %d brokers (KRaft, combined mode) running in %d ms, cluster id %s%n",
        brokers, (System.nanoTime() - started) / 1_000_000, kafka.clusterId());
    out.println("  bootstrap: " + kafka.bootstrapServers());
    out.println("  export RINGSHIFT_BOOTSTRAP=" + kafka.bootstrapServers());
    out.println("Ctrl-C stops it and deletes its data.");
    out.flush();
    run.await();
    return 0;
  }
}
