package io.ringshift.worker.internal;

import io.ringshift.worker.Limits;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.ToLongFunction;

/**
 * The worker's byte-rate limits: one {@link TokenBucket} for the whole worker, one per source node, shared by
 * every task that copies from that node, and one per zone link (source zone to target zone). A batch takes its
 * bytes from each, in pieces of at most a tenth of a second of the limits in force when each piece starts, so a
 * lowered limit governs the rest of a batch that is already waiting (within 100 ms). Limits change while tasks
 * run.
 *
 * <p>A source's rate is the lower of the worker's own per-source limit and its share of the group's budget for
 * that source; a link's rate is its share of the group's budget for that link ({@link GroupShares}). The shares
 * change as workers start and stop copying: {@link #refresh} (every 500 ms in a worker) recounts them.
 */
public final class Throttles {
  /** A task that waits longer than this for one batch says so in its status. */
  static final long REPORT_AFTER_NANOS = TimeUnit.SECONDS.toNanos(1);
  /** A worker counts as sending from a source or over a link for this long after its last batch there. */
  static final long ACTIVE_NANOS = TimeUnit.SECONDS.toNanos(5);

  private final Ticker ticker;
  private final TokenBucket worker;
  private final Map<String, TokenBucket> perSource = new ConcurrentHashMap<>();
  private final Map<String, TokenBucket> perLink = new ConcurrentHashMap<>();
  private final Map<String, Long> sourceUsedAt = new ConcurrentHashMap<>();
  private final Map<String, Long> linkUsedAt = new ConcurrentHashMap<>();
  /** Why each source's or link's bucket has its rate, for the status of a task that waits on it. */
  private final Map<String, String> holders = new ConcurrentHashMap<>();
  private volatile long perSourceRate;
  private volatile GroupShares group;

  public Throttles(Limits limits, Ticker ticker) {
    this.ticker = ticker;
    this.worker = new TokenBucket(limits.bytesPerSecond(), ticker);
    this.perSourceRate = limits.perSourceBytesPerSecond();
  }

  /** New rates for the worker's bucket and every source's; tasks already waiting see them within 100 ms. */
  public synchronized void setLimits(Limits limits) {
    worker.setRate(limits.bytesPerSecond());
    perSourceRate = limits.perSourceBytesPerSecond();
    perSource.forEach((source, bucket) -> bucket.setRate(sourceRate(source)));
  }

  /** Takes the group's budgets into account from now on ({@link GroupShares}); null: none. */
  public synchronized void shareWith(GroupShares shares) {
    this.group = shares;
    refresh();
  }

  /**
   * Recounts the group's shares and sets every source's and link's rate to match; tasks already waiting see the
   * new rates within 100 ms.
   */
  public void refresh() {
    GroupShares shares = group;
    if (shares != null) {
      // Outside the lock: the recount reads every status, and batches take their buckets under the lock.
      shares.refresh();
    }
    setRates();
  }

  private synchronized void setRates() {
    perSource.forEach((source, bucket) -> {
      long rate = sourceRate(source);
      if (bucket.rate() != rate) {
        bucket.setRate(rate);
      }
    });
    perLink.forEach((link, bucket) -> {
      long rate = linkRate(link);
      if (bucket.rate() != rate) {
        bucket.setRate(rate);
      }
    });
  }

  /** The rate of {@code source}'s bucket: the lower of this worker's limit and its share of the group's budget. */
  private long sourceRate(String source) {
    GroupShares shares = group;
    GroupShares.Share share = shares == null ? GroupShares.Share.NONE
        : shares.sourceShare(source, active(sourceUsedAt, source));
    long rate = lowest(perSourceRate, share.bytesPerSecond());
    holders.put("source:" + source, "source " + source + " at " + Rates.format(rate)
        + (rate == share.bytesPerSecond() ? groupBudget(share) : ""));
    return rate;
  }

  /** The rate of {@code link}'s bucket: this worker's share of the group's budget for it (0: unlimited). */
  private long linkRate(String link) {
    GroupShares shares = group;
    GroupShares.Share share = shares == null ? GroupShares.Share.NONE
        : shares.linkShare(link, active(linkUsedAt, link));
    holders.put("link:" + link, "zone link " + link + " at " + Rates.format(share.bytesPerSecond())
        + groupBudget(share));
    return share.bytesPerSecond();
  }

  /** " (its group budget of B shared by n workers)" for a share that limits; empty otherwise. */
  private static String groupBudget(GroupShares.Share share) {
    return !share.limited() ? "" : " (its group budget of " + Rates.format(share.budget()) + " shared by "
        + share.workers() + " worker" + (share.workers() == 1 ? "" : "s") + ")";
  }

  /** Marks {@code key} as sent from now; whether it was inactive before. */
  private boolean markActive(Map<String, Long> usedAt, String key) {
    boolean was = active(usedAt, key);
    usedAt.put(key, ticker.nanos());
    return !was;
  }

  private synchronized void resetRate(Map<String, TokenBucket> buckets, String key, ToLongFunction<String> rate) {
    TokenBucket bucket = buckets.get(key);
    if (bucket != null) {
      long next = rate.applyAsLong(key);
      if (bucket.rate() != next) {
        bucket.setRate(next);
      }
    }
  }

  private boolean active(Map<String, Long> usedAt, String key) {
    Long at = usedAt.get(key);
    return at != null && ticker.nanos() - at < ACTIVE_NANOS;
  }

  /** The lower of two rates where 0 is unlimited. */
  private static long lowest(long a, long b) {
    return a == 0 ? b : b == 0 ? a : Math.min(a, b);
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
    return send(batch, sizeOf, source, null, sleeper, report, sink);
  }

  /** As {@link #send(List, ToLongFunction, String, Sleeper, WaitReport, PieceSink)}, also over zone {@code link}. */
  <T> Waited send(List<T> batch, ToLongFunction<T> sizeOf, String source, String link, Sleeper sleeper,
      WaitReport report, PieceSink<T> sink) throws InterruptedException {
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
      long max = maxBatchBytes(source, link);
      int end = next;
      long bytes = 0;
      while (end < batch.size() && (end == next || bytes + sizeOf.applyAsLong(batch.get(end)) <= max)) {
        bytes += sizeOf.applyAsLong(batch.get(end));
        end++;
      }
      Waited waited = acquire(bytes, source, link, sleeper, once, start);
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
    return acquire(bytes, source, null, sleeper, report, ticker.nanos());
  }

  private Waited acquire(long bytes, String source, String link, Sleeper sleeper, WaitReport report, long since)
      throws InterruptedException {
    List<TokenBucket> buckets = new ArrayList<>(3);
    List<String> names = new ArrayList<>(3);
    buckets.add(worker);
    names.add(null);
    // Marked as sending first, so that the share counts this worker; a source or link it was not sending from
    // (its bucket may have been made by the read-ahead, or idle) gets its share again at once, not at the recount.
    if (markActive(sourceUsedAt, source)) {
      resetRate(perSource, source, this::sourceRate);
    }
    buckets.add(bucket(source));
    names.add("source:" + source);
    if (link != null) {
      if (markActive(linkUsedAt, link)) {
        resetRate(perLink, link, this::linkRate);
      }
      buckets.add(linkBucket(link));
      names.add("link:" + link);
    }
    long start = ticker.nanos();
    boolean reported = false;
    String holder = null;
    long left = bytes;
    do {
      long piece = Math.min(left, maxBatchBytes(source, link));
      for (int i = 0; i < buckets.size(); i++) {
        long wait;
        while ((wait = buckets.get(i).tryAcquire(piece)) > 0) {
          holder = names.get(i) == null ? "worker at " + Rates.format(worker.rate())
              : holders.getOrDefault(names.get(i), names.get(i));
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
    return maxBatchBytes(source, null);
  }

  /** As {@link #maxBatchBytes(String)}, over zone {@code link} too (null: none). */
  long maxBatchBytes(String source, String link) {
    long lowest = lowest(worker.rate(), bucket(source).rate());
    if (link != null) {
      lowest = lowest(lowest, linkBucket(link).rate());
    }
    return TokenBucket.maxRequestBytes(lowest);
  }

  private TokenBucket linkBucket(String link) {
    return bucketIn(perLink, link, this::linkRate);
  }

  private TokenBucket bucket(String source) {
    return bucketIn(perSource, source, this::sourceRate);
  }

  /** The bucket of {@code key} in {@code buckets}, created at {@code rate} if it is new. */
  private synchronized TokenBucket bucketIn(Map<String, TokenBucket> buckets, String key,
      ToLongFunction<String> rate) {
    TokenBucket bucket = buckets.get(key);
    if (bucket == null) {
      bucket = new TokenBucket(rate.applyAsLong(key), ticker);
      buckets.put(key, bucket);
    }
    return bucket;
  }
}
