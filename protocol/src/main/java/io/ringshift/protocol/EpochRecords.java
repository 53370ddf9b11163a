package io.ringshift.protocol;

import io.ringshift.protocol.CodecException.Reason;
import io.ringshift.ring.Member;
import io.ringshift.ring.MemberState;
import io.ringshift.ring.PlacementPolicy;
import io.ringshift.ring.RingBuilder;
import io.ringshift.ring.RingException;
import io.ringshift.ring.RingHash;
import io.ringshift.ring.RingSnapshot;
import io.ringshift.schemas.avro.EpochRecord;
import io.ringshift.schemas.avro.MemberSpec;
import io.ringshift.schemas.avro.MemberSpecState;
import io.ringshift.schemas.avro.MembershipAction;
import io.ringshift.schemas.avro.MembershipEvent;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Objects;

/**
 * The one rebuild of a ring from an {@link EpochRecord}, with the ring library alone, from the record's members and
 * parameters. The orchestrator, the publisher, audit and the admin client all rebuild epochs through here, so they
 * agree on what a record means; each still checks what it is responsible for (the publisher and audit report a
 * rebuild failure and a checksum mismatch as separate findings, which is why {@link #rebuild} does not compare
 * checksums and {@link #ring} does).
 *
 * <p>Checked, in order: the hash and the placement policy are ones this version implements, every member state is
 * known (a state written by a newer schema is refused rather than guessed: it decides whether the member is
 * read-eligible), and the ring library accepts the membership and parameters.
 */
public final class EpochRecords {
  private EpochRecords() {}

  /**
   * The ring the record describes, checked against the record's {@code targetChecksum}.
   *
   * @throws CodecException {@link Reason#UNKNOWN_HASH}, {@link Reason#UNKNOWN_POLICY} or {@link
   *     Reason#INVALID_CONTENT} as {@link #rebuild}, and {@link Reason#CHECKSUM_MISMATCH} when the rebuilt ring
   *     has another checksum than the record states (the record was altered, or written with other placement rules)
   */
  public static RingSnapshot ring(EpochRecord record) {
    RingSnapshot ring = rebuild(record);
    byte[] stated = AvroBytes.toArray(record.getTargetChecksum());
    if (!Arrays.equals(stated, ring.checksum())) {
      throw CodecException.of(Reason.CHECKSUM_MISMATCH,
          "epoch %d of cluster %s rebuilds to checksum %s, not the recorded %s: the record was altered or was "
              + "written with other placement rules", record.getEpoch(), record.getClusterId(), ring.checksumHex(),
          AvroBytes.hex(stated));
    }
    return ring;
  }

  /**
   * The ring of the record's members and parameters, without the checksum check.
   *
   * @throws CodecException {@link Reason#UNKNOWN_HASH} or {@link Reason#UNKNOWN_POLICY} when the record names one
   *     this version does not implement, {@link Reason#INVALID_CONTENT} when a member state is unknown or the ring
   *     refuses the membership or parameters; the message names the epoch, the cluster and the problem
   */
  /**
   * The ring a STAGED record's transition starts from: its {@code previousEpoch} and {@code previousMembers} with the
   * record's parameters (docs/protocol.md, "Transition stages").
   *
   * @throws CodecException as {@link #rebuild(EpochRecord)}, or when the record names no previous epoch
   */
  public static RingSnapshot rebuildPrevious(EpochRecord staged) {
    if (staged.getPreviousEpoch() == null) {
      throw CodecException.of(Reason.INVALID_CONTENT, "epoch %d of cluster %s names no previous epoch, so it is no "
          + "transition stage", staged.getEpoch(), staged.getClusterId());
    }
    return rebuild(EpochRecord.newBuilder(staged).setEpoch(staged.getPreviousEpoch())
        .setMembers(staged.getPreviousMembers()).build());
  }

  public static RingSnapshot rebuild(EpochRecord record) {
    return rebuild(record, record.getVnodes(), record.getReplicas());
  }

  /**
   * The ring of the record's members placed with other parameters (what-if replays); checked as {@link #rebuild}.
   */
  public static RingSnapshot rebuild(EpochRecord record, int vnodes, int replicas) {
    Objects.requireNonNull(record, "record");
    if (!RingHash.Xxh3.ID.equals(record.getHashId())) {
      throw CodecException.of(Reason.UNKNOWN_HASH, "epoch %d of cluster %s names hash \"%s\"; this version "
          + "implements only %s", record.getEpoch(), record.getClusterId(), record.getHashId(), RingHash.Xxh3.ID);
    }
    PlacementPolicy policy;
    try {
      policy = PlacementPolicy.ofId(record.getPolicyId());
    } catch (RingException e) {
      throw CodecException.of(Reason.UNKNOWN_POLICY, "epoch %d of cluster %s names placement policy \"%s\"; this "
          + "version implements only %s and %s", record.getEpoch(), record.getClusterId(), record.getPolicyId(),
          PlacementPolicy.HASHED.id(), PlacementPolicy.BALANCED.id());
    }
    try {
      RingBuilder builder = RingSnapshot.builder()
          .clusterId(record.getClusterId())
          .epoch(record.getEpoch())
          .replicas(replicas);
      return withMembers(builder, vnodes, policy, record.getMembers(), vnodes == record.getVnodes()).build();
    } catch (RingException e) {
      throw new CodecException(Reason.INVALID_CONTENT, "epoch " + record.getEpoch() + " of cluster "
          + record.getClusterId() + ": " + e.getMessage(), e);
    }
  }

  /**
   * The ring library's members of a record's member list, in order.
   *
   * @throws RingException for a state this version cannot read, or an invalid member (blank id or zone, weight
   *     not &gt; 0): the rules of the ring, as for any other membership it refuses
   */
  public static List<Member> members(List<MemberSpec> specs) {
    List<Member> members = new ArrayList<>(specs.size());
    for (int i = 0; i < specs.size(); i++) {
      MemberSpec spec = specs.get(i);
      MemberState state = switch (spec.getState()) {
        case ACTIVE -> MemberState.ACTIVE;
        case FILLING -> MemberState.FILLING;
        default -> throw new RingException(String.format(Locale.ROOT, "members[%d] (\"%s\") has state %s, which "
            + "this version cannot read (written by a newer schema); upgrade rather than guess whether the member is "
            + "read-eligible", i, spec.getId(), spec.getState()));
      };
      members.add(new Member(spec.getId(), spec.getZone(), spec.getWeight(), state));
    }
    return members;
  }

  /**
   * Gives a builder V, the policy, the members of a record's member list and, under the balanced policy, their
   * tokens.
   *
   * @param exact when true (the record's own V), a balanced member must list exactly {@code round(weight * V)}
   *     tokens and a hashed one none: the ring is rebuilt, not re-allocated; when false (a what-if at another V),
   *     listed tokens are ignored and the balanced allocator places the membership as a new ring
   * @throws RingException naming the member when its tokens do not fit the policy, or as {@link #members}
   */
  public static RingBuilder withMembers(RingBuilder builder, int vnodes, PlacementPolicy policy,
      List<MemberSpec> specs, boolean exact) {
    List<Member> members = members(specs);
    builder.vnodes(vnodes).policy(policy).members(members);
    for (int i = 0; i < specs.size(); i++) {
      List<Long> tokens = specs.get(i).getTokens();
      Member m = members.get(i);
      if (policy == PlacementPolicy.HASHED) {
        if (!tokens.isEmpty()) {
          throw new RingException(String.format(Locale.ROOT, "members[%d] (\"%s\") lists %d tokens; under the hashed "
              + "policy %s tokens derive from the id and none are listed", i, m.id(), tokens.size(), policy.id()));
        }
        continue;
      }
      if (!exact) {
        continue;
      }
      long expected = Math.round(m.weight() * vnodes);
      if (tokens.size() != expected) {
        throw new RingException(String.format(Locale.ROOT, "members[%d] (\"%s\") lists %d tokens; under the "
            + "balanced policy a member of weight %s at vnodes %d lists round(weight * vnodes) = %d", i, m.id(),
            tokens.size(), m.weight(), vnodes, expected));
      }
      builder.tokens(m.id(), tokens.stream().mapToLong(Long::longValue).toArray());
    }
    return builder;
  }

  /** The record's member list of the ring library's members, in order, without tokens (a membership, no ring). */
  public static List<MemberSpec> specs(List<Member> members) {
    List<MemberSpec> specs = new ArrayList<>(members.size());
    for (Member m : members) {
      specs.add(new MemberSpec(m.id(), m.zone(), m.weight(), state(m), List.of()));
    }
    return specs;
  }

  /** The member list of a ring, in its order, each with its tokens under the balanced policy. */
  public static List<MemberSpec> specs(RingSnapshot ring) {
    List<Member> members = ring.members();
    List<MemberSpec> specs = new ArrayList<>(members.size());
    long[][] tokens = ring.policy() == PlacementPolicy.BALANCED ? ring.tokensByMember() : null;
    for (int i = 0; i < members.size(); i++) {
      Member m = members.get(i);
      List<Long> listed = tokens == null ? List.of() : Arrays.stream(tokens[i]).boxed().toList();
      specs.add(new MemberSpec(m.id(), m.zone(), m.weight(), state(m), listed));
    }
    return specs;
  }

  private static MemberSpecState state(Member m) {
    return switch (m.state()) {
      case ACTIVE -> MemberSpecState.ACTIVE;
      case FILLING -> MemberSpecState.FILLING;
    };
  }

  /**
   * What caused an epoch, for people: {@code INIT}, {@code JOIN node-012}, {@code SET_WEIGHT node-3 -> 2.0}, or
   * {@code -} for none; with {@code zone}, a join also names its zone ({@code JOIN node-012 (az-2)}).
   */
  public static String cause(MembershipEvent cause, boolean zone) {
    if (cause == null) {
      return "-";
    }
    MembershipAction action = cause.getAction();
    if (action == MembershipAction.INIT) {
      return "INIT";
    }
    String text = action + " " + cause.getNodeId();
    if (zone && action == MembershipAction.JOIN && cause.getZone() != null) {
      text += " (" + cause.getZone() + ")";
    }
    if (action == MembershipAction.SET_WEIGHT && cause.getWeight() != null) {
      text += " -> " + cause.getWeight();
    }
    return text;
  }

  /**
   * {@code record} signed by {@code key}: the signature and key id a PUBLISHED record carries, over the same payload
   * as the snapshot it describes ({@link TrustedKeys#verify(EpochRecord)} checks it).
   */
  public static EpochRecord signedBy(EpochRecord record, SigningKey key) {
    byte[] previous = AvroBytes.toArray(record.getPreviousChecksum());
    byte[] payload = PublishedSnapshot.signingPayload(record.getClusterId(), record.getEpoch(),
        AvroBytes.toArray(record.getTargetChecksum()), previous, key.id(),
        RingSnapshotCodec.fromAvro(record.getFilling()));
    return EpochRecord.newBuilder(record)
        .setSigningKeyId(key.id())
        .setSignature(java.nio.ByteBuffer.wrap(key.sign(payload)))
        .build();
  }
}
