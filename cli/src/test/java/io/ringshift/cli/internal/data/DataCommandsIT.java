package io.ringshift.cli.internal.data;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.ringshift.cli.internal.Cli;
import io.ringshift.cli.internal.control.DevCommand;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * {@code put}, {@code get} and {@code load --verify} against {@code ringshift dev --nodes 6}: the real client path
 * (published ring, routed writes to every replica in parallel, reads from a read-eligible replica).
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class DataCommandsIT {
  private static final Pattern BOOTSTRAP = Pattern.compile("Kafka at (127\\.0\\.0\\.1:\\d+)");

  @TempDir static Path dir;

  private static final ExecutorService EXECUTOR = Executors.newSingleThreadExecutor();
  private static final CountDownLatch STOP = new CountDownLatch(1);
  private static Future<Integer> dev;
  private static String bootstrap;
  private static Path data;
  private static String banner;

  @BeforeAll
  static void startDevWithNodes() {
    data = dir.resolve("dev");
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    CommandLine cli = new CommandLine(new DevCommand(STOP, false));
    cli.setOut(new PrintWriter(out, true));
    cli.setErr(new PrintWriter(err, true));
    dev = EXECUTOR.submit(() -> cli.execute("--port", "0", "--nodes", "6", "--spares", "1", "--node-port", "0",
        "--data-dir", data.toString()));
    await("dev prints its banner").atMost(Duration.ofSeconds(120))
        .until(() -> out.toString().contains("Ctrl-C stops it.") || dev.isDone());
    assertThat(dev.isDone()).as("dev ended early: %s %s", out, err).isFalse();
    Matcher m = BOOTSTRAP.matcher(out.toString());
    assertThat(m.find()).as(out.toString()).isTrue();
    bootstrap = m.group(1);
    banner = out.toString();
    Cli.Result init = Cli.run("init", "--members", data.resolve("members.json").toString(), "--vnodes", "16",
        "--bootstrap", bootstrap, "--wait", "60");
    assertThat(init.exitCode()).as(init.toString()).isZero();
    await("epoch 1 published").atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(250))
        .until(() -> Cli.run("status", "--bootstrap", bootstrap).stdout().contains("epoch 1 PUBLISHED"));
  }

  @AfterAll
  static void stopDev() throws Exception {
    STOP.countDown();
    dev.get(60, TimeUnit.SECONDS);
    EXECUTOR.shutdownNow();
  }

  @Test
  void shouldPutAKeyOnEveryReplicaAndGetItBack() {
    Cli.Result put = data("put", "user:42", "hello ringshift");
    assertThat(put.exitCode()).as(put.toString()).isZero();
    assertThat(put.stdout()).matches("put user:42 at epoch 1 on node-0\\d, node-0\\d, node-0\\d\\n");

    Cli.Result get = data("get", "user:42");
    assertThat(get.exitCode()).as(get.toString()).isZero();
    assertThat(get.stdout()).isEqualTo("hello ringshift\n");
    assertThat(get.stderr()).startsWith("epoch 1; replicas ").contains("; read from node-0");

    Cli.Result missing = data("get", "user:absent");
    assertThat(missing.exitCode()).as(missing.toString()).isEqualTo(GetCommand.EXIT_NOT_FOUND);
    assertThat(missing.stderr()).endsWith("ringshift: user:absent has no value\n");
  }

  @Test
  void shouldLoadAndVerifyEveryAcknowledgedWriteOnEveryReplica() {
    Cli.Result load = data("load", "--keys", "300", "--rate", "300", "--duration", "3s", "--threads", "4",
        "--verify", "--seed", "7");
    assertThat(load.exitCode()).as(load.toString()).isZero();
    assertThat(load.stdout()).contains("load: 300 keys, 300 writes/s, 100-byte values, 4 threads")
        .containsPattern("load: \\d+ writes acknowledged in \\d+\\.\\d s: \\d+/s; latency p50 ")
        .containsPattern("verify: \\d+ keys read from every replica of epoch 1 \\(\\d+ reads\\): each holds its "
            + "last acknowledged write");
  }

  @Test
  void shouldRefuseDataCommandsWithoutNodesOrKeys() {
    Cli.Result noNodes = Cli.run("put", "k", "v", "--bootstrap", bootstrap, "--trusted-key",
        data.resolve("publisher.pub").toString());
    assertThat(noNodes.exitCode()).isEqualTo(2);
    assertThat(noNodes.stderr()).startsWith("ringshift: no storage node given");
    Cli.Result noKey = Cli.run("get", "k", "--bootstrap", bootstrap, "--nodes",
        data.resolve("client-ports.txt").toString());
    assertThat(noKey.exitCode()).isEqualTo(2);
    assertThat(noKey.stderr()).startsWith("ringshift: Missing required option: '--trusted-key=FILE'");
  }

  /**
   * The mistake the cancel is for: a join of a node nobody started (node-09 is in no node directory) is accepted, and
   * its tasks stay BLOCKED. {@code cancel} ends it: CANCELLED, the tasks tombstoned, their cleanups end with nothing
   * to delete (no copy reached node-09), and the cluster is back on epoch 1 for the next change.
   */
  @Test
  @Order(Integer.MAX_VALUE - 1)
  void shouldCancelAJoinOfANodeThatDoesNotExist() throws Exception {
    Cli.Result join = Cli.run("join", "node-09", "--zone", "az-3", "--bootstrap", bootstrap);
    assertThat(join.exitCode()).as(join.toString()).isZero();
    assertThat(join.stdout()).contains("epoch 2 PLANNED");
    await("the join's tasks blocked on node-09").atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(250))
        .until(() -> Cli.run("status", "--bootstrap", bootstrap).stdout().contains("node node-09 is not in the node "
            + "directory"));

    Cli.Result wrongEpoch = Cli.run("cancel", "7", "--bootstrap", bootstrap);
    assertThat(wrongEpoch.exitCode()).isEqualTo(2);
    assertThat(wrongEpoch.stderr()).isEqualTo("ringshift: EPOCH was 7, but the epoch in flight of cluster default is "
        + "2; only the epoch in flight can be cancelled\n");

    Cli.Result cancel = Cli.run("cancel", "--bootstrap", bootstrap);

    assertThat(cancel.exitCode()).as(cancel.toString()).isZero();
    assertThat(cancel.stdout()).contains("CANCEL of epoch 2 (JOIN of node node-09) on cluster default written to ",
        "epoch 2 CANCELLED (plan 0): cancelled by ", "JOIN of node node-09 abandoned", "stays on epoch 1");
    // On its own thread, interrupted if it does not end: a watch left running would hold the CLI runner's lock, and
    // every later test would wait for it for good.
    java.util.concurrent.ExecutorService one = java.util.concurrent.Executors.newSingleThreadExecutor();
    Cli.Result watch;
    try {
      watch = one.submit(() -> Cli.run("status", "--watch", "1", "--until-idle", "--bootstrap", bootstrap))
          .get(120, TimeUnit.SECONDS);
    } finally {
      one.shutdownNow();
    }
    assertThat(watch.exitCode()).as(watch.toString()).isZero();
    Cli.Result status = Cli.run("status", "--bootstrap", bootstrap);
    assertThat(status.stdout()).as(status.toString()).contains("active     epoch 1 PUBLISHED", "in flight  none",
        "nothing to delete").doesNotContain("FAILED");
    Cli.Result again = Cli.run("cancel", "--bootstrap", bootstrap);
    assertThat(again.exitCode()).isEqualTo(2);
    assertThat(again.stderr()).isEqualTo("ringshift: cluster default has no epoch in flight (it is on epoch 1); only "
        + "a plan in flight can be cancelled (undo a published change with the opposite change)\n");
  }

  @Test
  @Order(Integer.MAX_VALUE)
  void shouldPrintAJoinOfTheSpareThatWorks() throws Exception {
    assertThat(Files.readString(data.resolve("members.json"))).contains("node-06").doesNotContain("node-07");
    assertThat(banner).contains("node-07 (az-1) at ").contains("(spare: not in members.json)");
    Matcher join = Pattern.compile("  \\S*ringshift (join node-07 --zone az-1 --bootstrap \\S+ --wait)").matcher(banner);
    assertThat(join.find()).as(banner).isTrue();

    // plan's cost and risk report, with the ranges measured on the running nodes.
    Cli.Result plan = Cli.run("plan", "join", "node-07", "--zone", "az-1", "--bootstrap", bootstrap, "--nodes",
        data.resolve("nodes.txt").toString(), "--node-secret-file", data.resolve("admin.secret").toString(),
        "--rate", "10MiB");
    assertThat(plan.exitCode()).as(plan.toString()).isZero();
    assertThat(plan.stdout()).containsPattern("cost       [0-9.]+ (B|KiB|MiB) to copy \\(measured on the sources\\): "
        + "az-\\d -> az-1 ").containsPattern("eta        \\d+ s at ").contains("risk       no under-replication");
    Cli.Result planFail = Cli.run("plan", "fail", "node-02", "--bootstrap", bootstrap);
    assertThat(planFail.stdout()).as(planFail.toString()).contains("risk       peak under-replication: ",
        "the fewest 2, until the repair is READY");

    // --wait follows the join to PUBLISHED, stage by stage; epoch 2 was cancelled above, so the join is epoch 3.
    Cli.Result joined = Cli.run(join.group(1).split(" "));
    assertThat(joined.exitCode()).as(joined.toString()).isZero();
    List<String> stages = joined.stdout().lines().skip(1).toList();
    assertThat(stages.get(0)).startsWith("epoch 3 PLANNED (plan 0, 7 members");
    assertThat(stages).anySatisfy(l -> assertThat(l).startsWith("epoch 3 copying "));
    // In transition stages (the publisher's default): the first at the plan, the second at READY, then FINAL.
    assertThat(stages).contains("epoch 3 READY: every task verified; waiting for the publisher");
    assertThat(stages).anySatisfy(l -> assertThat(l).startsWith("epoch 3 stage WRITE_BOTH_READ_OLD published at "));
    assertThat(stages).anySatisfy(l -> assertThat(l).startsWith("epoch 3 stage WRITE_BOTH_READ_NEW published at "));
    assertThat(stages).anySatisfy(l -> assertThat(l).startsWith("epoch 3 barrier: every live participant"));
    assertThat(stages.get(stages.size() - 1)).startsWith("epoch 3 PUBLISHED at ").endsWith(": clients route by it");
    Cli.Result get = data("get", "user:42");
    assertThat(get.stderr()).as(get.toString()).startsWith("epoch 3; ");
    Cli.Result audit = Cli.run("audit", "--bootstrap", bootstrap, "--trusted-key",
        data.resolve("publisher.pub").toString());
    assertThat(audit.exitCode()).as("the audit accepts the number the cancel skipped: %s", audit).isZero();
  }

  private static Cli.Result data(String... args) {
    List<String> all = new ArrayList<>(Arrays.asList(args));
    all.addAll(List.of("--bootstrap", bootstrap, "--trusted-key", data.resolve("publisher.pub").toString(),
        "--nodes", data.resolve("client-ports.txt").toString()));
    return Cli.run(all.toArray(String[]::new));
  }
}
