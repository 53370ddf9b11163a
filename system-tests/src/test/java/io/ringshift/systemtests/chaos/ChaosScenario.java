package io.ringshift.systemtests.chaos;

import io.ringshift.cli.Ringshift;
import io.ringshift.client.RingClient;
import io.ringshift.client.RingClientConfig;
import io.ringshift.protocol.PublishedSnapshot;
import io.ringshift.protocol.RecordKeys;
import io.ringshift.protocol.RecordSerdes;
import io.ringshift.protocol.SigningKey;
import io.ringshift.protocol.Topics;
import io.ringshift.ring.Member;
import io.ringshift.ring.RingHash;
import io.ringshift.ring.RingRange;
import io.ringshift.ring.RingSnapshot;
import io.ringshift.schemas.avro.EpochRecord;
import io.ringshift.schemas.avro.EpochState;
import io.ringshift.schemas.avro.MemberSpec;
import io.ringshift.schemas.avro.MemberSpecState;
import io.ringshift.schemas.avro.MembershipAction;
import io.ringshift.schemas.avro.MembershipEvent;
import io.ringshift.schemas.avro.RangeCopyTask;
import io.ringshift.schemas.avro.TaskKind;
import io.ringshift.schemas.avro.TaskState;
import io.ringshift.storage.AdminSecret;
import io.ringshift.storage.Entry;
import io.ringshift.storage.Fence;
import io.ringshift.storage.RangeScan;
import io.ringshift.storage.RemoteStore;
import io.ringshift.storage.RoutedWriter;
import io.ringshift.storage.Routing;
import io.ringshift.storage.Store;
import io.ringshift.systemtests.ControlPlaneTail;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Pattern;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import picocli.CommandLine;

/**
 * One randomized scenario of the fault-injection suite (docs/development.md, "The fault-injection suite"): every role
 * its own OS process on the test's broker under a topic prefix of its own (the orchestrator, two workers, the
 * publisher, nine storage nodes in three zones plus three spares), writers through {@code RingClient} and {@link
 * RoutedWriter} at a steady rate, a random sequence of joins, drains, weight changes and failures at random times, and
 * random faults: SIGKILL of a worker, the orchestrator, the publisher or a storage node, each restarted (a node on its
 * data dir), and a restart of the broker (on its port and data). Then it waits for the plane to settle and checks the invariants of docs/architecture.md; a violation is an
 * {@link AssertionError} naming the scenario's seed, which replays it ({@code -Dchaos.seed=N}).
 */
final class ChaosScenario {
  private static final String CLUSTER = "chaos";
  private static final Duration START = Duration.ofSeconds(90);
  private static final Duration SETTLE = Duration.ofSeconds(240);
  private static final Pattern CTRL_C = Pattern.compile("Ctrl-C stops it\\.");

  /** What one scenario did; {@code epochs} is every record of {@code ring.epochs}, as read. */
  record Result(long seed, List<String> operations, Map<String, Integer> faults, long acknowledged, long lost,
      long reads, long staleReads, int published, long millis, double writesPerSecond, List<EpochRecord> epochs) {}

  /**
   * What a scenario deploys: storage nodes (members of the first epoch and spares to join), workers, orchestrators
   * (sharing one application id) and publishers (sharing one transactional id). {@code orchestratorCommand}: the
   * orchestrators are {@code ringshift orchestrator}, which replicates the topics as the brokers allow and whose
   * Kafka client id is its role name (so that a test finds which instance owns the cluster); otherwise the one
   * {@link ChaosOrchestrator}, as CI's seeds were found with.
   */
  record Deployment(int members, int spares, int workers, int orchestrators, int publishers,
      boolean orchestratorCommand) {
    /** ChaosIT's: nine members in three zones, three spares, two workers, one orchestrator, one publisher. */
    static final Deployment CHAOS = new Deployment(9, 3, 2, 1, 1, false);
  }

  /**
   * What a scripted scenario does between epoch 1 and settling, instead of the random timeline: its changes and
   * faults, through the scenario's methods, and any assertion of its own. The writers and readers run meanwhile.
   */
  interface Script {
    void run(ChaosScenario scenario) throws Exception;
  }

  /** Writer threads ({@code -Dchaos.writers}), each over keys of its own. */
  static final int WRITER_THREADS = Integer.getInteger("chaos.writers", 32);
  /**
   * Writes per second the writer threads aim at together ({@code -Dchaos.writeRate}, a steady rate); 0: as fast as
   * they can. The default leaves the plane headroom: at full speed the 17 processes of a scenario share this machine's
   * two cores and the writers reach a median of about 400 acknowledged writes/s (docs/development.md).
   */
  static final int WRITE_RATE = Integer.getInteger("chaos.writeRate", 300);
  /** Keys per writer thread, written round and round. */
  private static final int KEYS_PER_WRITER = 500;

  /** The broker every role uses, which the suite may restart (same port, same data). */
  interface Broker {
    String bootstrap();

    void restart();
  }

  private final String bootstrap;
  private final Broker broker;
  private final String prefix;
  private final Path dir;
  private final long seed;
  private final Random random;
  /** Ports come from a generator of their own, so that a seed draws the same changes and faults whatever they are. */
  private final Random ports;
  private final Topics topics;
  private final List<RoleProcess> all = new ArrayList<>();
  private final Map<String, RoleProcess> nodes = new LinkedHashMap<>();
  private final Map<String, Integer> clientPorts = new LinkedHashMap<>();
  private final Map<String, Integer> adminPorts = new LinkedHashMap<>();
  private final Map<String, String> zones = new LinkedHashMap<>();
  private final List<String> members = new ArrayList<>();
  private final List<String> spares = new ArrayList<>();
  private final List<String> dead = new ArrayList<>();
  private final Map<String, Integer> faults = new TreeMap<>();
  private final List<String> operations = new ArrayList<>();
  private final Deployment deployment;
  private final Script script;
  private final List<RoleProcess> orchestrators = new ArrayList<>();
  private final List<RoleProcess> publishers = new ArrayList<>();
  private final List<RoleProcess> workers = new ArrayList<>();
  private volatile ControlPlaneTail tail;
  private AdminSecret secret;
  private Path publicKey;
  private KafkaProducer<byte[], byte[]> producer;
  private int requests;
  private final Map<String, Store> readStores = new ConcurrentHashMap<>();

  /** ChaosIT's scenario: {@link Deployment#CHAOS} and the random timeline {@code seed} draws. */
  ChaosScenario(Broker broker, String prefix, Path dir, long seed) {
    this(broker, prefix, dir, seed, Deployment.CHAOS, null);
  }

  /** A scenario of {@code deployment} that runs {@code script} (the random timeline when null). */
  ChaosScenario(Broker broker, String prefix, Path dir, long seed, Deployment deployment, Script script) {
    this.deployment = deployment;
    this.script = script;
    this.broker = broker;
    this.bootstrap = broker.bootstrap();
    this.prefix = prefix;
    this.dir = dir;
    this.seed = seed;
    this.random = new Random(seed);
    this.ports = new Random(seed ^ 0x5DEECE66DL);
    this.topics = Topics.withPrefix(prefix);
  }

  Result run() throws Exception {
    long begin = System.nanoTime();
    Files.createDirectories(dir.resolve("tmp"));
    SigningKey key = SigningKey.generate();
    Path keyFile = dir.resolve("publisher.key");
    publicKey = dir.resolve("publisher.pub");
    key.write(keyFile, publicKey);
    Path secretFile = dir.resolve("admin.secret");
    secret = AdminSecret.readOrCreate(secretFile);
    Properties producerProps = new Properties();
    producerProps.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    producer = new KafkaProducer<>(producerProps, new ByteArraySerializer(), new ByteArraySerializer());
    try {
      startPlane(keyFile, secretFile); // the orchestrator creates the topics the tail reads
    } catch (RuntimeException | IOException e) {
      producer.close();
      all.forEach(RoleProcess::kill);
      throw e;
    }
    long started = System.nanoTime();
    try (ControlPlaneTail tail = new ControlPlaneTail(bootstrap, topics)) {
      this.tail = tail;
      init();
      tail.awaitEpoch(1, EpochState.PUBLISHED);
      long initialized = System.nanoTime();
      try (Writers writers = new Writers(random.nextLong()); Readers readers = readers(writers)) {
        writers.start();
        readers.start();
        if (script == null) {
          runTimeline(writers);
        } else {
          script.run(this);
        }
        long timeline = System.nanoTime();
        settle(tail);
        long settled = System.nanoTime();
        writers.stop();
        readers.stop();
        System.out.println("  writers: " + writers.describe());
        System.out.println("  readers: " + readers.describe());
        Result result = check(tail, writers, readers, begin);
        System.out.printf(Locale.ROOT, "  phases: roles started %.1f s, epoch 1 published %.1f s, changes and faults "
            + "%.1f s, settling %.1f s, checks and audit %.1f s%n", seconds(started - begin),
            seconds(initialized - started), seconds(timeline - initialized), seconds(settled - timeline),
            seconds(System.nanoTime() - settled));
        return result;
      } finally {
        readStores.values().forEach(Store::close);
      }
    } finally {
      producer.close();
      all.forEach(RoleProcess::kill);
    }
  }

  private static final class Properties extends java.util.Properties {}

  private static double seconds(long nanos) {
    return nanos / 1e9;
  }

  /** Readers through a client of their own and client-port connections of their own. */
  private Readers readers(Writers writers) {
    return new Readers(ringClient(), id -> readStores.computeIfAbsent(id,
        n -> RemoteStore.connect("127.0.0.1:" + clientPorts.get(n), Duration.ofSeconds(5))), writers.acks,
        writers.ackedKeys,
        seed ^ 0x5245414445525321L); // not from random, so that a seed draws the same changes and faults as before
  }

  private RingClient ringClient() {
    return new RingClient(RingClientConfig.builder()
        .bootstrapServers(bootstrap)
        .clusterId(CLUSTER)
        .topic(topics.snapshots().name())
        .epochsTopic(topics.epochs().name())
        .trustedKeyFiles(publicKey)
        .build()).start();
  }

  private static String key(int writerThread, long index) {
    return "w" + writerThread + "-" + index;
  }

  // ---- the plane

  private void startPlane(Path keyFile, Path secretFile) throws IOException {
    for (int i = 1; i <= deployment.members() + deployment.spares(); i++) {
      String id = String.format(Locale.ROOT, "node-%02d", i);
      zones.put(id, "az-" + ((i - 1) % 3 + 1));
      clientPorts.put(id, freePort());
      adminPorts.put(id, freePort());
      (i <= deployment.members() ? members : spares).add(id);
    }
    StringBuilder nodesFile = new StringBuilder();
    adminPorts.forEach((id, port) -> nodesFile.append(id).append(" 127.0.0.1:").append(port).append('\n'));
    Path nodesPath = dir.resolve("nodes.txt");
    Files.writeString(nodesPath, nodesFile);

    startOrchestrators();
    for (int p = 1; p <= deployment.publishers(); p++) {
      RoleProcess publisher = role(deployment.publishers() == 1 ? "publisher" : "publisher-" + p,
          Ringshift.class.getName(), List.of("publisher", "--bootstrap", bootstrap, "--topic-prefix", prefix,
              "--signing-key", keyFile.toString(), "--transactional-id", prefix + "publisher", "--timeout", "30"),
          CTRL_C);
      // The orchestrator has created the topics; the other roles start side by side, then each is waited for.
      publisher.launch();
      publishers.add(publisher);
    }
    for (String id : zones.keySet()) {
      RoleProcess node = role(id, Ringshift.class.getName(), List.of("node", "--id", id, "--zone", zones.get(id),
          "--data-dir", dir.resolve("nodes").resolve(id).toString(), "--port", clientPorts.get(id).toString(),
          "--admin-port", adminPorts.get(id).toString(), "--admin-secret-file", secretFile.toString(),
          "--bootstrap", bootstrap, "--topic-prefix", prefix, "--cluster", CLUSTER, "--trusted-key",
          publicKey.toString(), "--threads", "8"), CTRL_C);
      node.launch();
      nodes.put(id, node);
    }
    for (int w = 1; w <= deployment.workers(); w++) {
      RoleProcess worker = role("worker-" + w, Ringshift.class.getName(), List.of("worker", "--bootstrap", bootstrap,
          "--topic-prefix", prefix, "--timeout", "60", "--group-id", prefix + "workers", "--worker-id", "worker-" + w,
          "--nodes", nodesPath.toString(), "--node-secret-file", secretFile.toString(), "--trusted-key",
          publicKey.toString(), "--grace", "2s", "--node-timeout", "20s"), CTRL_C);
      worker.launch();
      workers.add(worker);
    }
    for (RoleProcess role : all) {
      role.awaitReady(START);
    }
  }

  /**
   * The first orchestrator is started and waited for, since it creates the topics; the others (standbys) start
   * after it, each waited for, so that the group has settled before the cluster is declared.
   */
  private void startOrchestrators() throws IOException {
    for (int o = 1; o <= deployment.orchestrators(); o++) {
      String name = deployment.orchestrators() == 1 ? "orchestrator" : "orchestrator-" + o;
      Path state = dir.resolve(o == 1 ? "streams" : "streams-" + o);
      RoleProcess orchestrator;
      if (deployment.orchestratorCommand()) {
        Path clientConfig = dir.resolve(name + ".properties");
        Files.writeString(clientConfig, "client.id=" + name + "\n");
        orchestrator = role(name, Ringshift.class.getName(), List.of("orchestrator", "--bootstrap", bootstrap,
            "--topic-prefix", prefix, "--application-id", applicationId(), "--state-dir", state.toString(),
            "--kafka-config", clientConfig.toString()), CTRL_C);
      } else {
        orchestrator = role(name, ChaosOrchestrator.class.getName(), List.of(bootstrap, applicationId(), prefix,
            state.toString()), Pattern.compile("^RUNNING"));
      }
      orchestrator.start(START);
      orchestrators.add(orchestrator);
    }
  }

  private RoleProcess role(String name, String main, List<String> args, Pattern ready) {
    RoleProcess p = new RoleProcess(name, main, args, dir.resolve(name + ".log"), dir.resolve("tmp"), ready);
    all.add(p);
    return p;
  }

  /**
   * A port that is free now, below Linux's ephemeral range (32768 on): a port of that range, probed free, was taken
   * by some client's outgoing connection before the node restarted on it (seed 6312510641496042376).
   */
  private int freePort() throws IOException {
    for (int attempt = 0; attempt < 200; attempt++) {
      int port = 20_000 + ports.nextInt(12_000);
      if (clientPorts.containsValue(port) || adminPorts.containsValue(port)) {
        continue;
      }
      try (ServerSocket s = new ServerSocket(port, 1, java.net.InetAddress.getLoopbackAddress())) {
        return s.getLocalPort();
      } catch (IOException taken) {
        // try another
      }
    }
    throw new IOException("no free port between 20000 and 32000 after 200 tries");
  }

  private void init() {
    List<MemberSpec> specs = new ArrayList<>();
    for (String id : members) {
      specs.add(new MemberSpec(id, zones.get(id), 1.0, MemberSpecState.ACTIVE, java.util.List.of()));
    }
    send(event(MembershipAction.INIT, "", null, null).setInitialMembers(specs).setVnodes(16).setReplicas(3).build());
  }

  private MembershipEvent.Builder event(MembershipAction action, String node, String zone, Double weight) {
    return MembershipEvent.newBuilder().setClusterId(CLUSTER).setNodeId(node).setAction(action).setZone(zone)
        .setWeight(weight).setRequestId(prefix + "r" + (++requests)).setRequestedBy("chaos")
        .setTimestampMillis(System.currentTimeMillis());
  }

  private void send(MembershipEvent e) {
    try {
      producer.send(new ProducerRecord<>(topics.membership().name(),
          RecordKeys.membershipKey(e).getBytes(StandardCharsets.UTF_8), RecordSerdes.membershipEvent().serialize(e)))
          .get();
    } catch (Exception ex) {
      throw new AssertionError("seed " + seed + ": could not write a membership event: " + ex, ex);
    }
  }

  // ---- the timeline: changes and faults at random times

  private void runTimeline(Writers writers) throws InterruptedException {
    int changes = 3 + random.nextInt(2);
    int injected = 1 + random.nextInt(2);
    List<Boolean> steps = new ArrayList<>();
    for (int i = 0; i < changes; i++) {
      steps.add(true);
    }
    for (int i = 0; i < injected; i++) {
      steps.add(1 + random.nextInt(steps.size()), false);
    }
    for (boolean change : steps) {
      Thread.sleep(500 + random.nextInt(4_000)); // the scenario's random timing, not a wait for a condition
      if (change) {
        change();
      } else {
        fault();
      }
    }
  }

  private void change() {
    int kind = random.nextInt(4);
    if (kind == 0 && !spares.isEmpty()) {
      String id = spares.remove(0);
      members.add(id);
      operations.add("JOIN " + id);
      send(event(MembershipAction.JOIN, id, zones.get(id), null).build());
    } else if (kind == 1 && members.size() > 7) {
      String id = members.remove(random.nextInt(members.size()));
      operations.add("DRAIN " + id);
      send(event(MembershipAction.DRAIN, id, null, null).build());
    } else if (kind == 2) {
      String id = members.get(random.nextInt(members.size()));
      double weight = List.of(0.5, 1.5, 2.0).get(random.nextInt(3));
      operations.add(String.format(Locale.ROOT, "SET_WEIGHT %s %.1f", id, weight));
      send(event(MembershipAction.SET_WEIGHT, id, null, weight).build());
    } else if (members.size() > 7 && dead.isEmpty()) {
      String id = members.remove(random.nextInt(members.size()));
      dead.add(id);
      nodes.get(id).kill();
      operations.add("FAIL " + id + " (killed for good)");
      count("node gone for good");
      send(event(MembershipAction.FAIL, id, null, null).build());
    } else {
      String id = members.get(random.nextInt(members.size()));
      operations.add("SET_WEIGHT " + id + " 1.0");
      send(event(MembershipAction.SET_WEIGHT, id, null, 1.0).build());
    }
  }

  private void fault() throws InterruptedException {
    int kind = random.nextInt(5);
    RoleProcess victim;
    String what;
    if (kind == 4) {
      operations.add("broker restart");
      count("broker restarted");
      broker.restart();
      return;
    }
    if (kind == 0) {
      victim = workers.get(random.nextInt(workers.size()));
      what = "worker";
    } else if (kind == 1) {
      victim = orchestrators.get(0);
      what = "orchestrator";
    } else if (kind == 2) {
      victim = publishers.get(0);
      what = "publisher";
    } else {
      List<String> alive = members.stream().filter(id -> !dead.contains(id)).toList();
      victim = nodes.get(alive.get(random.nextInt(alive.size())));
      what = "storage node";
    }
    operations.add("SIGKILL " + victim.name() + ", restarted");
    count(what + " killed and restarted");
    victim.kill();
    Thread.sleep(500 + random.nextInt(2_000)); // how long the role stays down: the scenario's timing
    victim.start(START);
  }

  private void count(String fault) {
    faults.merge(fault, 1, Integer::sum);
  }

  // ---- what a script uses

  static String cluster() {
    return CLUSTER;
  }

  String bootstrap() {
    return bootstrap;
  }

  Topics topics() {
    return topics;
  }

  /** The orchestrators' Kafka Streams application id (their consumer group). */
  String applicationId() {
    return prefix + "orchestrator";
  }

  /** The scenario's tail of the control plane, while it runs. */
  ControlPlaneTail tail() {
    return tail;
  }

  List<RoleProcess> orchestrators() {
    return List.copyOf(orchestrators);
  }

  List<RoleProcess> publishers() {
    return List.copyOf(publishers);
  }

  /** Requests the JOIN of the next spare and returns its id once the request is acknowledged. */
  String joinSpare() {
    String id = spares.remove(0);
    members.add(id);
    operations.add("JOIN " + id);
    send(event(MembershipAction.JOIN, id, zones.get(id), null).build());
    return id;
  }

  /** SIGKILLs {@code victim} for good (no restart), counted as a fault of kind {@code what}. */
  void killForGood(RoleProcess victim, String what) {
    operations.add("SIGKILL " + victim.name() + " for good");
    count(what + " killed for good");
    victim.kill();
  }

  /** Records a fault the script injected itself (a broker stopped, say), for the scenario's report. */
  void injected(String operation, String kind) {
    operations.add(operation);
    count(kind);
  }

  // ---- settling

  /**
   * Waits until nothing is in flight: the last epoch record of the cluster is PUBLISHED (no later PLANNED, READY or
   * REJECTED one waits), and every CLEANUP task of the published epochs has ended.
   */
  private void settle(ControlPlaneTail tail) {
    String[] last = {""};
    long[] quietSince = {0, -1}; // when the records were first seen quiet, and how many there were then
    try {
      org.awaitility.Awaitility.await("the plane settled").atMost(SETTLE).pollInterval(Duration.ofMillis(250)).until(() -> {
        String waiting = waitingFor(tail);
        int seen = tail.epochRecords().size();
        if (waiting != null || seen != quietSince[1]) {
          last[0] = waiting == null ? "records still arriving" : waiting;
          quietSince[0] = System.nanoTime();
          quietSince[1] = waiting == null ? seen : -1;
          return false;
        }
        // Quiet for a second: nothing more in the topics' pipes.
        return System.nanoTime() - quietSince[0] >= 1_000_000_000L;
      });
    } catch (org.awaitility.core.ConditionTimeoutException e) {
      throw new AssertionError("seed " + seed + ": the plane did not settle within " + SETTLE + ": " + last[0]
          + "; operations " + operations + "; logs in " + dir, e);
    }
  }

  /** What the plane still works on, or null when nothing is in flight and every cleanup has ended. */
  private String waitingFor(ControlPlaneTail tail) {
    List<EpochRecord> records = tail.epochRecords();
    EpochRecord latest = records.isEmpty() ? null : records.get(records.size() - 1);
    boolean quiet = latest != null && latest.getState() == EpochState.PUBLISHED
        && records.stream().noneMatch(r -> r.getEpoch() > latest.getEpoch());
    if (!quiet) {
      return "epochs " + tail.epochSummary();
    }
    for (EpochRecord r : records) {
      if (r.getState() != EpochState.PUBLISHED) {
        continue;
      }
      for (String id : tail.latestTasks(r.getEpoch(), TaskKind.CLEANUP).keySet()) {
        TaskState state = tail.latestStatus(id).map(s -> s.getState()).orElse(TaskState.PENDING);
        if (state != TaskState.VERIFIED && state != TaskState.FAILED) {
          return "cleanup " + id + " is " + state;
        }
      }
    }
    return null;
  }

  // ---- the invariants

  private Result check(ControlPlaneTail tail, Writers writers, Readers readers, long begin) {
    String where = "seed " + seed + " (operations " + operations + ", logs in " + dir + ")";
    List<EpochRecord> records = tail.epochRecords();
    List<EpochRecord> published = records.stream().filter(r -> r.getState() == EpochState.PUBLISHED).toList();
    // No epoch published twice or out of order; a gap only after a rejection.
    long previous = 0;
    for (EpochRecord r : published) {
      if (r.getEpoch() <= previous) {
        throw new AssertionError(where + ": epoch " + r.getEpoch() + " published after epoch " + previous);
      }
      long after = previous;
      if (r.getEpoch() != previous + 1 && records.stream().noneMatch(x -> x.getState() == EpochState.REJECTED
          && x.getEpoch() > after && x.getEpoch() < r.getEpoch())) {
        throw new AssertionError(where + ": epoch " + r.getEpoch() + " published after " + previous + " with no "
            + "rejected epoch between: an epoch was skipped");
      }
      previous = r.getEpoch();
    }
    // No task lost: every COPY/REPAIR task of a published epoch was verified.
    for (EpochRecord r : published) {
      int planned = r.getDiffSummary() == null ? 0 : r.getDiffSummary().getTasks();
      long verified = tail.taskRecords().stream().filter(s -> s.value() != null && s.value().getEpoch() == r.getEpoch()
              && s.value().getKind() != TaskKind.CLEANUP).map(s -> s.key()).distinct()
          .filter(id -> tail.statuses(id).stream().anyMatch(st -> st.getState() == TaskState.VERIFIED)).count();
      if (verified < planned) {
        throw new AssertionError(where + ": epoch " + r.getEpoch() + " was published with " + planned + " tasks, "
            + "of which only " + verified + " were verified");
      }
    }
    EpochRecord last = published.get(published.size() - 1);
    RingSnapshot ring = io.ringshift.protocol.EpochRecords.rebuild(last);
    Map<String, Store> admin = new LinkedHashMap<>();
    long lost = 0;
    try {
      for (Member m : ring.members()) {
        admin.put(m.id(), RemoteStore.connectAdmin("127.0.0.1:" + adminPorts.get(m.id()), secret,
            Duration.ofSeconds(30)));
      }
      // One scan of each node of the final ring: what it holds, for the checks below.
      Map<String, Map<String, byte[]>> holds = new LinkedHashMap<>();
      for (Map.Entry<String, Store> n : admin.entrySet()) {
        for (Fence f : n.getValue().fences()) {
          if (f.epoch() > last.getEpoch()) {
            throw new AssertionError(where + ": " + n.getKey() + " keeps a fence of " + f.range() + " at epoch "
                + f.epoch() + ", beyond the final epoch " + last.getEpoch());
          }
        }
        // Nothing left on a node that no longer replicates it.
        Map<String, byte[]> held = new java.util.HashMap<>();
        long stray = 0;
        try (RangeScan scan = n.getValue().scan(RingRange.whole(), null)) {
          while (scan.hasNext()) {
            Entry entry = scan.next();
            held.put(new String(entry.key(), StandardCharsets.UTF_8), entry.value());
            if (!ring.replicasOf(entry.key()).ids().contains(n.getKey())) {
              stray++;
            }
          }
        }
        if (stray > 0) {
          throw new AssertionError(where + ": " + n.getKey() + " still holds " + stray + " keys it does not "
              + "replicate in the final epoch " + last.getEpoch() + " after the cleanup grace");
        }
        holds.put(n.getKey(), held);
      }
      // Every acknowledged write on every replica of the final ring.
      for (Map.Entry<String, byte[]> e : writers.acknowledged.entrySet()) {
        byte[] k = e.getKey().getBytes(StandardCharsets.UTF_8);
        for (String replica : ring.replicasOf(k).ids()) {
          byte[] held = holds.get(replica).get(e.getKey());
          if (!java.util.Arrays.equals(held, e.getValue())) {
            lost++;
            if (lost <= 3) {
              System.out.printf("  LOST %s on %s (%s)%n", e.getKey(), replica, held == null ? "absent" : "other value");
            }
          }
        }
      }
    } finally {
      admin.values().forEach(Store::close);
    }
    if (lost > 0) {
      throw new AssertionError(where + ": " + lost + " acknowledged writes are missing from a replica of the final "
          + "epoch " + last.getEpoch());
    }
    if (readers.stale.get() > 0) {
      throw new AssertionError(where + ": " + readers.stale.get() + " stale reads (a readable replica of the reader's "
          + "epoch without a write acknowledged at that epoch or before), such as " + readers.staleReads);
    }
    StringWriter out = new StringWriter();
    CommandLine cli = Ringshift.newCommandLine();
    cli.setOut(new PrintWriter(out, true));
    cli.setErr(new PrintWriter(out, true));
    int exit = cli.execute("audit", "--bootstrap", bootstrap, "--topic-prefix", prefix, "--cluster", CLUSTER,
        "--trusted-key", publicKey.toString());
    if (exit != 0) {
      throw new AssertionError(where + ": ringshift audit exited " + exit + ":\n" + out);
    }
    return new Result(seed, List.copyOf(operations), Map.copyOf(faults), writers.acknowledged.size() == 0 ? 0
        : writers.ackCount.get(), lost, readers.checked.get(), readers.stale.get(), published.size(),
        (System.nanoTime() - begin) / 1_000_000, writers.writesPerSecond(), List.copyOf(records));
  }

  // ---- the writers

  /**
   * {@link #WRITER_THREADS} writer threads through a {@link RingClient} and {@link RoutedWriter} (replicas in parallel,
   * batched per node), each over its own keys, together at {@link #WRITE_RATE} writes/s; a write that fails is retried
   * until acknowledged, so each key's last acknowledged value is its value on every replica once the plane has
   * settled.
   */
  private final class Writers implements AutoCloseable {
    final Map<String, byte[]> acknowledged = new ConcurrentHashMap<>();
    /** Each key's last acknowledged write, for the readers. */
    final Map<String, Readers.Ack> acks = new ConcurrentHashMap<>();
    /** The keys in {@link #acks}, each added at its first acknowledged write. */
    final List<String> ackedKeys = java.util.Collections.synchronizedList(new ArrayList<>());
    final AtomicLong ackCount = new AtomicLong();
    private final AtomicBoolean stop = new AtomicBoolean();
    private final List<Thread> threads = new ArrayList<>();
    private final RingClient client;
    private final Map<String, Store> stores = new ConcurrentHashMap<>();
    private final long writerSeed;
    private volatile long startedNanos;
    /** Acknowledged writes in each second since the start, and failed attempts by exception. */
    final java.util.concurrent.atomic.AtomicLongArray perSecond = new java.util.concurrent.atomic.AtomicLongArray(3600);
    final Map<String, Integer> failures = new ConcurrentHashMap<>();
    private volatile long stoppedNanos;

    Writers(long writerSeed) {
      this.writerSeed = writerSeed;
      client = ringClient();
    }

    void start() {
      Routing routing = new Routing() {
        @Override
        public Route route(byte[] key) {
          PublishedSnapshot s = client.current().orElseThrow(() -> new io.ringshift.storage.StoreException.Unavailable(
              "no ring yet", null));
          return Route.of(s.ring(), key);
        }

        @Override
        public boolean awaitEpoch(long epoch, Duration timeout) {
          try {
            org.awaitility.Awaitility.await("epoch " + epoch).atMost(timeout).pollInterval(Duration.ofMillis(5))
                .until(() -> client.epoch() >= epoch);
            return true;
          } catch (org.awaitility.core.ConditionTimeoutException e) {
            return false;
          }
        }
      };
      RoutedWriter writer = RoutedWriter.create(routing, id -> stores.computeIfAbsent(id,
          n -> RemoteStore.connect("127.0.0.1:" + clientPorts.get(n), Duration.ofSeconds(5))));
      // Each thread writes at its share of the rate: one write every period, without bursts to catch up after a stall.
      long periodNanos = WRITE_RATE <= 0 ? 0 : WRITER_THREADS * 1_000_000_000L / WRITE_RATE;
      startedNanos = System.nanoTime();
      for (int t = 0; t < WRITER_THREADS; t++) {
        int thread = t;
        Random r = new Random(writerSeed + t);
        Thread th = new Thread(() -> {
          long n = 0;
          long next = System.nanoTime() + (periodNanos == 0 ? 0 : r.nextLong(periodNanos));
          while (!stop.get()) {
            if (periodNanos > 0) {
              long wait = next - System.nanoTime();
              if (wait > 0) {
                sleepNanos(wait);
              }
              next = Math.max(next + periodNanos, System.nanoTime() - periodNanos);
            }
            long sequence = n++;
            String key = key(thread, sequence % KEYS_PER_WRITER);
            byte[] value = new byte[100 + r.nextInt(200)];
            r.nextBytes(value);
            Readers.stamp(value, sequence);
            while (true) {
              try {
                RoutedWriter.Written written = writer.put(key.getBytes(StandardCharsets.UTF_8), value);
                acknowledged.put(key, value);
                if (acks.put(key, new Readers.Ack(sequence, written.epoch())) == null) {
                  ackedKeys.add(key);
                }
                ackCount.incrementAndGet();
                perSecond.incrementAndGet((int) Math.min(perSecond.length() - 1,
                    (System.nanoTime() - startedNanos) / 1_000_000_000L));
                break;
              } catch (RuntimeException e) {
                failures.merge(e.getClass().getSimpleName(), 1, Integer::sum);
                if (stop.get() && !acknowledged.containsKey(key)) {
                  break; // never acknowledged: not checked
                }
                sleep(50);
              }
            }
          }
        }, "chaos-writer-" + t);
        th.setDaemon(true);
        threads.add(th);
        th.start();
      }
    }

    void stop() throws InterruptedException {
      stop.set(true);
      stoppedNanos = System.nanoTime();
      for (Thread t : threads) {
        t.join(60_000);
      }
    }

    /** The writers' figures: per-second acknowledged writes (10th percentile, median, max) and failed attempts. */
    String describe() {
      long end = stoppedNanos == 0 ? System.nanoTime() : stoppedNanos;
      int seconds = (int) Math.min(perSecond.length(), Math.max(1, (end - startedNanos) / 1_000_000_000L));
      long[] rates = new long[seconds];
      for (int i = 0; i < seconds; i++) {
        rates[i] = perSecond.get(i);
      }
      java.util.Arrays.sort(rates);
      return String.format(java.util.Locale.ROOT, "writes/s per second p10 %d, median %d, max %d; failed attempts %s",
          rates[seconds / 10], rates[seconds / 2], rates[seconds - 1], new java.util.TreeMap<>(failures));
    }

    /** Acknowledged writes per second while the writers ran. */
    double writesPerSecond() {
      long end = stoppedNanos == 0 ? System.nanoTime() : stoppedNanos;
      return ackCount.get() / Math.max(1e-9, (end - startedNanos) / 1e9);
    }

    @Override
    public void close() {
      stop.set(true);
      client.close();
      stores.values().forEach(Store::close);
    }

    private void sleepNanos(long nanos) {
      java.util.concurrent.locks.LockSupport.parkNanos(nanos);
    }

    private void sleep(long millis) {
      try {
        Thread.sleep(millis);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }
}
