package io.ringshift.ring;

import io.ringshift.ring.internal.BalancedTokens;
import io.ringshift.ring.internal.TokenTable;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;

/**
 * Builds an immutable {@link RingSnapshot}, validating every input. Defaults: cluster {@value
 * #DEFAULT_CLUSTER}, epoch 0, {@value #DEFAULT_VNODES} tokens per unit of weight, {@value #DEFAULT_REPLICAS}
 * replicas, the XXH3 hash. Members may be added in any order: the snapshot is the same.
 *
 * <p>Not thread-safe; {@link #build()} may be called several times.
 */
public final class RingBuilder {
  public static final String DEFAULT_CLUSTER = "default";
  public static final int DEFAULT_VNODES = 256;
  public static final int DEFAULT_REPLICAS = 3;
  /**
   * Upper bound on tokens per snapshot, 2,097,152 (8x a ring of 1,000 nodes x 256): a built ring costs about
   * 100 bytes per token, so a typo or a corrupt snapshot of a few hundred bytes cannot exhaust a reader's memory.
   */
  public static final int MAX_TOKENS = 1 << 21;
  /** Upper bound on tokens x min(replicas, members): the size of the precomputed replica table. */
  public static final int MAX_REPLICA_ENTRIES = 1 << 23;
  /** Upper bound on the replication factor. */
  public static final int MAX_REPLICAS = 64;
  /** Longest accepted cluster id. */
  public static final int MAX_CLUSTER_ID_LENGTH = 256;

  private static final Comparator<String> UTF8_ORDER =
      (a, b) -> Arrays.compareUnsigned(a.getBytes(StandardCharsets.UTF_8), b.getBytes(StandardCharsets.UTF_8));

  private String clusterId = DEFAULT_CLUSTER;
  private long epoch;
  private int vnodes = DEFAULT_VNODES;
  private int replicas = DEFAULT_REPLICAS;
  private RingHash hash = RingHash.xxh3();
  private PlacementPolicy policy = PlacementPolicy.HASHED;
  private final List<Member> members = new ArrayList<>();
  private final Map<String, long[]> tokens = new HashMap<>();

  RingBuilder() {}

  public RingBuilder clusterId(String clusterId) {
    this.clusterId = clusterId;
    return this;
  }

  public RingBuilder epoch(long epoch) {
    this.epoch = epoch;
    return this;
  }

  /** Tokens per unit of weight, V: a member of weight w gets {@code round(w * V)} tokens. */
  public RingBuilder vnodes(int vnodes) {
    this.vnodes = vnodes;
    return this;
  }

  /** The replication factor R. */
  public RingBuilder replicas(int replicas) {
    this.replicas = replicas;
    return this;
  }

  /** The ring hash; production rings keep the default {@link RingHash#xxh3()}. */
  public RingBuilder hash(RingHash hash) {
    this.hash = Objects.requireNonNull(hash, "hash");
    return this;
  }

  /**
   * How tokens are chosen: {@link PlacementPolicy#HASHED} (the default) derives them from member ids, {@link
   * PlacementPolicy#BALANCED} allocates them (see {@link #tokens(String, long[])}).
   */
  public RingBuilder policy(PlacementPolicy policy) {
    this.policy = Objects.requireNonNull(policy, "policy");
    return this;
  }

  /**
   * The tokens member {@code id} already holds, in index order (balanced policy only). At build time a member keeps
   * the first {@code round(weight * V)} of them and the balanced allocator gives it the rest; a member without
   * tokens gets all of its own. So a snapshot's {@link RingSnapshot#toBuilder()} with a member added, removed or
   * reweighted builds the next ring of the balanced policy, and a ring read from the wire, with every member's
   * tokens, is rebuilt exactly. {@code null} forgets the member's tokens.
   */
  public RingBuilder tokens(String id, long[] memberTokens) {
    if (memberTokens == null) {
      tokens.remove(id);
    } else {
      tokens.put(Objects.requireNonNull(id, "id"), memberTokens.clone());
    }
    return this;
  }

  /** The tokens every member of {@code snapshot} holds, as {@link #tokens(String, long[])} gives them. */
  public RingBuilder tokensFrom(RingSnapshot snapshot) {
    long[][] byMember = snapshot.tokensByMember();
    for (int m = 0; m < byMember.length; m++) {
      tokens(snapshot.members().get(m).id(), byMember[m]);
    }
    return this;
  }

  public RingBuilder addMember(Member member) {
    if (member == null) {
      throw RingException.of("member was null; every member must be given");
    }
    members.add(member);
    return this;
  }

  public RingBuilder addMember(String id, String zone) {
    return addMember(Member.of(id, zone));
  }

  public RingBuilder addMember(String id, String zone, double weight) {
    return addMember(Member.of(id, zone, weight));
  }

  /** Replaces the members. */
  public RingBuilder members(Collection<Member> newMembers) {
    members.clear();
    newMembers.forEach(this::addMember);
    return this;
  }

  /**
   * Validates the input and builds the snapshot.
   *
   * @throws RingException when the cluster id is blank or not well-formed Unicode, the epoch negative, V &lt; 1,
   *     R &lt; 1, there are no members, two members share an id, a member's weight gives no token, or the ring
   *     would be too large
   */
  public RingSnapshot build() {
    validateParameters();
    Member[] sorted = members.toArray(Member[]::new);
    Arrays.sort(sorted, Comparator.comparing(Member::id, UTF8_ORDER));
    String[] ids = new String[sorted.length];
    int[] tokenCounts = new int[sorted.length];
    long totalTokens = 0;
    for (int i = 0; i < sorted.length; i++) {
      Member m = sorted[i];
      if (i > 0 && ids[i - 1].equals(m.id())) {
        throw RingException.of("member id \"%s\" appears twice; member ids must be unique", m.id());
      }
      ids[i] = m.id();
      long count = Math.round(m.weight() * vnodes);
      if (count < 1) {
        throw RingException.of(
            "member %s: weight %s with vnodes %d gives round(weight * vnodes) = %d tokens; every member needs "
                + "at least 1 token",
            m.id(), m.weight(), vnodes, count);
      }
      if (count > MAX_TOKENS) {
        throw RingException.of(
            "member %s: weight %s with vnodes %d gives %d tokens; a ring holds at most %d tokens",
            m.id(), m.weight(), vnodes, count, MAX_TOKENS);
      }
      tokenCounts[i] = (int) count;
      totalTokens += count;
    }
    if (totalTokens > MAX_TOKENS) {
      throw RingException.of(
          "the members need %d tokens in total; a ring holds at most %d tokens (lower vnodes or weights)",
          totalTokens, MAX_TOKENS);
    }
    long replicaEntries = totalTokens * Math.min(replicas, sorted.length);
    if (replicaEntries > MAX_REPLICA_ENTRIES) {
      throw RingException.of(
          "%d tokens x %d replicas need %d replica entries; a ring holds at most %d (lower vnodes or replicas)",
          totalTokens, Math.min(replicas, sorted.length), replicaEntries, MAX_REPLICA_ENTRIES);
    }
    Set<String> zoneSet = new TreeSet<>(UTF8_ORDER);
    for (Member m : sorted) {
      zoneSet.add(m.zone());
    }
    String[] zones = zoneSet.toArray(String[]::new);
    int[] memberZone = new int[sorted.length];
    for (int i = 0; i < sorted.length; i++) {
      memberZone[i] = Arrays.binarySearch(zones, sorted[i].zone(), UTF8_ORDER);
    }
    TokenTable table = policy == PlacementPolicy.HASHED
        ? TokenTable.generate(ids, tokenCounts, hash)
        : TokenTable.of(balancedTokens(sorted, tokenCounts, memberZone, zones));
    ReplicaSet[] sets = ReplicaPlanner.plan(table, sorted, memberZone, zones.length, replicas);
    return new RingSnapshot(clusterId, epoch, hash, policy, vnodes, replicas, sorted, tokenCounts, zones, table,
        sets);
  }

  private long[][] balancedTokens(Member[] sorted, int[] tokenCounts, int[] memberZone, String[] zones) {
    long[][] given = new long[sorted.length][];
    Map<Long, String>[] seen = newZoneMaps(zones.length);
    for (int m = 0; m < sorted.length; m++) {
      long[] held = tokens.get(sorted[m].id());
      if (held == null) {
        continue;
      }
      given[m] = Arrays.copyOf(held, Math.min(held.length, tokenCounts[m]));
      for (int i = 0; i < given[m].length; i++) {
        String before = seen[memberZone[m]].put(given[m][i], sorted[m].id() + "#" + i);
        if (before != null) {
          throw RingException.of("token %s of %s#%d is also %s in zone %s; under the balanced policy the tokens "
              + "of one zone are distinct", Long.toUnsignedString(given[m][i]), sorted[m].id(), i, before,
              zones[memberZone[m]]);
        }
      }
    }
    try {
      return BalancedTokens.allocate(tokenCounts, memberZone, zones.length, given);
    } catch (BalancedTokens.TooDenseException e) {
      throw RingException.of("%s", e.getMessage());
    }
  }

  @SuppressWarnings("unchecked")
  private static Map<Long, String>[] newZoneMaps(int count) {
    Map<Long, String>[] maps = new Map[count];
    for (int z = 0; z < count; z++) {
      maps[z] = new HashMap<>();
    }
    return maps;
  }

  private void validateParameters() {
    if (clusterId == null) {
      throw RingException.of("clusterId was missing; every ring needs a non-blank clusterId");
    }
    if (clusterId.isBlank()) {
      throw RingException.of("clusterId was \"%s\"; clusterId must not be blank", clusterId);
    }
    int bad = Member.unpairedSurrogate(clusterId);
    if (bad >= 0) {
      throw RingException.of("clusterId was \"%s\"; clusterId must be well-formed Unicode (unpaired surrogate "
          + "U+%04X at index %d)", Member.escapeSurrogates(clusterId), (int) clusterId.charAt(bad), bad);
    }
    if (clusterId.length() > MAX_CLUSTER_ID_LENGTH) {
      throw RingException.of("clusterId was %d characters long; clusterId must be at most %d characters",
          clusterId.length(), MAX_CLUSTER_ID_LENGTH);
    }
    if (epoch < 0) {
      throw RingException.of("epoch was %d; epoch must be >= 0", epoch);
    }
    if (vnodes < 1) {
      throw RingException.of("vnodes was %d; vnodes must be >= 1", vnodes);
    }
    if (replicas < 1 || replicas > MAX_REPLICAS) {
      throw RingException.of("replicas was %d; replicas must be between 1 and %d", replicas, MAX_REPLICAS);
    }
    if (members.isEmpty()) {
      throw RingException.of("members was empty; a ring needs at least one member");
    }
    Set<String> seen = new HashSet<>();
    for (Member m : members) {
      if (!seen.add(m.id())) {
        throw RingException.of("member id \"%s\" appears twice; member ids must be unique", m.id());
      }
    }
    if (policy == PlacementPolicy.HASHED && !tokens.isEmpty()) {
      throw RingException.of("tokens were given for member %s; only the balanced policy takes a member's tokens "
          + "(the hashed policy derives them from the member id)", tokens.keySet().iterator().next());
    }
  }
}
