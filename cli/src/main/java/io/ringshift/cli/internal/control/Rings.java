package io.ringshift.cli.internal.control;

import io.ringshift.ring.Member;
import io.ringshift.ring.MemberState;
import io.ringshift.ring.RingSnapshot;
import io.ringshift.schemas.avro.EpochRecord;
import io.ringshift.schemas.avro.MemberSpec;
import io.ringshift.schemas.avro.MemberSpecState;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;

/** Between the ring library's members and rings and the members and epochs on the topics. */
final class Rings {
  private Rings() {}

  static List<MemberSpec> specs(List<Member> members) {
    List<MemberSpec> specs = new ArrayList<>(members.size());
    for (Member m : members) {
      specs.add(new MemberSpec(m.id(), m.zone(), m.weight(), MemberSpecState.valueOf(m.state().name())));
    }
    return specs;
  }

  static List<Member> members(List<MemberSpec> specs) {
    List<Member> members = new ArrayList<>(specs.size());
    for (MemberSpec s : specs) {
      if (s.getState() == MemberSpecState.UNKNOWN) {
        throw new IllegalStateException("member " + s.getId() + " has a state this version does not know; "
            + "upgrade ringshift");
      }
      members.add(new Member(s.getId(), s.getZone(), s.getWeight(), MemberState.valueOf(s.getState().name())));
    }
    return members;
  }

  /**
   * The ring an epoch record describes, rebuilt and checked against the record's checksum, so what the command
   * line plans from is exactly the orchestrator's ring.
   *
   * @throws IllegalStateException when the rebuilt ring has another checksum (the placement rules differ)
   */
  static RingSnapshot ringOf(EpochRecord record) {
    RingSnapshot ring = RingSnapshot.builder()
        .clusterId(record.getClusterId())
        .epoch(record.getEpoch())
        .vnodes(record.getVnodes())
        .replicas(record.getReplicas())
        .members(members(record.getMembers()))
        .build();
    byte[] stated = bytes(record.getTargetChecksum());
    if (!java.util.Arrays.equals(stated, ring.checksum())) {
      throw new IllegalStateException(String.format(Locale.ROOT,
          "epoch %d of cluster %s rebuilds to checksum %s, not the recorded %s: this ringshift places keys "
              + "differently from the orchestrator's", record.getEpoch(), record.getClusterId(), ring.checksumHex(),
          HexFormat.of().formatHex(stated)));
    }
    return ring;
  }

  static byte[] bytes(ByteBuffer buffer) {
    if (buffer == null) {
      return new byte[0];
    }
    byte[] bytes = new byte[buffer.remaining()];
    buffer.duplicate().get(bytes);
    return bytes;
  }

  /** The first 12 hex digits of a checksum: enough to tell epochs apart at a glance. */
  static String checksumPrefix(ByteBuffer checksum) {
    String hex = HexFormat.of().formatHex(bytes(checksum));
    return hex.length() > 12 ? hex.substring(0, 12) : hex;
  }

  static int zoneCount(List<MemberSpec> members) {
    return (int) members.stream().map(MemberSpec::getZone).distinct().count();
  }
}
