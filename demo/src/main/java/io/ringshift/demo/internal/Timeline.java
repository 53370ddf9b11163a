package io.ringshift.demo.internal;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.atomic.LongAdder;

/**
 * What the writer and the reader saw, second by second from the start of the workload: writes acknowledged, write
 * attempts refused for a newer epoch (a fence, or a node that no longer replicates the key) or failed (a replica down
 * or timed out), the latency of acknowledged writes (from the first attempt to the acknowledgement, retries
 * included), and reads done, failed and stale. Thread safe; the report draws it.
 */
public final class Timeline {
  private final long startMillis;
  private final List<Second> seconds = new ArrayList<>();

  public Timeline(long startMillis) {
    this.startMillis = startMillis;
  }

  public long startMillis() {
    return startMillis;
  }

  /** One second of the run. */
  public static final class Second {
    final LongAdder acknowledged = new LongAdder();
    final LongAdder refused = new LongAdder();
    final LongAdder failed = new LongAdder();
    final LongAdder reads = new LongAdder();
    final LongAdder readFailures = new LongAdder();
    final LongAdder stale = new LongAdder();
    final LongAdder cpuNanos = new LongAdder();
    private float[] latencies = new float[64];
    private int latencyCount;

    synchronized void latency(float millis) {
      if (latencyCount == latencies.length) {
        latencies = Arrays.copyOf(latencies, latencyCount * 2);
      }
      latencies[latencyCount++] = millis;
    }

    /** The acknowledged writes' latencies in ms, sorted. */
    public synchronized float[] latencies() {
      float[] sorted = Arrays.copyOf(latencies, latencyCount);
      Arrays.sort(sorted);
      return sorted;
    }

    public long acknowledged() {
      return acknowledged.sum();
    }

    public long refused() {
      return refused.sum();
    }

    public long failed() {
      return failed.sum();
    }

    public long reads() {
      return reads.sum();
    }

    public long readFailures() {
      return readFailures.sum();
    }

    public long stale() {
      return stale.sum();
    }

    /** The process's CPU time that fell in this second (all threads), ns; 0 when not sampled. */
    public long cpuNanos() {
      return cpuNanos.sum();
    }
  }

  /** The bucket of wall-clock time {@code millis} (times before the start go to the first). */
  public Second at(long millis) {
    int index = (int) Math.max(0, (millis - startMillis) / 1000);
    synchronized (seconds) {
      while (seconds.size() <= index) {
        seconds.add(new Second());
      }
      return seconds.get(index);
    }
  }

  public void acknowledged(long atMillis, long startedMillis) {
    Second s = at(atMillis);
    s.acknowledged.increment();
    s.latency(atMillis - startedMillis);
  }

  /** Adds {@code nanos} of the process's CPU time to the second of {@code atMillis}. */
  public void cpu(long atMillis, long nanos) {
    at(atMillis).cpuNanos.add(nanos);
  }

  public void refused(long atMillis) {
    at(atMillis).refused.increment();
  }

  public void failed(long atMillis) {
    at(atMillis).failed.increment();
  }

  public void read(long atMillis, boolean failed, boolean stale) {
    Second s = at(atMillis);
    s.reads.increment();
    if (failed) {
      s.readFailures.increment();
    }
    if (stale) {
      s.stale.increment();
    }
  }

  /** The seconds so far, the first second of the workload first. */
  public List<Second> seconds() {
    synchronized (seconds) {
      return List.copyOf(seconds);
    }
  }
}
