package io.ringshift.demo.internal;

import io.ringshift.audit.AuditLog;
import io.ringshift.audit.AuditReplay;
import io.ringshift.client.RingClient;
import io.ringshift.client.RingClientConfig;
import io.ringshift.demo.Demo;
import io.ringshift.demo.DemoException;
import io.ringshift.demo.DemoResult;
import io.ringshift.demo.DemoResult.ChangeReport;
import io.ringshift.demo.DemoResult.Mark;
import io.ringshift.demo.DemoResult.Spread;
import io.ringshift.demo.DemoSettings;
import io.ringshift.localplane.LocalControlPlane;
import io.ringshift.localplane.LocalNodes;
import io.ringshift.orchestrator.admin.AdminException;
import io.ringshift.orchestrator.admin.ClusterView;
import io.ringshift.orchestrator.admin.ControlPlaneAdmin;
import io.ringshift.protocol.EpochRecords;
import io.ringshift.protocol.KafkaClients;
import io.ringshift.protocol.KafkaProperties;
import io.ringshift.protocol.TrustedKeys;
import io.ringshift.ring.ByteUnits;
import io.ringshift.ring.Member;
import io.ringshift.ring.PlacementPolicy;
import io.ringshift.ring.RingDiff;
import io.ringshift.ring.RingRange;
import io.ringshift.ring.RingSnapshot;
import io.ringshift.schemas.avro.EpochRecord;
import io.ringshift.schemas.avro.EpochState;
import io.ringshift.schemas.avro.MembershipAction;
import io.ringshift.schemas.avro.MembershipEvent;
import io.ringshift.schemas.avro.RejectedEvent;
import io.ringshift.schemas.avro.TaskKind;
import io.ringshift.schemas.avro.TaskState;
import io.ringshift.storage.RangeScan;
import io.ringshift.storage.RemoteStore;
import io.ringshift.storage.Store;
import io.ringshift.worker.Limits;
import io.ringshift.worker.MigrationWorker;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeoutException;
import java.util.function.Predicate;
import org.apache.kafka.clients.consumer.KafkaConsumer;

/**
 * The demo's scenario on a running plane (docs/operations.md, "The demo"): declare the cluster, load the keys, start
 * the application, then five changes one after another, each followed to its end, then wait for every cleanup, let the
 * application run alone for {@link #STEADY} (the steady state the write latency during the changes is compared with),
 * stop it and check. Which nodes are drained, reweighted and failed is drawn from the seed ({@link
 * ScenarioPicks}: the failed node in another zone than the drained one, so that three zones remain; the reweighted
 * one in a zone that keeps two members, so that its weight moves data).
 *
 * <ol>
 *   <li><b>scale-out</b>: the first spare joins;
 *   <li><b>mistaken join, cancelled</b>: the second spare joins, and is cancelled while its tasks copy (the workers'
 *       throttle is lowered for this step, live, so that the cancel lands mid-copy, then restored);
 *   <li><b>drain</b> of a member;
 *   <li><b>weight change</b> of another member to weight 2;
 *   <li><b>confirmed failure</b>: a third member's process is stopped as a crash would stop it; after a moment (a
 *       health manager's debounce) its FAIL is written; the failure epoch is published at once and the repair
 *       epoch once the repairs are verified.
 * </ol>
 */
public final class DemoScenario implements AutoCloseable {
  /** How long one step may take before the demo gives up on it. */
  static final Duration STEP_TIMEOUT = Duration.ofMinutes(10);
  /**
   * How long the application runs alone after the last cleanup: no change and no cleanup in progress, the JVM warm.
   * Back-to-back changes leave few quiet seconds otherwise (none at all in some runs), and a steady-state p99 of a
   * handful of seconds is no baseline.
   */
  static final Duration STEADY = Duration.ofSeconds(10);
  /** The workers' throttle while the mistaken join copies, so that the cancel reaches it mid-copy. */
  static final long CANCEL_STEP_THROTTLE = 512L * 1024;
  /** How long the failed node is down before its FAIL is written: what a health manager's debounce would take. */
  static final Duration DETECTION = Duration.ofSeconds(2);
  private static final Duration KAFKA_TIMEOUT = Duration.ofSeconds(30);
  private static final Duration NODE_TIMEOUT = Duration.ofSeconds(10);

  private final DemoSettings settings;
  private final LocalControlPlane plane;
  private final PrintWriter out;
  private final boolean terminal;
  private final LocalNodes nodes;
  private final Map<String, Store> clientStores = new ConcurrentHashMap<>();
  private final List<AutoCloseable> closing = new ArrayList<>();
  private final List<ChangeRun> runs = new ArrayList<>();
  private final KeySpace keys;
  private volatile long throttle;
  private ControlPlaneAdmin admin;
  private PlaneWatch watch;
  private ProgressPrinter progress;
  private volatile RingClient client;
  private DemoApplication workload;
  private Timeline timeline;
  private long workloadMillis;

  public DemoScenario(DemoSettings settings, LocalControlPlane plane, PrintWriter out, boolean terminal) {
    this.settings = settings;
    this.plane = plane;
    this.out = out;
    this.terminal = terminal;
    this.nodes = plane.nodes().orElseThrow();
    this.keys = new KeySpace(settings.keys(), settings.seed());
    this.throttle = settings.throttle();
    for (LocalNodes.Node node : nodes.nodes()) {
      clientStores.put(node.id(), RemoteStore.connect(node.hostPort(), NODE_TIMEOUT));
    }
  }

  /** {@code 50.0 MiB/s}, or {@code unlimited}. */
  public static String rate(long bytesPerSecond) {
    return bytesPerSecond == 0 ? "unlimited" : ByteUnits.format(bytesPerSecond) + "/s";
  }

  /** One change of the scenario as it ran, turned into a {@link ChangeReport} once everything settled. */
  private static final class ChangeRun {
    final String label;
    final String requestId;
    final RingSnapshot before;
    final long replicaBytes;
    final List<Long> epochs = new ArrayList<>();
    final List<Mark> marks = new ArrayList<>();
    String outcome = "PUBLISHED";
    RingSnapshot after;
    /** For the cancelled join: the node whose partial copies its cleanups delete. */
    String cancelledTarget;

    ChangeRun(String label, String requestId, RingSnapshot before, long replicaBytes) {
      this.label = label;
      this.requestId = requestId;
      this.before = before;
      this.replicaBytes = replicaBytes;
    }

    void mark(String stage, long millis) {
      if (millis > 0) {
        marks.add(new Mark(stage, millis));
      }
    }
  }

  public DemoResult run() throws InterruptedException {
    long begin = System.currentTimeMillis();
    try {
      connect();
      initialize();
      Seeder.Loaded loaded = load();
      timeline = new Timeline(System.currentTimeMillis());
      closing.add(CpuSampler.start(timeline));
      workload = new DemoApplication(keys, client, clientStores::get, settings.rate(), settings.seed(), timeline).start();
      closing.add(workload);
      progress.println(String.format(Locale.ROOT, "application: writing and reading through RingClient at %,d "
          + "operations/s for the whole scenario", settings.rate()));
      runChanges();
      settle();
      progress.println(String.format(Locale.ROOT, "steady state: the application alone for %d s, the baseline of the "
          + "write latency during the changes", STEADY.toSeconds()));
      long steadyFrom = System.currentTimeMillis();
      watch.await(w -> System.currentTimeMillis() - steadyFrom >= STEADY.toMillis(), STEADY.plusSeconds(5),
          "the steady-state window");
      workload.stop(Duration.ofSeconds(30));
      workloadMillis = System.currentTimeMillis() - timeline.startMillis();
      return check(begin, loaded);
    } catch (TimeoutException e) {
      throw new DemoException("the demo stopped: " + e.getMessage() + " (seed " + settings.seed() + "; the "
          + "dashboard and `ringshift status --bootstrap " + plane.bootstrapServers() + "` show where it stands)", e);
    } catch (AdminException e) {
      throw new DemoException("the demo stopped: " + e.getMessage(), e);
    }
  }

  private void connect() {
    admin = ControlPlaneAdmin.connect(plane.bootstrapServers(), plane.topics(), KAFKA_TIMEOUT);
    closing.add(admin);
    watch = new PlaneWatch(admin, Demo.CLUSTER);
    closing.add(watch);
    progress = new ProgressPrinter(watch, out, terminal, () -> throttle, settings.workers());
    closing.add(progress);
  }

  private void initialize() throws InterruptedException, TimeoutException {
    long begin = System.currentTimeMillis();
    List<Member> members = new ArrayList<>();
    for (LocalNodes.Node node : nodes.nodes()) {
      if (!nodes.spares().contains(node)) {
        members.add(Member.of(node.id(), node.zone()));
      }
    }
    MembershipEvent init = event(MembershipAction.INIT, "", null, null, null)
        .setInitialMembers(EpochRecords.specs(members))
        .setPolicyId(settings.policy() == PlacementPolicy.HASHED ? null : settings.policy().id())
        .setVnodes(settings.vnodes())
        .setReplicas(3)
        .build();
    admin.send(init);
    watch.await(w -> w.record(1, EpochState.PUBLISHED).isPresent() || w.rejection(init.getRequestId()).isPresent(),
        STEP_TIMEOUT, "epoch 1 (INIT of " + members.size() + " members) to be PUBLISHED");
    refuseIfRejected(init.getRequestId(), "INIT");
    client = new RingClient(RingClientConfig.builder()
        .bootstrapServers(plane.bootstrapServers())
        .clusterId(Demo.CLUSTER)
        .topic(plane.topics().snapshots().name())
        .epochsTopic(plane.topics().epochs().name())
        .participantsTopic(plane.topics().participants().name())
        .participantId("demo-application")
        .trustedKeyFiles(plane.publicKeyFile())
        .build()).start();
    closing.add(client);
    if (!client.awaitEpoch(1, KAFKA_TIMEOUT)) {
      throw new TimeoutException("the application's RingClient did not receive epoch 1 within "
          + KAFKA_TIMEOUT.toSeconds() + " s");
    }
    progress.println(String.format(Locale.ROOT, "epoch 1 PUBLISHED in %.1f s: %d members in 3 zones, checksum %.12s; "
        + "the application routes by it", (System.currentTimeMillis() - begin) / 1e3, members.size(),
        client.current().orElseThrow().ring().checksumHex()));
  }

  private Seeder.Loaded load() throws InterruptedException {
    RingSnapshot ring = client.current().orElseThrow().ring();
    Seeder.Loaded loaded = Seeder.load(keys, ring, nodes::admin, 4);
    progress.println(String.format(Locale.ROOT, "loaded %,d keys (%s, log-normal value sizes, median %d B) onto their "
        + "3 replicas in %.1f s: %s written", keys.size(), ByteUnits.format(keys.logicalBytes()),
        KeySpace.MEDIAN_VALUE_BYTES, loaded.millis() / 1e3, ByteUnits.format(loaded.bytes())));
    return loaded;
  }

  private void runChanges() throws InterruptedException, TimeoutException {
    List<LocalNodes.Node> spares = nodes.spares();
    List<LocalNodes.Node> members = new ArrayList<>(nodes.nodes());
    members.removeAll(spares);
    LocalNodes.Node joiner = spares.get(0);
    ScenarioPicks<LocalNodes.Node> picks =
        ScenarioPicks.draw(members, LocalNodes.Node::zone, joiner.zone(), settings.seed());
    LocalNodes.Node drained = picks.drained();
    LocalNodes.Node failed = picks.failed();
    LocalNodes.Node reweighted = picks.reweighted();
    LocalNodes.Node mistaken = spares.get(1);

    simpleChange("scale-out: join " + joiner.id() + " (" + joiner.zone() + ")", "join",
        event(MembershipAction.JOIN, joiner.id(), joiner.zone(), 1.0, null).build());
    cancelledJoin(mistaken);
    simpleChange("drain " + drained.id() + " (" + drained.zone() + ")", "drain",
        event(MembershipAction.DRAIN, drained.id(), null, null, null).build());
    simpleChange("weight change: " + reweighted.id() + " to weight 2", "set-weight",
        event(MembershipAction.SET_WEIGHT, reweighted.id(), null, 2.0, null).build());
    failure(failed);
  }

  /** A join, drain or weight change: planned, copied, verified, published. */
  private void simpleChange(String label, String word, MembershipEvent event)
      throws InterruptedException, TimeoutException {
    ChangeRun run = begin(label, event);
    EpochRecord planned = awaitPlanned(run, label);
    long epoch = planned.getEpoch();
    run.epochs.add(epoch);
    run.mark("planned", planned.getTimestampMillis());
    run.after = EpochRecords.ring(planned);
    progress.follow(epoch, word);
    awaitEnd(epoch, label);
    progress.done(String.format(Locale.ROOT, "  epoch %d PUBLISHED: %s done in %.1f s", epoch, label,
        (watch.record(epoch, EpochState.PUBLISHED).orElseThrow().getTimestampMillis() - run.marks.get(0).millis())
            / 1e3));
  }

  /** A join made by mistake, cancelled once its tasks copy. */
  private void cancelledJoin(LocalNodes.Node node) throws InterruptedException, TimeoutException {
    String label = "mistaken join of " + node.id() + " (" + node.zone() + "), cancelled";
    long restore = throttle;
    setThrottle(CANCEL_STEP_THROTTLE);
    try {
      ChangeRun run = begin(label, event(MembershipAction.JOIN, node.id(), node.zone(), 1.0, null).build());
      run.outcome = "CANCELLED";
      run.cancelledTarget = node.id();
      progress.println("  (throttle lowered to " + rate(CANCEL_STEP_THROTTLE) + " per worker for this step, live, so "
          + "that the cancel lands mid-copy)");
      EpochRecord planned = awaitPlanned(run, label);
      long epoch = planned.getEpoch();
      run.epochs.add(epoch);
      run.mark("planned", planned.getTimestampMillis());
      progress.follow(epoch, "mistaken join");
      watch.await(w -> w.tasksOf(epoch).stream().anyMatch(t -> t.copiedBytes() > 0), STEP_TIMEOUT,
          "a task of epoch " + epoch + " to copy its first bytes");
      MembershipEvent cancel = event(MembershipAction.CANCEL, node.id(), null, null, epoch).build();
      admin.send(cancel);
      run.mark("cancel asked", System.currentTimeMillis());
      watch.await(w -> w.record(epoch, EpochState.CANCELLED).isPresent() || w.rejection(cancel.getRequestId())
          .isPresent(), STEP_TIMEOUT, "epoch " + epoch + " to be CANCELLED");
      refuseIfRejected(cancel.getRequestId(), "CANCEL of epoch " + epoch);
      EpochRecord cancelled = watch.record(epoch, EpochState.CANCELLED).orElseThrow();
      run.mark("cancelled", cancelled.getTimestampMillis());
      long copied = watch.tasksOf(epoch).stream().mapToLong(PlaneWatch.TaskFacts::copiedBytes).sum();
      progress.done(String.format(Locale.ROOT, "  epoch %d CANCELLED after %s copied; its tasks stop, their fences "
          + "lift, and cleanups delete what they copied to %s; the number %d is never used again", epoch,
          ByteUnits.format(copied), node.id(), epoch));
    } finally {
      setThrottle(restore);
    }
  }

  /** A node stopped as a crash stops it, then its FAIL: a failure epoch at once, a repair epoch after. */
  private void failure(LocalNodes.Node node) throws InterruptedException, TimeoutException {
    String label = "failure of " + node.id() + " (" + node.zone() + "), confirmed, repaired";
    long killed = System.currentTimeMillis();
    nodes.kill(node.id());
    progress.println(String.format(Locale.ROOT, "%s: process stopped; writes to its ranges fail; FAIL written in "
        + "%d s, as a health manager confirms a failure", node.id(), DETECTION.toSeconds()));
    watch.await(w -> System.currentTimeMillis() - killed >= DETECTION.toMillis(), DETECTION.plusSeconds(5),
        "the detection delay");
    ChangeRun run = begin(label, event(MembershipAction.FAIL, node.id(), null, null, null).build());
    run.marks.add(0, new Mark("stopped", killed));
    EpochRecord first = awaitPlanned(run, label);
    watch.await(w -> epochsOf(w, run.requestId).size() >= 2 || w.record(first.getEpoch(), EpochState.PUBLISHED)
        .isPresent(), STEP_TIMEOUT, "the failure epoch and the repair plan");
    List<EpochRecord> plans = epochsOf(watch, run.requestId);
    plans.forEach(p -> run.epochs.add(p.getEpoch()));
    long repair = plans.get(plans.size() - 1).getEpoch();
    run.mark("planned", first.getTimestampMillis());
    run.after = EpochRecords.ring(plans.get(plans.size() - 1));
    if (plans.size() >= 2) {
      long failureEpoch = plans.get(0).getEpoch();
      watch.await(w -> w.record(failureEpoch, EpochState.PUBLISHED).isPresent(), STEP_TIMEOUT,
          "failure epoch " + failureEpoch + " to be PUBLISHED");
      long publishedAt = watch.record(failureEpoch, EpochState.PUBLISHED).orElseThrow().getTimestampMillis();
      run.mark("failure published", publishedAt);
      progress.println(String.format(Locale.ROOT, "  epoch %d PUBLISHED at once (failure epoch): %s out of the ring, "
          + "its ranges served by the surviving replicas; new replicas marked filling, not read", failureEpoch,
          node.id()));
    }
    progress.follow(repair, "repair");
    awaitEnd(repair, label);
    progress.done(String.format(Locale.ROOT, "  epoch %d PUBLISHED (repair epoch): every lost replica rebuilt and "
        + "verified; filling marks cleared", repair));
  }

  private static List<EpochRecord> epochsOf(PlaneWatch w, String requestId) {
    ClusterView view = w.view();
    if (view == null) {
      return List.of();
    }
    List<EpochRecord> plans = new ArrayList<>();
    for (EpochRecord e : view.history()) {
      if (e.getState() == EpochState.PLANNED && requestId.equals(e.getCause().getRequestId())
          && plans.stream().noneMatch(p -> p.getEpoch() == e.getEpoch())) {
        plans.add(e);
      }
    }
    return plans;
  }

  private ChangeRun begin(String label, MembershipEvent event) {
    ClusterView view = watch.view();
    RingSnapshot before = EpochRecords.ring(view.published());
    ChangeRun run = new ChangeRun(label, event.getRequestId(), before, keys.logicalBytes() * before.replicas());
    runs.add(run);
    progress.println(label);
    long now = System.currentTimeMillis();
    admin.send(event);
    run.mark("requested", now);
    return run;
  }

  private EpochRecord awaitPlanned(ChangeRun run, String label) throws InterruptedException, TimeoutException {
    watch.await(w -> !epochsOf(w, run.requestId).isEmpty() || w.rejection(run.requestId).isPresent(), STEP_TIMEOUT,
        label + " to be planned");
    refuseIfRejected(run.requestId, label);
    return epochsOf(watch, run.requestId).get(0);
  }

  /** Waits for {@code epoch} to be PUBLISHED; a rejection or a cancel of it ends the demo. */
  private void awaitEnd(long epoch, String label) throws InterruptedException, TimeoutException {
    Predicate<PlaneWatch> ended = w -> w.record(epoch, EpochState.PUBLISHED).isPresent()
        || w.record(epoch, EpochState.REJECTED).isPresent() || w.record(epoch, EpochState.CANCELLED).isPresent();
    watch.await(ended, STEP_TIMEOUT, "epoch " + epoch + " (" + label + ") to be PUBLISHED");
    Optional<EpochRecord> rejected = watch.record(epoch, EpochState.REJECTED)
        .or(() -> watch.record(epoch, EpochState.CANCELLED));
    if (rejected.isPresent() && watch.record(epoch, EpochState.PUBLISHED).isEmpty()) {
      throw new DemoException("epoch " + epoch + " (" + label + ") was " + rejected.get().getState() + ": "
          + rejected.get().getReason());
    }
  }

  private void refuseIfRejected(String requestId, String what) {
    Optional<RejectedEvent> rejected = watch.rejection(requestId);
    if (rejected.isPresent()) {
      throw new DemoException("the orchestrator refused " + what + ": " + rejected.get().getReason());
    }
  }

  private void setThrottle(long bytesPerSecond) {
    throttle = bytesPerSecond;
    for (MigrationWorker worker : plane.workers()) {
      Limits now = worker.limits();
      worker.setLimits(now.withRates(bytesPerSecond, now.perSourceBytesPerSecond()));
    }
  }

  /** Waits until no epoch is in flight and every cleanup is verified. */
  private void settle() throws InterruptedException, TimeoutException {
    long begin = System.currentTimeMillis();
    progress.println(String.format(Locale.ROOT, "waiting for the cleanups (old replicas keep moved ranges for the "
        + "%d s grace, then delete them)", settings.grace().toSeconds()));
    watch.await(DemoScenario::settled, STEP_TIMEOUT, "every cleanup to be verified");
    long cleanups = watch.allTasks().stream().filter(t -> t.kind() == TaskKind.CLEANUP).count();
    progress.println(String.format(Locale.ROOT, "  %d cleanups verified in %.1f s; no epoch in flight", cleanups,
        (System.currentTimeMillis() - begin) / 1e3));
  }

  private static boolean settled(PlaneWatch w) {
    ClusterView view = w.view();
    return view != null && view.inFlight() == null
        && view.cleanups().stream().allMatch(c -> c.state() == TaskState.VERIFIED)
        && w.allTasks().stream().filter(t -> t.kind() == TaskKind.CLEANUP)
            .allMatch(t -> t.state() == TaskState.VERIFIED);
  }

  private DemoResult check(long begin, Seeder.Loaded loaded) {
    List<String> failures = new ArrayList<>();
    List<String> examples = new ArrayList<>();
    progress.println("checking: every acknowledged write on every replica of the final ring, reads, the audit");
    RingSnapshot finalRing = client.current().orElseThrow().ring();
    ReplicaCheck.Outcome replicas = ReplicaCheck.everyReplica(keys, finalRing, nodes::admin);
    if (replicas.missing() > 0) {
      failures.add(replicas.missing() + " of " + replicas.pairs() + " (key, replica) pairs miss an acknowledged write");
      examples.addAll(replicas.examples());
    }
    if (workload.staleReads() > 0) {
      failures.add(workload.staleReads() + " stale reads");
      examples.addAll(workload.staleExamples());
    }
    ReplicaCheck.FillingReads filling = ReplicaCheck.fillingReads(watch.allTasks(), workload.readLog());
    if (filling.count() > 0) {
      failures.add(filling.count() + " reads served by a replica before its copy was verified");
      examples.addAll(filling.examples());
    }
    for (ChangeRun run : runs) {
      if (run.cancelledTarget != null) {
        long left = keysOn(run.cancelledTarget);
        if (left > 0) {
          failures.add(run.cancelledTarget + " still holds " + left + " keys after the cancel's cleanups");
        }
      }
    }
    AuditReplay.Result audit = audit();
    String auditLine = audit.passed()
        ? String.format(Locale.ROOT, "passed: %d published snapshots rebuilt from ring.epochs, checksums, chain, "
            + "placement, filling marks and signatures checked", audit.verified())
        : "FAILED: " + audit.failure().message();
    if (!audit.passed()) {
      failures.add("audit " + auditLine);
    }
    List<ChangeReport> changes = runs.stream().map(this::report).toList();
    List<Timeline.Second> quiet = quietSeconds(changes);
    long acked = timeline.seconds().stream().mapToLong(Timeline.Second::acknowledged).sum();
    long refused = timeline.seconds().stream().mapToLong(Timeline.Second::refused).sum();
    long failed = timeline.seconds().stream().mapToLong(Timeline.Second::failed).sum();
    return new DemoResult(settings.seed(), settings, changes, keys.size(), keys.logicalBytes(), loaded.millis(), workloadMillis, acked,
        refused, failed, workload.abandoned(), workload.reads(), workload.readsBehind(), workload.staleReads(),
        filling.count(), replicas.pairs(), replicas.missing(), examples, audit.verified(), auditLine, audit.passed(),
        System.currentTimeMillis() - begin, failures, writeP99(quiet), cpuCores(quiet));
  }

  /** Keys a node holds, read whole through its admin listener. */
  private long keysOn(String node) {
    long n = 0;
    try (RangeScan scan = nodes.admin(node).scan(RingRange.whole(), null)) {
      while (scan.hasNext()) {
        if (!scan.next().isDeletion()) {
          n++;
        }
      }
    }
    return n;
  }

  private AuditReplay.Result audit() {
    try (KafkaConsumer<byte[], byte[]> consumer = KafkaClients.readCommittedConsumer(plane.bootstrapServers(),
        KafkaProperties.none(), KAFKA_TIMEOUT, "ringshift-demo-audit")) {
      AuditLog.Contents contents = AuditLog.read(consumer, plane.topics(), KAFKA_TIMEOUT, Demo.CLUSTER,
          "Kafka at " + plane.bootstrapServers());
      TrustedKeys trusted = TrustedKeys.of(plane.publisher().orElseThrow().config().signingKey().publicKey());
      return AuditReplay.verify(contents.epochs(), contents.snapshots(), trusted);
    }
  }

  private ChangeReport report(ChangeRun run) {
    List<PlaneWatch.TaskFacts> tasks = new ArrayList<>();
    for (long epoch : run.epochs) {
      tasks.addAll(watch.tasksOf(epoch).stream().filter(t -> t.kind() != TaskKind.CLEANUP).toList());
    }
    long moved = tasks.stream().mapToLong(PlaneWatch.TaskFacts::copiedBytes).sum();
    double movedFraction = 0;
    double idealFraction = 0;
    if (run.after != null) {
      RingDiff diff = run.before.diffTo(run.after);
      movedFraction = diff.movedReplicaFraction();
      idealFraction = diff.idealMovedFraction();
    }
    List<Mark> marks = new ArrayList<>(run.marks);
    long last = run.epochs.isEmpty() ? -1 : run.epochs.get(run.epochs.size() - 1);
    long caughtUp = tasks.stream().mapToLong(PlaneWatch.TaskFacts::caughtUpMillis).max().orElse(-1);
    if ("PUBLISHED".equals(run.outcome) && last >= 0) {
      if (caughtUp > 0 && !tasks.isEmpty()) {
        marks.add(new Mark("copied", caughtUp));
      }
      watch.record(last, EpochState.READY).ifPresent(r -> marks.add(new Mark("ready", r.getTimestampMillis())));
      watch.record(last, EpochState.PUBLISHED).ifPresent(r -> marks.add(new Mark("published",
          r.getTimestampMillis())));
    }
    long cleaned = watch.allTasks().stream()
        .filter(t -> t.kind() == TaskKind.CLEANUP)
        .filter(t -> run.cancelledTarget != null ? t.target().equals(run.cancelledTarget) : run.epochs.contains(t.epoch()))
        .mapToLong(PlaneWatch.TaskFacts::verifiedMillis).max().orElse(-1);
    if (cleaned > 0) {
      marks.add(new Mark("cleaned", cleaned));
    }
    marks.sort(java.util.Comparator.comparingLong(Mark::millis));
    List<DemoApplication.Window> windows = workload.windows().stream().filter(w -> run.epochs.contains(w.epoch())).toList();
    long[] fenced = windows.stream().filter(w -> w.kind() == DemoApplication.WindowKind.FENCED)
        .mapToLong(DemoApplication.Window::millis).toArray();
    long[] down = windows.stream().filter(w -> w.kind() == DemoApplication.WindowKind.REPLICA_DOWN)
        .mapToLong(DemoApplication.Window::millis).toArray();
    long swap = workload.swaps().stream().filter(s -> s.epoch() == last).mapToLong(DemoApplication.Swap::delayMillis)
        .findFirst().orElse(-1);
    long idealBytes = "PUBLISHED".equals(run.outcome) ? Math.round(idealFraction * run.replicaBytes) : 0;
    List<Mark> transition = new ArrayList<>();
    String cutover = "-";
    if (last >= 0) {
      for (EpochRecord r : watch.records(last, EpochState.STAGED)) {
        transition.add(new Mark("stage " + r.getStage(), r.getTimestampMillis()));
        cutover = "stages";
      }
      for (EpochRecord r : watch.records(last, EpochState.CONVERGED)) {
        transition.add(new Mark("barrier " + r.getStage(), r.getTimestampMillis()));
      }
      if (!transition.isEmpty()) {
        watch.record(last, EpochState.PUBLISHED).ifPresent(r -> transition.add(new Mark("final",
            r.getTimestampMillis())));
      }
      for (EpochRecord r : watch.records(last, EpochState.FENCE_CUTOVER)) {
        cutover = (io.ringshift.protocol.Cutover.isInPlaceNote(r) ? "in place: " : "fence: ") + r.getReason();
      }
      for (EpochRecord r : watch.records(last, EpochState.REVERTED)) {
        transition.add(new Mark("reverted", r.getTimestampMillis()));
        cutover = "reverted";
      }
    }
    transition.sort(java.util.Comparator.comparingLong(Mark::millis));
    long from = run.marks.isEmpty() ? -1 : run.marks.get(0).millis();
    // To its publication or cancel, or its revert or last barrier when later: the seconds its stages were routed by.
    long to = Math.max(ChangeReport.endOf(marks, transition), from);
    List<Timeline.Second> window = from < 0 ? List.of() : secondsOverlapping(from, to);
    return new ChangeReport(run.label, run.epochs, run.outcome, tasks.size(), moved, idealBytes, movedFraction,
        idealFraction, marks, Spread.of(fenced), Spread.of(down), swap, cutover, transition,
        writeP99(window), cpuCores(window));
  }

  /** The workload's seconds that overlap [fromMillis, toMillis]. */
  private List<Timeline.Second> secondsOverlapping(long fromMillis, long toMillis) {
    List<Timeline.Second> out = new ArrayList<>();
    List<Timeline.Second> seconds = timeline.seconds();
    for (int i = 0; i < seconds.size(); i++) {
      long start = timeline.startMillis() + i * 1000L;
      if (start + 1000 > fromMillis && start <= toMillis) {
        out.add(seconds.get(i));
      }
    }
    return out;
  }

  /** The p99 latency of the writes acknowledged in {@code seconds}. */
  private static double writeP99(List<Timeline.Second> seconds) {
    return p99(seconds.stream().map(Timeline.Second::latencies).toList());
  }

  /** The process's CPU use over {@code seconds}, in cores busy on average; -1 when not sampled. */
  private static double cpuCores(List<Timeline.Second> seconds) {
    long nanos = seconds.stream().mapToLong(Timeline.Second::cpuNanos).sum();
    return seconds.isEmpty() || nanos == 0 ? -1 : nanos / 1e9 / seconds.size();
  }

  /** The workload's seconds that overlap no change (request to publication, cancel or revert, + 1 s). */
  private List<Timeline.Second> quietSeconds(List<ChangeReport> changes) {
    List<Timeline.Second> quietOnes = new ArrayList<>();
    List<Timeline.Second> seconds = timeline.seconds();
    for (int i = 0; i < seconds.size(); i++) {
      long start = timeline.startMillis() + i * 1000L;
      boolean quiet = true;
      for (ChangeReport c : changes) {
        long from = c.marks().isEmpty() ? -1 : c.marks().get(0).millis();
        long to = Math.max(c.endedAt(), from) + 1000;
        if (from >= 0 && start + 1000 > from && start <= to) {
          quiet = false;
        }
      }
      if (quiet) {
        quietOnes.add(seconds.get(i));
      }
    }
    return quietOnes;
  }

  private static double p99(List<float[]> parts) {
    int n = parts.stream().mapToInt(a -> a.length).sum();
    if (n == 0) {
      return -1;
    }
    float[] all = new float[n];
    int at = 0;
    for (float[] a : parts) {
      System.arraycopy(a, 0, all, at, a.length);
      at += a.length;
    }
    java.util.Arrays.sort(all);
    return all[(int) Math.min(n - 1, Math.ceil(0.99 * n) - 1)];
  }

  /** The epoch the application's RingClient routes by, under its name; empty before it runs. */
  public Map<String, Long> clientEpochs() {
    RingClient c = client;
    return c == null ? Map.of() : Map.of("demo application (RingClient)", c.epoch());
  }

  /** The application's writes and reads over time, for the report; null before the workload started. */
  public Timeline timeline() {
    return timeline;
  }

  public DemoApplication workload() {
    return workload;
  }

  private static MembershipEvent.Builder event(MembershipAction action, String node, String zone, Double weight,
      Long epoch) {
    return MembershipEvent.newBuilder()
        .setClusterId(Demo.CLUSTER)
        .setNodeId(node)
        .setAction(action)
        .setZone(zone)
        .setWeight(weight)
        .setEpoch(epoch)
        .setRequestId(UUID.randomUUID().toString())
        .setRequestedBy("ringshift-demo")
        .setTimestampMillis(System.currentTimeMillis());
  }

  @Override
  public void close() {
    for (int i = closing.size() - 1; i >= 0; i--) {
      try {
        closing.get(i).close();
      } catch (Exception e) {
        out.println("ringshift demo: closing " + closing.get(i).getClass().getSimpleName() + " failed: " + e);
      }
    }
    closing.clear();
    clientStores.values().forEach(Store::close);
    clientStores.clear();
  }
}
