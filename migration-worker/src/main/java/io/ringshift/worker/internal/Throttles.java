package io.ringshift.worker.internal;

import io.ringshift.worker.Limits;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.ToLongFunction;

/**
 * The worker's byte-rate limits: one {@link TokenBucket} for the whole worker and one per source node, shared by
 * every task that copies from that node. A batch takes its bytes from both, in pieces of at most a tenth of a
 * second of the limits in force when each piece starts, so a lowered limit governs the rest of a batch that is
 * already waiting (within 100 ms). Limits change while tasks run.
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

  /** Where a piece of a batch goes once its bytes passed the throttles (the apply to the target). */
  @FunctionalInterface
  interface PieceSink<T> {
    void send(List<T> piece);
  }

  /**
   * Sends {@code batch} in pieces, each taking its bytes from the worker's bucket and {@code source}'s before it
   * goes to {@code sink}, in order. A piece holds at most {@link #maxBatchBytes} of the limits as they are when
   * the piece starts (at least one item), so a batch read under a higher limit (up to three are in flight with
   * {@link Prefetch}) passes at a limit lowered while it waits, not in one request that the bucket grants whole.
   * Reports once through {@code report} when the batch's wait passes one second.
   */
  <T> Waited send(List<T> batch, ToLongFunction<T> sizeOf, String source, Sleeper sleeper, WaitReport report,
      PieceSink<T> sink) throws InterruptedException {
    long start = ticker.nanos();
    long[] reportedAt = {-1};
    WaitReport once = (soFar, holder) -> {
      if (reportedAt[0] < 0) {
        reportedAt[0] = soFar;
        report.waiting(soFar, holder);
      }
    };
    String holder = null;
    int next = 0;
    while (next < batch.size()) {
      long max = maxBatchBytes(source);
      int end = next;
      long bytes = 0;
      while (end < batch.size() && (end == next || bytes + sizeOf.applyAsLong(batch.get(end)) <= max)) {
        bytes += sizeOf.applyAsLong(batch.get(end));
        end++;
      }
      Waited waited = acquire(bytes, source, sleeper, once, start);
      holder = waited.holder() != null ? waited.holder() : holder;
      sink.send(batch.subList(next, end));
      next = end;
    }
    return new Waited(ticker.nanos() - start, holder);
  }

  /**
   * Takes {@code bytes} from the worker's bucket and {@code source}'s, waiting through {@code sleeper}; reports
   * once through {@code report} when the wait passes one second. Takes a request larger than a tenth of a second
   * of the current lowest limit in pieces of that size, re-reading the limits between pieces.
   */
  Waited acquire(long bytes, String source, Sleeper sleeper, WaitReport report) throws InterruptedException {
    return acquire(bytes, source, sleeper, report, ticker.nanos());
  }

  private Waited acquire(long bytes, String source, Sleeper sleeper, WaitReport report, long since)
      throws InterruptedException {
    TokenBucket sourceBucket = bucket(source);
    long start = ticker.nanos();
    boolean reported = false;
    String holder = null;
    long left = bytes;
    do {
      long piece = Math.min(left, maxBatchBytes(source));
      boolean tookWorker = false;
      while (true) {
        long wait;
        if (!tookWorker) {
          wait = worker.tryAcquire(piece);
          tookWorker = wait == 0;
          if (wait > 0) {
            holder = "worker at " + Rates.format(worker.rate());
          }
        } else {
          wait = sourceBucket.tryAcquire(piece);
          if (wait == 0) {
            break;
          }
          holder = "source " + source + " at " + Rates.format(sourceBucket.rate());
        }
        if (wait > 0) {
          long soFar = ticker.nanos() - since;
          if (!reported && soFar >= REPORT_AFTER_NANOS) {
            reported = true;
            report.waiting(soFar, holder);
          }
          sleeper.sleepNanos(wait);
        }
      }
      left -= piece;
    } while (left > 0);
    return new Waited(ticker.nanos() - start, holder);
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
