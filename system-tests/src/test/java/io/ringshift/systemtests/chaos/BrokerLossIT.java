package io.ringshift.systemtests.chaos;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.ringshift.devkit.EmbeddedKafkaCluster;
import io.ringshift.schemas.avro.EpochRecord;
import io.ringshift.schemas.avro.EpochState;
import io.ringshift.schemas.avro.TaskKind;
import io.ringshift.schemas.avro.TaskState;
import io.ringshift.systemtests.ControlPlaneTail;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.stream.Collectors;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConsumerGroupDescription;
import org.apache.kafka.clients.admin.MemberDescription;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.utils.Utils;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The control plane on a real 3-broker KRaft cluster ({@link EmbeddedKafkaCluster}, in this JVM), issue 12: every
 * role its own OS process as in {@link ChaosIT} (a {@link ChaosScenario} of a smaller deployment, with a script instead
 * of the random timeline), 32 writers through {@code RingClient} and {@code RoutedWriter} at 300 writes/s, a JOIN
 * under writes, and a broker fault or a role failover in the middle of it. Each test then lets the plane settle and
 * runs the scenario's checks (every acknowledged write on every replica of the final ring, no stale read, no epoch
 * published twice or skipped, every task verified, no stray key, {@code ringshift audit} passes), and asserts that
 * the control-plane topics were created with 3 replicas and {@code min.insync.replicas=2}.
 *
 * <p>One cluster for the class; each test has topics, groups and transactional ids of its own (a topic prefix).
 * docs/development.md lists the figures it prints; docs/operations.md the failover bound it asserts.
 */
class BrokerLossIT {
  /**
   * The failover bound asserted and documented (docs/operations.md, "Broker loss and failover"): from the SIGKILL of
   * the active orchestrator and the active publisher to the epoch in flight PUBLISHED. The standbys own the work
   * after the session and lease timeouts (10 s each, side by side); then the surviving orchestrator's transactional
   * producer retries CONCURRENT_TRANSACTIONS and OUT_OF_ORDER_SEQUENCE_NUMBER for tens of seconds before it commits
   * again (target/kafka-tests.log with {@code -Dchaos.roleLogLevel=info}; not explained yet), most of the 51 to 91 s
   * measured; the rest is margin for a loaded 2-core machine.
   */
  static final Duration FAILOVER_BOUND = Duration.ofSeconds(120);
  private static final Duration WAIT = Duration.ofMinutes(3);
  private static final Duration ADMIN_TIMEOUT = Duration.ofSeconds(30);
  /** Five members in three zones and a spare to join; one worker; one orchestrator and one publisher. */
  private static final ChaosScenario.Deployment SMALL = new ChaosScenario.Deployment(5, 1, 1, 1, 1, true);
  /** The same with two orchestrators (one application id) and two publishers (one transactional id). */
  private static final ChaosScenario.Deployment STANDBYS = new ChaosScenario.Deployment(5, 1, 1, 2, 2, true);

  private static final String ACTIVE = "active: this publisher holds the lease";
  private static final String STANDING_BY = "standing by: another publisher holds the lease";

  private static EmbeddedKafkaCluster kafka;
  private final Path dir = Path.of("target", "broker-loss-it", "run-" + System.currentTimeMillis());

  @BeforeAll
  static void startCluster() {
    kafka = EmbeddedKafkaCluster.builder().brokers(3).build().start();
  }

  /**
   * Every broker a test stopped runs again before the next test, also when the test failed with it stopped: a broker
   * left down made the next test's roles create their topics with 2 replicas (a CI run where one failure became two).
   */
  @AfterEach
  void startStoppedBrokers() {
    for (int id : kafka.brokerIds()) {
      if (!kafka.isRunning(id)) {
        kafka.startBroker(id);
      }
    }
  }

  @AfterAll
  static void stopCluster() {
    if (kafka != null) {
      kafka.close();
    }
  }

  /** The scenarios use their broker as given; none of these scripts restarts "the" broker. */
  private static final ChaosScenario.Broker CLUSTER = new ChaosScenario.Broker() {
    @Override
    public String bootstrap() {
      return kafka.bootstrapServers();
    }

    @Override
    public void restart() {
      throw new UnsupportedOperationException("the scripts stop and start single brokers of the cluster");
    }
  };

  @Test
  void shouldPublishTheJoinAndLoseNoWriteWhenABrokerStopsMidMigration() throws Exception {
    long[] timeline = new long[3]; // join requested, broker stopped, epoch 2 published
    ChaosScenario.Result result = run("stop", SMALL, s -> {
      assertProductionReplication(s);
      timeline[0] = System.nanoTime();
      s.joinSpare();
      awaitTasksInFlight(s.tail(), 2);
      // The controller quorum's leader: losing it costs a controller election too (combined mode, static voters).
      int victim = quorumLeader();
      assertInFlightAsTheStopBegins(s.tail(), victim);
      s.injected("stop broker " + victim + " (quorum leader) mid-migration", "broker stopped");
      timeline[1] = System.nanoTime();
      kafka.stopBroker(victim);
      timeline[2] = awaitPublished(s.tail(), 2);
      System.out.printf(Locale.ROOT, "BrokerLossIT: broker %d stopped %.1f s after the join; epoch 2 published "
          + "%.1f s after the stop, with 2 of 3 brokers%n", victim, seconds(timeline[1] - timeline[0]),
          seconds(timeline[2] - timeline[1]));
      System.out.println("BrokerLossIT: epoch 2 from the JOIN: " + stages(s.tail(), 2, timeline[0]));
      kafka.startBroker(victim);
    });
    System.out.printf(Locale.ROOT, "BrokerLossIT: join under writes on 3 brokers, one stopped mid-migration: %.1f s "
        + "from the JOIN to epoch 2 PUBLISHED%n", seconds(timeline[2] - timeline[0]));
    assertPublishedOncePerEpoch(result, 2);
  }

  @Test
  void shouldFinishTheJoinWhenTheLeaderOfTheTasksTopicRestarts() throws Exception {
    long[] timeline = new long[4]; // join requested, leader stopped, leader back, epoch 2 published
    ChaosScenario.Result result = run("leader", SMALL, s -> {
      assertProductionReplication(s);
      timeline[0] = System.nanoTime();
      s.joinSpare();
      awaitTasksInFlight(s.tail(), 2);
      String tasks = s.topics().tasks().name();
      Map<Integer, Integer> leaders = leaders(tasks);
      // The broker leading the most partitions of ring.tasks (the lowest id among equals).
      int victim = leaders.values().stream().collect(Collectors.groupingBy(Function.identity(), TreeMap::new,
          Collectors.counting())).entrySet().stream().max(Map.Entry.<Integer, Long>comparingByValue()
          .thenComparing(Map.Entry.comparingByKey(Comparator.reverseOrder()))).orElseThrow().getKey();
      assertInFlightAsTheStopBegins(s.tail(), victim);
      s.injected("restart broker " + victim + " (leader of " + tasks + " partitions " + partitionsLedBy(leaders,
          victim) + ") mid-migration", "broker restarted");
      timeline[1] = System.nanoTime();
      kafka.stopBroker(victim);
      Map<Integer, Integer> during = leaders(tasks);
      assertThat(during.values()).as("the partitions of %s have new leaders while broker %d is down", tasks, victim)
          .doesNotContain(victim).doesNotContain(-1);
      kafka.startBroker(victim);
      timeline[2] = System.nanoTime();
      timeline[3] = awaitPublished(s.tail(), 2);
      System.out.printf(Locale.ROOT, "BrokerLossIT: %s leaders %s; broker %d stopped %.1f s after the join (leaders "
          + "then %s), back %.1f s later; epoch 2 published %.1f s after the stop%n", tasks, leaders, victim,
          seconds(timeline[1] - timeline[0]), during, seconds(timeline[2] - timeline[1]),
          seconds(timeline[3] - timeline[1]));
      System.out.println("BrokerLossIT: epoch 2 from the JOIN: " + stages(s.tail(), 2, timeline[0]));
      await("broker " + victim + " back in the ISR of every partition of " + tasks).atMost(WAIT)
          .pollInterval(Duration.ofMillis(500)).until(() -> describe(List.of(tasks)).get(tasks).partitions().stream()
              .allMatch(p -> p.isr().size() == 3));
    });
    System.out.printf(Locale.ROOT, "BrokerLossIT: join under writes on 3 brokers, the tasks' leader restarted: %.1f s "
        + "from the JOIN to epoch 2 PUBLISHED%n", seconds(timeline[3] - timeline[0]));
    assertPublishedOncePerEpoch(result, 2);
  }

  @Test
  void shouldHaveTheStandbysTakeOverWhenTheActiveOrchestratorAndPublisherAreKilledMidEpoch() throws Exception {
    long[] timeline = new long[4]; // join requested, killed, the standby orchestrator owns the cluster, published
    ChaosScenario.Result result = run("failover", STANDBYS, s -> {
      assertProductionReplication(s);
      RoleProcess publisher = activePublisher(s.publishers());
      timeline[0] = System.nanoTime();
      s.joinSpare();
      awaitTasksInFlight(s.tail(), 2);
      RoleProcess orchestrator = await("the orchestrator that owns the cluster").atMost(WAIT)
          .pollInterval(Duration.ofMillis(100)).until(() -> owner(s), o -> o != null);
      timeline[1] = System.nanoTime();
      s.killForGood(orchestrator, "active orchestrator");
      s.killForGood(publisher, "active publisher");
      assertThat(s.tail().epoch(2, EpochState.READY)).as("epoch 2 was not READY yet when the active roles were "
          + "killed").isEmpty();
      RoleProcess standbyPublisher = s.publishers().stream().filter(p -> p != publisher).findFirst().orElseThrow();
      RoleProcess standbyOrchestrator = s.orchestrators().stream().filter(o -> o != orchestrator).findFirst()
          .orElseThrow();
      await("the standby orchestrator owns the cluster").atMost(WAIT).pollInterval(Duration.ofMillis(200))
          .until(() -> owner(s) == standbyOrchestrator);
      timeline[2] = System.nanoTime();
      timeline[3] = awaitPublished(s.tail(), 2);
      assertThat(standbyPublisher.output()).as("the standby publisher took the lease").contains(ACTIVE);
      Duration failover = Duration.ofNanos(timeline[3] - timeline[1]);
      System.out.printf(Locale.ROOT, "BrokerLossIT: killed %s and %s %.1f s after the join; %s owned the cluster "
          + "%.1f s after the kill; epoch 2 published by %s %.1f s after the kill (bound %d s)%n", orchestrator.name(),
          publisher.name(), seconds(timeline[1] - timeline[0]), standbyOrchestrator.name(),
          seconds(timeline[2] - timeline[1]), standbyPublisher.name(), seconds(failover.toNanos()),
          FAILOVER_BOUND.toSeconds());
      System.out.println("BrokerLossIT: epoch 2 from the JOIN: " + stages(s.tail(), 2, timeline[0]));
      assertThat(failover).as("from the kill to epoch 2 PUBLISHED").isLessThanOrEqualTo(FAILOVER_BOUND);
    });
    assertPublishedOncePerEpoch(result, 2);
  }

  private ChaosScenario.Result run(String name, ChaosScenario.Deployment deployment, ChaosScenario.Script script)
      throws Exception {
    long seed = System.nanoTime();
    Path scenarioDir = dir.resolve(name);
    ChaosScenario.Result r = new ChaosScenario(CLUSTER, "brokers-" + name + "-" + Long.toHexString(seed) + "-",
        scenarioDir, seed, deployment, script).run();
    System.out.printf(Locale.ROOT, "BrokerLossIT %s: %s; faults %s; %d writes acknowledged (%.0f/s), %d lost; %d "
            + "reads checked, %d stale; %d epochs published; %.1f s (logs in %s)%n", name, r.operations(), r.faults(),
        r.acknowledged(), r.writesPerSecond(), r.lost(), r.reads(), r.staleReads(), r.published(),
        r.millis() / 1000.0, scenarioDir.toAbsolutePath());
    assertThat(r.lost()).isZero();
    assertThat(r.staleReads()).isZero();
    assertThat(r.acknowledged()).as("writes acknowledged during the scenario").isPositive();
    assertThat(kafka.fatalFault()).isEmpty();
    return r;
  }

  /**
   * Exactly one PUBLISHED record per epoch, numbered 1 to {@code last} (none skipped, none twice, none rejected),
   * and each epoch and plan PLANNED and READY once (the exactly-once outputs of the orchestrator).
   */
  private static void assertPublishedOncePerEpoch(ChaosScenario.Result r, long last) {
    List<Long> published = r.epochs().stream().filter(e -> e.getState() == EpochState.PUBLISHED)
        .map(EpochRecord::getEpoch).toList();
    List<Long> expected = new ArrayList<>();
    for (long e = 1; e <= last; e++) {
      expected.add(e);
    }
    assertThat(published).as("PUBLISHED epochs on ring.epochs").containsExactlyElementsOf(expected);
    assertThat(r.epochs()).as("no REJECTED epoch").noneMatch(e -> e.getState() == EpochState.REJECTED);
    for (EpochState state : List.of(EpochState.PLANNED, EpochState.READY)) {
      Map<String, Long> counts = r.epochs().stream().filter(e -> e.getState() == state)
          .collect(Collectors.groupingBy(e -> e.getEpoch() + "/" + e.getPlanVersion(), TreeMap::new, Collectors.counting()));
      assertThat(counts.values()).as("%s records per epoch/plan: %s", state, counts).containsOnly(1L);
    }
  }

  /** Waits until a task of {@code epoch} has reported progress on ring.task-status: the migration is running. */
  private static void awaitTasksInFlight(ControlPlaneTail tail, long epoch) {
    tail.awaitEpoch(epoch, EpochState.PLANNED);
    await("a task of epoch " + epoch + " in progress").atMost(WAIT).pollInterval(Duration.ofMillis(20))
        .until(() -> tail.firstStatus(st -> st.getEpoch() == epoch).isPresent());
  }

  /**
   * Epoch 2 is not PUBLISHED yet as the stop of broker {@code victim} begins. Checked before the stop, not after it:
   * a controlled shutdown (and, for the quorum leader, a controller election) takes seconds, and a join of this size
   * may be published meanwhile (the CI run of 2026-12-04 published it before the stop returned); what matters is
   * that the fault started with the migration in flight.
   */
  private static void assertInFlightAsTheStopBegins(ControlPlaneTail tail, int victim) {
    assertThat(tail.epoch(2, EpochState.PUBLISHED)).as("epoch 2 was still in flight when broker %d began to stop",
        victim).isEmpty();
  }

  /** When the tail read epoch {@code epoch} PUBLISHED ({@link System#nanoTime()}), waiting up to {@link #WAIT}. */
  private static long awaitPublished(ControlPlaneTail tail, long epoch) {
    return await("epoch " + epoch + " PUBLISHED, epochs " + tail.epochSummary()).atMost(WAIT)
        .pollInterval(Duration.ofMillis(20)).until(() -> tail.epoch(epoch, EpochState.PUBLISHED).orElse(null),
            s -> s != null).readNanos();
  }

  /**
   * The six control-plane topics and the orchestrator's internal topics (changelog, repartition) have 3 replicas of
   * every partition, all in sync, and {@code min.insync.replicas=2}, as the roles chose them on 3 brokers.
   */
  private static void assertProductionReplication(ChaosScenario s) throws Exception {
    List<String> names = new ArrayList<>(s.topics().all().stream().map(t -> t.name()).toList());
    try (Admin admin = admin()) {
      admin.listTopics().names().get(ADMIN_TIMEOUT.toSeconds(), TimeUnit.SECONDS).stream()
          .filter(n -> n.startsWith(s.applicationId() + "-")).forEach(names::add);
      assertThat(names).as("control-plane and internal topics").hasSizeGreaterThanOrEqualTo(8);
      Map<String, TopicDescription> topics = describe(names);
      Map<ConfigResource, Config> configs = admin.describeConfigs(names.stream()
          .map(n -> new ConfigResource(ConfigResource.Type.TOPIC, n)).toList()).all()
          .get(ADMIN_TIMEOUT.toSeconds(), TimeUnit.SECONDS);
      for (String name : names) {
        assertThat(topics.get(name).partitions()).as("%s: 3 replicas per partition", name)
            .allSatisfy(p -> assertThat(p.replicas()).hasSize(3));
        assertThat(configs.get(new ConfigResource(ConfigResource.Type.TOPIC, name)).get("min.insync.replicas")
            .value()).as("%s: min.insync.replicas", name).isEqualTo("2");
      }
      System.out.printf(Locale.ROOT, "BrokerLossIT: %d topics with 3 replicas and min.insync.replicas=2: %s%n",
          names.size(), names);
    }
  }

  /**
   * The one publisher that holds the lease, by what each printed: a publisher says "standing by" on its banner when
   * another holds the lease, and "active: ..." or "standing by: ..." when that changes later; so the active one is
   * the one whose last such line is not "standing by".
   */
  private static RoleProcess activePublisher(List<RoleProcess> publishers) {
    return await("one publisher holds the lease").atMost(WAIT).pollInterval(Duration.ofMillis(100)).until(() -> {
      List<RoleProcess> active = publishers.stream().filter(p -> {
        String out = p.output();
        return out.lastIndexOf(ACTIVE) >= out.lastIndexOf(STANDING_BY);
      }).toList();
      return active.size() == 1 ? active.get(0) : null;
    }, p -> p != null);
  }

  /**
   * When each stage of {@code epoch} was read, in seconds from {@code since}: its records, and the first and last
   * CAUGHT_UP and VERIFIED status and fence request of its COPY tasks.
   */
  private static String stages(ControlPlaneTail tail, long epoch, long since) {
    List<String> out = new ArrayList<>();
    for (EpochState state : List.of(EpochState.PLANNED, EpochState.READY, EpochState.PUBLISHED)) {
      tail.epoch(epoch, state).ifPresent(seen -> out.add(String.format(Locale.ROOT, "%s +%.1f s", state,
          seconds(seen.readNanos() - since))));
    }
    List<Long> fences = tail.taskRecords().stream().filter(t -> t.value() != null && t.value().getEpoch() == epoch
        && t.value().getKind() == TaskKind.COPY && t.value().getFenceRequested()).map(t -> t.readNanos()).toList();
    out.add(span("fence requested", fences, since));
    for (TaskState state : List.of(TaskState.CAUGHT_UP, TaskState.VERIFIED)) {
      out.add(span(state.toString(), tail.statusTimes(st -> st.getEpoch() == epoch && st.getState() == state),
          since));
    }
    return String.join(", ", out);
  }

  private static String span(String what, List<Long> nanos, long since) {
    return nanos.isEmpty() ? what + " never" : String.format(Locale.ROOT, "%s %d times, +%.1f to +%.1f s", what,
        nanos.size(), seconds(nanos.stream().mapToLong(Long::longValue).min().orElseThrow() - since),
        seconds(nanos.stream().mapToLong(Long::longValue).max().orElseThrow() - since));
  }

  /**
   * The orchestrator whose Streams consumer is assigned the partition of the by-cluster repartition topic that the
   * scenario's cluster id hashes to: the instance that runs the cluster's aggregate (the client id is the role name).
   * Null while no live member has it (a rebalance).
   */
  private static RoleProcess owner(ChaosScenario s) throws Exception {
    String repartition = s.applicationId() + "-by-cluster-repartition";
    int partitions = describe(List.of(repartition)).get(repartition).partitions().size();
    TopicPartition partition = new TopicPartition(repartition,
        Utils.toPositive(Utils.murmur2(ChaosScenario.cluster().getBytes(StandardCharsets.UTF_8))) % partitions);
    try (Admin admin = admin()) {
      ConsumerGroupDescription group = admin.describeConsumerGroups(List.of(s.applicationId())).describedGroups()
          .get(s.applicationId()).get(ADMIN_TIMEOUT.toSeconds(), TimeUnit.SECONDS);
      for (MemberDescription member : group.members()) {
        if (member.assignment().topicPartitions().contains(partition)) {
          return s.orchestrators().stream().filter(o -> member.clientId().startsWith(o.name() + "-")
              && o.alive()).findFirst().orElse(null);
        }
      }
      return null;
    }
  }

  /** Partition to leader id (-1 without a leader). */
  private static Map<Integer, Integer> leaders(String topic) throws Exception {
    Map<Integer, Integer> leaders = new TreeMap<>();
    for (TopicPartitionInfo p : describe(List.of(topic)).get(topic).partitions()) {
      leaders.put(p.partition(), p.leader() == null || p.leader().isEmpty() ? -1 : p.leader().id());
    }
    return leaders;
  }

  private static Set<Integer> partitionsLedBy(Map<Integer, Integer> leaders, int broker) {
    return leaders.entrySet().stream().filter(e -> e.getValue() == broker).map(Map.Entry::getKey)
        .collect(Collectors.toCollection(java.util.TreeSet::new));
  }

  private static int quorumLeader() throws Exception {
    try (Admin admin = admin()) {
      return admin.describeMetadataQuorum().quorumInfo().get(ADMIN_TIMEOUT.toSeconds(), TimeUnit.SECONDS).leaderId();
    }
  }

  private static Map<String, TopicDescription> describe(Collection<String> names) throws Exception {
    try (Admin admin = admin()) {
      return admin.describeTopics(names).allTopicNames().get(ADMIN_TIMEOUT.toSeconds(), TimeUnit.SECONDS);
    }
  }

  private static Admin admin() {
    return Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers(),
        AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, (int) ADMIN_TIMEOUT.toMillis(),
        AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, 10_000));
  }

  private static double seconds(long nanos) {
    return nanos / 1e9;
  }
}
