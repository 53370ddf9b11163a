package io.ringshift.client.internal;

import static io.ringshift.client.TestSnapshots.CLUSTER;
import static io.ringshift.client.TestSnapshots.accepted;
import static io.ringshift.client.TestSnapshots.alter;
import static io.ringshift.client.TestSnapshots.encode;
import static org.assertj.core.api.Assertions.assertThat;

import io.ringshift.client.RefusalReason;
import io.ringshift.client.TestSnapshots;
import io.ringshift.client.internal.GateOutcome.Accepted;
import io.ringshift.client.internal.GateOutcome.Duplicate;
import io.ringshift.client.internal.GateOutcome.Refused;
import io.ringshift.ring.RingSnapshot;
import io.ringshift.protocol.PublishedSnapshot;
import io.ringshift.protocol.RingSnapshotCodec;
import io.ringshift.protocol.SigningKey;
import io.ringshift.protocol.TransitionStage;
import io.ringshift.protocol.TrustedKeys;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

class SnapshotGateTest {
  private static final SigningKey PUBLISHER = SigningKey.generate();
  private static final SigningKey STRANGER = SigningKey.generate();
  private static final List<PublishedSnapshot> CHAIN = TestSnapshots.chain(PUBLISHER, 4);

  private final SnapshotGate gate = new SnapshotGate(CLUSTER, TrustedKeys.of(PUBLISHER.publicKey()));

  private static PublishedSnapshot epoch(int e) {
    return CHAIN.get(e - 1);
  }

  private static AcceptedSnapshot current(int e) {
    return accepted(epoch(e), 1_000L);
  }

  private Refused refused(byte[] bytes, AcceptedSnapshot current) {
    GateOutcome outcome = gate.check(bytes, current);
    assertThat(outcome).isInstanceOf(Refused.class);
    return (Refused) outcome;
  }

  @Test
  void shouldAcceptTheFirstSignedSnapshotWithoutACurrentOne() {
    GateOutcome outcome = gate.check(encode(epoch(3)), null);

    assertThat(outcome).isEqualTo(new Accepted(epoch(3), false));
  }

  @Test
  void shouldAcceptEachEpochOfAChainThatFollowsTheCurrentOne() {
    AcceptedSnapshot current = null;
    for (PublishedSnapshot s : CHAIN) {
      GateOutcome outcome = gate.check(encode(s), current);
      assertThat(outcome).as("epoch %d", s.epoch()).isEqualTo(new Accepted(s, false));
      current = accepted(s, s.epoch());
    }
  }

  @Test
  void shouldAcceptAGapOnItsSignatureAndReportsIt() {
    GateOutcome outcome = gate.check(encode(epoch(4)), current(1));

    assertThat(outcome).isEqualTo(new Accepted(epoch(4), true));
  }

  @Test
  void shouldIgnoreAByteIdenticalCopyOfTheCurrentSnapshot() {
    GateOutcome outcome = gate.check(encode(epoch(2)), current(2));

    assertThat(outcome).isEqualTo(new Duplicate(2));
  }

  @Test
  void rejectsSnapshotWithBadChecksum() {
    byte[] bytes = alter(epoch(2), r -> {
      byte[] checksum = epoch(2).checksum();
      checksum[0] ^= 1;
      r.setChecksum(ByteBuffer.wrap(checksum));
    });

    Refused refused = refused(bytes, current(1));

    assertThat(refused.reason()).isEqualTo(RefusalReason.CHECKSUM);
    assertThat(refused.epoch()).isEqualTo(2);
    assertThat(refused.message()).contains("checksum mismatch", epoch(2).ring().checksumHex());
  }

  @Test
  void rejectsSnapshotWithBadSignature() {
    byte[] bytes = alter(epoch(2), r -> {
      byte[] signature = epoch(2).signature();
      signature[10] ^= 0x40;
      r.setSignature(ByteBuffer.wrap(signature));
    });

    Refused refused = refused(bytes, current(1));

    assertThat(refused.reason()).isEqualTo(RefusalReason.BAD_SIGNATURE);
    assertThat(refused.message()).contains("epoch 2", PUBLISHER.id());
  }

  @Test
  void rejectsAnotherRingPresentedUnderAGenuineSignature() {
    // A forger rebuilds the ring with other members (consistent checksum) and keeps the publisher's signature.
    RingSnapshot forged = TestSnapshots.ring(CLUSTER, 2, 9);
    PublishedSnapshot genuine = epoch(2);
    byte[] bytes = alter(genuine, r -> {
      io.ringshift.schemas.avro.RingSnapshot other = new RingSnapshotCodec().toRecord(forged);
      r.setMembers(other.getMembers());
      r.setChecksum(other.getChecksum());
    });

    assertThat(refused(bytes, current(1)).reason()).isEqualTo(RefusalReason.BAD_SIGNATURE);
  }

  @Test
  void rejectsSnapshotWhoseFillingMarksWereAltered() {
    PublishedSnapshot failure = TestSnapshots.failureEpoch(epoch(4), "node-02", PUBLISHER);
    assertThat(failure.filling()).isNotEmpty();
    byte[] bytes = alter(failure, r -> r.setFilling(List.of()));

    assertThat(refused(bytes, current(4)).reason()).isEqualTo(RefusalReason.BAD_SIGNATURE);
  }

  @Test
  void rejectsSnapshotSignedByAnUnknownKey() {
    PublishedSnapshot forged = PublishedSnapshot.unsigned(epoch(2).ring(), epoch(1).checksum(), List.of())
        .signedBy(STRANGER);

    Refused refused = refused(encode(forged), current(1));

    assertThat(refused.reason()).isEqualTo(RefusalReason.UNKNOWN_KEY);
    assertThat(refused.message()).contains(STRANGER.id(), PUBLISHER.id());
  }

  @Test
  void rejectsUnsignedSnapshot() {
    PublishedSnapshot unsigned = PublishedSnapshot.unsigned(epoch(2).ring(), epoch(1).checksum(), List.of());

    assertThat(refused(encode(unsigned), current(1)).reason()).isEqualTo(RefusalReason.UNSIGNED);
  }

  @Test
  void rejectsBrokenChain() {
    // A genuine, signed epoch 2 that follows some other epoch 1 than the one the client routes by.
    PublishedSnapshot offChain = PublishedSnapshot.unsigned(epoch(2).ring(), new byte[32], List.of())
        .signedBy(PUBLISHER);

    Refused refused = refused(encode(offChain), current(1));

    assertThat(refused.reason()).isEqualTo(RefusalReason.BROKEN_CHAIN);
    assertThat(refused.epoch()).isEqualTo(2);
    assertThat(refused.message()).contains(epoch(1).ring().checksumHex(), "0000000000");
  }

  @Test
  void rejectsTheNextEpochWithoutAPreviousChecksum() {
    PublishedSnapshot unchained = PublishedSnapshot.unsigned(epoch(2).ring(), null, List.of()).signedBy(PUBLISHER);

    Refused refused = refused(encode(unchained), current(1));

    assertThat(refused.reason()).isEqualTo(RefusalReason.BROKEN_CHAIN);
    assertThat(refused.message()).contains("previous checksum none");
  }

  @Test
  void rejectsOlderEpoch() {
    Refused refused = refused(encode(epoch(2)), current(3));

    assertThat(refused.reason()).isEqualTo(RefusalReason.OLDER_EPOCH);
    assertThat(refused.message()).contains("epoch 2", "current epoch 3");
  }

  /** With no current snapshot, a genuine snapshot below the floor epoch is a replay: refused; at the floor, taken. */
  @Test
  void rejectsAColdStartSnapshotBelowTheFloorEpochAndAcceptsOneAtIt() {
    GateOutcome below = gate.check(encode(epoch(2)), null, 3);
    GateOutcome at = gate.check(encode(epoch(3)), null, 3);

    assertThat(below).isInstanceOf(Refused.class);
    assertThat(((Refused) below).reason()).isEqualTo(RefusalReason.OLDER_EPOCH);
    assertThat(((Refused) below).message()).isEqualTo("epoch 2 is older than epoch 3, the latest a trusted publisher "
        + "signed PUBLISHED on the epochs topic: an old snapshot replayed on the snapshots topic");
    assertThat(at).isInstanceOf(GateOutcome.Accepted.class);
  }

  @Test
  void rejectsTheSameEpochWithOtherBytes() {
    // The same epoch re-signed by a rotated key: not byte-identical, so not a harmless duplicate.
    SigningKey rotated = SigningKey.generate();
    SnapshotGate trustsBoth = new SnapshotGate(CLUSTER, TrustedKeys.of(PUBLISHER.publicKey(), rotated.publicKey()));
    PublishedSnapshot resigned = PublishedSnapshot.unsigned(epoch(3).ring(), epoch(2).checksum(), List.of())
        .signedBy(rotated);

    GateOutcome outcome = trustsBoth.check(encode(resigned), current(3));

    assertThat(outcome).isInstanceOf(Refused.class);
    assertThat(((Refused) outcome).reason()).isEqualTo(RefusalReason.OLDER_EPOCH);
  }

  @Test
  void shouldAcceptTheStagesOfAnEpochInOrderAndNothingBackwards() {
    PublishedSnapshot readOld = PublishedSnapshot.transition(epoch(4).ring(), epoch(3).ring(),
        TransitionStage.WRITE_BOTH_READ_OLD).signedBy(PUBLISHER);
    PublishedSnapshot readNew = PublishedSnapshot.transition(epoch(4).ring(), epoch(3).ring(),
        TransitionStage.WRITE_BOTH_READ_NEW).signedBy(PUBLISHER);

    assertThat(gate.check(encode(readOld), current(3))).isEqualTo(new Accepted(readOld, false));
    assertThat(gate.check(encode(readNew), accepted(readOld, 2_000))).isEqualTo(new Accepted(readNew, false));
    assertThat(gate.check(encode(epoch(4)), accepted(readNew, 3_000))).as("FINAL after the stages")
        .isEqualTo(new Accepted(epoch(4), false));
    assertThat(gate.check(encode(readNew), null)).as("a client that starts mid-transition")
        .isEqualTo(new Accepted(readNew, false));

    assertThat(refused(encode(readOld), accepted(readNew, 3_000)).reason()).isEqualTo(RefusalReason.OLDER_EPOCH);
    assertThat(refused(encode(readNew), current(4)).message()).contains("does not come after the current epoch 4 "
        + "in stage FINAL");
    PublishedSnapshot otherRing = PublishedSnapshot.transition(TestSnapshots.ring(CLUSTER, 4, 9), epoch(3).ring(),
        TransitionStage.WRITE_BOTH_READ_NEW).signedBy(PUBLISHER);
    assertThat(refused(encode(otherRing), accepted(readOld, 2_000)).reason()).as("a later stage of another ring")
        .isEqualTo(RefusalReason.OLDER_EPOCH);
    PublishedSnapshot fromElsewhere = PublishedSnapshot.transition(epoch(4).ring(), epoch(2).ring(),
        TransitionStage.WRITE_BOTH_READ_OLD).signedBy(PUBLISHER);
    assertThat(refused(encode(fromElsewhere), current(3)).reason()).as("a transition from another ring")
        .isEqualTo(RefusalReason.BROKEN_CHAIN);
  }

  @Test
  void rejectsTruncatedBytes() {
    byte[] bytes = encode(epoch(2));
    for (int length : new int[] {0, 1, 2, 9, 10, 11, bytes.length / 2, bytes.length - 1}) {
      Refused refused = refused(Arrays.copyOf(bytes, length), current(1));
      assertThat(refused.reason()).as("first %d of %d bytes", length, bytes.length)
          .isEqualTo(RefusalReason.MALFORMED);
    }
  }

  @Test
  void rejectsTrailingBytes() {
    byte[] bytes = encode(epoch(2));

    assertThat(refused(Arrays.copyOf(bytes, bytes.length + 3), current(1)).reason())
        .isEqualTo(RefusalReason.MALFORMED);
  }

  @Test
  void rejectsATombstone() {
    Refused refused = refused(null, current(1));

    assertThat(refused.reason()).isEqualTo(RefusalReason.MALFORMED);
    assertThat(refused.message()).contains("tombstone");
  }

  @Test
  void rejectsSnapshotOfAnotherCluster() {
    RingSnapshot other = TestSnapshots.ring("other-cluster", 2, 5);
    PublishedSnapshot signed = PublishedSnapshot.unsigned(other, epoch(1).checksum(), List.of()).signedBy(PUBLISHER);

    Refused refused = refused(encode(signed), current(1));

    assertThat(refused.reason()).isEqualTo(RefusalReason.WRONG_CLUSTER);
    assertThat(refused.message()).contains("other-cluster", CLUSTER);
  }

  @Test
  void rejectsInvalidContent() {
    byte[] bytes = alter(epoch(2), r -> r.setVnodes(0));

    assertThat(refused(bytes, current(1)).reason()).isEqualTo(RefusalReason.MALFORMED);
  }
}
