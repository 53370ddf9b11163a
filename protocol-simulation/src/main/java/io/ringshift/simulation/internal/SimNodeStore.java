package io.ringshift.simulation.internal;

import io.ringshift.ring.RingRange;
import io.ringshift.storage.ChangeFeed;
import io.ringshift.storage.Entry;
import io.ringshift.storage.Fence;
import io.ringshift.storage.LoadResult;
import io.ringshift.storage.RangeDigest;
import io.ringshift.storage.RangeScan;
import io.ringshift.storage.Store;
import io.ringshift.storage.Version;
import io.ringshift.storage.WriteResult;
import java.util.Iterator;
import java.util.List;
import java.util.Optional;

/**
 * A node as one caller (a worker, a client, a health manager) reaches it over the network: every call fails
 * {@code Unavailable} while the node is down or the caller cannot reach it, and goes to the node's production store
 * (the ownership check over its data) otherwise. A worker's call is also where the world may slip in a client's write
 * (the network does not order a copy's calls and the clients' writes), and where the checks look at what a delete
 * takes away.
 */
final class SimNodeStore implements Store {
  private final World w;
  private final String caller;
  private final String nodeId;
  private final boolean worker;

  SimNodeStore(World w, String caller, String nodeId) {
    this.w = w;
    this.caller = caller;
    this.nodeId = nodeId;
    this.worker = caller.startsWith("worker-");
  }

  private Store target() {
    SimNode node = w.nodes.get(nodeId);
    if (node == null || node.lost) {
      throw World.unavailable(caller, nodeId, "no such node (lost)");
    }
    if (!node.up) {
      throw World.unavailable(caller, nodeId, "the node is down");
    }
    if (!w.reaches(caller, nodeId)) {
      throw World.unavailable(caller, nodeId, "network partition");
    }
    if (worker) {
      w.interleave();
      if (!node.up) {
        throw World.unavailable(caller, nodeId, "the node is down");
      }
    }
    return node.checked;
  }

  @Override
  public NodeInfo info() {
    return target().info();
  }

  @Override
  public long latestSequence() {
    return target().latestSequence();
  }

  @Override
  public WriteResult put(byte[] key, byte[] value, long epoch) {
    return target().put(key, value, epoch);
  }

  @Override
  public WriteResult delete(byte[] key, long epoch) {
    return target().delete(key, epoch);
  }

  @Override
  public WriteResult put(byte[] key, byte[] value, long epoch, Version version) {
    return counted(target().put(key, value, epoch, version));
  }

  @Override
  public WriteResult delete(byte[] key, long epoch, Version version) {
    return counted(target().delete(key, epoch, version));
  }

  /** Counts a client write refused by a fence that a staged epoch's copies should not have taken yet. */
  private WriteResult counted(WriteResult result) {
    if (result instanceof WriteResult.RetryWithEpoch retry && w.checks.refusedBeforeStage1(retry.epoch())) {
      w.count("writes refused at a fence of a staged epoch before its stage 1 converged");
    }
    return result;
  }

  @Override
  public Optional<byte[]> get(byte[] key) {
    return target().get(key);
  }

  @Override
  public RangeScan scan(RingRange range, Cursor after) {
    return target().scan(range, after);
  }

  @Override
  public ChangeFeed changesIn(List<RingRange> ranges, long afterSequence) {
    return target().changesIn(ranges, afterSequence);
  }

  @Override
  public long apply(List<Entry> entries) {
    return target().apply(entries);
  }

  @Override
  public LoadResult load(Iterator<Entry> entries) {
    return target().load(entries);
  }

  @Override
  public RangeDigest digest(RingRange range) {
    return target().digest(range);
  }

  @Override
  public Fence fence(RingRange range, long epoch) {
    return target().fence(range, epoch);
  }

  @Override
  public List<Fence> fences() {
    return target().fences();
  }

  @Override
  public void unfence(RingRange range, long epoch) {
    target().unfence(range, epoch);
  }

  @Override
  public long deleteRange(RingRange range, long epoch) {
    Store store = target();
    List<Entry> before = w.nodes.get(nodeId).state.entries(range);
    long deleted = store.deleteRange(range, epoch);
    if (deleted > 0) {
      w.checks.deleted(nodeId, range, epoch, before, byCleanup());
    }
    return deleted;
  }

  /**
   * Whether the worker's call comes from a CLEANUP run (rather than a copy clearing its target, which a re-join does
   * by design inside the grace period of the node's earlier drain): the run's class is on this single thread's stack.
   */
  private static boolean byCleanup() {
    return StackWalker.getInstance().walk(frames -> frames.anyMatch(
        f -> f.getClassName().equals("io.ringshift.worker.internal.CleanupRun")));
  }

  @Override
  public void close() {
    // The connection of one caller: nothing to release.
  }
}
