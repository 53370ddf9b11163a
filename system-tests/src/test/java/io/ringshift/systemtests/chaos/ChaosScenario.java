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
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Properties;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.locks.LockSupport;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.ListOffsetsOptions;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.awaitility.Awaitility;
import org.awaitility.core.ConditionTimeoutException;
import picocli.CommandLine;

/**
 * One randomized scenario of the fault-injection suite (docs/development.md, "The fault-injection suite"): every role
 * its own OS process on the test's broker under a topic prefix of its own (the orchestrator, two workers, the
 * publisher, nine storage nodes in three zones plus three spares), writers through {@code RingClient} and {@link
 * RoutedWriter} at a steady rate, a random sequence of joins, drains, weight changes and failures at random times, and
 * random faults: SIGKILL of a worker, the orchestrator, the publisher or a storage node, each restarted (a node on its
 * data dir), and a restart of the broker (on its port and data); beside them, the {@link Extras} it draws: a CANCEL
 * of the epoch in flight, a publisher made to reject an epoch, roles with their wall clock off. Then it waits for the
 * plane to settle and checks the invariants of docs/architecture.md, and that each CANCEL and each change ended with
 * an outcome; a violation is an {@link AssertionError} naming the scenario's seed, which replays it ({@code
 * -Dchaos.seed=N}).
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

  /**
   * What a scenario of the random timeline draws beside its changes and faults, from a generator of its own, so that a
   * seed draws the same changes, faults and timing as before these were added (docs/development.md):
   *
   * <ul>
   *   <li>a CANCEL of the epoch in flight after one of its first three changes (one scenario in two): the first plan
   *       that appears after the change (its own, one queued before it, or a re-plan), right after it appears or once
   *       one of its copies runs (one in two each), as {@code ringshift cancel} writes it;
   *   <li>a forced publisher rejection of the first plan after another of them (one scenario in three), an epoch
   *       the cancel did not take: a stray COPY task of that epoch to a node nobody runs, which stays BLOCKED, so that
   *       the publisher, run with a short {@code --timeout}, gives up on the epoch and rejects it, and the
   *       orchestrator rolls back and plans again;
   *   <li>wall clocks off (one scenario in two): one worker's by +1 to +5 s, the publisher's or the orchestrator's by
   *       -3 to +3 s (libfaketime, {@link RoleProcess#clockOffset}).
   * </ul>
   *
   * @param cancel the index among the changes of the one after which the plan in flight is cancelled; -1 for none
   * @param cancelWhileCopying whether the cancel waits until a copy of the plan runs
   * @param reject the index among the changes of the one after which the publisher is made to reject the plan in
   *     flight; -1 for none
   * @param clocks the roles whose wall clock is off, by how many seconds
   */
  record Extras(int cancel, boolean cancelWhileCopying, int reject, Map<String, Double> clocks) {
    static final Extras NONE = new Extras(-1, false, -1, Map.of());

    static Extras draw(long seed, Deployment deployment) {
      Random r = new Random(seed ^ 0x4558545241533031L);
      // Every number is drawn whatever the others are, so that changing one rule leaves the others' draws alone.
      boolean cancel = r.nextInt(2) == 0;
      int cancelIndex = r.nextInt(3);
      boolean whileCopying = r.nextBoolean();
      boolean reject = r.nextInt(3) == 0;
      int rejectIndex = (cancelIndex + 1 + r.nextInt(2)) % 3;
      boolean clocks = r.nextBoolean();
      int worker = 1 + r.nextInt(deployment.workers());
      double workerOffset = (10 + r.nextInt(41)) / 10.0;
      boolean publisher = r.nextBoolean();
      double otherOffset = (r.nextBoolean() ? 1 : -1) * (1 + r.nextInt(30)) / 10.0;
      Map<String, Double> offsets = new TreeMap<>();
      if (clocks) {
        offsets.put(deployment.workers() == 1 ? "worker-1" : "worker-" + worker, workerOffset);
        offsets.put(publisher ? (deployment.publishers() == 1 ? "publisher" : "publisher-1")
            : (deployment.orchestrators() == 1 ? "orchestrator" : "orchestrator-1"), otherOffset);
      }
      return new Extras(cancel ? cancelIndex : -1, whileCopying, reject ? rejectIndex : -1, Map.copyOf(offsets));
    }

    boolean any() {
      return cancel >= 0 || reject >= 0 || !clocks.isEmpty();
    }

    @Override
    public String toString() {
      List<String> parts = new ArrayList<>();
      if (cancel >= 0) {
        parts.add("CANCEL of the first plan after change " + (cancel + 1) + " " + (cancelWhileCopying
            ? "while its copies run" : "right after it appears"));
      }
      if (reject >= 0) {
        parts.add("publisher rejection of the first plan after change " + (reject + 1));
      }
      new TreeMap<>(clocks).forEach((role, s) -> parts.add(String.format(Locale.ROOT, "clock of %s %+.1f s", role, s)));
      return parts.isEmpty() ? "none" : String.join(", ", parts);
    }
  }

  /**
   * A CANCEL request the scenario wrote: its id, the epoch it names, and the change the plan carries out (its cause,
   * which the CANCEL names by its node) with that change's request id.
   */
  record Cancel(String requestId, long epoch, String change, String changeRequestId) {}

  /**
   * A stray task written to make the publisher reject {@code epoch}: its id, the change whose plan that was, when it
   * was written ({@link System#nanoTime}) and whether the epoch's READY record had been seen by then.
   */
  record Stray(String taskId, long epoch, String change, long writtenNanos, boolean readyBefore) {}

  /** A node id in no node directory: a task whose target it is stays BLOCKED. */
  static final String NOBODY = "node-99";

  /**
   * The publisher's {@code --timeout} (seconds) when a scenario forces a rejection: it rejects after 3 x that. With
   * 5 s, the publisher's first look at Kafka, while the other twelve roles started beside it, timed out (seed
   * -1336499164035693200); such a publisher is also started on its own, before the others.
   */
  static final int REJECTING_PUBLISHER_TIMEOUT = 10;

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
  private final Map<String, Integer> faults = Collections.synchronizedMap(new TreeMap<>());
  /** What the scenario did, in order; the timeline and the extras' threads append to it. */
  private final List<String> operations = Collections.synchronizedList(new ArrayList<>());
  private final Deployment deployment;
  private final Script script;
  private final List<RoleProcess> orchestrators = new ArrayList<>();
  private final List<RoleProcess> publishers = new ArrayList<>();
  private final List<RoleProcess> workers = new ArrayList<>();
  private volatile ControlPlaneTail tail;
  private AdminSecret secret;
  private Path publicKey;
  private KafkaProducer<byte[], byte[]> producer;
  private final AtomicInteger requests = new AtomicInteger();
  /** Every membership event the scenario wrote, in order. */
  private final List<MembershipEvent> sent = Collections.synchronizedList(new ArrayList<>());
  /** What the scenario draws beside its changes and faults ({@link Extras}). */
  private final Extras extras;
  /** The CANCEL requests written, and the stray tasks written to make the publisher reject an epoch. */
  private final List<Cancel> cancels = Collections.synchronizedList(new ArrayList<>());
  private final List<Stray> strays = Collections.synchronizedList(new ArrayList<>());
  private final Map<String, Store> readStores = new ConcurrentHashMap<>();

  /**
   * ChaosIT's scenario: {@link Deployment#CHAOS} and the random timeline {@code seed} draws, with the {@link Extras}
   * it draws when {@code withExtras} (without them, as a seed drew before they were added).
   */
  ChaosScenario(Broker broker, String prefix, Path dir, long seed, boolean withExtras) {
    this(broker, prefix, dir, seed, Deployment.CHAOS, null, withExtras);
  }

  /** A scenario of {@code deployment} that runs {@code script} (the random timeline when null). */
  ChaosScenario(Broker broker, String prefix, Path dir, long seed, Deployment deployment, Script script) {
    this(broker, prefix, dir, seed, deployment, script, false);
  }

  private ChaosScenario(Broker broker, String prefix, Path dir, long seed, Deployment deployment, Script script,
      boolean withExtras) {
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
    this.extras = script == null && withExtras ? Extras.draw(seed, deployment) : Extras.NONE;
  }

  Result run() throws Exception {
    long begin = System.nanoTime();
    if (extras.any()) {
      System.out.println("  extras: " + extras);
    }
    if (!extras.clocks().isEmpty() && RoleProcess.clockOffset(0).isEmpty()) {
      System.out.println("  clock offsets NOT applied: libfaketime is not at " + RoleProcess.FAKETIME + " (install "
          + "it with `apt-get install faketime`, or name it with -Dchaos.faketime); the scenario runs without them");
    }
    for (Map.Entry<String, Double> c : new TreeMap<>(extras.clocks()).entrySet()) {
      // A JVM run as the role will be shows the offset, so that a libfaketime that does not take fails here.
      RoleProcess.clockOffset(c.getValue()).ifPresent(environment -> {
        double[] seen = RoleProcess.probe(environment);
        if (Math.abs(seen[0] - c.getValue()) > seen[1] + 0.5) {
          throw new AssertionError(String.format(Locale.ROOT, "seed %d: a JVM run with %s finds its clock %+.2f s "
              + "(+-%.2f s) off, not the %+.1f s drawn for %s: libfaketime did not take", seed, environment, seen[0],
              seen[1], c.getValue(), c.getKey()));
        }
        System.out.printf(Locale.ROOT, "  clock of %s: %+.1f s drawn, a JVM so run finds %+.2f s (+-%.2f s)%n",
            c.getKey(), c.getValue(), seen[0], seen[1]);
      });
    }
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
      if (admin != null) {
        admin.close();
      }
      all.forEach(RoleProcess::kill);
    }
  }

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
              "--signing-key", keyFile.toString(), "--transactional-id", prefix + "publisher", "--timeout",
              extras.reject() >= 0 ? String.valueOf(REJECTING_PUBLISHER_TIMEOUT) : "30"),
          CTRL_C);
      // The orchestrator has created the topics; the other roles start side by side, then each is waited for.
      publisher.launch();
      publishers.add(publisher);
      if (extras.reject() >= 0) {
        publisher.awaitReady(START); // its short --timeout is for the epoch it is made to reject, not its start
      }
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
    Map<String, String> environment = Map.of();
    Double offset = extras.clocks().get(name);
    if (offset != null) {
      environment = RoleProcess.clockOffset(offset).orElse(Map.of());
      if (environment.isEmpty()) {
        operations.add(String.format(Locale.ROOT, "clock of %s %+.1f s NOT applied (no libfaketime)", name, offset));
      } else {
        operations.add(String.format(Locale.ROOT, "clock of %s %+.1f s", name, offset));
        count("clock off");
      }
    }
    RoleProcess p = new RoleProcess(name, main, args, dir.resolve(name + ".log"), dir.resolve("tmp"), ready,
        environment);
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
      specs.add(new MemberSpec(id, zones.get(id), 1.0, MemberSpecState.ACTIVE, List.of()));
    }
    send(event(MembershipAction.INIT, "", null, null).setInitialMembers(specs).setVnodes(16).setReplicas(3).build());
  }

  private MembershipEvent.Builder event(MembershipAction action, String node, String zone, Double weight) {
    return MembershipEvent.newBuilder().setClusterId(CLUSTER).setNodeId(node).setAction(action).setZone(zone)
        .setWeight(weight).setRequestId(prefix + "r" + requests.incrementAndGet()).setRequestedBy("chaos")
        .setTimestampMillis(System.currentTimeMillis());
  }

  private void send(MembershipEvent e) {
    sent.add(e);
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
    int index = 0;
    List<Thread> beside = new ArrayList<>();
    for (boolean change : steps) {
      Thread.sleep(500 + random.nextInt(4_000)); // the scenario's random timing, not a wait for a condition
      if (change) {
        MembershipEvent sent = change();
        long sentNanos = System.nanoTime();
        if (index == extras.cancel()) {
          beside.add(beside("cancel", () -> cancelPlanAfter(sent, sentNanos, extras.cancelWhileCopying())));
        }
        if (index == extras.reject()) {
          beside.add(beside("reject", () -> forceRejectionAfter(sent, sentNanos)));
        }
        index++;
      } else {
        fault();
      }
    }
    // The extras run beside the timeline, so that they leave its timing alone; the plane settles after them.
    for (Thread t : beside) {
      t.join(PLAN_WAIT.multipliedBy(3).toMillis());
    }
  }

  /** How long an extra waits for a plan after its change (which may queue behind another plan in flight). */
  private static final Duration PLAN_WAIT = Duration.ofSeconds(60);

  private Thread beside(String what, Runnable work) {
    Thread t = new Thread(() -> {
      try {
        work.run();
      } catch (RuntimeException | AssertionError e) {
        operations.add(what + " failed: " + e);
        throw e;
      }
    }, "chaos-" + what);
    t.setDaemon(true);
    t.start();
    return t;
  }

  private static String describe(MembershipEvent e) {
    return e.getAction() + " " + e.getNodeId() + (e.getWeight() == null ? ""
        : String.format(Locale.ROOT, " %.1f", e.getWeight()));
  }

  /** The epochs an extra has taken: a cancel and a forced rejection each take an epoch of their own. */
  private final Set<Long> claimed = ConcurrentHashMap.newKeySet();

  /**
   * The first PLANNED record read after {@code sentNanos}, when {@code change} was written, of an epoch no other
   * extra has taken ({@link #claimed}), waited for at most
   * {@link #PLAN_WAIT}: the plan of that change, or of one queued before it, or a re-plan (after a rejection, a
   * re-plan carries out the changes of the rolled-back epochs and of the plan in flight in one plan whose cause
   * names the first only).
   */
  private Optional<EpochRecord> awaitPlanAfter(MembershipEvent change, long sentNanos) {
    try {
      return Optional.of(Awaitility.await("a plan after " + describe(change))
          .atMost(PLAN_WAIT).pollInterval(Duration.ofMillis(20))
          .until(() -> tail.epochsRead().stream().filter(r -> r.readNanos() >= sentNanos
              && r.value().getState() == EpochState.PLANNED && r.value().getCause() != null)
              .map(r -> r.value()).filter(r -> claimed.add(r.getEpoch())).findFirst().orElse(null), r -> r != null));
    } catch (ConditionTimeoutException e) {
      return Optional.empty();
    }
  }

  /**
   * Cancels the epoch in flight after {@code change} as {@code ringshift cancel} does (a CANCEL naming the epoch and
   * the node of the change its plan carries out), right after the plan appears or once one of its copies runs. The
   * outcome is checked at the end.
   */
  private void cancelPlanAfter(MembershipEvent change, long sentNanos, boolean whileCopying) {
    Optional<EpochRecord> plan = awaitPlanAfter(change, sentNanos);
    if (plan.isEmpty()) {
      operations.add("no CANCEL: no plan within " + PLAN_WAIT.toSeconds() + " s after " + describe(change));
      return;
    }
    long epoch = plan.get().getEpoch();
    MembershipEvent cause = plan.get().getCause();
    String when = "right after its plan appeared";
    if (whileCopying) {
      try {
        Awaitility.await("a copy of epoch " + epoch + " running").atMost(Duration.ofSeconds(30))
            .pollInterval(Duration.ofMillis(20)).until(() -> tail.firstStatus(st -> st.getEpoch() == epoch
                && (st.getState() == TaskState.COPYING || st.getState() == TaskState.CAUGHT_UP)).isPresent()
                || tail.epoch(epoch, EpochState.READY).isPresent());
        when = tail.firstStatus(st -> st.getEpoch() == epoch && (st.getState() == TaskState.COPYING
            || st.getState() == TaskState.CAUGHT_UP)).isPresent() ? "while its copies ran"
            : "once it was READY (no copy seen running)";
      } catch (ConditionTimeoutException e) {
        when = "30 s after its plan appeared (no copy seen running)";
      }
    }
    MembershipEvent cancel = event(MembershipAction.CANCEL, cause.getNodeId(), null, null).setEpoch(epoch).build();
    cancels.add(new Cancel(cancel.getRequestId(), epoch, describe(cause), cause.getRequestId()));
    operations.add(String.format(Locale.ROOT, "CANCEL of epoch %d (%s) %s", epoch, describe(cause), when));
    send(cancel);
  }

  /**
   * Makes the publisher reject the epoch planned after {@code change}: a COPY task of it to {@link #NOBODY}, which
   * stays BLOCKED, so that the publisher gives up on the epoch after 3 x its {@code --timeout} (RejectedEpochIT). The
   * stray task is tombstoned once the epoch is REJECTED, or when the plane has settled ({@link #settle}).
   */
  private void forceRejectionAfter(MembershipEvent change, long sentNanos) {
    Optional<EpochRecord> plan = awaitPlanAfter(change, sentNanos);
    if (plan.isEmpty()) {
      operations.add("no forced rejection: no plan within " + PLAN_WAIT.toSeconds() + " s after "
          + describe(change));
      return;
    }
    long epoch = plan.get().getEpoch();
    String planned = describe(plan.get().getCause());
    RangeCopyTask stray = RangeCopyTask.newBuilder()
        .setTaskId(RecordKeys.taskId(CLUSTER, epoch, TaskKind.COPY, 0, 1L << 40, NOBODY))
        .setClusterId(CLUSTER).setEpoch(epoch).setKind(TaskKind.COPY).setRangeStart(0).setRangeEnd(1L << 40)
        .setSources(List.of("node-01")).setTarget(NOBODY).setTargetZone("az-1").setEstimatedBytes(0)
        .setTimestampMillis(System.currentTimeMillis()).setFenceRequested(false)
        .build();
    writeTask(stray.getTaskId(), stray);
    long written = System.nanoTime();
    boolean readyBefore = tail.epoch(epoch, EpochState.READY).isPresent();
    strays.add(new Stray(stray.getTaskId(), epoch, planned, written, readyBefore));
    operations.add(String.format(Locale.ROOT, "publisher made to reject epoch %d (%s): a stray task to %s%s", epoch,
        planned, NOBODY, readyBefore ? " (too late: the epoch was READY already)" : ""));
    count("publisher made to reject an epoch");
    tail.whenEpoch(epoch, EpochState.REJECTED).thenRunAsync(() -> tombstone(stray.getTaskId()));
  }

  private final Set<String> tombstoned = ConcurrentHashMap.newKeySet();

  private void tombstone(String taskId) {
    if (tombstoned.add(taskId)) {
      writeTask(taskId, null);
    }
  }

  private void writeTask(String taskId, RangeCopyTask task) {
    String topic = topics.tasks().name();
    try {
      producer.send(new ProducerRecord<>(topic, taskId.getBytes(StandardCharsets.UTF_8),
          task == null ? null : topics.tasks().valueSerde().serializer().serialize(topic, task))).get();
    } catch (Exception ex) {
      throw new AssertionError("seed " + seed + ": could not write task " + taskId + ": " + ex, ex);
    }
  }

  private MembershipEvent change() {
    int kind = random.nextInt(4);
    if (kind == 0 && !spares.isEmpty()) {
      String id = spares.remove(0);
      members.add(id);
      operations.add("JOIN " + id);
      return sendChange(event(MembershipAction.JOIN, id, zones.get(id), null).build());
    } else if (kind == 1 && members.size() > 7) {
      String id = members.remove(random.nextInt(members.size()));
      operations.add("DRAIN " + id);
      return sendChange(event(MembershipAction.DRAIN, id, null, null).build());
    } else if (kind == 2) {
      String id = members.get(random.nextInt(members.size()));
      double weight = List.of(0.5, 1.5, 2.0).get(random.nextInt(3));
      operations.add(String.format(Locale.ROOT, "SET_WEIGHT %s %.1f", id, weight));
      return sendChange(event(MembershipAction.SET_WEIGHT, id, null, weight).build());
    } else if (members.size() > 7 && dead.isEmpty()) {
      String id = members.remove(random.nextInt(members.size()));
      dead.add(id);
      nodes.get(id).kill();
      operations.add("FAIL " + id + " (killed for good)");
      count("node gone for good");
      return sendChange(event(MembershipAction.FAIL, id, null, null).build());
    } else {
      String id = members.get(random.nextInt(members.size()));
      operations.add("SET_WEIGHT " + id + " 1.0");
      return sendChange(event(MembershipAction.SET_WEIGHT, id, null, 1.0).build());
    }
  }

  private MembershipEvent sendChange(MembershipEvent e) {
    send(e);
    return e;
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
    // A forced rejection adds the publisher's patience (30 s) and a re-plan of every change it rolled back.
    Duration bound = extras.reject() >= 0 ? SETTLE.plusSeconds(120) : SETTLE;
    String[] last = {""};
    long[] quietSince = {0, -1}; // when the records were first seen quiet, and how many there were then
    try {
      Awaitility.await("the plane settled").atMost(bound).pollInterval(Duration.ofMillis(250)).until(() -> {
        String waiting = waitingFor(tail);
        if (waiting == null) {
          // Nothing in flight: each stray task's epoch is published or dead for good, so the strays can go.
          List.copyOf(strays).forEach(st -> tombstone(st.taskId()));
        }
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
    } catch (ConditionTimeoutException e) {
      orchestrators.forEach(RoleProcess::threadDump);
      throw new AssertionError("seed " + seed + ": the plane did not settle within " + bound + ": " + last[0]
          + "; operations " + operations + "; " + inFlight(tail) + "; " + String.valueOf(orchestratorBehind())
          + " (null: it has read them); roles that ended " + all.stream().map(RoleProcess::ended)
              .filter(x -> x != null).toList() + "; logs in " + dir, e);
    }
  }

  /** The tasks of the epochs after the last published one, by their latest state, and a few that are not VERIFIED. */
  private static String inFlight(ControlPlaneTail tail) {
    List<EpochRecord> records = tail.epochRecords();
    long published = records.stream().filter(r -> r.getState() == EpochState.PUBLISHED).mapToLong(r -> r.getEpoch())
        .max().orElse(0);
    List<String> out = new ArrayList<>();
    records.stream().mapToLong(r -> r.getEpoch()).filter(e -> e > published).distinct().forEach(epoch -> {
      Map<String, Integer> states = new TreeMap<>();
      List<String> open = new ArrayList<>();
      tail.latestTasks(epoch, TaskKind.COPY, TaskKind.REPAIR, TaskKind.CLEANUP).forEach((id, task) -> {
        var status = tail.latestStatus(id);
        TaskState state = status.map(st -> st.getState()).orElse(null);
        states.merge(state == null ? "no status" : state.toString(), 1, Integer::sum);
        if (state != TaskState.VERIFIED && open.size() < 4) {
          open.add(id + " " + status.map(st -> st.getState() + " by " + st.getWorkerId() + " "
              + shorten(st.getBlockedReason() != null ? st.getBlockedReason() : st.getError())).orElse("no status"));
        }
      });
      out.add("epoch " + epoch + " tasks " + states + (open.isEmpty() ? "" : " such as " + open));
    });
    return out.isEmpty() ? "nothing after published epoch " + published : String.join("; ", out);
  }

  /**
   * What the plane still works on, or null when nothing is in flight and every cleanup has ended. ChaosIT's random
   * timeline (no script) also waits until the orchestrator has read every membership event and every epoch record
   * ({@link #orchestratorBehind}): after a SIGKILL it may take a minute to take its partitions back, and the plane
   * looked settled meanwhile with JOINs not even planned (seed 6165272837841347828); and since a cancelled plan or a
   * rejection that the orchestrator does not plan again leaves the last record CANCELLED or REJECTED, its epochs
   * are quiet when every epoch after the last published one has ended so (CANCELLED, REJECTED or SUPERSEDED).
   */
  private String waitingFor(ControlPlaneTail tail) {
    // The publisher's transition records (STAGED, CONVERGED, FENCE_CUTOVER, REVERTED) say how a change was cut over,
    // not whether it ended: the orchestrator's and the publisher's decisions do.
    List<EpochRecord> records = tail.epochRecords().stream()
        .filter(r -> !io.ringshift.orchestrator.admin.ClusterView.isTransitionState(r.getState())).toList();
    EpochRecord latest = records.isEmpty() ? null : records.get(records.size() - 1);
    boolean quiet;
    if (script == null) {
      long published = records.stream().filter(r -> r.getState() == EpochState.PUBLISHED)
          .mapToLong(r -> r.getEpoch()).max().orElse(-1);
      Map<Long, EpochState> lastState = new TreeMap<>();
      records.stream().filter(r -> r.getEpoch() > published).forEach(r -> lastState.put(r.getEpoch(), r.getState()));
      quiet = published >= 0 && lastState.values().stream().allMatch(st -> st == EpochState.CANCELLED
          || st == EpochState.REJECTED || st == EpochState.SUPERSEDED);
    } else {
      quiet = latest != null && latest.getState() == EpochState.PUBLISHED
          && records.stream().noneMatch(r -> r.getEpoch() > latest.getEpoch());
    }
    if (!quiet) {
      return "epochs " + tail.epochSummary();
    }
    if (script == null) {
      String behind = orchestratorBehind();
      if (behind != null) {
        return behind;
      }
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

  private Admin admin;

  /**
   * Null when the orchestrators' group has committed offsets at the end of every partition of {@code ring.membership}
   * (which the scenario's producer writes without transactions) and within one of the end of {@code ring.epochs}
   * (written in transactions: the last offset is a commit marker, which a consumer that commits the next offset to
   * read after its last record does not count); otherwise what it has not read.
   */
  private String orchestratorBehind() {
    try {
      if (admin == null) {
        Properties p = new Properties();
        p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        admin = Admin.create(p);
      }
      var committed = admin.listConsumerGroupOffsets(applicationId()).partitionsToOffsetAndMetadata()
          .get(30, TimeUnit.SECONDS);
      Map<TopicPartition, OffsetSpec> latest =
          new HashMap<>();
      for (String topic : List.of(topics.membership().name(), topics.epochs().name())) {
        admin.describeTopics(List.of(topic)).allTopicNames().get(30, TimeUnit.SECONDS).get(topic)
            .partitions().forEach(pi -> latest.put(new TopicPartition(topic, pi.partition()),
                OffsetSpec.latest()));
      }
      var ends = admin.listOffsets(latest, new ListOffsetsOptions(
          IsolationLevel.READ_COMMITTED)).all().get(30, TimeUnit.SECONDS);
      List<String> behind = new ArrayList<>();
      ends.forEach((tp, end) -> {
        var at = committed.get(tp);
        long read = at == null ? 0 : at.offset();
        long slack = tp.topic().equals(topics.epochs().name()) ? 1 : 0;
        if (read < end.offset() - slack) {
          behind.add(tp + " at " + read + " of " + end.offset());
        }
      });
      return behind.isEmpty() ? null : "the orchestrator has not read its inputs to their end: " + behind;
    } catch (Exception e) {
      return "the orchestrator's offsets could not be read: " + e;
    }
  }

  // ---- the invariants

  private Result check(ControlPlaneTail tail, Writers writers, Readers readers, long begin) {
    String where = "seed " + seed + " (operations " + operations + ", logs in " + dir + ")";
    List<EpochRecord> records = tail.epochRecords();
    List<EpochRecord> published = records.stream().filter(r -> r.getState() == EpochState.PUBLISHED).toList();
    // No epoch published twice or out of order; a gap only after a rejection or a cancel (a number never used again).
    long previous = 0;
    for (EpochRecord r : published) {
      if (r.getEpoch() <= previous) {
        throw new AssertionError(where + ": epoch " + r.getEpoch() + " published after epoch " + previous);
      }
      long after = previous;
      if (r.getEpoch() != previous + 1 && records.stream().noneMatch(x -> (x.getState() == EpochState.REJECTED
          || x.getState() == EpochState.CANCELLED) && x.getEpoch() > after && x.getEpoch() < r.getEpoch())) {
        throw new AssertionError(where + ": epoch " + r.getEpoch() + " published after " + previous + " with no "
            + "rejected or cancelled epoch between: an epoch was skipped");
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
    Map<String, String> refused = refusals();
    Map<Long, String> deadNumbers = checkCancelsAndRejections(where, records, refused);
    if (script == null) {
      checkChangesEnded(where, last, refused);
    }
    showClockOffsets();
    checkNoFenceOf(where, deadNumbers);
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
        Map<String, byte[]> held = new HashMap<>();
        long stray = 0;
        try (RangeScan scan = n.getValue().scan(RingRange.whole(), null)) {
          while (scan.hasNext()) {
            Entry entry = scan.next();
            if (entry.isDeletion()) {
              continue; // a tombstone holds no value
            }
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
          if (!Arrays.equals(held, e.getValue())) {
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

  // ---- the checks of the extras: cancels, forced rejections, clocks off

  /**
   * Every record on {@code ring.rejected} that names a request, by request id: what the orchestrator refused, and
   * why.
   */
  private Map<String, String> refusals() {
    Properties p = new Properties();
    p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    p.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
    p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
    String topic = topics.rejected().name();
    var serde = topics.rejected().valueSerde().deserializer();
    Map<String, String> out = new LinkedHashMap<>();
    try (var consumer = new KafkaConsumer<>(p,
        new StringDeserializer(),
        new ByteArrayDeserializer())) {
      List<TopicPartition> partitions = consumer.partitionsFor(topic, Duration.ofSeconds(30))
          .stream().map(i -> new TopicPartition(topic, i.partition())).toList();
      consumer.assign(partitions);
      consumer.seekToBeginning(partitions);
      Map<TopicPartition, Long> end = consumer.endOffsets(partitions, Duration.ofSeconds(30));
      long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
      while (partitions.stream().anyMatch(tp -> consumer.position(tp) < end.get(tp))) {
        if (System.nanoTime() > deadline) {
          throw new AssertionError("seed " + seed + ": could not read " + topic + " to its end " + end + " in 60 s");
        }
        for (var r : consumer.poll(Duration.ofMillis(200))) {
          if (r.value() != null) {
            io.ringshift.schemas.avro.RejectedEvent e = serde.deserialize(topic, r.value());
            if (e.getRequestId() != null) {
              out.putIfAbsent(e.getRequestId(), e.getReason());
            }
          }
        }
      }
    }
    return out;
  }

  private static String shorten(String s) {
    return s == null || s.length() <= 160 ? String.valueOf(s) : s.substring(0, 157) + "...";
  }

  /**
   * Every CANCEL ended with an outcome (a CANCELLED record that names it, or a refusal on {@code ring.rejected});
   * no cancelled number and no number the publisher rejected was published; each epoch made to be rejected was
   * rejected (unless the stray came too late, or the epoch ended otherwise before READY), and is never published.
   *
   * @return the numbers that are dead for good (CANCELLED, or REJECTED by the publisher), each with what ended it
   */
  private Map<Long, String> checkCancelsAndRejections(String where, List<EpochRecord> records,
      Map<String, String> refused) {
    Set<Long> publishedNumbers = new HashSet<>();
    Set<Long> readyNumbers = new HashSet<>();
    Map<String, EpochRecord> cancelledBy = new HashMap<>();
    Map<Long, String> dead = new TreeMap<>();
    for (EpochRecord r : records) {
      if (r.getState() == EpochState.PUBLISHED) {
        publishedNumbers.add(r.getEpoch());
      } else if (r.getState() == EpochState.READY) {
        readyNumbers.add(r.getEpoch());
      } else if (r.getState() == EpochState.CANCELLED) {
        dead.put(r.getEpoch(), "CANCELLED");
        if (r.getCause() != null) {
          cancelledBy.put(r.getCause().getRequestId(), r);
        }
      } else if (r.getState() == EpochState.REJECTED && readyNumbers.contains(r.getEpoch())) {
        dead.putIfAbsent(r.getEpoch(), "REJECTED by the publisher");
      }
    }
    for (Map.Entry<Long, String> d : dead.entrySet()) {
      if (publishedNumbers.contains(d.getKey())) {
        throw new AssertionError(where + ": epoch " + d.getKey() + " was " + d.getValue() + " and then PUBLISHED; "
            + "epochs " + tail.epochSummary());
      }
    }
    for (Cancel c : List.copyOf(cancels)) {
      EpochRecord r = cancelledBy.get(c.requestId());
      String refusal = refused.get(c.requestId());
      if (r == null && refusal == null) {
        throw new AssertionError(where + ": CANCEL " + c.requestId() + " of epoch " + c.epoch() + " (" + c.change()
            + ") ended with no outcome: no CANCELLED record names it on ring.epochs and ring.rejected has nothing of "
            + "it; epochs " + tail.epochSummary());
      }
      if (r != null && r.getEpoch() != c.epoch()) {
        throw new AssertionError(where + ": CANCEL " + c.requestId() + " of epoch " + c.epoch() + " cancelled epoch "
            + r.getEpoch() + " instead");
      }
      operations.add(String.format(Locale.ROOT, "-> CANCEL of epoch %d: %s", c.epoch(),
          r != null ? "CANCELLED" : "refused (" + shorten(refusal) + ")"));
    }
    for (Stray st : List.copyOf(strays)) {
      String outcome;
      if (dead.containsKey(st.epoch())) {
        outcome = dead.get(st.epoch());
      } else if (publishedNumbers.contains(st.epoch())) {
        long readyAfter = tail.epoch(st.epoch(), EpochState.READY).map(x -> x.readNanos() - st.writtenNanos())
            .orElse(Long.MIN_VALUE);
        if (!st.readyBefore() && readyAfter > 2_000_000_000L) {
          throw new AssertionError(where + ": epoch " + st.epoch() + " was PUBLISHED, though its task "
              + st.taskId() + " was on ring.tasks " + readyAfter / 1_000_000 + " ms before its READY record and "
              + "never VERIFIED (target " + NOBODY + ", which nobody runs)");
        }
        outcome = "missed: PUBLISHED, its READY " + (st.readyBefore() ? "came before the stray task"
            : "came " + readyAfter / 1_000_000 + " ms after it (the publisher may have decided first)");
      } else {
        outcome = "missed: the epoch ended " + records.stream().filter(r -> r.getEpoch() == st.epoch())
            .map(r -> r.getState().toString()).toList() + " before it was READY";
      }
      operations.add(String.format(Locale.ROOT, "-> epoch %d (%s) made to be rejected: %s", st.epoch(), st.change(),
          outcome));
    }
    return dead;
  }

  /**
   * Every change ended as planned: applying, node by node and in the order written, each change that was neither
   * refused on {@code ring.rejected} nor abandoned by a CANCEL gives the final ring's members and weights. (Each
   * node's events share its key, so the orchestrator reads them in that order.) This holds through a rollback:
   * the publisher's rejection makes the orchestrator plan the changes again or refuse them to their requesters.
   */
  private void checkChangesEnded(String where, EpochRecord last, Map<String, String> refused) {
    Set<String> abandoned = new HashSet<>();
    Set<String> cancelledByRequest = new HashSet<>();
    for (EpochRecord r : tail.epochRecords()) {
      if (r.getState() == EpochState.CANCELLED && r.getCause() != null) {
        cancelledByRequest.add(r.getCause().getRequestId());
      }
    }
    for (Cancel c : List.copyOf(cancels)) {
      if (cancelledByRequest.contains(c.requestId())) {
        abandoned.add(c.changeRequestId());
      }
    }
    Map<String, Double> expected = new TreeMap<>();
    Map<String, List<String>> history = new TreeMap<>();
    for (MembershipEvent e : List.copyOf(sent)) {
      String id = e.getNodeId();
      if (e.getAction() == MembershipAction.INIT) {
        e.getInitialMembers().forEach(m -> expected.put(m.getId(), m.getWeight()));
        continue;
      }
      if (e.getAction() == MembershipAction.CANCEL) {
        continue;
      }
      String outcome = refused.containsKey(e.getRequestId()) ? "refused: " + shorten(refused.get(e.getRequestId()))
          : abandoned.contains(e.getRequestId()) ? "abandoned by a CANCEL" : "applied";
      history.computeIfAbsent(id, k -> new ArrayList<>()).add(describe(e) + " (" + e.getRequestId() + ", " + outcome
          + ")");
      if (!outcome.equals("applied")) {
        continue;
      }
      switch (e.getAction()) {
        case JOIN -> expected.put(id, e.getWeight() == null ? 1.0 : e.getWeight());
        case DRAIN, FAIL -> expected.remove(id);
        case SET_WEIGHT -> expected.put(id, e.getWeight());
        default -> throw new AssertionError("seed " + seed + ": the scenario wrote " + e.getAction());
      }
    }
    Map<String, Double> actual = new TreeMap<>();
    last.getMembers().forEach(m -> actual.put(m.getId(), m.getWeight()));
    List<String> wrong = new ArrayList<>();
    for (String id : new TreeSet<>(Set.copyOf(
        Stream.concat(expected.keySet().stream(), actual.keySet().stream()).toList()))) {
      Double want = expected.get(id);
      Double got = actual.get(id);
      if (want == null ? got != null : got == null || Math.abs(want - got) > 1e-9) {
        wrong.add(String.format(Locale.ROOT, "%s is %s, expected %s after %s", id,
            got == null ? "not a member" : "a member of weight " + got,
            want == null ? "not a member" : "a member of weight " + want, history.getOrDefault(id, List.of("INIT"))));
      }
    }
    if (!wrong.isEmpty()) {
      throw new AssertionError(where + ": the changes did not end as requested in the final epoch "
          + last.getEpoch() + ": " + wrong);
    }
  }

  /**
   * What the records of the roles run with a clock off show (printed, not checked: the offset is probed before the
   * roles start, {@link RoleProcess#probe}): each record's {@code timestampMillis}, its writer's clock, less the
   * test's clock when the tail read it is the offset less the delivery's delay, which under load is seconds; the
   * largest (the quickest delivery) is printed.
   */
  private void showClockOffsets() {
    for (Map.Entry<String, Double> e : new TreeMap<>(extras.clocks()).entrySet()) {
      String role = e.getKey();
      if (RoleProcess.clockOffset(0).isEmpty()) {
        return;
      }
      OptionalLong seen;
      if (role.startsWith("worker")) {
        seen = tail.statusesRead().stream().filter(st -> st.value() != null && role.equals(st.value().getWorkerId()))
            .mapToLong(st -> st.value().getTimestampMillis() - wallMillis(st.readNanos())).max();
      } else {
        Set<EpochState> written = role.startsWith("publisher") ? Set.of(EpochState.PUBLISHED)
            : Set.of(EpochState.PLANNED, EpochState.READY);
        seen = tail.epochsRead().stream().filter(r -> written.contains(r.value().getState()))
            .mapToLong(r -> r.value().getTimestampMillis() - wallMillis(r.readNanos())).max();
      }
      if (seen.isEmpty()) {
        operations.add("-> clock of " + role + ": no record of it to show the offset");
        continue;
      }
      double shown = seen.getAsLong() / 1000.0;
      operations.add(String.format(Locale.ROOT, "-> clock of %s: its records' times at most %+.1f s off the "
          + "test's when read", role, shown));
    }
  }

  private final long wallAtStartMillis = System.currentTimeMillis();
  private final long wallAtStartNanos = System.nanoTime();

  /** The test's wall clock at {@code nanos} ({@link System#nanoTime}). */
  private long wallMillis(long nanos) {
    return wallAtStartMillis + (nanos - wallAtStartNanos) / 1_000_000;
  }

  /**
   * No node that runs keeps a fence of a dead number (a cancelled epoch, or one the publisher rejected): the workers
   * lift the fences of a plan's tasks when they are tombstoned. Given 30 s after the plane settled.
   */
  private void checkNoFenceOf(String where, Map<Long, String> deadNumbers) {
    if (deadNumbers.isEmpty()) {
      return;
    }
    List<String> left = new ArrayList<>();
    try {
      Awaitility.await(where + ": no fence of a dead epoch").atMost(Duration.ofSeconds(30))
          .pollInterval(Duration.ofSeconds(1)).until(() -> {
            left.clear();
            left.addAll(fencesOf(where, deadNumbers));
            return left.isEmpty();
          });
    } catch (ConditionTimeoutException e) {
      throw new AssertionError(where + ": 30 s after the plane settled, " + left.size() + " fences of dead "
          + "epochs remain: " + left.subList(0, Math.min(5, left.size())), e);
    }
  }

  /** The fences of {@code deadNumbers} that the running nodes keep, each described. */
  private List<String> fencesOf(String where, Map<Long, String> deadNumbers) {
    List<String> left = new ArrayList<>();
    for (Map.Entry<String, RoleProcess> n : nodes.entrySet()) {
      if (!n.getValue().alive()) {
        continue;
      }
      try (Store admin = RemoteStore.connectAdmin("127.0.0.1:" + adminPorts.get(n.getKey()), secret,
          Duration.ofSeconds(30))) {
        for (Fence f : admin.fences()) {
          if (deadNumbers.containsKey(f.epoch())) {
            left.add(n.getKey() + " keeps a fence of " + f.range() + " at epoch " + f.epoch() + ", which was "
                + deadNumbers.get(f.epoch()));
          }
        }
      } catch (Exception e) {
        throw new AssertionError(where + ": could not read the fences of " + n.getKey() + ": " + e, e);
      }
    }
    return left;
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
    final List<String> ackedKeys = Collections.synchronizedList(new ArrayList<>());
    final AtomicLong ackCount = new AtomicLong();
    private final AtomicBoolean stop = new AtomicBoolean();
    private final List<Thread> threads = new ArrayList<>();
    private final RingClient client;
    private final Map<String, Store> stores = new ConcurrentHashMap<>();
    private final long writerSeed;
    private volatile long startedNanos;
    /** Acknowledged writes in each second since the start, and failed attempts by exception. */
    final AtomicLongArray perSecond = new AtomicLongArray(3600);
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
          client.current().orElseThrow(() -> new io.ringshift.storage.StoreException.Unavailable("no ring yet",
              null));
          // By the placement, which in a transition stage names the replicas of both rings (docs/client.md).
          io.ringshift.client.Placement p;
          try {
            p = client.placement(key);
          } catch (io.ringshift.client.RingClientException e) { // its lease lapsed on a moving range
            throw new io.ringshift.storage.StoreException.Unavailable(e.getMessage(), e);
          }
          return new Route(p.epoch(), p.ownerIds());
        }

        @Override
        public boolean awaitEpoch(long epoch, Duration timeout) {
          try {
            Awaitility.await("epoch " + epoch).atMost(timeout).pollInterval(Duration.ofMillis(5))
                .until(() -> client.epoch() >= epoch);
            return true;
          } catch (ConditionTimeoutException e) {
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
      Arrays.sort(rates);
      return String.format(Locale.ROOT, "writes/s per second p10 %d, median %d, max %d; failed attempts %s",
          rates[seconds / 10], rates[seconds / 2], rates[seconds - 1], new TreeMap<>(failures));
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
      LockSupport.parkNanos(nanos);
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
