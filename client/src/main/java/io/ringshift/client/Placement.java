package io.ringshift.client;

import io.ringshift.ring.Member;
import java.util.ArrayList;
import java.util.List;

/**
 * Where the keys of one ring range live, in one epoch: the owners in preference order (the primary first) and
 * the owners that reads may use.
 *
 * <p>Built once per ring range when {@link RingClient} swaps to a snapshot, so a lookup returns an existing
 * instance and allocates nothing. Immutable and safe to share between threads; a placement stays valid for
 * its epoch after the client has moved on, so a request can finish with the placement it started with.
 *
 * <p>Writes go to every {@linkplain #owners() owner}. Reads go to the {@linkplain #readable() read-eligible
 * owners}: the owners minus members in state {@code FILLING} and minus the replicas the snapshot marks as
 * filling on this range (a failure epoch's repair targets, which do not hold the range's data yet). A mark
 * that covers only part of the range excludes its node from the whole range, the safe side. The read-eligible
 * list can be empty (every owner of the range is being filled); routing reads then is the store's business.
 *
 * <p>In a transition stage (docs/protocol.md, "Transition stages") a placement is of a piece of the ring where the
 * replica sets of both rings are constant: the owners are the replicas of both (the new ring's first), the readable
 * ones those of the previous ring ({@code WRITE_BOTH_READ_OLD}) or of the new one ({@code WRITE_BOTH_READ_NEW}). A
 * write waits for every owner of both rings: a reader of the neighbouring stage may read any of them.
 */
public final class Placement {
  private final long epoch;
  private final long rangeStart;
  private final long rangeEnd;
  private final List<Member> owners;
  private final List<Member> readable;
  private final boolean moving;

  Placement(long epoch, long rangeStart, long rangeEnd, List<Member> owners, List<Member> readable) {
    this(epoch, rangeStart, rangeEnd, owners, readable, false);
  }

  Placement(long epoch, long rangeStart, long rangeEnd, List<Member> owners, List<Member> readable,
      boolean moving) {
    this.moving = moving;
    this.epoch = epoch;
    this.rangeStart = rangeStart;
    this.rangeEnd = rangeEnd;
    this.owners = owners;
    this.readable = readable;
  }

  /** The epoch of the snapshot this placement was computed from. */
  public long epoch() {
    return epoch;
  }

  /** Exclusive start of the ring range, an unsigned token. */
  public long rangeStart() {
    return rangeStart;
  }

  /** Inclusive end of the ring range, an unsigned token. */
  public long rangeEnd() {
    return rangeEnd;
  }

  /** The owners in preference order, primary first: an immutable list, the same instance on every call. */
  public List<Member> owners() {
    return owners;
  }

  /** The primary owner. */
  public Member primary() {
    return owners.get(0);
  }

  /** Number of owners: the replication factor unless the ring has fewer nodes. */
  public int ownerCount() {
    return owners.size();
  }

  /** Owner {@code i} in preference order. */
  public Member owner(int i) {
    return owners.get(i);
  }

  /**
   * The owners reads may use, in preference order: an immutable list, the same instance on every call. It is
   * the {@link #owners()} instance itself when every owner is read-eligible.
   */
  public List<Member> readable() {
    return readable;
  }

  /** Number of read-eligible owners. */
  public int readableCount() {
    return readable.size();
  }

  /** Read-eligible owner {@code i} in preference order. */
  public Member readable(int i) {
    return readable.get(i);
  }

  /** Whether a transition moves this piece of the ring: the replica sets of its two rings differ. */
  public boolean moving() {
    return moving;
  }

  /** The owners' ids in preference order (a new list: not for the request path). */
  public List<String> ownerIds() {
    return ids(owners);
  }

  /** The read-eligible owners' ids in preference order (a new list: not for the request path). */
  public List<String> readableIds() {
    return ids(readable);
  }

  private static List<String> ids(List<Member> members) {
    List<String> ids = new ArrayList<>(members.size());
    for (Member m : members) {
      ids.add(m.id());
    }
    return List.copyOf(ids);
  }

  @Override
  public String toString() {
    return "Placement{epoch=" + epoch + ", range=(" + Long.toUnsignedString(rangeStart) + ", "
        + Long.toUnsignedString(rangeEnd) + "], owners=" + ownerIds() + ", readable=" + readableIds()
        + (moving ? ", moving" : "") + "}";
  }
}
