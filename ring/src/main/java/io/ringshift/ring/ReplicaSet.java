package io.ringshift.ring;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;

/**
 * The replicas of one ring range, in preference order (the primary owner first). Built once per range when
 * the snapshot is built, so a lookup returns an existing instance and allocates nothing.
 *
 * <p>Replicas are always distinct physical nodes. When the ring has fewer nodes than the replication factor,
 * or fewer zones, the set says so through {@link #shortfall()} instead of naming a node twice.
 *
 * <p>On the hottest paths {@link RingSnapshot#replica(int, int)} reads the same replicas from the snapshot's
 * flat table, which is more compact in cache than these per-range objects.
 */
public final class ReplicaSet {
  private final Member[] members;
  /** The snapshot's flat replica table; this set's member indexes start at {@code offset}. */
  private final int[] replicaTable;
  private final int offset;
  private final Member[] readable;
  private final UnderReplication.Reason shortfall;

  ReplicaSet(Member[] members, int[] replicaTable, int offset, UnderReplication.Reason shortfall) {
    this.members = members;
    this.replicaTable = replicaTable;
    this.offset = offset;
    this.readable = allReadable(members) ? members : readableOnly(members);
    this.shortfall = shortfall;
  }

  private static boolean allReadable(Member[] members) {
    for (Member m : members) {
      if (!m.readEligible()) {
        return false;
      }
    }
    return true;
  }

  private static Member[] readableOnly(Member[] members) {
    return Arrays.stream(members).filter(Member::readEligible).toArray(Member[]::new);
  }

  /** Number of replicas: the replication factor unless the ring has fewer nodes. */
  public int size() {
    return members.length;
  }

  /** Replica {@code i} in preference order; {@code get(0)} is the primary owner. */
  public Member get(int i) {
    return members[i];
  }

  public Member primary() {
    return members[0];
  }

  /** The snapshot's flat replica table this set points into (shared, never modified). */
  int[] replicaTable() {
    return replicaTable;
  }

  /** Index of replica {@code i} in {@link RingSnapshot#members()}. */
  public int memberIndex(int i) {
    return replicaTable[offset + i];
  }

  /** Number of replicas that clients may read from (members not {@link MemberState#FILLING}). */
  public int readableSize() {
    return readable.length;
  }

  /** Read-eligible replica {@code i}, in preference order. */
  public Member readable(int i) {
    return readable[i];
  }

  /** True when the set names the member. */
  public boolean contains(String memberId) {
    for (Member m : members) {
      if (m.id().equals(memberId)) {
        return true;
      }
    }
    return false;
  }

  /** Why the set is short of the replication factor (nodes or zones), or {@code null} when it is not. */
  public UnderReplication.Reason shortfall() {
    return shortfall;
  }

  /** The members in preference order (a new list; not for the request path). */
  public List<Member> members() {
    return Collections.unmodifiableList(Arrays.asList(members.clone()));
  }

  /** The member ids in preference order (a new list; not for the request path). */
  public List<String> ids() {
    List<String> ids = new ArrayList<>(members.length);
    for (Member m : members) {
      ids.add(m.id());
    }
    return Collections.unmodifiableList(ids);
  }

  /** True when both sets name the same node ids in the same order. */
  public boolean sameIds(ReplicaSet other) {
    if (other.members.length != members.length) {
      return false;
    }
    for (int i = 0; i < members.length; i++) {
      if (!members[i].id().equals(other.members[i].id())) {
        return false;
      }
    }
    return true;
  }

  @Override
  public String toString() {
    return String.join(",", ids());
  }
}
