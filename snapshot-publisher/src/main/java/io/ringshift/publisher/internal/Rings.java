package io.ringshift.publisher.internal;

import io.ringshift.ring.Member;
import io.ringshift.ring.MemberState;
import io.ringshift.ring.RingBuilder;
import io.ringshift.ring.RingException;
import io.ringshift.ring.RingHash;
import io.ringshift.ring.RingSnapshot;
import io.ringshift.schemas.avro.EpochRecord;
import io.ringshift.schemas.avro.MemberSpec;
import java.nio.ByteBuffer;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;

/**
 * Rebuilds the ring an epoch record describes with the {@code ring} library alone, from the record's membership
 * and parameters: the publisher's independent rebuild (docs/architecture.md, migration step 5). It deliberately shares no
 * code with the orchestrator, so a planner bug cannot vouch for itself.
 */
final class Rings {
  private static final HexFormat HEX = HexFormat.of();

  private Rings() {}

  /**
   * The ring of {@code record}.
   *
   * @throws RingException naming the problem when the record names a hash or placement policy this library does
   *     not implement, a member state it cannot read, or a membership or parameter the ring refuses
   */
  static RingSnapshot rebuild(EpochRecord record) {
    if (!RingHash.Xxh3.ID.equals(record.getHashId())) {
      throw ringError("epoch %d of cluster %s names hash \"%s\"; this publisher implements only %s",
          record.getEpoch(), record.getClusterId(), record.getHashId(), RingHash.Xxh3.ID);
    }
    if (!RingSnapshot.POLICY_ID.equals(record.getPolicyId())) {
      throw ringError("epoch %d of cluster %s names placement policy \"%s\"; this publisher implements only "
          + "%s", record.getEpoch(), record.getClusterId(), record.getPolicyId(), RingSnapshot.POLICY_ID);
    }
    RingBuilder builder = RingSnapshot.builder()
        .clusterId(record.getClusterId())
        .epoch(record.getEpoch())
        .vnodes(record.getVnodes())
        .replicas(record.getReplicas());
    List<MemberSpec> members = record.getMembers();
    for (int i = 0; i < members.size(); i++) {
      builder.addMember(member(i, members.get(i)));
    }
    return builder.build();
  }

  private static Member member(int index, MemberSpec spec) {
    MemberState state = switch (spec.getState()) {
      case ACTIVE -> MemberState.ACTIVE;
      case FILLING -> MemberState.FILLING;
      default -> throw ringError("members[%d] (\"%s\") has state %s, which this publisher cannot read "
          + "(written by a newer schema); it will not guess whether the member is read-eligible", index,
          spec.getId(), spec.getState());
    };
    return new Member(spec.getId(), spec.getZone(), spec.getWeight(), state);
  }

  private static RingException ringError(String format, Object... args) {
    return new RingException(String.format(Locale.ROOT, format, args));
  }

  /** The bytes of an Avro {@code bytes} field, or null; the buffer's position is left alone. */
  static byte[] bytes(ByteBuffer buffer) {
    if (buffer == null) {
      return null;
    }
    ByteBuffer view = buffer.duplicate();
    byte[] out = new byte[view.remaining()];
    view.get(out);
    return out;
  }

  /** A checksum in hex, or {@code none}. */
  static String hex(byte[] checksum) {
    return checksum == null ? "none" : HEX.formatHex(checksum);
  }
}
