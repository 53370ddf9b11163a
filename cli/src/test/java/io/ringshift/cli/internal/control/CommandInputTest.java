package io.ringshift.cli.internal.control;

import static org.assertj.core.api.Assertions.assertThat;

import io.ringshift.cli.internal.Cli;
import io.ringshift.cli.internal.Fixtures;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Input the control-plane commands refuse before they connect: exit 2, one line naming the problem, nothing on
 * stdout and, because nothing connects, nothing written. The bootstrap address has no broker, so a command that
 * connected anyway would fail differently (and take the timeout).
 */
class CommandInputTest {
  /** Nothing listens on port 1: a command that wrongly connected would wait the whole --timeout of 5 s. */
  private static final String[] NOWHERE = {"--bootstrap", "127.0.0.1:1", "--timeout", "5"};

  @TempDir static Path dir;

  @BeforeEach
  void writeFiles() {
    Fixtures.write(dir.resolve("members.json"), Fixtures.membersJson(6, 3));
    Fixtures.write(dir.resolve("no-zone.json"), "[{\"id\": \"a\"}]");
    Fixtures.write(dir.resolve("group.properties"), "security.protocol=SSL\ngroup.id=mine\n");
    Fixtures.write(dir.resolve("acks.properties"), "# a comment\nproducer.acks=1\n");
  }

  record Case(String name, List<String> args, String expected) {
    @Override
    public String toString() {
      return name;
    }
  }

  static Stream<Case> cases() {
    return Stream.of(
        c("join: blank node", "join: node id was \"  \"; a node id must not be blank", "join", "  ", "--zone", "z"),
        c("join: no zone", "join of node-7: --zone was missing; a joining node needs a zone", "join", "node-7"),
        c("join: blank zone", "join of node-7: --zone was blank", "join", "node-7", "--zone", " "),
        c("join: weight 0", "join of node-7: --weight was 0.0; weight must be finite and > 0",
            "join", "node-7", "--zone", "z", "--weight", "0"),
        c("join: negative weight", "--weight was -1.5; weight must be finite and > 0",
            "join", "node-7", "--zone", "z", "--weight", "-1.5"),
        c("join: weight NaN", "--weight was NaN; weight must be finite and > 0",
            "join", "node-7", "--zone", "z", "--weight", "NaN"),
        c("join: control character", "join: member id was \"a?b\"; id must not contain control characters",
            "join", "a\u0007b", "--zone", "z"),
        c("set-weight: no weight", "set-weight of node-7: --weight is missing; give the new weight",
            "set-weight", "node-7"),
        c("set-weight: infinite weight", "--weight was Infinity", "set-weight", "node-7", "--weight", "Infinity"),
        c("drain: blank node", "drain: node id was \"\"; a node id must not be blank", "drain", ""),
        c("drain: zone", "Unknown options: '--zone', 'z'", "drain", "node-7", "--zone", "z"),
        c("fail: blank cluster", "--cluster was \" \"; a cluster id must not be blank", "fail", "node-7",
            "--cluster", " "),
        c("wait 0", "--wait was 0; it must be between 1 and 86400 seconds", "fail", "node-7", "--wait", "0"),
        c("bootstrap without port", "--bootstrap was \"localhost\"; every address must be HOST:PORT",
            "status", "--bootstrap", "localhost"),
        c("bootstrap port out of range", "port 70000 is not between 1 and 65535", "status", "--bootstrap",
            "127.0.0.1:70000"),
        c("timeout 0", "--timeout was 0; it must be between 1 and 3600 seconds", "epochs", "--bootstrap",
            "127.0.0.1:1", "--timeout", "0"),
        new Case("missing bootstrap", List.of("status"), "no Kafka bootstrap address: give --bootstrap HOST:PORT "
            + "(for example 127.0.0.1:9092) or set RINGSHIFT_BOOTSTRAP"),
        c("kafka config: missing file", "--kafka-config: Kafka client properties file {d}/none.properties does not "
            + "exist", "status", "--kafka-config", "{d}/none.properties"),
        c("kafka config: a property ringshift sets", "--kafka-config: {d}/group.properties: Kafka client property "
            + "group.id is set by ringshift itself: a role's consumer group is its own option", "epochs",
            "--kafka-config", "{d}/group.properties"),
        c("kafka config: a Streams client prefix", "Kafka client property producer.acks is set by ringshift itself: "
            + "a control-plane record counts once every in-sync replica has it (acks=all)", "orchestrator",
            "--state-dir", "{d}/state", "--kafka-config", "{d}/acks.properties"),
        c("orchestrator: no state dir", "Missing required option: '--state-dir=DIR'", "orchestrator"),
        c("orchestrator: state dir is a file", "--state-dir {d}/members.json is a file; give a directory",
            "orchestrator", "--state-dir", "{d}/members.json"),
        c("orchestrator: bad application id", "--application-id was \"a b\"; it allows 1 to 200 letters, digits",
            "orchestrator", "--state-dir", "{d}/state", "--application-id", "a b"),
        c("orchestrator: replication factor", "--replication-factor was 0; give auto or a number from 1 to 32767",
            "orchestrator", "--state-dir", "{d}/state", "--replication-factor", "0"),
        c("orchestrator: partitions", "--partitions was 0; it must be at least 1", "orchestrator", "--state-dir",
            "{d}/state", "--partitions", "0"),
        c("orchestrator: start timeout", "--start-timeout was \"soon\"", "orchestrator", "--state-dir", "{d}/state",
            "--start-timeout", "soon"),
        c("status: negative limit", "--limit and --rejected must be >= 0", "status", "--limit", "-1"),
        c("init: invalid member", "{d}/no-zone.json: line 1, column 2: member[0]: member zone was missing",
            "init", "--members", "{d}/no-zone.json"),
        c("init: missing file", "members file {d}/none.json does not exist", "init", "--members", "{d}/none.json"),
        c("init: unknown policy", "cannot build the ring: placement policy was \"random\"; it must be hashed or "
            + "balanced", "init", "--members", "{d}/members.json", "--policy", "random"),
        c("init: vnodes 0", "cannot build the ring: vnodes was 0; vnodes must be >= 1", "init", "--members",
            "{d}/members.json", "--vnodes", "0"),
        c("init: replicas 65", "cannot build the ring: replicas was 65", "init", "--members", "{d}/members.json",
            "--replicas", "65"),
        c("plan: unknown action", "action was \"grow\"; it must be one of join, drain, fail, set-weight",
            "plan", "grow", "node-7"),
        c("plan: join without zone", "join of node-7: --zone was missing", "plan", "join", "node-7"),
        c("plan: zone on drain", "drain of node-7: --zone applies to join only", "plan", "drain", "node-7",
            "--zone", "z"),
        c("plan: weight on fail", "fail of node-7: --weight applies to join and set-weight only", "plan", "fail",
            "node-7", "--weight", "2"),
        c("plan: bad cluster bytes", "Invalid value for option '--cluster-bytes': 'lots' is not a byte size",
            "plan", "drain", "node-7", "--cluster-bytes", "lots"),
        c("dev: port out of range", "--port was 70000; it must be 0 (any free port) or 1..65535", "dev", "--port",
            "70000"),
        c("dev: data dir is a file", "--data-dir {d}/members.json is a file", "dev", "--data-dir",
            "{d}/members.json"),
        c("dev: too many nodes", "--nodes was 129; it must be 1..128", "dev", "--nodes", "129"),
        c("dev: negative nodes", "--nodes was -1; it must be 1..128", "dev", "--nodes", "-1"),
        c("dev: node port without nodes", "--nodes was 0; it must be 1..128 (--node-port, --spares and --grace need it)", "dev",
            "--node-port", "7201"),
        c("dev: grace without nodes", "--nodes was 0; it must be 1..128 (--node-port, --spares and --grace need it)", "dev",
            "--grace", "1min"),
        c("dev: last node port out of range", "--node-port was 65535; with --nodes 2 it must be 0 (free ports) or "
            + "1..65434, so that the last node's admin listener (its port + 100) is at most 65535", "dev", "--nodes", "2", "--node-port",
            "65535"),
        c("dev: negative node port", "--node-port was -1", "dev", "--nodes", "2", "--node-port", "-1"),
        c("dev: spares without nodes", "--nodes was 0; it must be 1..128 (--node-port, --spares and --grace need it)",
            "dev", "--spares", "1"),
        c("dev: too many spares", "--spares was 5; with --nodes 124 it must be 0..4 (128 nodes in all at most)",
            "dev", "--nodes", "124", "--spares", "5"),
        c("demo: too few nodes", "--nodes was 5; it must be 6..120", "demo", "--nodes", "5"),
        c("demo: rate", "--rate was 1; it must be 2..100000", "demo", "--rate", "1"),
        c("demo: throttle", "--throttle was 1000 bytes/s; give at least 64KiB/s, or 0 for unlimited", "demo",
            "--throttle", "1000"),
        c("demo: bad grace", "--grace was \"soon\"; write a duration such as 500ms, 30s, 10min or 2h", "demo",
            "--grace", "soon"),
        c("demo: report in a missing directory", "--report was {d}/missing/demo.html; directory {d}/missing does "
            + "not exist", "demo", "--report", "{d}/missing/demo.html"),
        c("demo: dashboard port", "--dashboard-port was 70000", "demo", "--dashboard-port", "70000"),
        c("dashboard: port", "--port was 70000; it must be 0 (a free port) or 1..65535", "dashboard", "--port",
            "70000"),
        c("dev: bad grace", "--grace was \"soon\"; write a duration such as 500ms, 30s, 10min or 2h", "dev",
            "--nodes", "2", "--grace", "soon"));
  }

  private static Case c(String name, String expected, String... args) {
    List<String> all = new ArrayList<>(List.of(args));
    if (!all.get(0).equals("dev") && !all.get(0).equals("demo") && !all.contains("--bootstrap")) {
      all.addAll(List.of(NOWHERE));
    }
    return new Case(name, all, expected);
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("cases")
  void shouldRefuseBeforeConnecting(Case c) {
    long started = System.nanoTime();
    Cli.Result result = Cli.run(c.args().stream().map(a -> a.replace("{d}", dir.toString())).toArray(String[]::new));
    long millis = (System.nanoTime() - started) / 1_000_000;

    assertThat(result.exitCode()).as(result.toString()).isEqualTo(2);
    assertThat(result.stdout()).as(result.toString()).isEmpty();
    List<String> lines = result.stderr().lines().toList();
    assertThat(lines.get(0)).startsWith("ringshift: ").contains(c.expected().replace("{d}", dir.toString()));
    assertThat(lines.size()).as(result.toString()).isLessThanOrEqualTo(2);
    if (lines.size() == 2) {
      assertThat(lines.get(1)).startsWith("Try 'ringshift ");
    }
    assertThat(millis).as("refused without waiting for Kafka").isLessThan(3_000);
  }

  @Test
  void shouldNameTheAddressWhenNoBrokerAnswersWithinTheTimeout() throws IOException {
    int port;
    try (ServerSocket probe = new ServerSocket(0, 1, InetAddress.getByName("127.0.0.1"))) {
      port = probe.getLocalPort();
    }
    for (String[] args : List.of(
        new String[] {"status"},
        new String[] {"join", "node-7", "--zone", "z", "--wait"},
        new String[] {"init", "--members", dir.resolve("members.json").toString()})) {
      List<String> all = new ArrayList<>(List.of(args));
      all.addAll(List.of("--bootstrap", "127.0.0.1:" + port, "--timeout", "1"));
      long started = System.nanoTime();
      Cli.Result result = Cli.run(all.toArray(String[]::new));
      long millis = (System.nanoTime() - started) / 1_000_000;

      assertThat(result.exitCode()).as(result.toString()).isEqualTo(2);
      assertThat(result.stderr().lines()).as(result.toString()).singleElement().asString()
          .startsWith("ringshift: no answer from Kafka at 127.0.0.1:" + port + " within 1 s");
      assertThat(millis).as("bounded by --timeout").isLessThan(5_000);
    }
  }

  @Test
  void shouldNameAnAddressThatDoesNotResolve() {
    Cli.Result result = Cli.run("epochs", "--bootstrap", "no-such-host.invalid:9092", "--timeout", "1");

    assertThat(result.exitCode()).as(result.toString()).isEqualTo(2);
    assertThat(result.stderr()).startsWith("ringshift: cannot connect to Kafka at no-such-host.invalid:9092: ");
  }

  @Test
  void shouldTakeTheWaitValueOnlyWhenItIsANumber() {
    Cli.Result result = Cli.run("join", "--wait", "node-7", NOWHERE[0], NOWHERE[1], NOWHERE[2], NOWHERE[3]);

    assertThat(result.stderr()).as("node-7 is the node, not the wait")
        .startsWith("ringshift: join of node-7: --zone was missing");
  }
}
