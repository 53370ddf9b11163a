package io.ringshift.storage.internal.http;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.ringshift.storage.Store;
import io.ringshift.storage.WriteResult;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * A storage node's meters (docs/metrics.md): what both of its listeners answered. Tags take values from fixed sets
 * only (the API's error codes, put or delete, hit or miss), never a key, a range or a client, so the number of series
 * does not grow with the traffic. Every series is registered up front at zero, so a dashboard shows a reason before it
 * first happens; {@link #close()} removes them.
 */
public final class NodeMetrics implements AutoCloseable {
  public static final String WRITES = "ringshift.node.writes";
  public static final String READS = "ringshift.node.reads";
  public static final String REFUSALS = "ringshift.node.refusals";
  public static final String ERRORS = "ringshift.node.errors";
  public static final String FENCES = "ringshift.node.fences";
  public static final String APPLIED = "ringshift.node.applied.entries";
  public static final String LOADED = "ringshift.node.loaded.bytes";
  public static final String RANGE_DELETES = "ringshift.node.range.deletes";
  public static final String RANGE_DELETED_KEYS = "ringshift.node.range.deleted.keys";

  /** The {@code reason} of a refusal: the API's error code (docs/storage.md), or why a write was refused. */
  static final List<String> REFUSAL_REASONS = List.of(HttpApi.REASON_FENCED, HttpApi.REASON_NOT_A_REPLICA,
      HttpApi.EPOCH_AHEAD, HttpApi.REFUSED, HttpApi.UNAUTHORIZED, HttpApi.BAD_REQUEST, HttpApi.ADMIN_ENDPOINT,
      HttpApi.UNKNOWN_PATH, HttpApi.METHOD_NOT_ALLOWED, HttpApi.FEED_UNAVAILABLE, HttpApi.UNAVAILABLE);
  /** The {@code code} of an error: the store failed, or the server did. */
  static final List<String> ERROR_CODES = List.of(HttpApi.STORE_ERROR, HttpApi.INTERNAL);

  private final MeterRegistry registry;
  private final List<Meter> meters = new ArrayList<>();
  private final Counter puts;
  private final Counter deletes;
  private final Counter hits;
  private final Counter misses;
  private final Counter applied;
  private final Counter ingested;
  private final Counter loadWritten;
  private final Counter rangeDeletes;
  private final Counter rangeDeletedKeys;
  private final Map<String, Counter> refusals = new HashMap<>();
  private final Map<String, Counter> errors = new HashMap<>();

  /** Meters of a node serving {@code store}, registered on {@code registry}. */
  public NodeMetrics(MeterRegistry registry, Store store) {
    this.registry = registry;
    puts = counter(WRITES, "client writes applied, batched ones included", "op", "put");
    deletes = counter(WRITES, "client writes applied, batched ones included", "op", "delete");
    hits = counter(READS, "client reads of a key", "result", "hit");
    misses = counter(READS, "client reads of a key", "result", "miss");
    applied = counter(APPLIED, "entries applied by migration workers (copy and catch-up)");
    ingested = counter(LOADED, "key and value bytes of snapshot copies loaded in bulk, by how", "how", "ingested");
    loadWritten = counter(LOADED, "key and value bytes of snapshot copies loaded in bulk, by how", "how", "written");
    rangeDeletes = counter(RANGE_DELETES, "ranges deleted (a copy clearing its target, a cleanup)");
    rangeDeletedKeys = counter(RANGE_DELETED_KEYS, "keys removed by range deletes");
    for (String reason : REFUSAL_REASONS) {
      refusals.put(reason, counter(REFUSALS, "requests and writes refused, by reason: nothing changed", "reason",
          reason));
    }
    for (String code : ERROR_CODES) {
      errors.put(code, counter(ERRORS, "requests that failed in the store or the server", "code", code));
    }
    // Strong reference: nothing else holds the store's view for the gauge.
    meters.add(Gauge.builder(FENCES, store, s -> s.fences().size())
        .description("fences the node holds (ranges that refuse writes of older epochs)")
        .strongReference(true).register(registry));
  }

  /** Meters that nobody reads: for handlers and servers started without a registry. */
  public static NodeMetrics none(Store store) {
    return new NodeMetrics(new SimpleMeterRegistry(), store);
  }

  private Counter counter(String name, String description, String... tags) {
    Counter c = Counter.builder(name).description(description).tags(tags).register(registry);
    meters.add(c);
    return c;
  }

  /** A client write's outcome: applied, or refused with the reason it names. */
  void written(boolean delete, WriteResult result) {
    if (result instanceof WriteResult.RetryWithEpoch retry) {
      refused(retry.reason() == WriteResult.Reason.FENCED ? HttpApi.REASON_FENCED : HttpApi.REASON_NOT_A_REPLICA);
    } else {
      (delete ? deletes : puts).increment();
    }
  }

  void read(boolean found) {
    (found ? hits : misses).increment();
  }

  void applied(int entries) {
    applied.increment(entries);
  }

  void loaded(io.ringshift.storage.LoadResult result) {
    (result.ingested() ? ingested : loadWritten).increment(result.bytes());
  }

  void rangeDeleted(long keys) {
    rangeDeletes.increment();
    rangeDeletedKeys.increment(keys);
  }

  /** A request or write answered with the API error {@code code} (one of the two lists above). */
  void failed(String code) {
    Counter c = errors.containsKey(code) ? errors.get(code) : refusals.get(code);
    if (c != null) {
      c.increment();
    }
  }

  private void refused(String reason) {
    refusals.get(reason).increment();
  }

  @Override
  public void close() {
    meters.forEach(registry::remove);
  }
}
