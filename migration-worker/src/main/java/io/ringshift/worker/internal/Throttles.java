package io.ringshift.worker.internal;

import io.ringshift.worker.Limits;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * The worker's byte-rate limits: one {@link TokenBucket} for the whole worker and one per source node, shared by
 * every task that copies from that node. A batch takes its bytes from both. Limits change while tasks run.
 */
public final class Throttles {
  /** A task that waits longer than this for one batch says so in its status. */
  static final long REPORT_AFTER_NANOS = TimeUnit.SECONDS.toNanos(1);

  private final Ticker ticker;
  private final TokenBucket worker;
  private final Map<String, TokenBucket> perSource = new ConcurrentHashMap<>();
  private volatile long perSourceRate;

  public Throttles(Limits limits, Ticker ticker) {
    this.ticker = ticker;
    this.worker = new TokenBucket(limits.bytesPerSecond(), ticker);
    this.perSourceRate = limits.perSourceBytesPerSecond();
  }

  /** New rates for the worker's bucket and every source's; tasks already waiting see them within 100 ms. */
  public synchronized void setLimits(Limits limits) {
    worker.setRate(limits.bytesPerSecond());
    perSourceRate = limits.perSourceBytesPerSecond();
    perSource.values().forEach(b -> b.setRate(perSourceRate));
  }

  /** Called once when a batch has waited more than a second: how long so far, and which limit holds it. */
  @FunctionalInterface
  interface WaitReport {
    void waiting(long nanosSoFar, String holder);
  }

  /** How long a batch waited, and for which limit (null when it did not wait). */
  record Waited(long nanos, String holder) {}

  /**
   * Takes {@code bytes} from the worker's bucket and {@code source}'s, waiting through {@code sleeper}; reports
   * once through {@code report} when the wait passes one second.
   */
  Waited acquire(long bytes, String source, Sleeper sleeper, WaitReport report) throws InterruptedException {
    TokenBucket sourceBucket = bucket(source);
    long start = ticker.nanos();
    boolean reported = false;
    boolean tookWorker = false;
    String holder = null;
    while (true) {
      long wait;
      if (!tookWorker) {
        wait = worker.tryAcquire(bytes);
        tookWorker = wait == 0;
        if (wait > 0) {
          holder = "worker at " + Rates.format(worker.rate());
        }
      } else {
        wait = sourceBucket.tryAcquire(bytes);
        if (wait == 0) {
          return new Waited(ticker.nanos() - start, holder);
        }
        holder = "source " + source + " at " + Rates.format(sourceBucket.rate());
      }
      if (wait > 0) {
        long soFar = ticker.nanos() - start;
        if (!reported && soFar >= REPORT_AFTER_NANOS) {
          reported = true;
          report.waiting(soFar, holder);
        }
        sleeper.sleepNanos(wait);
      }
    }
  }

  /** The largest batch that keeps throttling smooth: a tenth of a second of the lowest limit on this source. */
  long maxBatchBytes(String source) {
    long workerRate = worker.rate();
    long sourceRate = bucket(source).rate();
    long lowest = workerRate == 0 ? sourceRate : sourceRate == 0 ? workerRate : Math.min(workerRate, sourceRate);
    return TokenBucket.maxRequestBytes(lowest);
  }

  private synchronized TokenBucket bucket(String source) {
    return perSource.computeIfAbsent(source, s -> new TokenBucket(perSourceRate, ticker));
  }
}
