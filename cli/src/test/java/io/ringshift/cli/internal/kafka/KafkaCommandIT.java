package io.ringshift.cli.internal.kafka;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.ringshift.cli.internal.Cli;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.config.ConfigResource;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/**
 * {@code ringshift kafka --brokers 3}: a 3-broker KRaft cluster in one process, on which {@code topics create} picks
 * replication factor 3 and {@code min.insync.replicas=2} (the roles' choice on 3 brokers or more).
 */
class KafkaCommandIT {
  private static final Pattern BOOTSTRAP = Pattern.compile("  bootstrap: (\\S+)");

  @Test
  void shouldRunThreeBrokersOnWhichTheTopicsGetThreeReplicasAndAMinimumOfTwoInSync() throws Exception {
    ExecutorService executor = Executors.newSingleThreadExecutor();
    CountDownLatch stop = new CountDownLatch(1);
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    CommandLine cli = new CommandLine(new KafkaCommand(stop, false));
    cli.setOut(new PrintWriter(out, true));
    cli.setErr(new PrintWriter(err, true));
    Future<Integer> exit = executor.submit(() -> cli.execute("--brokers", "3"));
    try {
      await("the brokers print their address").atMost(Duration.ofSeconds(180))
          .until(() -> out.toString().contains("Ctrl-C stops it") || exit.isDone());
      assertThat(exit.isDone()).as("kafka ended early: %s %s", out, err).isFalse();
      assertThat(out.toString()).startsWith("ringshift kafka: 3 brokers (KRaft, combined mode) running in ");
      Matcher m = BOOTSTRAP.matcher(out.toString());
      assertThat(m.find()).as(out.toString()).isTrue();
      String bootstrap = m.group(1);
      assertThat(bootstrap.split(",")).hasSize(3);
      assertThat(out.toString()).contains("  export RINGSHIFT_BOOTSTRAP=" + bootstrap + "\n");

      Cli.Result create = Cli.run("topics", "create", "--bootstrap", bootstrap);
      assertThat(create.exitCode()).as(create.toString()).isZero();
      assertThat(create.stdout()).contains("replication factor 3, min.insync.replicas 2");
      Cli.Result check = Cli.run("topics", "check", "--bootstrap", bootstrap);
      assertThat(check.exitCode()).as(check.toString()).isZero();
      try (Admin admin = Admin.create(Map.<String, Object>of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap))) {
        TopicDescription epochs = admin.describeTopics(List.of("ring.epochs")).allTopicNames().get(30, TimeUnit.SECONDS)
            .get("ring.epochs");
        assertThat(epochs.partitions()).allSatisfy(p -> assertThat(p.replicas()).hasSize(3));
        var config = admin.describeConfigs(List.of(new ConfigResource(ConfigResource.Type.TOPIC, "ring.epochs")))
            .all().get(30, TimeUnit.SECONDS).values().iterator().next();
        assertThat(config.get("min.insync.replicas").value()).isEqualTo("2");
        assertThat(config.get("retention.ms").value()).isEqualTo("-1");
      }
    } finally {
      stop.countDown();
      assertThat(exit.get(60, TimeUnit.SECONDS)).isZero();
      executor.shutdownNow();
    }
    assertThat(err.toString()).isEqualTo("ringshift kafka: stopped\n");
  }
}
