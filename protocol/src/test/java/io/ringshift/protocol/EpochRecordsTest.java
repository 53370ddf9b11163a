package io.ringshift.protocol;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.ringshift.protocol.CodecException.Reason;
import io.ringshift.ring.PlacementPolicy;
import io.ringshift.ring.RingException;
import io.ringshift.ring.RingSnapshot;
import io.ringshift.schemas.avro.EpochRecord;
import io.ringshift.schemas.avro.MemberSpec;
import io.ringshift.schemas.avro.MemberSpecState;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The one checked rebuild of a ring from an epoch record: ids, member states, the ring's rules, the checksum. */
class EpochRecordsTest {
  static {
    RecordSerdes.trustGeneratedClasses(); // builders fill defaults made of generated records
  }

  private final RingSnapshot ring = Rings.varied();

  private EpochRecord record(RingSnapshot of) {
    return EpochRecord.newBuilder(SampleRecords.minimalEpochRecord())
        .setClusterId(of.clusterId())
        .setEpoch(of.epoch())
        .setMembers(EpochRecords.specs(of))
        .setVnodes(of.vnodes())
        .setReplicas(of.replicas())
        .setHashId(of.hashId())
        .setPolicyId(of.policyId())
        .setTargetChecksum(ByteBuffer.wrap(of.checksum()))
        .build();
  }

  @Test
  void shouldRebuildTheRingTheRecordDescribesWithItsChecksum() {
    RingSnapshot rebuilt = EpochRecords.ring(record(ring));

    assertThat(rebuilt.checksum()).isEqualTo(ring.checksum());
    assertThat(rebuilt.members()).isEqualTo(ring.members());
    assertThat(rebuilt.epoch()).isEqualTo(ring.epoch());
  }

  @Test
  void shouldRebuildABalancedRingFromTheTokensItLists() {
    RingSnapshot balanced = Rings.varied().toBuilder().policy(PlacementPolicy.BALANCED).build();
    EpochRecord record = record(balanced);
    assertThat(record.getMembers()).allSatisfy(m -> assertThat(m.getTokens()).isNotEmpty());

    RingSnapshot rebuilt = EpochRecords.ring(record);

    assertThat(rebuilt.policy()).isEqualTo(PlacementPolicy.BALANCED);
    assertThat(rebuilt.checksumHex()).isEqualTo(balanced.checksumHex());
  }

  @Test
  void shouldRefuseABalancedMemberListingTheWrongNumberOfTokensOrAHashedOneListingAny() {
    RingSnapshot balanced = Rings.varied().toBuilder().policy(PlacementPolicy.BALANCED).build();
    EpochRecord record = record(balanced);
    List<MemberSpec> members = new ArrayList<>(record.getMembers());
    MemberSpec first = members.get(0);
    members.set(0, MemberSpec.newBuilder(first).setTokens(first.getTokens().subList(1, first.getTokens().size()))
        .build());
    record.setMembers(members);
    assertThatThrownBy(() -> EpochRecords.ring(record)).isInstanceOf(CodecException.class)
        .hasMessageContaining(first.getId()).hasMessageContaining("round(weight * vnodes)");

    EpochRecord hashed = record(ring);
    List<MemberSpec> withTokens = new ArrayList<>(hashed.getMembers());
    withTokens.set(0, MemberSpec.newBuilder(withTokens.get(0)).setTokens(List.of(1L)).build());
    hashed.setMembers(withTokens);
    assertThatThrownBy(() -> EpochRecords.ring(hashed)).isInstanceOf(CodecException.class)
        .hasMessageContaining("hashed policy");
  }

  @Test
  void shouldPlaceABalancedMembershipAsANewRingForAWhatIfAtAnotherV() {
    RingSnapshot balanced = Rings.varied().toBuilder().policy(PlacementPolicy.BALANCED).build();

    RingSnapshot whatIf = EpochRecords.rebuild(record(balanced), 8, 3);

    RingSnapshot fresh = RingSnapshot.builder().clusterId(balanced.clusterId()).epoch(balanced.epoch())
        .policy(PlacementPolicy.BALANCED).vnodes(8).replicas(3).members(balanced.members()).build();
    assertThat(whatIf.checksumHex()).isEqualTo(fresh.checksumHex());
  }

  @Test
  void shouldKeepMemberStatesAndOrderThroughSpecs() {
    assertThat(EpochRecords.members(EpochRecords.specs(ring.members()))).isEqualTo(ring.members());
  }

  @Test
  void shouldRebuildWithOtherParametersForWhatIf() {
    RingSnapshot whatIf = EpochRecords.rebuild(record(ring), 16, 2);

    assertThat(whatIf.vnodes()).isEqualTo(16);
    assertThat(whatIf.replicas()).isEqualTo(2);
    assertThat(whatIf.members()).isEqualTo(ring.members());
  }

  @Test
  void rejectsRecordWhoseChecksumDiffersFromTheRebuild() {
    byte[] other = ring.checksum().clone();
    other[0] ^= 1;
    EpochRecord altered = EpochRecord.newBuilder(record(ring)).setTargetChecksum(ByteBuffer.wrap(other)).build();

    assertThatThrownBy(() -> EpochRecords.ring(altered))
        .isInstanceOfSatisfying(CodecException.class, e -> assertThat(e.reason()).isEqualTo(Reason.CHECKSUM_MISMATCH))
        .hasMessage("epoch 42 of cluster eu-west/cache rebuilds to checksum " + ring.checksumHex() + ", not the "
            + "recorded " + AvroBytes.hex(other) + ": the record was altered or was written with other placement "
            + "rules");
    assertThat(EpochRecords.rebuild(altered).checksum()).isEqualTo(ring.checksum());
  }

  @Test
  void rejectsRecordNamingAnotherHash() {
    EpochRecord murmur = EpochRecord.newBuilder(record(ring)).setHashId("murmur3").build();

    assertThatThrownBy(() -> EpochRecords.rebuild(murmur))
        .isInstanceOfSatisfying(CodecException.class, e -> assertThat(e.reason()).isEqualTo(Reason.UNKNOWN_HASH))
        .hasMessage("epoch 42 of cluster eu-west/cache names hash \"murmur3\"; this version implements only "
            + "xxh3-64/seed=0/utf-8");
  }

  @Test
  void rejectsRecordNamingAnotherPlacementPolicy() {
    EpochRecord jump = EpochRecord.newBuilder(record(ring)).setPolicyId("jump/v1").build();

    assertThatThrownBy(() -> EpochRecords.ring(jump))
        .isInstanceOfSatisfying(CodecException.class, e -> assertThat(e.reason()).isEqualTo(Reason.UNKNOWN_POLICY))
        .hasMessageContaining("names placement policy \"jump/v1\"; this version implements only "
            + RingSnapshot.POLICY_ID);
  }

  @Test
  void rejectsMemberStateThisVersionCannotRead() {
    List<MemberSpec> members = new ArrayList<>(EpochRecords.specs(ring.members()));
    members.set(1, MemberSpec.newBuilder(members.get(1)).setState(MemberSpecState.UNKNOWN).build());
    EpochRecord newer = EpochRecord.newBuilder(record(ring)).setMembers(members).build();

    assertThatThrownBy(() -> EpochRecords.rebuild(newer))
        .isInstanceOfSatisfying(CodecException.class, e -> assertThat(e.reason()).isEqualTo(Reason.INVALID_CONTENT))
        .hasMessageContaining("epoch 42 of cluster eu-west/cache: members[1] (\"" + members.get(1).getId()
            + "\") has state UNKNOWN, which this version cannot read")
        .hasCauseInstanceOf(RingException.class);
  }

  @Test
  void rejectsMembershipTheRingRefuses() {
    EpochRecord zero = EpochRecord.newBuilder(record(ring)).setVnodes(0).build();

    assertThatThrownBy(() -> EpochRecords.rebuild(zero))
        .isInstanceOfSatisfying(CodecException.class, e -> assertThat(e.reason()).isEqualTo(Reason.INVALID_CONTENT))
        .hasMessageStartingWith("epoch 42 of cluster eu-west/cache: ");
  }
}
