package io.ringshift.worker;

import static io.ringshift.worker.ItKafka.task;
import static org.assertj.core.api.Assertions.assertThat;

import io.ringshift.devkit.junit.EmbeddedKafkaExtension;
import io.ringshift.ring.RingRange;
import io.ringshift.schemas.avro.RangeCopyTask;
import io.ringshift.schemas.avro.TaskKind;
import io.ringshift.schemas.avro.TaskState;
import io.ringshift.schemas.avro.TaskStatus;
import io.ringshift.storage.AdminSecret;
import io.ringshift.storage.Entry;
import io.ringshift.storage.RangeScan;
import io.ringshift.storage.RemoteStore;
import io.ringshift.storage.RocksStore;
import io.ringshift.storage.Store;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.rocksdb.BlockBasedTableConfig;
import org.rocksdb.EnvOptions;
import org.rocksdb.IngestExternalFileOptions;
import org.rocksdb.Options;
import org.rocksdb.RocksDB;
import org.rocksdb.SstFileWriter;

/**
 * Copy throughput of one worker between node processes on loopback (docs/benchmarks.md), measured side by side
 * with its baselines in the same run. The source and the targets are {@link NodeChild} JVMs; the worker runs here.
 * <ol>
 *   <li><b>Raw scan</b>: the half of the source's range that the copies move, read here over the node API and
 *       kept in memory in the copy's batches (1 MiB, 1,000 entries).
 *   <li><b>Raw scan, warm</b>: the same half read again, each entry dropped as it arrives: what the node API
 *       and the client can stream once both JVMs are warm and no batches pile up.
 *   <li><b>RocksDB's own write rate</b>: those batches applied in this JVM to a fresh RocksDB store with the
 *       node's options, no network.
 *   <li><b>SST build and ingest</b>: the same batches, with the node's key layout, written in this JVM into SST
 *       files of {@value #SST_BATCHES} batches ({@code SstFileWriter}) and ingested into a fresh RocksDB
 *       ({@code ingestExternalFile}, global sequence numbers refused): the ceiling of a bulk phase that builds
 *       files instead of writing through the write-ahead log and memtable. The test checks that ingesting into
 *       an empty range consumes no sequence number, so it leaves no gap in the write-ahead log that a change
 *       feed would trip on.
 *   <li><b>Copy, one apply at a time</b> (the copy before applies were pipelined): the same half to node-b by a
 *       worker with {@code applyStreams} 1 and no bulk load. Every copy to a target is measured after a warm-up
 *       copy of an eighth of the ring to the same target by the same worker, so that the copy path of each JVM is
 *       compiled, as it is once a worker has copied a range or two.
 *   <li><b>Copy, applies in flight</b> (the copy before bulk loads): the same half to node-c by a worker with the
 *       default tuning but no bulk load ({@code loadBytes} 0).
 *   <li><b>Copy, default</b> (bulk load): the same half to node-d by a worker with the default tuning; the test
 *       checks that node-d ingested it (its sequence number did not move with the entries). Its warm-up, the first
 *       bulk load of both the worker and node-d, is printed as the cold figure. The CPU time of the source, this JVM
 *       and the target over the measured copy is printed too.
 *   <li><b>Throttled</b>: the rest of the other half (three eighths of the ring) to node-d under a 4 MiB/s worker
 *       limit (bulk load too), over the whole copy less one second of the limit (the bucket may hold one second of
 *       burst when the task starts). Not from a later status, as before bulk loads: a copy's progress now moves
 *       when a chunk of 16 MiB (4 s at this limit) was loaded, and is published every few seconds, so a status in
 *       the middle says little about the bytes sent by then.
 * </ol>
 * A copy is timed from the task's first COPYING status to the status that ends the snapshot (both stamped by the
 * worker). The figures and ratios are printed; the assertions check only that the throttle never exceeds the
 * limit and that the copies are complete, not how fast this machine is. {@code -Dringshift.copy.keys=N} (default
 * 100,000 values of 1,000 bytes) sets the size: a larger run warms up longer and measures a longer copy.
 * {@code -Dringshift.copy.nodeJvmOptions="..."} adds options to the node JVMs, e.g. a profiler's.
 */
class CopyThroughputIT {
  @RegisterExtension static final EmbeddedKafkaExtension KAFKA = new EmbeddedKafkaExtension();

  private static final int KEYS = Integer.getInteger("ringshift.copy.keys", 100_000);
  private static final int VALUE_BYTES = 1000;
  private static final long LIMIT = 4L << 20;
  private static final RingRange FIRST_HALF = RingRange.of(0, Long.MAX_VALUE);
  private static final RingRange SECOND_HALF = RingRange.of(Long.MAX_VALUE, 0);
  /** The first eighth of the second half, which every copy to a target starts with to warm up its JVMs. */
  private static final RingRange WARM_UP = RingRange.of(Long.MAX_VALUE, 0xA000_0000_0000_0000L);
  /** The rest of the second half: copied under a limit. */
  private static final RingRange REST = RingRange.of(0xA000_0000_0000_0000L, 0);
  private static final int SST_BATCHES = 64;

  @TempDir Path dir;
  /** The wall-clock window of the last copy timed by {@link #snapshotRate}. */
  private static volatile long[] lastWindow = {0, 0};
  private final List<Process> children = new ArrayList<>();

  @AfterEach
  void killNodes() throws InterruptedException {
    for (Process p : children) {
      p.destroy(); // a graceful stop first, so that a flight recording is written out
    }
    for (Process p : children) {
      if (!p.waitFor(10, TimeUnit.SECONDS)) {
        p.destroyForcibly();
        p.waitFor(30, TimeUnit.SECONDS);
      }
    }
  }

  @Test
  void shouldCopyBetweenNodeProcessesFastAndHoldTheLimit() throws Exception {
    int source = startNode("node-a", KEYS);
    int single = startNode("node-b", 0);
    int applied = startNode("node-c", 0);
    int target = startNode("node-d", 0);
    NodeDirectory nodes = NodeDirectory.empty()
        .with("node-a", new NodeDirectory.Address("127.0.0.1", source))
        .with("node-b", new NodeDirectory.Address("127.0.0.1", single))
        .with("node-c", new NodeDirectory.Address("127.0.0.1", applied))
        .with("node-d", new NodeDirectory.Address("127.0.0.1", target));
    AdminSecret secret = AdminSecret.read(secretFile());

    // 1 and 2: the raw scan, then RocksDB's own write rate on the same batches.
    List<List<Entry>> batches = new ArrayList<>();
    long scanBytes = 0;
    long scanStart = System.nanoTime();
    try (Store remote = RemoteStore.connectAdmin("127.0.0.1:" + source, secret, Duration.ofSeconds(30));
        RangeScan scan = remote.scan(FIRST_HALF, null)) {
      List<Entry> batch = new ArrayList<>();
      long bytes = 0;
      while (scan.hasNext()) {
        Entry e = scan.next();
        batch.add(e);
        bytes += e.size();
        if (batch.size() == TaskTuning.DEFAULTS.batchEntries() || bytes >= TaskTuning.DEFAULTS.batchBytes()) {
          batches.add(batch);
          scanBytes += bytes;
          batch = new ArrayList<>();
          bytes = 0;
        }
      }
      if (!batch.isEmpty()) {
        batches.add(batch);
        scanBytes += bytes;
      }
    }
    double scanRate = scanBytes * 1e9 / (System.nanoTime() - scanStart);
    double warmScanRate;
    try (Store remote = RemoteStore.connectAdmin("127.0.0.1:" + source, secret, Duration.ofSeconds(30));
        RangeScan scan = remote.scan(FIRST_HALF, null)) {
      long bytes = 0;
      long start = System.nanoTime();
      while (scan.hasNext()) {
        bytes += scan.next().size();
      }
      warmScanRate = bytes * 1e9 / (System.nanoTime() - start);
      assertThat(bytes).as("bytes of the second scan").isEqualTo(scanBytes);
    }
    double ingestRate = sstIngestRate(batches, scanBytes, 4 << 10);
    double largeBlockIngestRate = sstIngestRate(batches, scanBytes, 32 << 10);
    double writeRate;
    try (Store local = RocksStore.open(dir.resolve("local-write"), "local", "az-1")) {
      long start = System.nanoTime();
      for (List<Entry> b : batches) {
        local.apply(b);
      }
      writeRate = scanBytes * 1e9 / (System.nanoTime() - start);
    }
    batches.clear();

    try (ItKafka kafka = new ItKafka(KAFKA.bootstrapServers(), KAFKA.topicPrefix())) {
      WorkerConfig config = WorkerConfig.of(KAFKA.bootstrapServers(), "worker-throughput", nodes)
          .withTopics(kafka.topics).withGroupId(KAFKA.applicationId() + "-workers").withLimits(Limits.unlimited())
          .withNodeSecret(secret);
      // 3: one apply at a time, on topics of its own so that the next worker does not take its task over.
      double oneAtATime;
      try (ItKafka alone = new ItKafka(KAFKA.bootstrapServers(), KAFKA.topicPrefix() + "single-");
          MigrationWorker worker = new MigrationWorker(WorkerConfig.of(KAFKA.bootstrapServers(), "worker-single",
              nodes).withTopics(alone.topics).withGroupId(KAFKA.applicationId() + "-single")
              .withLimits(Limits.unlimited()).withNodeSecret(secret)
              .withTuning(TaskTuning.DEFAULTS.withApplyStreams(1).withLoadBytes(0))).start()) {
        oneAtATime = warmThenMeasure(alone, "node-b", scanBytes)[1];
      }
      // 4: applies in flight, no bulk load; on topics of their own too.
      double pipelined;
      try (ItKafka alone = new ItKafka(KAFKA.bootstrapServers(), KAFKA.topicPrefix() + "applies-");
          MigrationWorker worker = new MigrationWorker(WorkerConfig.of(KAFKA.bootstrapServers(), "worker-applies",
              nodes).withTopics(alone.topics).withGroupId(KAFKA.applicationId() + "-applies")
              .withLimits(Limits.unlimited()).withNodeSecret(secret)
              .withTuning(TaskTuning.DEFAULTS.withLoadBytes(0))).start()) {
        pipelined = warmThenMeasure(alone, "node-c", scanBytes)[1];
      }
      try (MigrationWorker worker = new MigrationWorker(config).start();
          Store loadedTarget = RemoteStore.connectAdmin("127.0.0.1:" + target, secret, Duration.ofSeconds(30))) {
        // 5: the default tuning: bulk load.
        // The first bulk load of this worker and into node-d, an eighth of the ring: the load paths of both JVMs
        // run interpreted and are compiled as it goes (its rate is printed as the cold figure). Then the measured
        // copy, as for the copies above.
        double cold = snapshotRate(kafka, task(TaskKind.COPY, 2, WARM_UP, List.of("node-a"), "node-d"), 0, -1);
        long sequenceBefore = loadedTarget.latestSequence();
        // CPU time of the source (node-a), this JVM (the worker) and the target (node-d) over the bulk copy.
        long[] cpuBefore = {cpuNanos(children.get(0)), ownCpuNanos(), cpuNanos(children.get(3))};
        long wallStart = System.nanoTime();
        double loaded;
        try (MachineLoad load = MachineLoad.start()) {
          loaded = snapshotRate(kafka, task(TaskKind.COPY, 2, FIRST_HALF, List.of("node-a"), "node-d"), 0,
              scanBytes);
          System.out.printf(Locale.ROOT, "  bulk copy: the machine's cores %s busy from its first COPYING status to "
              + "its snapshot copied (/proc/stat)%n", load.busyPercent(lastWindow[0], lastWindow[1]));
        }
        double wall = (System.nanoTime() - wallStart) / 1e9;
        double[] cpu = {(cpuNanos(children.get(0)) - cpuBefore[0]) / 1e9, (ownCpuNanos() - cpuBefore[1]) / 1e9,
            (cpuNanos(children.get(3)) - cpuBefore[2]) / 1e9};
        System.out.printf(Locale.ROOT, "  bulk copy: %.2f s from emitting the task to its snapshot copied; CPU "
                + "seconds: source %.2f, worker JVM %.2f (the test and the broker too), target %.2f; together %.0f%% "
                + "of the machine's %d cores%n", wall, cpu[0], cpu[1], cpu[2],
            100 * (cpu[0] + cpu[1] + cpu[2]) / wall / Runtime.getRuntime().availableProcessors(),
            Runtime.getRuntime().availableProcessors());
        long sequencesTaken = loadedTarget.latestSequence() - sequenceBefore;
        try (Store sourceStore = RemoteStore.connectAdmin("127.0.0.1:" + source, secret, Duration.ofSeconds(30))) {
          assertThat(loadedTarget.digest(FIRST_HALF).sameContentAs(sourceStore.digest(FIRST_HALF)))
              .as("node-d holds what node-a does in the loaded half").isTrue();
        }
        assertThat(sequencesTaken).as("sequence numbers node-d took for the %d keys it was loaded with (an ingest "
            + "takes none)", loadedTarget.digest(FIRST_HALF).keys()).isLessThan(KEYS / 100);
        // 6: the rest of the second half under a limit.
        worker.setLimits(Limits.unlimited().withRates(LIMIT, 0));
        double throttled = snapshotRate(kafka, task(TaskKind.COPY, 2, REST, List.of("node-a"), "node-d"), 0,
            -1, LIMIT);

        System.out.printf(Locale.ROOT, "CopyThroughputIT (%d keys of %d bytes, %.1f MB per copy):%n"
                + "  raw scan over HTTP        %7.1f MB/s%n"
                + "  raw scan again, warm      %7.1f MB/s (entries dropped as they arrive)%n"
                + "  RocksDB's own write rate  %7.1f MB/s (in process, same batches)%n"
                + "  SST build and ingest      %7.1f MB/s (in process, same batches, %d per file, no sequence "
                + "number consumed, RocksDB's default 4 KiB blocks)%n"
                + "    the same, 32 KiB blocks %7.1f MB/s = %.2fx (a load's table files)%n"
                + "  copy, 1 apply at a time   %7.1f MB/s%n"
                + "  copy, %d applies in flight %7.1f MB/s = %.2fx one at a time%n"
                + "  copy, bulk load (default) %7.1f MB/s = %.2fx one apply at a time, %.2fx the applies in flight, "
                + "%.2f of the scan, %.2f of the warm scan, %.2f of the write rate, %.2f of SST build and ingest "
                + "(%d sequence numbers taken)%n"
                + "  the first bulk copy, cold %7.1f MB/s (an eighth of the ring: the worker's and node-d's first "
                + "load)%n"
                + "  under a %.1f MiB/s limit   %7.2f MiB/s (%+.1f%%, bulk load, less 1 s of burst)%n", KEYS, VALUE_BYTES,
            scanBytes / 1e6, scanRate / 1e6, warmScanRate / 1e6, writeRate / 1e6, ingestRate / 1e6, SST_BATCHES,
            largeBlockIngestRate / 1e6, largeBlockIngestRate / ingestRate,
            oneAtATime / 1e6, TaskTuning.DEFAULTS.applyStreams(), pipelined / 1e6, pipelined / oneAtATime,
            loaded / 1e6, loaded / oneAtATime, loaded / pipelined, loaded / scanRate, loaded / warmScanRate,
            loaded / writeRate, loaded / ingestRate, sequencesTaken, cold / 1e6, LIMIT / (double) (1 << 20),
            throttled / (1 << 20), 100 * (throttled / LIMIT - 1));
        // Speed is a benchmark figure, not a pass mark: a slow or busy CI machine may copy below the limit. What
        // must hold anywhere is that the throttle never lets more through than the limit.
        assertThat(throttled).as("bytes/s under the limit").isLessThanOrEqualTo(LIMIT * 1.1);
      }
    }
  }

  /**
   * Copies an eighth of the ring to {@code target} (a warm-up: the copy path of every JVM involved is compiled as
   * it runs), then the measured first half; returns both rates, in bytes per second.
   */
  private static double[] warmThenMeasure(ItKafka kafka, String target, long expectedBytes) {
    double warmUp = snapshotRate(kafka, task(TaskKind.COPY, 2, WARM_UP, List.of("node-a"), target), 0, -1);
    double measured = snapshotRate(kafka, task(TaskKind.COPY, 2, FIRST_HALF, List.of("node-a"), target), 0,
        expectedBytes);
    return new double[] {warmUp, measured};
  }

  /**
   * Emits the task and returns the bytes per second of its snapshot copy, by the worker's own timestamps: from
   * the first status at least {@code skipMillis} into the copy (a token bucket may start with up to a second of
   * burst) to the status that ends the snapshot; checks that it copied {@code expectedBytes} (unless negative).
   */
  private static double snapshotRate(ItKafka kafka, RangeCopyTask task, long skipMillis, long expectedBytes) {
    return snapshotRate(kafka, task, skipMillis, expectedBytes, 0);
  }

  /** As above, counting {@code burstBytes} fewer bytes (a bucket's burst at the start). */
  private static double snapshotRate(ItKafka kafka, RangeCopyTask task, long skipMillis, long expectedBytes,
      long burstBytes) {
    kafka.emit(task);
    TaskStatus start = kafka.awaitStatus(task.getTaskId(), "copying",
        s -> s.getState() == TaskState.COPYING && s.getCopiedBytes() == 0);
    TaskStatus done = kafka.awaitStatus(task.getTaskId(), "snapshot copied",
        s -> s.getCaughtUpPosition() != null && s.getCaughtUpPosition().equals(s.getWatermark()));
    TaskStatus from = kafka.statuses(task.getTaskId()).stream()
        .filter(s -> s.getTimestampMillis() >= start.getTimestampMillis() + skipMillis)
        .findFirst().orElse(start);
    if (expectedBytes >= 0) {
      assertThat(done.getCopiedBytes()).as("bytes copied by " + task.getTaskId()).isEqualTo(expectedBytes);
    }
    if (Boolean.getBoolean("ringshift.copy.statuses")) {
      kafka.statuses(task.getTaskId()).forEach(s -> System.out.printf(Locale.ROOT, "    %+6d ms %s %d bytes %s%n",
          s.getTimestampMillis() - start.getTimestampMillis(), s.getState(), s.getCopiedBytes(),
          s.getBlockedReason()));
    }
    lastWindow = new long[] {from.getTimestampMillis(), done.getTimestampMillis()};
    long millis = done.getTimestampMillis() - from.getTimestampMillis();
    long bytes = done.getCopiedBytes() - from.getCopiedBytes() - burstBytes;
    System.out.printf(Locale.ROOT, "  %s: %d bytes in %d ms (from %d ms into the copy)%n", task.getTaskId(), bytes,
        millis, from.getTimestampMillis() - start.getTimestampMillis());
    return bytes * 1000.0 / Math.max(1, millis);
  }

  /**
   * Bytes per second of writing {@code batches} into SST files of {@link #SST_BATCHES} batches each and ingesting
   * them into a fresh RocksDB, in this JVM, with data blocks of {@code blockBytes}; checks that the ingests consumed
   * no sequence number.
   */
  private double sstIngestRate(List<List<Entry>> batches, long bytes, int blockBytes) throws Exception {
    Path db = dir.resolve("sst-ingest-" + blockBytes);
    Files.createDirectories(db.resolve("files"));
    RocksDB.loadLibrary();
    try (Options options = new Options().setCreateIfMissing(true)
            .setTableFormatConfig(new BlockBasedTableConfig().setBlockSize(blockBytes));
        RocksDB rocks = RocksDB.open(options, db.resolve("db").toString());
        EnvOptions env = new EnvOptions();
        // move the file in, no snapshot to keep consistent, no global sequence number, flush if needed
        IngestExternalFileOptions ingest = new IngestExternalFileOptions(true, false, false, true)) {
      long start = System.nanoTime();
      for (int i = 0; i < batches.size(); i += SST_BATCHES) {
        String file = db.resolve("files").resolve(i + ".sst").toString();
        try (SstFileWriter writer = new SstFileWriter(env, options)) {
          writer.open(file);
          for (List<Entry> batch : batches.subList(i, Math.min(batches.size(), i + SST_BATCHES))) {
            for (Entry e : batch) {
              // the node's data key: the 8-byte big-endian ring position, then the key
              writer.put(ByteBuffer.allocate(8 + e.key().length).putLong(e.position()).put(e.key()).array(),
                  e.value());
            }
          }
          writer.finish();
        }
        rocks.ingestExternalFile(List.of(file), ingest);
      }
      double rate = bytes * 1e9 / (System.nanoTime() - start);
      assertThat(rocks.getLatestSequenceNumber()).as("sequence numbers consumed by ingesting into an empty range")
          .isZero();
      return rate;
    }
  }

  /** The admin secret the child nodes check and the worker sends. */
  private Path secretFile() {
    Path file = dir.resolve("admin.secret");
    AdminSecret.readOrCreate(file);
    return file;
  }

  /** Samples the machine's CPU (busy and total jiffies of /proc/stat) every 10 ms while open. */
  private static final class MachineLoad implements AutoCloseable {
    private final List<long[]> samples = java.util.Collections.synchronizedList(new ArrayList<>());
    private final Thread sampler;
    private volatile boolean open = true;

    private MachineLoad() {
      sampler = new Thread(() -> {
        while (open) {
          long[] cpu = read();
          if (cpu == null) {
            return;
          }
          samples.add(new long[] {System.currentTimeMillis(), cpu[0], cpu[1]});
          java.util.concurrent.locks.LockSupport.parkNanos(10_000_000L);
        }
      }, "machine-load");
      sampler.setDaemon(true);
      sampler.start();
    }

    static MachineLoad start() {
      return new MachineLoad();
    }

    /** {busy, total} jiffies of all cores, or null where there is no /proc/stat. */
    private static long[] read() {
      try {
        String[] f = Files.readAllLines(Path.of("/proc/stat")).get(0).trim().split("\\s+");
        long total = 0;
        for (int i = 1; i < f.length; i++) {
          total += Long.parseLong(f[i]);
        }
        long idle = Long.parseLong(f[4]) + (f.length > 5 ? Long.parseLong(f[5]) : 0);
        return new long[] {total - idle, total};
      } catch (IOException | RuntimeException e) {
        return null;
      }
    }

    /** The share of the machine busy between two wall-clock times, as "N%", or "(unknown)". */
    String busyPercent(long fromMillis, long toMillis) {
      long[] first = null;
      long[] last = null;
      synchronized (samples) {
        for (long[] s : samples) {
          if (first == null && s[0] >= fromMillis) {
            first = s;
          }
          if (s[0] <= toMillis) {
            last = s;
          }
        }
      }
      if (first == null || last == null || last[2] <= first[2]) {
        return "(unknown)";
      }
      return String.format(Locale.ROOT, "%.0f%%", 100.0 * (last[1] - first[1]) / (last[2] - first[2]));
    }

    @Override
    public void close() throws InterruptedException {
      open = false;
      sampler.join(1_000);
    }
  }

  private static long cpuNanos(Process p) {
    return p.toHandle().info().totalCpuDuration().map(Duration::toNanos).orElse(0L);
  }

  private static long ownCpuNanos() {
    return ((com.sun.management.OperatingSystemMXBean) java.lang.management.ManagementFactory
        .getOperatingSystemMXBean()).getProcessCpuTime();
  }

  private int startNode(String id, int keys) throws IOException {
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    List<String> command = new ArrayList<>(List.of(java, "-Xmx512m"));
    // -Dringshift.copy.nodeJvmOptions="..." (space-separated), e.g. to record a flight recording of each node:
    // -XX:StartFlightRecording=filename=/tmp/{id}.jfr,settings=profile ({id} becomes the node's id)
    String options = System.getProperty("ringshift.copy.nodeJvmOptions", "").trim();
    if (!options.isEmpty()) {
      for (String option : options.split("\\s+")) {
        command.add(option.replace("{id}", id));
      }
    }
    command.addAll(List.of("-cp", System.getProperty("java.class.path"), NodeChild.class.getName(),
        dir.resolve(id).toString(), id, Integer.toString(keys), Integer.toString(VALUE_BYTES),
        secretFile().toString()));
    Process child = new ProcessBuilder(command).redirectErrorStream(true).start();
    children.add(child);
    BufferedReader out = new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8));
    List<String> seen = new ArrayList<>();
    String line;
    while ((line = out.readLine()) != null) {
      if (line.startsWith("PORT ")) {
        Thread drain = new Thread(() -> out.lines().forEach(l -> { }), "node-child-output");
        drain.setDaemon(true);
        drain.start();
        return Integer.parseInt(line.substring(5));
      }
      seen.add(line);
    }
    throw new IllegalStateException("node " + id + " ended before serving; its output: " + seen);
  }
}
