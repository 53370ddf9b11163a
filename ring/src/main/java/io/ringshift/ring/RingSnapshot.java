package io.ringshift.ring;

import io.ringshift.ring.internal.CanonicalEncoding;
import io.ringshift.ring.internal.TokenTable;
import io.ringshift.ring.internal.Utf8Scratch;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HexFormat;
import java.util.List;

/**
 * An immutable, versioned placement of keys on a consistent-hash ring of virtual nodes.
 *
 * <p>Design: the snapshot holds the members (sorted by id), the token table in ring order, and the replica set
 * of every range precomputed at build time. Range {@code r} is {@code (token[r-1], token[r]]}, and range 0
 * wraps: {@code (token[n-1], token[0]]}. A lookup hashes the key (XXH3-64, seed 0, UTF-8), finds the first
 * token at or after the position through a bucket index (see {@link TokenTable}) and returns the precomputed
 * {@link ReplicaSet}: one search for the primary or for all R replicas, no allocation, no lock. The exact
 * rules, and the canonical encoding behind {@link #checksum()}, are in docs/placement.md.
 *
 * <p>Instances are safe to share between threads without synchronisation.
 */
public final class RingSnapshot {
  /** The policy id of the default, hashed policy ({@link PlacementPolicy#HASHED}); part of the checksum. */
  public static final String POLICY_ID = PlacementPolicy.HASHED.id();

  private final String clusterId;
  private final long epoch;
  private final RingHash hash;
  private final PlacementPolicy policy;
  private final int vnodes;
  private final int replicas;
  private final Member[] members;
  private final int[] tokenCounts;
  private final String[] zones;
  private final TokenTable table;
  private final ReplicaSet[] replicaSets;
  /** Member indexes of every range's replicas, {@code replicasPerRange} per range, in range order. */
  private final int[] replicaTable;
  private final int replicasPerRange;
  /** The member of each token, so that a primary lookup needs no second indirection. */
  private final Member[] tokenMembers;
  private final List<UnderReplication> underReplication;
  private final byte[] checksum;

  RingSnapshot(
      String clusterId,
      long epoch,
      RingHash hash,
      PlacementPolicy policy,
      int vnodes,
      int replicas,
      Member[] members,
      int[] tokenCounts,
      String[] zones,
      TokenTable table,
      ReplicaSet[] replicaSets) {
    this.clusterId = clusterId;
    this.epoch = epoch;
    this.hash = hash;
    this.policy = policy;
    this.vnodes = vnodes;
    this.replicas = replicas;
    this.members = members;
    this.tokenCounts = tokenCounts;
    this.zones = zones;
    this.table = table;
    this.replicaSets = replicaSets;
    this.replicaTable = replicaSets[0].replicaTable();
    this.replicasPerRange = Math.min(replicas, members.length);
    this.tokenMembers = new Member[table.size()];
    for (int i = 0; i < tokenMembers.length; i++) {
      tokenMembers[i] = members[table.owners[i]];
    }
    this.underReplication = summarizeUnderReplication();
    this.checksum = computeChecksum();
  }

  /** A builder with the defaults documented on {@link RingBuilder}. */
  public static RingBuilder builder() {
    return new RingBuilder();
  }

  /**
   * A builder holding this snapshot's cluster, epoch, parameters, hash, policy and members, and under the balanced
   * policy every member's tokens: changing the members and building gives the next ring of the same policy.
   */
  public RingBuilder toBuilder() {
    RingBuilder builder = new RingBuilder()
        .clusterId(clusterId)
        .epoch(epoch)
        .vnodes(vnodes)
        .replicas(replicas)
        .hash(hash)
        .policy(policy)
        .members(Arrays.asList(members));
    return policy == PlacementPolicy.BALANCED ? builder.tokensFrom(this) : builder;
  }

  // ---- identity and parameters ----

  public String clusterId() {
    return clusterId;
  }

  public long epoch() {
    return epoch;
  }

  /** The ring hash; its {@link RingHash#id()} is part of the checksum. */
  public RingHash hash() {
    return hash;
  }

  public String hashId() {
    return hash.id();
  }

  public String policyId() {
    return policy.id();
  }

  /** How the tokens were chosen; its id is part of the checksum. */
  public PlacementPolicy policy() {
    return policy;
  }

  /** Tokens per unit of weight. */
  public int vnodes() {
    return vnodes;
  }

  /** The replication factor R. */
  public int replicas() {
    return replicas;
  }

  /** SHA-256 over the canonical encoding (docs/placement.md); a copy. */
  public byte[] checksum() {
    return checksum.clone();
  }

  public String checksumHex() {
    return HexFormat.of().formatHex(checksum);
  }

  // ---- members ----

  /** Members sorted by id (UTF-8 byte order). */
  public List<Member> members() {
    return Collections.unmodifiableList(Arrays.asList(members));
  }

  public int memberCount() {
    return members.length;
  }

  /** The member with that id, or {@code null}. */
  public Member member(String id) {
    int i = memberIndex(id);
    return i < 0 ? null : members[i];
  }

  /** Index of the member in {@link #members()}, or -1. */
  public int memberIndex(String id) {
    for (int i = 0; i < members.length; i++) {
      if (members[i].id().equals(id)) {
        return i;
      }
    }
    return -1;
  }

  /** Number of tokens of member {@code i} (in {@link #members()} order). */
  public int tokenCount(int memberIndex) {
    return tokenCounts[memberIndex];
  }

  /** The tokens of member {@code memberIndex} (in {@link #members()} order), token {@code i} at index i; a copy. */
  public long[] tokensOf(int memberIndex) {
    return tokensByMember()[memberIndex];
  }

  /** The tokens of every member, in {@link #members()} order, each in index order; new arrays. */
  public long[][] tokensByMember() {
    long[][] byMember = new long[members.length][];
    for (int m = 0; m < members.length; m++) {
      byMember[m] = new long[tokenCounts[m]];
    }
    for (int i = 0; i < table.size(); i++) {
      byMember[table.owners[i]][table.indexes[i]] = table.tokens[i];
    }
    return byMember;
  }

  /** Distinct zones, sorted. */
  public List<String> zones() {
    return List.of(zones);
  }

  /** Ranges short of the replication factor, grouped by reason; empty when fully replicated. */
  public List<UnderReplication> underReplication() {
    return underReplication;
  }

  // ---- tokens and ranges ----

  /** Number of tokens, which is also the number of ranges. */
  public int tokenCount() {
    return table.size();
  }

  /** Token {@code i} in ring order (compare unsigned). */
  public long token(int i) {
    return table.tokens[i];
  }

  /** Member index owning token {@code i}. */
  public int tokenOwner(int i) {
    return table.owners[i];
  }

  /** Index of token {@code i} within its member ({@code i} in {@code id + "#" + i}). */
  public int tokenIndexWithinMember(int i) {
    return table.indexes[i];
  }

  /** Exclusive start of range {@code r}: the previous token, wrapping. */
  public long rangeStart(int r) {
    return table.tokens[r == 0 ? table.size() - 1 : r - 1];
  }

  /** Inclusive end of range {@code r}: token {@code r}. */
  public long rangeEnd(int r) {
    return table.tokens[r];
  }

  /**
   * Fraction of the keyspace covered by range {@code r}, in [0, 1]. A ring of one token has one range, the
   * whole ring; a range between two equal (colliding) tokens is empty.
   */
  public double rangeFraction(int r) {
    long start = rangeStart(r);
    long end = rangeEnd(r);
    if (start == end) {
      // token[r-1] == token[r]: for r = 0 that means every token is equal and range 0 is the whole ring.
      return r == 0 ? 1.0 : 0.0;
    }
    return RingRange.of(start, end).fraction();
  }

  /** Replica set of range {@code r}. */
  public ReplicaSet replicasOfRange(int r) {
    return replicaSets[r];
  }

  /**
   * The first range of this ring, walking from {@code range}'s start, that overlaps {@code range} and whose replicas
   * include {@code memberId}; -1 when there is none. The empty range between two equal tokens does not count (no
   * lookup lands in one). One search, then a walk over the ranges that overlap {@code range} only, so the cost is
   * that of the overlap, not of the ring (a storage node asks this for every piece of every range it deletes).
   */
  public int firstReplicatedRange(RingRange range, String memberId) {
    int n = tokenCount();
    int r = range.isWhole() ? 0 : rangeOf(range.start() + 1); // the range holding the first position of range
    for (int visited = 0; visited < n; visited++, r = r + 1 == n ? 0 : r + 1) {
      long end = rangeEnd(r);
      boolean empty = rangeStart(r) == end && n > 1;
      if (!empty && replicaSets[r].contains(memberId)) {
        return r;
      }
      // The next ring range overlaps too only while this one ends inside range, before its end.
      if (!range.isWhole() && (end == range.end() || !range.contains(end))) {
        return -1;
      }
    }
    return -1;
  }

  /** Bytes of the token table, bucket index and replica table held in memory (approximate). */
  public long footprintBytes() {
    return table.footprintBytes() + 4L * tokenMembers.length + 40L * replicaSets.length
        + 8L * replicas * replicaSets.length;
  }

  // ---- lookups: allocation-free and lock-free ----

  /** Position of a key on the ring: the ring hash of its bytes. */
  public long position(byte[] key) {
    return hash.hash(key, 0, key.length);
  }

  /**
   * Position of a key on the ring: the ring hash of its UTF-8 bytes. Keys up to {@value
   * Utf8Scratch#MAX_RETAINED_CHARS} characters are encoded into a per-thread buffer and allocate nothing; longer
   * keys are encoded into a new array. {@link #position(byte[])} is the zero-cost path for callers that already
   * hold bytes.
   */
  public long position(CharSequence key) {
    if (key.length() > Utf8Scratch.MAX_RETAINED_CHARS) {
      byte[] bytes = key.toString().getBytes(java.nio.charset.StandardCharsets.UTF_8);
      return hash.hash(bytes, 0, bytes.length);
    }
    Utf8Scratch scratch = Utf8Scratch.get();
    int length = scratch.encode(key);
    return hash.hash(scratch.bytes(), 0, length);
  }

  /** The range containing a position: the first token at or after it, wrapping to range 0. */
  public int rangeOf(long position) {
    return table.lowerBound(position);
  }

  /** Replicas, in preference order, of the range containing the position. */
  public ReplicaSet replicasAt(long position) {
    return replicaSets[table.lowerBound(position)];
  }

  /** Replicas of a key, in preference order; one search. */
  public ReplicaSet replicasOf(byte[] key) {
    return replicasAt(position(key));
  }

  /** Replicas of a key (hashed as UTF-8), in preference order; one search. */
  public ReplicaSet replicasOf(CharSequence key) {
    return replicasAt(position(key));
  }

  /** Primary owner of a key: the member of the first token at or after its position. */
  public Member ownerOf(byte[] key) {
    return tokenMembers[table.lowerBound(position(key))];
  }

  /** Primary owner of a key hashed as UTF-8. */
  public Member ownerOf(CharSequence key) {
    return tokenMembers[table.lowerBound(position(key))];
  }

  /**
   * Replica {@code i} (preference order) of range {@code range}, read from the flat replica table: the cheapest
   * way to walk the replicas of a looked-up range ({@link #rangeOf(long)}), since the table (4 bytes per
   * replica) is far more compact in cache than the per-range {@link ReplicaSet} objects.
   *
   * @throws IndexOutOfBoundsException when {@code i} is not below {@code min(R, nodes)} or the range is unknown
   */
  public Member replica(int range, int i) {
    if (i >= replicasPerRange || i < 0) {
      throw new IndexOutOfBoundsException("replica " + i + " of ranges with " + replicasPerRange + " replicas");
    }
    return members[replicaTable[range * replicasPerRange + i]];
  }

  /** Replicas per range: {@code min(R, nodes)}. */
  public int replicasPerRange() {
    return replicasPerRange;
  }

  /** Differences from this snapshot to a later one. */
  public RingDiff diffTo(RingSnapshot next) {
    return RingDiff.between(this, next);
  }

  // ---- derived at build time ----

  private List<UnderReplication> summarizeUnderReplication() {
    UnderReplication.Reason reason = replicaSets[0].shortfall();
    if (reason == null) {
      return List.of();
    }
    String detail =
        reason == UnderReplication.Reason.FEWER_NODES_THAN_REPLICAS
            ? String.format("%d replicas requested but only %d node%s", replicas, members.length,
                members.length == 1 ? "" : "s")
            : String.format("%d replicas requested but only %d zones %s", replicas, zones.length, List.of(zones));
    return List.of(new UnderReplication(reason, replicaSets.length, 1.0, detail));
  }

  private byte[] computeChecksum() {
    CanonicalEncoding out = new CanonicalEncoding();
    out.putString(CanonicalEncoding.FORMAT)
        .putString(clusterId)
        .putLong(epoch)
        .putString(hash.id())
        .putString(policy.id())
        .putInt(vnodes)
        .putInt(replicas)
        .putInt(members.length);
    for (int i = 0; i < members.length; i++) {
      Member m = members[i];
      out.putString(m.id()).putString(m.zone()).putDouble(m.weight()).putString(m.state().name());
      out.putInt(tokenCounts[i]);
    }
    int n = table.size();
    out.putInt(n);
    for (int i = 0; i < n; i++) {
      out.putLong(table.tokens[i]).putInt(table.owners[i]).putInt(table.indexes[i]);
    }
    for (int r = 0; r < n; r++) {
      ReplicaSet set = replicaSets[r];
      out.putByte(set.size());
      for (int j = 0; j < set.size(); j++) {
        out.putInt(set.memberIndex(j));
      }
    }
    return out.sha256();
  }

  /** Member ids of the snapshot, in canonical order (a new list). */
  public List<String> memberIds() {
    List<String> ids = new ArrayList<>(members.length);
    for (Member m : members) {
      ids.add(m.id());
    }
    return ids;
  }

  /**
   * Two snapshots are equal when their checksums are: the checksum covers the cluster, the epoch, the hash, the
   * policy, the parameters, every member and the whole placement.
   */
  @Override
  public boolean equals(Object other) {
    return other instanceof RingSnapshot s && java.util.Arrays.equals(checksum, s.checksum);
  }

  @Override
  public int hashCode() {
    return java.util.Arrays.hashCode(checksum);
  }

  @Override
  public String toString() {
    return "RingSnapshot{cluster=" + clusterId + ", epoch=" + epoch + ", members=" + members.length
        + ", tokens=" + table.size() + ", vnodes=" + vnodes + ", replicas=" + replicas
        + ", checksum=" + checksumHex() + "}";
  }
}
