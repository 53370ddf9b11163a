package io.ringshift.storage;

import io.ringshift.ring.ReplicaSet;
import io.ringshift.ring.RingRange;
import io.ringshift.ring.RingSnapshot;
import io.ringshift.storage.internal.Checks;
import java.util.List;

/**
 * A node's {@link Store} that refuses client writes for ranges the node no longer replicates: the storage node's
 * half of "a stale client converges instead of writing to the wrong place" (docs/storage.md, "Ownership").
 *
 * <p>The rule, for a {@link #put} or {@link #delete} tagged with epoch {@code e}, against the ring {@code C} the
 * {@link RingView} holds: when {@code C.epoch() > e} and this node is not one of the key's replicas in {@code C},
 * the write is refused with {@link WriteResult.RetryWithEpoch} at {@code C.epoch()}, reason
 * {@link WriteResult.Reason#NOT_A_REPLICA}, naming the ring range of the key in {@code C}, and nothing is written.
 * Every other write goes to the wrapped store, whose fences still apply: writes tagged with {@code C.epoch()} or
 * later (a client ahead of the node), writes for keys the node still replicates, and every write while the view
 * has no ring yet.
 *
 * <p>Not restricted (forwarded as they are): reads ({@link #get}, scans, feeds, digests), and {@link #apply}
 * and {@link #load}, migration's own writes: a worker fills a new replica before the ring names it. {@link #deleteRange} is checked
 * by its own rule (refused while the node's ring, of that epoch or later, makes it a replica of the range). A client write call added
 * to {@link Store} must be checked here too.
 *
 * <p>Why beside the fences and not instead of them: a fence refuses older epochs while a range moves, from before
 * the move's verification until the worker lifts it; the ownership check refuses them from the moment the node
 * routes by the new ring, for as long as it does. Together a stale writer is refused before, during and after
 * the move. The check and the write are not atomic with a swap of the view; a write checked an instant before the
 * swap lands as it would have a moment earlier, which the move's fence covers.
 *
 * <p>A write the view lets through costs one volatile read (and, for an older epoch, one ring lookup); it allocates
 * nothing. Input is checked first, so a bad key, value or epoch is {@link StoreException.BadRequest} whatever the
 * ring says. Thread safe when the wrapped store and the view are.
 */
public final class OwnershipCheckedStore extends ForwardingStore {
  private final RingView view;
  private final String nodeId;
  /** Whether a new ring starts a prune of the fences on the shared pruner thread; else the owner calls prune itself. */
  private final boolean prunesInBackground;
  /** See {@link #lastUnversionedWriteMillis()}. */
  private volatile long unversionedAt = -1;

  private OwnershipCheckedStore(Store delegate, RingView view, String nodeId, boolean prunesInBackground) {
    super(delegate);
    this.view = view;
    this.nodeId = nodeId;
    this.prunesInBackground = prunesInBackground;
  }

  /**
   * As {@link #wrap}, but a new ring starts no prune on a background thread: the owner calls {@link #pruneFences()}
   * itself when its ring changes. For a caller that runs everything on one thread (the deterministic simulation).
   */
  public static OwnershipCheckedStore wrapPrunedByCaller(Store store, RingView view) {
    return new OwnershipCheckedStore(store, view, wrap(store, view).nodeId, false); // wrap checks the arguments
  }

  /**
   * Wraps {@code store}, whose node id ({@link Store#info()}, asked once, now) is the member id the ring must give
   * this node. Closing the returned store closes {@code store}.
   *
   * @throws IllegalArgumentException when the store or the view is null
   */
  public static OwnershipCheckedStore wrap(Store store, RingView view) {
    if (store == null || view == null) {
      throw new IllegalArgumentException("an ownership-checked store needs a store and a ring view; was store "
          + store + ", view " + view + " (use RingView.none() for a node without a ring)");
    }
    return new OwnershipCheckedStore(store, view, store.info().nodeId(), true);
  }

  /** The member id this store checks ownership for. */
  public String nodeId() {
    return nodeId;
  }

  /** The epoch of the ring this store checks ownership by now, or -1 while it has none. */
  public long ringEpoch() {
    RingSnapshot ring = view.current();
    return ring == null ? -1 : ring.epoch();
  }

  /**
   * The refusal of a write of {@code key} tagged with {@code epoch} by {@code ring}, or {@code null} when it may go to
   * the store. The caller reads the view once, so the bound, the epoch and the placement come from the same ring.
   */
  private WriteResult.RetryWithEpoch refusal(RingSnapshot ring, byte[] key, long epoch) {
    if (ring == null || ring.epoch() <= epoch) {
      return null;
    }
    long position = ring.position(key);
    int range = ring.rangeOf(position);
    ReplicaSet replicas = ring.replicasOfRange(range);
    if (replicas.contains(nodeId)) {
      return null;
    }
    return new WriteResult.RetryWithEpoch(ring.epoch(), RingRange.of(ring.rangeStart(range), ring.rangeEnd(range)),
        WriteResult.Reason.NOT_A_REPLICA);
  }

  /**
   * Epochs a fence may be ahead of the node's ring: the epoch in flight is normally the ring's next, but after the
   * publisher rejects an epoch the orchestrator plans again under numbers it never used (docs/orchestrator.md), and a
   * failure epoch may be published just before; each rollback skips a few numbers.
   */
  public static final long FENCE_EPOCHS_AHEAD = 64;

  /**
   * Refuses {@code what} tagged with {@code epoch} when it is more than {@code ahead} beyond the node's ring: a
   * client writes with a published epoch, the node's ring or its next (a client that swapped first); a worker fences
   * at the epoch in flight, at most {@link #FENCE_EPOCHS_AHEAD} beyond. Without a ring the node bounds nothing.
   */
  private void bounded(RingSnapshot ring, Object what, long epoch, long ahead) {
    if (ring != null && epoch > ring.epoch() + ahead) {
      // The message is built only on a refusal: a write that passes allocates nothing.
      String described = what instanceof byte[] key ? "write of key " + Checks.preview(key) : what.toString();
      throw new StoreException.EpochAhead(String.format(java.util.Locale.ROOT,
          "%s at epoch %d refused, nothing changed: this node (%s) routes by the ring of epoch %d, and only epochs up "
              + "to %d can be in use; retry once the node has the newer ring", described, epoch,
          nodeId, ring.epoch(), ring.epoch() + ahead));
    }
  }

  /** The ring the node routes by, read once per call; a new one starts a prune of the fences. */
  private RingSnapshot ring() {
    return pruned(view.current());
  }

  /** {@code ring}, after starting a prune of the fences when it is newer than the last prune's. */
  private RingSnapshot pruned(RingSnapshot ring) {
    if (prunesInBackground && ring != null && ring.epoch() > prunedAt.get()) {
      schedulePrune(ring.epoch());
    }
    return ring;
  }

  @Override
  public Fence fence(RingRange range, long epoch) {
    Checks.range(range);
    Checks.epoch(epoch);
    bounded(ring(), "fence of " + range, epoch, FENCE_EPOCHS_AHEAD); // fences are rare: the text may be built
    return delegate.fence(range, epoch);
  }

  @Override
  public WriteResult put(byte[] key, byte[] value, long epoch) {
    Checks.put(key, value, epoch);
    unversionedAt = System.currentTimeMillis();
    WriteResult.RetryWithEpoch refused = refusal(key, epoch);
    return refused != null ? refused : delegate.put(key, value, epoch);
  }

  @Override
  public WriteResult delete(byte[] key, long epoch) {
    Checks.delete(key, epoch);
    unversionedAt = System.currentTimeMillis();
    WriteResult.RetryWithEpoch refused = refusal(key, epoch);
    return refused != null ? refused : delegate.delete(key, epoch);
  }

  @Override
  public WriteResult put(byte[] key, byte[] value, long epoch, Version version) {
    Checks.put(key, value, epoch, version);
    WriteResult.RetryWithEpoch refused = refusal(key, epoch);
    return refused != null ? refused : delegate.put(key, value, epoch, version);
  }

  @Override
  public WriteResult delete(byte[] key, long epoch, Version version) {
    Checks.delete(key, epoch, version);
    WriteResult.RetryWithEpoch refused = refusal(key, epoch);
    return refused != null ? refused : delegate.delete(key, epoch, version);
  }

  /**
   * When this node last took a client write without a version, in milliseconds since the epoch, or -1 if never since
   * it started: such a writer predates versions and cannot follow transition stages, so the node reports it and the
   * cluster keeps the fence at cutover while it writes (docs/protocol.md, "Fallback").
   */
  public long lastUnversionedWriteMillis() {
    return unversionedAt;
  }

  /**
   * The answer to a client write of {@code key} tagged {@code epoch} under the rule above, or null to let it through;
   * allocates nothing on the way through (a write the check lets pass costs no garbage).
   */
  private WriteResult.RetryWithEpoch refusal(byte[] key, long epoch) {
    RingView.RoutedRings rings = view.rings();
    RingSnapshot ring = rings == null ? ring() : pruned(rings.ring());
    bounded(ring, key, epoch, 1);
    // While a transition still reads the previous ring, a write of an older epoch is judged by that ring: a client that
    // has not reached the first stage yet writes the previous ring's replicas, and they take it.
    return refusal(rings != null && rings.readsPrevious() ? rings.previous() : ring, key, epoch);
  }

  /**
   * Deletes the range for epoch {@code epoch} in pieces, checking before each piece that the node's ring, of that
   * epoch or a later one, does not make it a replica of the range (see {@link Store#deleteRange}): a FAIL published
   * while a cleanup of an earlier epoch runs can make the node a (filling) replica of the range again, and the rest of
   * the delete would then remove what a repair copies and clients write there. Refused with
   * {@link StoreException.Refused} naming the epochs and the first such position; what was deleted before stays
   * deleted (it was this epoch's to delete).
   */
  @Override
  public long deleteRange(RingRange range, long epoch) {
    Checks.range(range);
    Checks.epoch(epoch);
    long deleted = 0;
    for (RingRange piece : range.split(DELETE_PIECES)) {
      String replica = replicaAfter(piece, epoch);
      if (replica != null) {
        throw new StoreException.Refused(String.format(java.util.Locale.ROOT,
            "range delete of %s for epoch %d refused%s: %s", range, epoch,
            deleted > 0 ? " after deleting " + deleted + " keys" : ", nothing deleted", replica));
      }
      deleted += delegate.deleteRange(piece, epoch);
    }
    return deleted;
  }

  /** The ring epoch the fences were last pruned for (a prune runs once per new ring the node routes by). */
  private final java.util.concurrent.atomic.AtomicLong prunedAt = new java.util.concurrent.atomic.AtomicLong(-1);

  /** Prunes on a daemon thread shared by every store of the process, off the write path. */
  private static final java.util.concurrent.ExecutorService PRUNER = java.util.concurrent.Executors
      .newSingleThreadExecutor(r -> {
        Thread t = new Thread(r, "ringshift-fence-pruner");
        t.setDaemon(true);
        return t;
      });

  private void schedulePrune(long epoch) {
    long seen = prunedAt.get();
    if (epoch > seen && prunedAt.compareAndSet(seen, epoch)) {
      try {
        PRUNER.execute(() -> {
          try {
            pruneFences();
          } catch (RuntimeException e) {
            org.slf4j.LoggerFactory.getLogger(OwnershipCheckedStore.class).warn("{}: pruning fences failed: {}",
                nodeId, e.toString());
          }
        });
      } catch (java.util.concurrent.RejectedExecutionException e) {
        prunedAt.set(seen); // try again on a later write
      }
    }
  }

  /**
   * Lifts the fences that refuse nothing the node's ring does not refuse already, and returns how many it lifted.
   * With the node routing by the ring of epoch P, a fence of range r at epoch e is lifted when e <= P and
   * <ul>
   *   <li>the node replicates no position of r in ring P: the ownership check refuses every write of an epoch below P
   *       to those keys, a superset of what the fence refuses (epochs below e); or
   *   <li>newer fences of published epochs (above e, at most P) cover all of r: they refuse a superset too, and stay
   *       (a fence of an epoch in flight does not count: a superseded plan's fences are lifted).
   * </ul>
   * Kept: fences at epochs above P (their epoch is not published yet: the move is in flight), and fences on ranges
   * the node still replicates and no newer fence covers. Those last ones still refuse a client of an older epoch
   * that writes only to nodes that are replicas in both rings, which matters when the older ring had fewer
   * replicas for the range than the new one (a cluster grown from fewer than R nodes): without the fence such a
   * write could be acknowledged while the added replica misses it. They go once a newer fence covers them or the
   * node stops replicating the range. Runs by itself once per new ring the node routes by; callable directly.
   */
  public int pruneFences() {
    // The ring older-epoch writes are judged by: in a transition that still reads the previous ring, that ring (the
    // fences of the transition's epoch refuse what the ownership check lets through then, and must stay).
    RingView.RoutedRings rings = view.rings();
    RingSnapshot ring = rings != null && rings.readsPrevious() ? rings.previous() : view.current();
    if (ring == null) {
      return 0;
    }
    List<Fence> fences = delegate.fences();
    int lifted = 0;
    for (Fence f : fences) {
      if (f.epoch() > ring.epoch()) {
        continue;
      }
      boolean redundant = replicatedRange(f.range(), ring) < 0;
      if (!redundant) {
        List<RingRange> newer = new java.util.ArrayList<>();
        for (Fence g : fences) {
          // Only fences of published epochs count: one of an epoch in flight may still be lifted (a superseded plan).
          if (g.epoch() > f.epoch() && g.epoch() <= ring.epoch()) {
            newer.add(g.range());
          }
        }
        redundant = !newer.isEmpty() && f.range().firstGap(newer).isEmpty();
      }
      if (redundant) {
        delegate.unfence(f.range(), f.epoch());
        lifted++;
      }
    }
    return lifted;
  }

  /** Pieces a range delete is checked in. */
  private static final int DELETE_PIECES = 64;

  /** Why the node is a replica of part of {@code range} in a ring later than {@code epoch}; null when it is not. */
  private String replicaAfter(RingRange range, long epoch) {
    RingView.RoutedRings rings = view.rings();
    if (rings == null || rings.previous() == null) {
      return replicaAfter(range, epoch, view.current());
    }
    // In a transition, readers read the previous ring (and, once reads moved to the new ring, stragglers still may):
    // what either ring makes this node a replica of must stay. While reads go to the previous ring only, the new
    // ring's replicas are pending, and a copy of the transition's epoch clears its target there before it copies.
    // The previous ring is checked for any delete of the transition's epoch or an earlier one (its own epoch is older
    // than the transition's, so the rule by epoch alone would let a delete of the transition's epoch through).
    if (rings.ring().epoch() >= epoch) {
      int r = replicatedRange(range, rings.previous());
      if (r >= 0) {
        RingSnapshot previous = rings.previous();
        return "this node (" + nodeId + ") routes by a transition to epoch " + rings.ring().epoch() + " from epoch "
            + previous.epoch() + ", in which it is a replica of " + RingRange.of(previous.rangeStart(r),
            previous.rangeEnd(r)) + ", which overlaps it; readers of that ring may still read it";
      }
    }
    return rings.readsPrevious() ? null : replicaAfter(range, epoch, rings.ring());
  }

  private String replicaAfter(RingRange range, long epoch, RingSnapshot ring) {
    // The ring's own epoch counts too: a delete of that epoch is a cleanup of what the node lost in it, never of what
    // it replicates (a copy of that epoch clearing its target after the epoch was published would be a stale run).
    if (ring == null || ring.epoch() < epoch) {
      return null;
    }
    int r = replicatedRange(range, ring);
    return r < 0 ? null : "this node (" + nodeId + ") routes by the ring of epoch " + ring.epoch() + ", in which it is "
        + "a replica of " + RingRange.of(ring.rangeStart(r), ring.rangeEnd(r)) + ", which overlaps it; that epoch's "
        + "copy must stay";
  }

  /**
   * The first range of {@code ring} from {@code range}'s start that overlaps {@code range} and that this node
   * replicates, or -1. The empty range between two equal tokens, which no lookup lands in, does not count.
   */
  private int replicatedRange(RingRange range, RingSnapshot ring) {
    return ring.firstReplicatedRange(range, nodeId);
  }

  @Override
  public String toString() {
    return "OwnershipCheckedStore[" + nodeId + ", " + delegate + "]";
  }
}
