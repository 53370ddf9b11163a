package io.ringshift.storage;

import io.ringshift.ring.RingRange;
import io.ringshift.storage.internal.Checks;
import io.ringshift.storage.internal.LoadEntries;
import io.ringshift.storage.internal.LoadsInProgress;
import io.ringshift.storage.internal.MemoryStoreState;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongSupplier;

/**
 * A {@link Store} in memory, for the deterministic simulation of the protocol and for tests that need a store without
 * RocksDB: it passes the same contract ({@code StoreContractTest}) as {@link RocksStore}, over the same sequence-number,
 * fence, feed, digest and load rules.
 *
 * <p>Its durable state ({@link #state()}) outlives the store: {@link #close()} ends the store (its open scans and feeds
 * too; every later call is {@link StoreException.Unavailable}) and {@link #open(MemoryStoreState)} opens a new one on
 * the same state, which is how a node process that crashed and restarted keeps what it acknowledged. A node lost for
 * good is a new state. Thread safe; every call is atomic.
 */
public final class MemoryStore implements Store {
  private final MemoryStoreState state;
  private final Set<Object> open = ConcurrentHashMap.newKeySet();
  private volatile boolean closed;

  private MemoryStore(MemoryStoreState state) {
    this.state = state;
  }

  /**
   * A new store of node {@code nodeId} in {@code zone}, with the store incarnation {@code incarnation} (an id a
   * store draws when it is created; deterministic here).
   *
   * @throws StoreException.BadRequest when the node id or zone is blank or has control characters
   */
  public static MemoryStore create(String nodeId, String zone, String incarnation) {
    return new MemoryStore(new MemoryStoreState(nodeId, zone, incarnation));
  }

  /**
   * As {@link #create(String, String, String)}, on the clock {@code millis} (the node's own versions, tombstone
   * arrivals), keeping tombstones for {@code tombstoneRetention} until {@link Durable#purgeTombstones}.
   */
  public static MemoryStore create(String nodeId, String zone, String incarnation, LongSupplier millis,
      Duration tombstoneRetention) {
    return new MemoryStore(new MemoryStoreState(nodeId, zone, incarnation, millis, tombstoneRetention));
  }

  /** A store opened again on the durable state of an earlier one (a restart). */
  public static MemoryStore open(Durable durable) {
    return new MemoryStore(durable.state);
  }

  /** The durable state: open a store on it again after {@link #close()}. */
  public Durable durable() {
    return new Durable(state);
  }

  /**
   * What outlives a store's process: its data, log, fences and identity. Read directly (whether a store is open on it
   * or not) by whoever checks what a node holds; thread safe.
   */
  public static final class Durable {
    private final MemoryStoreState state;

    private Durable(MemoryStoreState state) {
      this.state = state;
    }

    /** The value of {@code key}, if the store holds it. */
    public Optional<byte[]> get(byte[] key) {
      return state.get(key);
    }

    /** The fences in force. */
    public List<Fence> fences() {
      return state.fences();
    }

    /** The live entries of {@code range}, in token order. */
    public List<Entry> entries(RingRange range) {
      return state.scan(range, null).entries().stream().filter(e -> !e.isDeletion()).toList();
    }

    /** The entry of {@code key}, a tombstone included, if the store holds one. */
    public Optional<Entry> entry(byte[] key) {
      return state.entry(key);
    }

    /** Removes the tombstones older than the retention, as a node's store does on its own; returns how many. */
    public long purgeTombstones() {
      return state.purgeTombstones();
    }

    /** Every live entry, in token order. */
    public List<Entry> contents() {
      return state.contents();
    }

    /** Cuts the change log, as a log retention that ended would: a feed further back is refused. */
    public void purgeLog() {
      state.purgeLog();
    }

    @Override
    public boolean equals(Object o) {
      return o instanceof Durable d && d.state == state;
    }

    @Override
    public int hashCode() {
      return System.identityHashCode(state);
    }
  }

  private void checkOpen() {
    if (closed) {
      throw new StoreException.Unavailable("the in-memory store of " + state.nodeId() + " is closed", null);
    }
  }

  @Override
  public NodeInfo info() {
    checkOpen();
    return state.info();
  }

  @Override
  public long latestSequence() {
    checkOpen();
    return state.latestSequence();
  }

  @Override
  public WriteResult put(byte[] key, byte[] value, long epoch, Version version) {
    Checks.put(key, value, epoch, version);
    checkOpen();
    return state.write(key, value, epoch, version);
  }

  @Override
  public WriteResult delete(byte[] key, long epoch, Version version) {
    Checks.delete(key, epoch, version);
    checkOpen();
    return state.write(key, null, epoch, version);
  }

  @Override
  public WriteResult put(byte[] key, byte[] value, long epoch) {
    Checks.put(key, value, epoch);
    checkOpen();
    return state.write(key, value, epoch, null);
  }

  @Override
  public WriteResult delete(byte[] key, long epoch) {
    Checks.delete(key, epoch);
    checkOpen();
    return state.write(key, null, epoch, null);
  }

  @Override
  public Optional<byte[]> get(byte[] key) {
    Checks.key(key);
    checkOpen();
    return state.get(key);
  }

  @Override
  public RangeScan scan(RingRange range, Cursor after) {
    Checks.range(range);
    Checks.cursor(range, after);
    checkOpen();
    Object token = new Object();
    open.add(token);
    return MemoryStoreState.scanOf(state.scan(range, after), () -> open.remove(token), () -> checkStream(token));
  }

  /** A stream's next call fails once the store is closed, as a RocksDB store's does. */
  private void checkStream(Object token) {
    if (closed) {
      throw new StoreException.Unavailable("the in-memory store of " + state.nodeId() + " was closed while a scan "
          + "or feed was open", null);
    }
    if (!open.contains(token)) {
      throw new IllegalStateException("the scan or change feed is closed");
    }
  }

  @Override
  public ChangeFeed changesIn(List<RingRange> ranges, long afterSequence) {
    Checks.ranges(ranges);
    Checks.sequence("afterSequence", afterSequence);
    checkOpen();
    MemoryStoreState.Feed feed = state.changes(ranges, afterSequence);
    Object token = new Object();
    open.add(token);
    return MemoryStoreState.feedOf(feed, () -> open.remove(token), () -> checkStream(token));
  }

  @Override
  public long apply(List<Entry> entries) {
    Checks.entries(entries);
    checkOpen();
    return state.apply(entries);
  }

  @Override
  public LoadResult load(Iterator<Entry> entries) {
    checkOpen();
    try (LoadsInProgress.Ticket ticket = state.openLoad()) {
      LoadEntries checked = new LoadEntries(ticket.track(entries));
      List<Entry> all = new ArrayList<>();
      while (checked.hasNext()) {
        all.add(checked.next());
      }
      checkOpen();
      return state.finishLoad(ticket, all, checked.bytes());
    }
  }

  @Override
  public RangeDigest digest(RingRange range) {
    Checks.range(range);
    checkOpen();
    return state.digest(range);
  }

  @Override
  public Fence fence(RingRange range, long epoch) {
    Checks.range(range);
    Checks.epoch(epoch);
    checkOpen();
    return state.fence(range, epoch);
  }

  @Override
  public List<Fence> fences() {
    checkOpen();
    return state.fences();
  }

  @Override
  public void unfence(RingRange range, long epoch) {
    Checks.range(range);
    Checks.epoch(epoch);
    checkOpen();
    state.unfence(range, epoch);
  }

  @Override
  public long deleteRange(RingRange range, long epoch) {
    Checks.range(range);
    Checks.epoch(epoch);
    checkOpen();
    return state.deleteRange(range);
  }

  /** Ends the store and its open scans and feeds; the state stays for {@link #open(MemoryStoreState)}. Idempotent. */
  @Override
  public void close() {
    closed = true;
  }

  @Override
  public String toString() {
    return "MemoryStore[" + state + (closed ? ", closed" : "") + "]";
  }
}
