package io.ringshift.cli.internal.data;

import io.ringshift.cli.BadInputException;
import io.ringshift.cli.internal.control.ByteSizeConverter;
import io.ringshift.cli.internal.control.KafkaOptions;
import io.ringshift.client.Placement;
import io.ringshift.ring.Member;
import io.ringshift.storage.RoutedWriter;
import io.ringshift.storage.StoreException;
import java.io.PrintWriter;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.Callable;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code ringshift load}: a load generator on the client path, with an optional check that every acknowledged write
 * is on every replica of the ring at the end.
 *
 * <p>Each thread writes keys of its own ({@code load-<i>} with {@code i mod threads} its number), so the writes of a
 * key are in order; each value starts with the key's write sequence number, so the check knows a replica holds the
 * last acknowledged write or a later one. A failed write is tried again until it is acknowledged or the run ends.
 */
@Command(
    name = "load",
    mixinStandardHelpOptions = true,
    sortOptions = false,
    description = {
      "Writes --keys keys round and round at --rate writes/s for --duration through the client path (as `put` "
          + "does), then prints acknowledged writes/s, writes routed again after a refusal, failed attempts by kind, "
          + "and the latency of acknowledged writes (p50, p99, max).",
      "With --verify it then reads every key from every replica of the current ring and checks that each holds "
          + "its last acknowledged write (or a later one). Exit code 0 when it does, 3 when a replica misses one "
          + "(each listed), 2 for bad input or when the ring cannot be had."
    })
public final class LoadCommand implements Callable<Integer> {
  private static final int STAMP = Long.BYTES;

  @Spec private CommandSpec spec;

  @Mixin private KafkaOptions kafka;

  @Mixin private DataOptions data;

  @Option(names = "--keys", paramLabel = "N", defaultValue = "10000",
      description = "Distinct keys, written round and round (default: ${DEFAULT-VALUE}).")
  private int keys;

  @Option(names = "--rate", paramLabel = "R", defaultValue = "1000",
      description = "Writes per second, all threads together; 0 for as fast as they go (default: ${DEFAULT-VALUE}).")
  private int rate;

  @Option(names = "--value-size", paramLabel = "SIZE", defaultValue = "100", converter = ByteSizeConverter.class,
      description = "Bytes per value, at least 8 (default: ${DEFAULT-VALUE}).")
  private long valueSize;

  @Option(names = "--duration", paramLabel = "DURATION", defaultValue = "30s",
      description = "How long to write (default: ${DEFAULT-VALUE}).")
  private String duration;

  @Option(names = "--threads", paramLabel = "N", defaultValue = "16",
      description = "Writer threads; each write waits for every replica (default: ${DEFAULT-VALUE}).")
  private int threads;

  @Option(names = "--verify", description = "At the end, check every key on every replica of the current ring.")
  private boolean verify;

  @Option(names = "--seed", paramLabel = "N", description = "Seed of the values (default: random).")
  private Long seed;

  @Override
  public Integer call() throws InterruptedException {
    Duration length = DataOptions.positive("--duration", duration);
    if (keys < 1) {
      throw new BadInputException("--keys was " + keys + "; it must be at least 1");
    }
    if (rate < 0) {
      throw new BadInputException("--rate was " + rate + "; it must be 0 (as fast as possible) or more");
    }
    if (threads < 1 || threads > 1024) {
      throw new BadInputException("--threads was " + threads + "; it must be 1 to 1024");
    }
    if (valueSize < STAMP || valueSize > 16L << 20) {
      throw new BadInputException("--value-size was " + valueSize + "; it must be 8 bytes to 16 MiB");
    }
    int writers = Math.min(threads, keys);
    PrintWriter out = spec.commandLine().getOut();
    PrintWriter err = spec.commandLine().getErr();
    long valueSeed = seed != null ? seed : new Random().nextLong();
    try (DataPlane plane = DataPlane.open(kafka, data)) {
      Run run = new Run(plane.writer(), writers, rate, (int) valueSize, valueSeed);
      out.printf(Locale.ROOT, "load: %d keys, %s, %d-byte values, %d threads, for %s (seed %d)%n", keys,
          rate == 0 ? "as fast as possible" : rate + " writes/s", valueSize, writers, length, valueSeed);
      out.flush();
      run.execute(length, err);
      out.println(run.describe());
      out.flush();
      if (!verify) {
        return 0;
      }
      return verify(plane, run, out, err);
    }
  }

  private String key(long index) {
    return "load-" + index;
  }

  /** Reads every written key from every replica of the current ring. */
  private int verify(DataPlane plane, Run run, PrintWriter out, PrintWriter err) {
    long epoch = plane.client().epoch();
    int reads = 0;
    List<String> missing = new ArrayList<>();
    for (Map.Entry<Long, Long> acked : new TreeMap<>(run.acknowledged).entrySet()) {
      String key = key(acked.getKey());
      byte[] bytes = key.getBytes(StandardCharsets.UTF_8);
      Placement placement = plane.client().placement(bytes);
      for (Member replica : placement.owners()) {
        reads++;
        Optional<byte[]> value = null;
        StoreException unreadable = null;
        // A node that does not answer in time is asked again (twice) before the read counts as failed.
        for (int attempt = 0; attempt < 3 && value == null; attempt++) {
          try {
            value = plane.store(replica.id()).get(bytes);
          } catch (StoreException.Unavailable e) {
            unreadable = e;
          } catch (StoreException e) {
            unreadable = e;
            break;
          }
        }
        if (value == null) {
          missing.add(key + " on " + replica.id() + ": unreadable (" + unreadable.getMessage() + ")");
          continue;
        }
        long held = value.filter(v -> v.length >= STAMP).map(v -> ByteBuffer.wrap(v).getLong()).orElse(-1L);
        if (held < acked.getValue()) {
          missing.add(key + " on " + replica.id() + ": " + (held < 0 ? "absent" : "write " + held)
              + ", but write " + acked.getValue() + " was acknowledged");
        }
      }
    }
    if (missing.isEmpty()) {
      out.printf(Locale.ROOT, "verify: %d keys read from every replica of epoch %d (%d reads): each holds its last "
          + "acknowledged write%n", run.acknowledged.size(), epoch, reads);
      out.flush();
      return 0;
    }
    err.printf(Locale.ROOT, "ringshift: verify: %d of %d reads (epoch %d) miss an acknowledged write:%n",
        missing.size(), reads, epoch);
    missing.stream().limit(50).forEach(m -> err.println("  " + m));
    if (missing.size() > 50) {
      err.println("  ... and " + (missing.size() - 50) + " more");
    }
    err.flush();
    return 3;
  }

  /** One run of the writers and what they saw. */
  private final class Run {
    private final RoutedWriter writer;
    private final int writers;
    private final int rate;
    private final int valueSize;
    private final long valueSeed;
    /** Key index to the sequence number of its last acknowledged write. */
    final Map<Long, Long> acknowledged = new ConcurrentHashMap<>();
    private final AtomicLong acks = new AtomicLong();
    private final AtomicLong routedAgain = new AtomicLong();
    private final Map<String, AtomicLong> failed = new ConcurrentHashMap<>();
    private final List<long[]> latencies = new ArrayList<>();
    private final long[] counts;
    private long elapsedNanos;

    Run(RoutedWriter writer, int writers, int rate, int valueSize, long valueSeed) {
      this.writer = writer;
      this.writers = writers;
      this.rate = rate;
      this.valueSize = valueSize;
      this.valueSeed = valueSeed;
      this.counts = new long[writers];
      for (int i = 0; i < writers; i++) {
        latencies.add(new long[1024]);
      }
    }

    void execute(Duration length, PrintWriter err) throws InterruptedException {
      long begin = System.nanoTime();
      long end = begin + length.toNanos();
      long periodNanos = rate == 0 ? 0 : (long) writers * 1_000_000_000L / rate;
      List<Thread> running = new ArrayList<>();
      for (int t = 0; t < writers; t++) {
        int thread = t;
        Thread th = new Thread(() -> write(thread, end, periodNanos), "ringshift-load-" + t);
        th.setDaemon(true);
        running.add(th);
        th.start();
      }
      for (Thread th : running) {
        th.join();
      }
      elapsedNanos = System.nanoTime() - begin;
    }

    private void write(int thread, long end, long periodNanos) {
      Random random = new Random(valueSeed + thread);
      long next = System.nanoTime();
      long round = 0;
      // The keys of this thread: thread, thread + writers, thread + 2 * writers, ...
      long own = (keys - thread + writers - 1) / writers;
      while (System.nanoTime() - end < 0) {
        long index = thread + (round % own) * (long) writers;
        long sequence = round / own;
        round++;
        byte[] value = new byte[valueSize];
        random.nextBytes(value);
        ByteBuffer.wrap(value).putLong(sequence);
        byte[] key = key(index).getBytes(StandardCharsets.UTF_8);
        while (System.nanoTime() - end < 0) {
          if (periodNanos > 0) {
            long wait = next - System.nanoTime();
            if (wait > 0) {
              LockSupport.parkNanos(wait);
            }
            next = Math.max(next + periodNanos, System.nanoTime() - periodNanos);
          }
          long started = System.nanoTime();
          try {
            RoutedWriter.Written written = writer.put(key, value);
            record(thread, System.nanoTime() - started);
            acknowledged.put(index, sequence);
            acks.incrementAndGet();
            if (written.retried()) {
              routedAgain.incrementAndGet();
            }
            break;
          } catch (RuntimeException e) {
            // StoreException subtypes (a replica failed, a stale epoch), or no ring yet: counted, then tried again.
            failed.computeIfAbsent(e.getClass().getSimpleName(), k -> new AtomicLong()).incrementAndGet();
          }
        }
      }
    }

    private void record(int thread, long nanos) {
      long[] samples = latencies.get(thread);
      int n = (int) counts[thread];
      if (n == samples.length) {
        samples = Arrays.copyOf(samples, samples.length * 2);
        latencies.set(thread, samples);
      }
      samples[n] = nanos;
      counts[thread]++;
    }

    String describe() {
      int total = 0;
      for (long c : counts) {
        total += (int) c;
      }
      long[] all = new long[total];
      int at = 0;
      for (int t = 0; t < writers; t++) {
        System.arraycopy(latencies.get(t), 0, all, at, (int) counts[t]);
        at += (int) counts[t];
      }
      Arrays.sort(all);
      double seconds = elapsedNanos / 1e9;
      String latency = all.length == 0 ? "no write acknowledged" : String.format(Locale.ROOT,
          "latency p50 %.1f ms, p99 %.1f ms, max %.1f ms", percentile(all, 0.50) / 1e6, percentile(all, 0.99) / 1e6,
          all[all.length - 1] / 1e6);
      Map<String, Long> failures = new TreeMap<>();
      failed.forEach((kind, count) -> failures.put(kind, count.get()));
      return String.format(Locale.ROOT, "load: %d writes acknowledged in %.1f s: %.0f/s; %s; %d routed again after "
          + "a refusal; failed attempts %s", acks.get(), seconds, acks.get() / seconds, latency, routedAgain.get(),
          failures.isEmpty() ? "none" : failures);
    }

    private static long percentile(long[] sorted, double p) {
      return sorted[(int) Math.min(sorted.length - 1, Math.floor(p * sorted.length))];
    }
  }
}
