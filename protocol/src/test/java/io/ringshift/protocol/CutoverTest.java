package io.ringshift.protocol;

import static org.assertj.core.api.Assertions.assertThat;

import io.ringshift.schemas.avro.EpochRecord;
import io.ringshift.schemas.avro.EpochState;
import io.ringshift.schemas.avro.MembershipAction;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class CutoverTest {
  private static final long NOW = 1_800_000_000_000L;

  static {
    io.ringshift.protocol.internal.AvroClassTrust.ensureInstalled(); // records copied with newBuilder(record)
  }

  /** A published failure epoch 5 with one filling mark. */
  private static EpochRecord failureEpoch() {
    return EpochRecord.newBuilder(SampleRecords.fullEpochRecord()).setEpoch(5).setState(EpochState.PUBLISHED)
        .setTargetChecksum(SampleRecords.bytes(32, 7)).setStage(null).setPreviousEpoch(null)
        .setPreviousMembers(null).build();
  }

  /** The repair of {@link #failureEpoch}: epoch 6, chained to it, the same ring, no marks. */
  private static EpochRecord.Builder repair() {
    return EpochRecord.newBuilder(failureEpoch()).setEpoch(6).setState(EpochState.PLANNED).setFilling(List.of())
        .setPreviousChecksum(SampleRecords.bytes(32, 7)).setTargetChecksum(SampleRecords.bytes(32, 8));
  }

  @Test
  void shouldRepairInPlaceAPlanOfTheFailureEpochsRingChainedToIt() {
    assertThat(Cutover.repairsInPlace(repair().build(), failureEpoch())).isTrue();
    assertThat(Cutover.fenceReason(repair().build(), MembershipAction.FAIL, 12, failureEpoch(),
        Participants.none("eu-west/cache"), NOW)).hasValue(Cutover.inPlaceReason(5));
    assertThat(Cutover.inPlaceReason(5)).contains("failure epoch 5", "fenced at epoch 5", "no write pause");
  }

  @Test
  void shouldNotRepairInPlaceAPlanThatChangesTheRingOrDoesNotFollowAFailureEpoch() {
    List<io.ringshift.schemas.avro.MemberSpec> fewer = new ArrayList<>(failureEpoch().getMembers());
    fewer.remove(0);
    assertThat(Cutover.repairsInPlace(repair().setMembers(fewer).build(), failureEpoch())).as("members").isFalse();
    assertThat(Cutover.repairsInPlace(repair().setVnodes(128).build(), failureEpoch())).as("vnodes").isFalse();
    assertThat(Cutover.repairsInPlace(repair().setReplicas(2).build(), failureEpoch())).as("replicas").isFalse();
    assertThat(Cutover.repairsInPlace(repair().setPreviousChecksum(SampleRecords.bytes(32, 9)).build(),
        failureEpoch())).as("chained elsewhere").isFalse();
    assertThat(Cutover.repairsInPlace(repair().setEpoch(5).build(), failureEpoch())).as("not later").isFalse();
    EpochRecord complete = EpochRecord.newBuilder(failureEpoch()).setFilling(List.of()).build();
    assertThat(Cutover.repairsInPlace(repair().build(), complete)).as("no filling marks").isFalse();
    assertThat(Cutover.repairsInPlace(repair().build(), null)).isFalse();
    assertThat(Cutover.fenceReason(repair().build(), MembershipAction.FAIL, 0, failureEpoch(),
        Participants.none("eu-west/cache"), NOW)).as("moves nothing").hasValue("it moves no range");
    assertThat(Cutover.fenceReason(null, MembershipAction.FAIL, 12, failureEpoch(),
        Participants.none("eu-west/cache"), NOW)).as("a forecast without the plan").get().asString()
        .startsWith("it repairs a failure");
  }
}
