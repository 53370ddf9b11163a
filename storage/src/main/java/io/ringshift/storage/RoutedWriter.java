package io.ringshift.storage;

import io.ringshift.storage.internal.Checks;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.Executor;
import java.util.concurrent.Executors;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;

/**
 * A client's writes through the ring: each put or delete goes to every replica of the key's {@link Routing.Route},
 * tagged with the route's epoch, and a stale route converges (docs/storage.md, "Writing through the ring").
 *
 * <p>The rule: when any replica answers {@link WriteResult.RetryWithEpoch} at epoch {@code n} (a fence, or a node
 * that no longer replicates the key, see {@link OwnershipCheckedStore}), the writer waits for its routing to reach
 * epoch {@code n} ({@link Routing#awaitEpoch}, at most the epoch wait, 2 s by default), routes the key again and
 * sends the write once more, to every replica of the new route, tagged with the new epoch. Exactly one retry: a
 * second refusal, or an epoch that does not arrive in time, is {@link StoreException.StaleEpoch}.
 *
 * <p>What it does not do: ringshift does not do quorum. A write is acknowledged when every replica of its route
 * applied it; a replica that fails (down, timed out, a store error) fails the write with
 * {@link StoreException.ReplicasFailed}, which names each failed replica with its own exception and the replicas that
 * applied it, and nothing is rolled back. Failures on a route that a refusal proved stale do not count: the retry
 * decides. The replicas of a route are written **in parallel**: the first (the primary) on the calling thread, the
 * others on the writer's executor, and the write returns when every replica has answered, so a write costs one
 * round trip, not R. A write is never repeated on a replica within one attempt (see docs/storage.md on why a
 * client's put is not resent). {@link #sequential()} writes them one after another in preference order instead.
 *
 * <p>Thread safe when the routing and the stores are; it holds no state of its own and closes nothing.
 */
public final class RoutedWriter {
  /** How long a refused write waits, by default, for the epoch the refusal asked for. */
  public static final Duration DEFAULT_EPOCH_WAIT = Duration.ofSeconds(2);

  /**
   * The executor the replicas after the first are written on, by default: daemon threads, created as needed and
   * ended after a minute idle, shared by every writer of the process (a thread per replica write in flight).
   */
  private static final Executor SHARED = Executors.newCachedThreadPool(new ThreadFactory() {
    private final AtomicInteger count = new AtomicInteger();

    @Override
    public Thread newThread(Runnable r) {
      Thread t = new Thread(r, "ringshift-routed-writer-" + count.incrementAndGet());
      t.setDaemon(true);
      return t;
    }
  });

  private final Routing routing;
  private final Function<String, Store> stores;
  private final Duration epochWait;
  /** Where the replicas after the first are written; null: one after another on the calling thread. */
  private final Executor executor;
  /** Stamps each write's version: every replica, and a retry, get the same one. */
  private final HybridClock clock;

  private RoutedWriter(Routing routing, Function<String, Store> stores, Duration epochWait, Executor executor,
      HybridClock clock) {
    this.routing = routing;
    this.stores = stores;
    this.epochWait = epochWait;
    this.executor = executor;
    this.clock = clock;
  }

  /**
   * A writer routing by {@code routing} and reaching node {@code id} through {@code stores.apply(id)} (typically a
   * {@link RemoteStore} per node, kept open by the caller), with the {@link #DEFAULT_EPOCH_WAIT}.
   *
   * @throws IllegalArgumentException when either is null
   */
  public static RoutedWriter create(Routing routing, Function<String, Store> stores) {
    if (routing == null || stores == null) {
      throw new IllegalArgumentException("a routed writer needs a routing and a store per node id; was routing "
          + routing + ", stores " + stores);
    }
    return new RoutedWriter(routing, stores, DEFAULT_EPOCH_WAIT, SHARED,
        HybridClock.system("writer/" + java.util.UUID.randomUUID()));
  }

  /**
   * The same writer waiting at most {@code wait} for the epoch a refusal asks for.
   *
   * @throws IllegalArgumentException when {@code wait} is null or negative
   */
  public RoutedWriter withEpochWait(Duration wait) {
    if (wait == null || wait.isNegative()) {
      throw new IllegalArgumentException("epoch wait was " + wait + "; it must be zero or positive");
    }
    return new RoutedWriter(routing, stores, wait, executor, clock);
  }

  /**
   * The same writer writing the replicas after the first on {@code executor} (which must run each task on another
   * thread, or the replicas are written one after another after all).
   *
   * @throws IllegalArgumentException when {@code executor} is null
   */
  public RoutedWriter withExecutor(Executor executor) {
    if (executor == null) {
      throw new IllegalArgumentException("executor was null; give one, or use sequential()");
    }
    return new RoutedWriter(routing, stores, epochWait, executor, clock);
  }

  /**
   * The same writer stamping its writes' versions from {@code writerClock} (by default a system clock of a writer name
   * drawn at random: one per writer instance).
   *
   * @throws IllegalArgumentException when {@code writerClock} is null
   */
  public RoutedWriter withClock(HybridClock writerClock) {
    if (writerClock == null) {
      throw new IllegalArgumentException("clock was null; give the hybrid clock the writer stamps versions from");
    }
    return new RoutedWriter(routing, stores, epochWait, executor, writerClock);
  }

  /** The same writer writing the replicas one after another, in preference order, on the calling thread. */
  public RoutedWriter sequential() {
    return new RoutedWriter(routing, stores, epochWait, null, clock);
  }

  /** How long a refused write waits for the epoch the refusal asked for. */
  public Duration epochWait() {
    return epochWait;
  }

  /**
   * Writes {@code value} under {@code key} on every replica of its route.
   *
   * @return where it landed
   * @throws StoreException.BadRequest for a bad key or value (checked before anything is sent)
   * @throws StoreException.StaleEpoch when it was refused for an older epoch and the one retry did not land
   * @throws StoreException.ReplicasFailed when a replica failed
   * @throws StoreException when the routing has no ring, or names a node {@code stores} has no store for
   */
  public Written put(byte[] key, byte[] value) {
    Checks.key(key);
    Checks.value(value);
    return write(key, value);
  }

  /** Deletes {@code key} on every replica of its route; as {@link #put}. */
  public Written delete(byte[] key) {
    Checks.key(key);
    return write(key, null);
  }

  /**
   * An acknowledged write: every replica of the route applied it.
   *
   * @param epoch the epoch the write landed at (the route's)
   * @param replicas the replicas that applied it, in preference order
   * @param retried whether the first route was refused and the write landed on the retry
   */
  public record Written(long epoch, List<String> replicas, boolean retried) {
    public Written {
      replicas = List.copyOf(replicas);
    }
  }

  private Written write(byte[] key, byte[] value) {
    Version version = clock.next();
    Routing.Route first = route(key);
    Attempt attempt = send(first, key, value, version);
    if (attempt.refusal == null) {
      return attempt.acknowledged(key, false);
    }
    long asked = attempt.refusal.epoch();
    if (!routing.awaitEpoch(asked, epochWait)) {
      throw new StoreException.StaleEpoch(String.format(Locale.ROOT,
          "write of key %s at epoch %d was refused by %s; epoch %d did not reach the routing within %d ms: retry "
              + "later", Checks.preview(key), first.epoch(), attempt.describeRefusal(), asked, epochWait.toMillis()),
          List.of(first.epoch()), asked);
    }
    Routing.Route second = route(key);
    if (second.epoch() < asked) {
      throw new StoreException.StaleEpoch(String.format(Locale.ROOT,
          "write of key %s at epoch %d was refused by %s; the routing said it reached epoch %d but still routes by "
              + "epoch %d: retry later", Checks.preview(key), first.epoch(), attempt.describeRefusal(), asked,
          second.epoch()), List.of(first.epoch()), asked);
    }
    Attempt retry = send(second, key, value, version);
    if (retry.refusal != null) {
      throw new StoreException.StaleEpoch(String.format(Locale.ROOT,
          "write of key %s was refused at epoch %d by %s, and again on the retry at epoch %d by %s; it was retried "
              + "once: retry later", Checks.preview(key), first.epoch(), attempt.describeRefusal(), second.epoch(),
          retry.describeRefusal()), List.of(first.epoch(), second.epoch()), retry.refusal.epoch());
    }
    return retry.acknowledged(key, true);
  }

  private Routing.Route route(byte[] key) {
    Routing.Route route = routing.route(key);
    if (route == null) {
      throw new StoreException.Unavailable("the routing has no ring for key " + Checks.preview(key)
          + " yet; retry once the ring client has a snapshot", null);
    }
    return route;
  }

  /** Sends the write to every replica of {@code route}: what each answered. */
  private Attempt send(Routing.Route route, byte[] key, byte[] value, Version version) {
    // Resolve every store first, so a route naming an unknown node writes nowhere.
    List<Store> targets = new ArrayList<>(route.replicas().size());
    for (String id : route.replicas()) {
      Store store = stores.apply(id);
      if (store == null) {
        throw new StoreException(String.format(Locale.ROOT,
            "no store for node '%s', a replica of key %s at epoch %d (route %s); nothing was written",
            id, Checks.preview(key), route.epoch(), route.replicas()));
      }
      targets.add(store);
    }
    Attempt attempt = new Attempt(route);
    int n = targets.size();
    Object[] answers = new Object[n]; // a WriteResult, or the StoreException the replica failed with
    if (executor == null || n == 1) {
      for (int i = 0; i < n; i++) {
        answers[i] = writeOne(targets.get(i), key, value, route.epoch(), version);
      }
    } else {
      // The first replica on the calling thread, the others on the executor.
      int local = 0;
      List<CompletableFuture<Object>> others = new ArrayList<>(n);
      for (int i = 0; i < n; i++) {
        Store target = targets.get(i);
        others.add(i == local ? null
            : CompletableFuture.supplyAsync(() -> writeOne(target, key, value, route.epoch(), version), executor));
      }
      answers[local] = writeOne(targets.get(local), key, value, route.epoch(), version);
      RuntimeException unexpected = null;
      for (int i = 0; i < n; i++) {
        if (i == local) {
          continue;
        }
        try {
          answers[i] = others.get(i).join();
        } catch (CompletionException e) {
          RuntimeException cause = e.getCause() instanceof RuntimeException r ? r : e;
          unexpected = unexpected == null ? cause : unexpected;
        }
      }
      if (unexpected != null) {
        throw unexpected; // not a store's answer: a bug, as it would have been on the calling thread
      }
    }
    // In preference order, as if written one after another.
    for (int i = 0; i < n; i++) {
      String id = route.replicas().get(i);
      if (answers[i] instanceof StoreException e) {
        attempt.failures.put(id, e);
      } else if (answers[i] instanceof WriteResult.RetryWithEpoch refused) {
        attempt.refused(id, refused);
      } else {
        attempt.applied.add(id);
      }
    }
    return attempt;
  }

  /** One replica's answer: its WriteResult, or the StoreException it failed with. */
  private static Object writeOne(Store target, byte[] key, byte[] value, long epoch, Version version) {
    try {
      return value == null ? target.delete(key, epoch, version) : target.put(key, value, epoch, version);
    } catch (StoreException e) {
      return e;
    }
  }

  /** What the replicas of one route answered. */
  private static final class Attempt {
    final Routing.Route route;
    final List<String> applied = new ArrayList<>();
    final Map<String, StoreException> failures = new LinkedHashMap<>();
    /** The refusal asking for the newest epoch, and who gave it. */
    WriteResult.RetryWithEpoch refusal;
    String refusedBy;

    Attempt(Routing.Route route) {
      this.route = route;
    }

    void refused(String node, WriteResult.RetryWithEpoch answer) {
      if (refusal == null || answer.epoch() > refusal.epoch()) {
        refusal = answer;
        refusedBy = node;
      }
    }

    String describeRefusal() {
      String why = refusal.reason() == WriteResult.Reason.FENCED
          ? "its range " + refusal.fencedRange() + " is fenced for epochs below " + refusal.epoch()
          : "it is not a replica of range " + refusal.fencedRange() + " at epoch " + refusal.epoch();
      return refusedBy + " (" + why + ")";
    }

    Written acknowledged(byte[] key, boolean retried) {
      if (!failures.isEmpty()) {
        StringBuilder failed = new StringBuilder();
        failures.forEach((node, e) -> failed.append(failed.length() == 0 ? "" : "; ").append(node).append(": ")
            .append(e.getClass().getSimpleName()).append(' ').append(e.getMessage()));
        throw new StoreException.ReplicasFailed(String.format(Locale.ROOT,
            "write of key %s at epoch %d failed on %d of %d replicas (%s); applied on %s, which keep it",
            Checks.preview(key), route.epoch(), failures.size(), route.replicas().size(), failed,
            applied.isEmpty() ? "none" : applied), route.epoch(), failures, applied);
      }
      return new Written(route.epoch(), applied, retried);
    }
  }
}
