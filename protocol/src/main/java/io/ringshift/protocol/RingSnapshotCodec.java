package io.ringshift.protocol;

import io.ringshift.ring.Member;
import io.ringshift.ring.MemberState;
import io.ringshift.ring.PlacementPolicy;
import io.ringshift.ring.RingBuilder;
import io.ringshift.ring.RingException;
import io.ringshift.ring.RingHash;
import io.ringshift.ring.RingSnapshot;
import io.ringshift.protocol.CodecException.Reason;
import io.ringshift.schemas.avro.RingMember;
import io.ringshift.schemas.avro.RingMemberState;
import io.ringshift.schemas.avro.RingStage;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.Objects;

/**
 * Encodes a {@link RingSnapshot} as the Avro record {@code io.ringshift.schemas.avro.RingSnapshot} and decodes
 * it back, proving on the way in that the bytes describe exactly the ring they claim.
 *
 * <p>Design: the record carries membership and parameters only, never the token table (about 3 MB at 1,000
 * nodes x 256 tokens, against Kafka's 1 MB message limit). {@link #decode} therefore <em>rebuilds</em> the ring
 * with the ring library and compares the rebuilt checksum with the one in the record; a mismatch means the
 * writer and the reader disagree on the placement rules or the bytes were altered, and the snapshot is refused
 * rather than routed by. Encoding is deterministic: equal rings give equal bytes, so replaying an audit log
 * reproduces published snapshots byte for byte.
 *
 * <p>The framing is pluggable through {@link AvroSerde}; the default is Avro single-object encoding that also
 * reads every released version of the schema. Instances are immutable and thread-safe.
 */
public final class RingSnapshotCodec {
  /** The snapshot format version this codec writes and the only one it reads. */
  public static final int FORMAT_VERSION = 1;
  /** The format version of a snapshot in a transition stage ({@link TransitionStage}), which older readers refuse. */
  public static final int STAGE_FORMAT_VERSION = 2;

  private static final HexFormat HEX = HexFormat.of();

  private final AvroSerde<io.ringshift.schemas.avro.RingSnapshot> serde;

  /** A codec using Avro single-object encoding, reading the current and every released schema version. */
  public RingSnapshotCodec() {
    this(RecordSerdes.ringSnapshot());
  }

  /** A codec framing records with the given serde (for example a registry-backed one). */
  public RingSnapshotCodec(AvroSerde<io.ringshift.schemas.avro.RingSnapshot> serde) {
    this.serde = Objects.requireNonNull(serde, "serde");
  }

  /**
   * The single-object serde of the {@code RingSnapshot} record that the no-argument constructor uses; the same
   * instance as {@link RecordSerdes#ringSnapshot()}.
   */
  public static AvroSerde<io.ringshift.schemas.avro.RingSnapshot> singleObjectSerde() {
    return RecordSerdes.ringSnapshot();
  }

  /**
   * Encodes the snapshot: membership, parameters and checksum.
   *
   * @throws CodecException with {@link Reason#UNKNOWN_HASH} when the ring uses a hash other than the documented
   *     XXH3 one (a test hash), because no reader could rebuild it
   */
  public byte[] encode(RingSnapshot snapshot) {
    return serde.serialize(toRecord(snapshot));
  }

  /**
   * Decodes and verifies a snapshot: rebuilds the ring from the membership and parameters in the bytes and
   * checks that it has the stated checksum.
   *
   * @throws CodecException when the bytes are not a single-object message ({@link Reason#BAD_HEADER}), name an
   *     unknown writer schema ({@link Reason#UNKNOWN_SCHEMA}), are truncated or corrupt ({@link
   *     Reason#MALFORMED}), have another format version ({@link Reason#UNSUPPORTED_FORMAT}), an unknown hash
   *     ({@link Reason#UNKNOWN_HASH}) or policy ({@link Reason#UNKNOWN_POLICY}), an invalid member or parameter
   *     ({@link Reason#INVALID_CONTENT}), or a checksum that the rebuilt ring does not have ({@link
   *     Reason#CHECKSUM_MISMATCH}); the message names the problem
   */
  public RingSnapshot decode(byte[] bytes) {
    return fromRecord(serde.deserialize(bytes));
  }

  /**
   * Encodes a published snapshot: the ring as {@link #encode(RingSnapshot)} does, plus the previous checksum, the
   * filling marks, the signature and its key id.
   */
  public byte[] encode(PublishedSnapshot snapshot) {
    return serde.serialize(toRecord(snapshot));
  }

  /**
   * Decodes a published snapshot and verifies its ring as {@link #decode} does (checksum included), and that its
   * filling marks name members. The signature is <em>not</em> checked here: that needs the reader's trusted keys
   * ({@link TrustedKeys#verify}).
   *
   * @throws CodecException as {@link #decode} does; {@link Reason#INVALID_CONTENT} for a filling mark naming a
   *     node that is not a member
   */
  public PublishedSnapshot decodePublished(byte[] bytes) {
    return fromPublishedRecord(serde.deserialize(bytes));
  }

  /** The Avro record of a published snapshot. */
  public io.ringshift.schemas.avro.RingSnapshot toRecord(PublishedSnapshot snapshot) {
    io.ringshift.schemas.avro.RingSnapshot record = toRecord(snapshot.ring());
    byte[] previous = snapshot.previousChecksum();
    byte[] signature = snapshot.signature();
    record.setPreviousChecksum(previous == null ? null : ByteBuffer.wrap(previous));
    record.setSignature(signature == null ? null : ByteBuffer.wrap(signature));
    record.setSigningKeyId(snapshot.signingKeyId());
    record.setFilling(toAvro(snapshot.filling()));
    if (snapshot.stage() != TransitionStage.FINAL) {
      RingSnapshot from = snapshot.previous();
      record.setFormatVersion(STAGE_FORMAT_VERSION);
      record.setStage(snapshot.stage() == TransitionStage.WRITE_BOTH_READ_OLD ? RingStage.WRITE_BOTH_READ_OLD
          : RingStage.WRITE_BOTH_READ_NEW);
      record.setPreviousEpoch(from.epoch());
      record.setPreviousMembers(membersOf(from));
    }
    return record;
  }

  /** Rebuilds and verifies a published snapshot from its record; see {@link #decodePublished}. */
  public PublishedSnapshot fromPublishedRecord(io.ringshift.schemas.avro.RingSnapshot record) {
    RingSnapshot ring = fromRecord(record);
    List<FillingRange> filling = fromAvro(record.getFilling());
    byte[] previousChecksum = record.getPreviousChecksum() == null ? null
        : AvroBytes.toArray(record.getPreviousChecksum());
    PublishedSnapshot unsigned;
    if (record.getFormatVersion() == FORMAT_VERSION) {
      if (record.getStage() != RingStage.FINAL || record.getPreviousEpoch() != null
          || record.getPreviousMembers() != null) {
        throw CodecException.of(Reason.INVALID_CONTENT, "epoch %d of cluster %s has format version 1 but stage %s "
            + "and %s previous members; a snapshot in a transition stage has format version 2", ring.epoch(),
            ring.clusterId(), record.getStage(), record.getPreviousMembers() == null ? "no" : "its");
      }
      unsigned = PublishedSnapshot.unsigned(ring, previousChecksum, filling);
    } else {
      unsigned = transitionOf(record, ring, previousChecksum, filling);
    }
    if (record.getSignature() == null && record.getSigningKeyId() == null) {
      return unsigned;
    }
    if (record.getSignature() == null || record.getSigningKeyId() == null) {
      throw CodecException.of(Reason.INVALID_CONTENT, "epoch %d of cluster %s has a %s but no %s",
          ring.epoch(), ring.clusterId(), record.getSignature() == null ? "signing key id" : "signature",
          record.getSignature() == null ? "signature" : "signing key id");
    }
    return unsigned.withSignature(AvroBytes.toArray(record.getSignature()), record.getSigningKeyId());
  }

  /** A snapshot of format version 2: its stage, and the previous ring rebuilt from its members. */
  private PublishedSnapshot transitionOf(io.ringshift.schemas.avro.RingSnapshot record, RingSnapshot ring,
      byte[] previousChecksum, List<FillingRange> filling) {
    TransitionStage stage = switch (record.getStage()) {
      case WRITE_BOTH_READ_OLD -> TransitionStage.WRITE_BOTH_READ_OLD;
      case WRITE_BOTH_READ_NEW -> TransitionStage.WRITE_BOTH_READ_NEW;
      default -> throw CodecException.of(Reason.INVALID_CONTENT, "epoch %d of cluster %s has format version 2 and "
          + "stage %s; format version 2 is a snapshot in stage WRITE_BOTH_READ_OLD or WRITE_BOTH_READ_NEW (UNKNOWN: "
          + "a stage this reader does not know)", ring.epoch(), ring.clusterId(), record.getStage());
    };
    if (record.getPreviousEpoch() == null || record.getPreviousMembers() == null || previousChecksum == null) {
      throw CodecException.of(Reason.INVALID_CONTENT, "epoch %d of cluster %s is in stage %s but lacks its previous "
          + "%s; a transition carries the previous epoch, members and checksum", ring.epoch(), ring.clusterId(), stage,
          record.getPreviousEpoch() == null ? "epoch" : record.getPreviousMembers() == null ? "members" : "checksum");
    }
    RingSnapshot previous;
    try {
      previous = rebuild(record.getClusterId(), record.getPreviousEpoch(), record.getPolicyId(), record.getVnodes(),
          record.getReplicas(), record.getPreviousMembers(), "previousMembers");
    } catch (CodecException e) {
      throw new CodecException(e.reason(), "the previous ring of epoch " + ring.epoch() + ": " + e.getMessage(), e);
    }
    if (!filling.isEmpty()) {
      throw CodecException.of(Reason.INVALID_CONTENT, "epoch %d of cluster %s is in stage %s and has filling marks; "
          + "a failure epoch is published FINAL, never in stages", ring.epoch(), ring.clusterId(), stage);
    }
    if (!Arrays.equals(previousChecksum, previous.checksum())) {
      throw CodecException.of(Reason.CHECKSUM_MISMATCH, "epoch %d of cluster %s names previous checksum %s, but its "
          + "previous members rebuild epoch %d with checksum %s", ring.epoch(), ring.clusterId(),
          HEX.formatHex(previousChecksum), previous.epoch(), previous.checksumHex());
    }
    return PublishedSnapshot.transition(ring, previous, stage);
  }

  /** The Avro form of filling marks (shared with the epoch records that carry them). */
  public static List<io.ringshift.schemas.avro.FillingRange> toAvro(List<FillingRange> filling) {
    List<io.ringshift.schemas.avro.FillingRange> out = new ArrayList<>(filling.size());
    for (FillingRange f : filling) {
      out.add(io.ringshift.schemas.avro.FillingRange.newBuilder()
          .setStart(f.start()).setEnd(f.end()).setNode(f.node()).build());
    }
    return out;
  }

  /**
   * Filling marks from their Avro form.
   *
   * @throws CodecException ({@link Reason#INVALID_CONTENT}) for a blank node id or marks out of order
   */
  public static List<FillingRange> fromAvro(List<io.ringshift.schemas.avro.FillingRange> filling) {
    List<FillingRange> out = new ArrayList<>(filling.size());
    for (int i = 0; i < filling.size(); i++) {
      io.ringshift.schemas.avro.FillingRange f = filling.get(i);
      FillingRange mark;
      try {
        mark = new FillingRange(f.getStart(), f.getEnd(), f.getNode());
      } catch (IllegalArgumentException e) {
        throw new CodecException(Reason.INVALID_CONTENT, "filling[" + i + "]: " + e.getMessage(), e);
      }
      if (!out.isEmpty() && FillingRange.ORDER.compare(out.get(out.size() - 1), mark) >= 0) {
        throw CodecException.of(Reason.INVALID_CONTENT, "filling[%d] %s is out of order: marks are sorted by "
            + "start (unsigned), then node id, without duplicates", i, mark);
      }
      out.add(mark);
    }
    return out;
  }

  /** The Avro record of a snapshot; the optional chain and signature fields are left null. */
  public io.ringshift.schemas.avro.RingSnapshot toRecord(RingSnapshot snapshot) {
    Objects.requireNonNull(snapshot, "snapshot");
    if (!RingHash.Xxh3.ID.equals(snapshot.hashId())) {
      throw CodecException.of(Reason.UNKNOWN_HASH,
          "cannot encode a ring placed with hash \"%s\": readers implement only %s, so none could rebuild it",
          snapshot.hashId(), RingHash.Xxh3.ID);
    }
    List<RingMember> members = membersOf(snapshot);
    return io.ringshift.schemas.avro.RingSnapshot.newBuilder()
        .setFormatVersion(FORMAT_VERSION)
        .setClusterId(snapshot.clusterId())
        .setEpoch(snapshot.epoch())
        .setHashId(snapshot.hashId())
        .setPolicyId(snapshot.policyId())
        .setVnodes(snapshot.vnodes())
        .setReplicas(snapshot.replicas())
        .setMembers(members)
        .setChecksum(ByteBuffer.wrap(snapshot.checksum()))
        .setPreviousChecksum(null)
        .setSignature(null)
        .setSigningKeyId(null)
        .build();
  }

  private static List<RingMember> membersOf(RingSnapshot snapshot) {
    List<RingMember> members = new ArrayList<>(snapshot.memberCount());
    long[][] tokens = snapshot.policy() == PlacementPolicy.BALANCED ? snapshot.tokensByMember() : null;
    for (int i = 0; i < snapshot.memberCount(); i++) {
      Member m = snapshot.members().get(i);
      members.add(RingMember.newBuilder()
          .setId(m.id())
          .setZone(m.zone())
          .setWeight(m.weight())
          .setState(toAvro(m.state()))
          .setTokens(tokens == null ? List.of() : Arrays.stream(tokens[i]).boxed().toList())
          .build());
    }
    return members;
  }

  /**
   * Rebuilds and verifies the ring a record describes.
   *
   * @throws CodecException as {@link #decode} does, except for the framing reasons
   */
  public RingSnapshot fromRecord(io.ringshift.schemas.avro.RingSnapshot record) {
    Objects.requireNonNull(record, "record");
    if (record.getFormatVersion() != FORMAT_VERSION && record.getFormatVersion() != STAGE_FORMAT_VERSION) {
      throw CodecException.of(Reason.UNSUPPORTED_FORMAT,
          "snapshot format version %d is not supported; this reader implements versions %d and %d",
          record.getFormatVersion(), FORMAT_VERSION, STAGE_FORMAT_VERSION);
    }
    if (!RingHash.Xxh3.ID.equals(record.getHashId())) {
      throw CodecException.of(Reason.UNKNOWN_HASH,
          "unknown hash algorithm \"%s\"; this reader implements only %s", record.getHashId(), RingHash.Xxh3.ID);
    }
    RingSnapshot rebuilt = rebuild(record.getClusterId(), record.getEpoch(), record.getPolicyId(), record.getVnodes(),
        record.getReplicas(), record.getMembers(), "members");
    byte[] stated = AvroBytes.toArray(record.getChecksum());
    byte[] actual = rebuilt.checksum();
    if (!Arrays.equals(stated, actual)) {
      throw CodecException.of(Reason.CHECKSUM_MISMATCH,
          "checksum mismatch: the snapshot states %s but its membership and parameters rebuild to %s; the "
              + "bytes were altered or were written with other placement rules",
          stated.length == 0 ? "an empty checksum" : HEX.formatHex(stated), HEX.formatHex(actual));
    }
    return rebuilt;
  }

  /** The ring of {@code members} under the given parameters (the hash is the one reader implements). */
  private static RingSnapshot rebuild(String clusterId, long epoch, String policyId, int vnodes, int replicas,
      List<RingMember> members, String field) {
    PlacementPolicy policy;
    try {
      policy = PlacementPolicy.ofId(policyId);
    } catch (RingException e) {
      throw CodecException.of(Reason.UNKNOWN_POLICY,
          "unknown placement policy \"%s\"; this reader implements only %s and %s",
          policyId, PlacementPolicy.HASHED.id(), PlacementPolicy.BALANCED.id());
    }
    RingBuilder builder = RingSnapshot.builder()
        .clusterId(clusterId)
        .epoch(epoch)
        .policy(policy)
        .vnodes(vnodes)
        .replicas(replicas);
    for (int i = 0; i < members.size(); i++) {
      Member m = toMember(field, i, members.get(i));
      builder.addMember(m);
      listTokens(builder, policy, vnodes, field, i, m, members.get(i).getTokens());
    }
    try {
      return builder.build();
    } catch (RingException e) {
      throw new CodecException(Reason.INVALID_CONTENT, "invalid snapshot: " + e.getMessage(), e);
    }
  }

  /** A member's listed tokens: none under the hashed policy, exactly round(weight * V) under the balanced one. */
  private static void listTokens(RingBuilder builder, PlacementPolicy policy, int vnodes, String field, int index,
      Member m, List<Long> tokens) {
    if (policy == PlacementPolicy.HASHED) {
      if (!tokens.isEmpty()) {
        throw CodecException.of(Reason.INVALID_CONTENT, "%s[%d] (id \"%s\") lists %d tokens; under the hashed "
            + "policy tokens derive from the id and none are listed", field, index, m.id(), tokens.size());
      }
      return;
    }
    long expected = Math.round(m.weight() * vnodes);
    if (tokens.size() != expected) {
      throw CodecException.of(Reason.INVALID_CONTENT, "%s[%d] (id \"%s\") lists %d tokens; under the balanced "
          + "policy a member of weight %s at vnodes %d lists round(weight * vnodes) = %d", field, index, m.id(),
          tokens.size(), m.weight(), vnodes, expected);
    }
    builder.tokens(m.id(), tokens.stream().mapToLong(Long::longValue).toArray());
  }

  private static Member toMember(String field, int index, RingMember m) {
    if (m.getState() == RingMemberState.UNKNOWN) {
      throw CodecException.of(Reason.INVALID_CONTENT,
          "%s[%d] (id \"%s\"): state is one this reader does not know (written by a newer schema); "
              + "upgrade the reader rather than guess whether the member is read-eligible",
          field, index, m.getId());
    }
    try {
      return new Member(m.getId(), m.getZone(), m.getWeight(), fromAvro(m.getState()));
    } catch (RingException e) {
      throw new CodecException(Reason.INVALID_CONTENT, field + "[" + index + "]: " + e.getMessage(), e);
    }
  }

  private static RingMemberState toAvro(MemberState state) {
    switch (state) {
      case ACTIVE:
        return RingMemberState.ACTIVE;
      case FILLING:
        return RingMemberState.FILLING;
      default:
        throw new IllegalStateException("no Avro symbol for member state " + state);
    }
  }

  private static MemberState fromAvro(RingMemberState state) {
    switch (state) {
      case ACTIVE:
        return MemberState.ACTIVE;
      case FILLING:
        return MemberState.FILLING;
      default:
        throw new IllegalStateException("no member state for Avro symbol " + state);
    }
  }

}
