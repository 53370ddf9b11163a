package io.ringshift.storage;

import io.ringshift.ring.RingRange;
import java.util.List;
import java.util.Optional;

/**
 * A {@link Store} that forwards every call to another store: the base of a decorator, which overrides only the
 * calls it changes. Closing it closes the wrapped store.
 *
 * <p>A call added to {@link Store} is forwarded unchanged by every subclass; a decorator that restricts writes
 * (such as {@link OwnershipCheckedStore}) must decide about a new write call when it is added.
 */
abstract class ForwardingStore implements Store {
  /** The wrapped store, never null. */
  protected final Store delegate;

  /**
   * Forwards to {@code delegate}.
   *
   * @throws IllegalArgumentException when {@code delegate} is null
   */
  ForwardingStore(Store delegate) {
    if (delegate == null) {
      throw new IllegalArgumentException("a forwarding store needs a store to forward to; was null");
    }
    this.delegate = delegate;
  }

  @Override
  public NodeInfo info() {
    return delegate.info();
  }

  @Override
  public long latestSequence() {
    return delegate.latestSequence();
  }

  @Override
  public WriteResult put(byte[] key, byte[] value, long epoch) {
    return delegate.put(key, value, epoch);
  }

  @Override
  public WriteResult delete(byte[] key, long epoch) {
    return delegate.delete(key, epoch);
  }

  @Override
  public WriteResult put(byte[] key, byte[] value, long epoch, Version version) {
    return delegate.put(key, value, epoch, version);
  }

  @Override
  public WriteResult delete(byte[] key, long epoch, Version version) {
    return delegate.delete(key, epoch, version);
  }

  @Override
  public Optional<byte[]> get(byte[] key) {
    return delegate.get(key);
  }

  @Override
  public RangeScan scan(RingRange range, Cursor after) {
    return delegate.scan(range, after);
  }

  @Override
  public ChangeFeed changes(RingRange range, long afterSequence) {
    return delegate.changes(range, afterSequence);
  }

  @Override
  public ChangeFeed changesIn(List<RingRange> ranges, long afterSequence) {
    return delegate.changesIn(ranges, afterSequence);
  }

  @Override
  public long apply(List<Entry> entries) {
    return delegate.apply(entries);
  }

  @Override
  public LoadResult load(java.util.Iterator<Entry> entries) {
    return delegate.load(entries);
  }

  @Override
  public RangeDigest digest(RingRange range) {
    return delegate.digest(range);
  }

  @Override
  public Fence fence(RingRange range, long epoch) {
    return delegate.fence(range, epoch);
  }

  @Override
  public List<Fence> fences() {
    return delegate.fences();
  }

  @Override
  public void unfence(RingRange range, long epoch) {
    delegate.unfence(range, epoch);
  }

  @Override
  public long deleteRange(RingRange range, long epoch) {
    return delegate.deleteRange(range, epoch);
  }

  /** Closes the wrapped store. */
  @Override
  public void close() {
    delegate.close();
  }
}
