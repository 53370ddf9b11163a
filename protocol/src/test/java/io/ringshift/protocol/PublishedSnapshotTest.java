package io.ringshift.protocol;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.ringshift.ring.RingSnapshot;
import io.ringshift.protocol.CodecException.Reason;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class PublishedSnapshotTest {
  private static final SigningKey KEY = SigningKey.generate();
  private final RingSnapshotCodec codec = new RingSnapshotCodec();

  private static RingSnapshot ring(int nodes, long epoch) {
    return Rings.builder(nodes, 3).clusterId("eu-west/cache").epoch(epoch).vnodes(16).build();
  }

  private static RingSnapshot without(RingSnapshot ring, String id, long epoch) {
    return ring.toBuilder().epoch(epoch)
        .members(ring.members().stream().filter(m -> !m.id().equals(id)).toList()).build();
  }

  @Test
  void shouldRoundTripChainFillingAndSignature() {
    RingSnapshot before = ring(6, 7);
    RingSnapshot failed = without(before, "node-0002", 8);
    List<FillingRange> filling = FillingRange.between(before, failed);
    assertThat(filling).isNotEmpty().allSatisfy(f -> assertThat(f.node()).isNotEqualTo("node-0002"));
    PublishedSnapshot signed = PublishedSnapshot.unsigned(failed, before.checksum(), filling).signedBy(KEY);

    PublishedSnapshot decoded = codec.decodePublished(codec.encode(signed));

    assertThat(decoded).isEqualTo(signed);
    assertThat(decoded.signingKeyId()).isEqualTo(KEY.id()).startsWith("ed25519:");
    assertThat(decoded.previousChecksum()).isEqualTo(before.checksum());
    TrustedKeys.of(KEY.publicKey()).verify(decoded);
    assertThat(codec.encode(decoded)).isEqualTo(codec.encode(signed));
  }

  @Test
  void shouldMarkOnlyTheNodesTheFailureAddedToARange() {
    RingSnapshot before = ring(9, 3);
    RingSnapshot after = without(before, "node-0005", 4);
    List<FillingRange> filling = FillingRange.between(before, after);
    for (int r = 0; r < after.tokenCount(); r++) {
      long end = after.rangeEnd(r);
      List<String> old = before.replicasAt(end).ids();
      for (String id : after.replicasOfRange(r).ids()) {
        boolean marked = filling.stream().anyMatch(f -> f.node().equals(id) && f.contains(end));
        assertThat(marked).as("range ending %s, replica %s", Long.toUnsignedString(end), id)
            .isEqualTo(!old.contains(id));
      }
    }
  }

  @Test
  void rejectsASignatureByAnUntrustedKey() {
    PublishedSnapshot signed = PublishedSnapshot.unsigned(ring(4, 1), null, List.of()).signedBy(SigningKey.generate());
    assertThatThrownBy(() -> TrustedKeys.of(KEY.publicKey()).verify(signed))
        .isInstanceOfSatisfying(CodecException.class, e -> assertThat(e.reason()).isEqualTo(Reason.UNKNOWN_KEY))
        .hasMessageContaining(signed.signingKeyId());
  }

  @Test
  void rejectsAnAlteredSignatureAndAnUnsignedSnapshot() {
    PublishedSnapshot signed = PublishedSnapshot.unsigned(ring(4, 2), new byte[32], List.of()).signedBy(KEY);
    byte[] sig = signed.signature();
    sig[5] ^= 1;
    PublishedSnapshot forged = signed.withSignature(sig, signed.signingKeyId());
    TrustedKeys trusted = TrustedKeys.of(KEY.publicKey());
    assertThatThrownBy(() -> trusted.verify(forged))
        .isInstanceOfSatisfying(CodecException.class, e -> assertThat(e.reason()).isEqualTo(Reason.BAD_SIGNATURE));
    PublishedSnapshot unsigned = PublishedSnapshot.unsigned(ring(4, 2), null, List.of());
    assertThatThrownBy(() -> trusted.verify(unsigned))
        .isInstanceOfSatisfying(CodecException.class, e -> assertThat(e.reason()).isEqualTo(Reason.UNSIGNED));
  }

  /** Keys that remember verified signatures accept the same bytes again, and never the signature over other bytes. */
  @Test
  void remembersAVerifiedSignatureOnlyForItsOwnPayload() {
    TrustedKeys trusted = TrustedKeys.of(KEY.publicKey()).remembering(2);
    PublishedSnapshot signed = PublishedSnapshot.unsigned(ring(4, 2), new byte[32], List.of()).signedBy(KEY);
    trusted.verify(signed);
    trusted.verify(signed);
    byte[] otherPrevious = new byte[32];
    otherPrevious[0] = 1;
    PublishedSnapshot moved = PublishedSnapshot.unsigned(signed.ring(), otherPrevious, List.of())
        .withSignature(signed.signature(), signed.signingKeyId());
    assertThatThrownBy(() -> trusted.verify(moved))
        .isInstanceOfSatisfying(CodecException.class, e -> assertThat(e.reason()).isEqualTo(Reason.BAD_SIGNATURE));
    trusted.verify(signed);
    assertThatThrownBy(() -> TrustedKeys.of(KEY.publicKey()).remembering(0))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("entries was 0");
  }

  @Test
  void rejectsASignatureMovedToAnotherChain() {
    PublishedSnapshot signed = PublishedSnapshot.unsigned(ring(4, 2), new byte[32], List.of()).signedBy(KEY);
    byte[] otherPrevious = new byte[32];
    otherPrevious[0] = 1;
    PublishedSnapshot moved = PublishedSnapshot.unsigned(signed.ring(), otherPrevious, List.of())
        .withSignature(signed.signature(), signed.signingKeyId());
    assertThatThrownBy(() -> TrustedKeys.of(KEY.publicKey()).verify(moved))
        .isInstanceOfSatisfying(CodecException.class, e -> assertThat(e.reason()).isEqualTo(Reason.BAD_SIGNATURE));
  }

  @Test
  void shouldRoundTripEachTransitionStageWithThePreviousRing() {
    RingSnapshot before = ring(6, 7);
    RingSnapshot after = ring(7, 8);
    for (TransitionStage stage : List.of(TransitionStage.WRITE_BOTH_READ_OLD, TransitionStage.WRITE_BOTH_READ_NEW)) {
      PublishedSnapshot signed = PublishedSnapshot.transition(after, before, stage).signedBy(KEY);

      byte[] bytes = codec.encode(signed);
      PublishedSnapshot decoded = codec.decodePublished(bytes);

      assertThat(decoded).as("%s", stage).isEqualTo(signed);
      assertThat(decoded.stage()).isEqualTo(stage);
      assertThat(decoded.previous()).isEqualTo(before);
      assertThat(decoded.previousChecksum()).isEqualTo(before.checksum());
      assertThat(RingSnapshotCodec.singleObjectSerde().deserialize(bytes).getFormatVersion())
          .as("a reader of before stages refuses format version 2").isEqualTo(2);
      TrustedKeys.of(KEY.publicKey()).verify(decoded);
    }
    PublishedSnapshot last = PublishedSnapshot.unsigned(after, before.checksum(), List.of()).signedBy(KEY);
    byte[] bytes = codec.encode(last);
    assertThat(codec.decodePublished(bytes).stage()).isEqualTo(TransitionStage.FINAL);
    assertThat(codec.decodePublished(bytes).previous()).isNull();
    assertThat(RingSnapshotCodec.singleObjectSerde().deserialize(bytes).getFormatVersion())
        .as("FINAL stays readable by every reader").isEqualTo(1);
  }

  @Test
  void rejectsAStageSignatureMovedToAnotherStage() {
    RingSnapshot before = ring(6, 7);
    RingSnapshot after = ring(7, 8);
    PublishedSnapshot readOld = PublishedSnapshot.transition(after, before, TransitionStage.WRITE_BOTH_READ_OLD)
        .signedBy(KEY);
    PublishedSnapshot asReadNew = PublishedSnapshot.transition(after, before, TransitionStage.WRITE_BOTH_READ_NEW)
        .withSignature(readOld.signature(), readOld.signingKeyId());
    PublishedSnapshot asFinal = PublishedSnapshot.unsigned(after, before.checksum(), List.of())
        .withSignature(readOld.signature(), readOld.signingKeyId());
    TrustedKeys trusted = TrustedKeys.of(KEY.publicKey());

    for (PublishedSnapshot moved : List.of(asReadNew, asFinal)) {
      assertThatThrownBy(() -> trusted.verify(moved)).as("%s", moved.stage())
          .isInstanceOfSatisfying(CodecException.class, e -> assertThat(e.reason()).isEqualTo(Reason.BAD_SIGNATURE));
    }
  }

  @Test
  void rejectsATransitionWhosePreviousMembersDoNotRebuildItsPreviousChecksum() {
    RingSnapshot before = ring(6, 7);
    RingSnapshot after = ring(7, 8);
    var record = codec.toRecord(PublishedSnapshot.transition(after, before, TransitionStage.WRITE_BOTH_READ_OLD)
        .signedBy(KEY));
    var otherPrevious = RingSnapshotCodec.singleObjectSerde().deserialize(codec.encode(
        PublishedSnapshot.transition(after, ring(5, 7), TransitionStage.WRITE_BOTH_READ_OLD)));

    record.setPreviousMembers(otherPrevious.getPreviousMembers());
    assertThatThrownBy(() -> codec.fromPublishedRecord(record))
        .isInstanceOfSatisfying(CodecException.class, e -> assertThat(e.reason()).isEqualTo(Reason.CHECKSUM_MISMATCH))
        .hasMessageContaining("names previous checksum " + before.checksumHex());
    record.setPreviousMembers(null);
    assertThatThrownBy(() -> codec.fromPublishedRecord(record))
        .isInstanceOfSatisfying(CodecException.class, e -> assertThat(e.reason()).isEqualTo(Reason.INVALID_CONTENT))
        .hasMessageContaining("lacks its previous members");
    record.setFormatVersion(1);
    record.setPreviousEpoch(null);
    assertThatThrownBy(() -> codec.fromPublishedRecord(record)).isInstanceOf(CodecException.class)
        .hasMessageContaining("has format version 1 but stage WRITE_BOTH_READ_OLD");
    record.setFormatVersion(3);
    assertThatThrownBy(() -> codec.fromPublishedRecord(record))
        .isInstanceOfSatisfying(CodecException.class, e -> assertThat(e.reason()).isEqualTo(Reason.UNSUPPORTED_FORMAT));
    assertThatThrownBy(() -> PublishedSnapshot.transition(after, ring(6, 9), TransitionStage.WRITE_BOTH_READ_OLD))
        .isInstanceOf(CodecException.class).hasMessageContaining("moves to a later epoch");
  }

  @Test
  void shouldOrderTheStagesOfAnEpochAfterEachOtherAndBeforeTheNextEpoch() {
    RingSnapshot before = ring(6, 7);
    RingSnapshot after = ring(7, 8);
    PublishedSnapshot previous = PublishedSnapshot.unsigned(before, null, List.of());
    PublishedSnapshot readOld = PublishedSnapshot.transition(after, before, TransitionStage.WRITE_BOTH_READ_OLD);
    PublishedSnapshot readNew = PublishedSnapshot.transition(after, before, TransitionStage.WRITE_BOTH_READ_NEW);
    PublishedSnapshot last = PublishedSnapshot.unsigned(after, before.checksum(), List.of());
    List<PublishedSnapshot> inOrder = List.of(previous, readOld, readNew, last);

    for (int i = 0; i < inOrder.size(); i++) {
      for (int j = 0; j < inOrder.size(); j++) {
        boolean revert = j == 0 && i == 1; // the previous snapshot again reverts the first stage
        assertThat(inOrder.get(j).isAfter(inOrder.get(i))).as("%d after %d", j, i).isEqualTo(j > i || revert);
      }
    }
    assertThat(readOld.follows(previous)).isTrue();
    assertThat(last.follows(previous)).as("every stage of an epoch follows the same previous ring").isTrue();
    PublishedSnapshot otherRing = PublishedSnapshot.transition(ring(8, 8), before, TransitionStage.WRITE_BOTH_READ_NEW);
    assertThat(otherRing.isAfter(readOld)).as("a later stage of another ring of the same epoch").isFalse();
  }

  @Test
  void shouldTakeThePreviousSnapshotAgainAsTheRevertOfTheFirstStageOnly() {
    RingSnapshot before = ring(6, 7);
    RingSnapshot after = ring(7, 8);
    PublishedSnapshot previous = PublishedSnapshot.unsigned(before, new byte[32], List.of());
    PublishedSnapshot readOld = PublishedSnapshot.transition(after, before, TransitionStage.WRITE_BOTH_READ_OLD);
    PublishedSnapshot readNew = PublishedSnapshot.transition(after, before, TransitionStage.WRITE_BOTH_READ_NEW);

    assertThat(previous.isRevertOf(readOld)).isTrue();
    assertThat(previous.isAfter(readOld)).as("the revert replaces the first stage").isTrue();
    assertThat(previous.isAfter(readNew)).as("no revert from the second stage: its readers read the new ring")
        .isFalse();
    assertThat(PublishedSnapshot.unsigned(ring(6, 6), new byte[32], List.of()).isAfter(readOld))
        .as("an older ring that is not the one the transition started from").isFalse();

    RingSnapshot next = ring(6, 9);
    PublishedSnapshot afterRevert = PublishedSnapshot.unsigned(next, before.checksum(), List.of());
    assertThat(afterRevert.follows(readOld)).as("an epoch chained to the revert, met by a reader still in stage 1")
        .isTrue();
    assertThat(afterRevert.follows(readNew)).isFalse();
    assertThat(afterRevert.follows(previous)).isTrue();
  }

  @Test
  void rejectsTruncatedPublishedBytesAtEveryLength() {
    byte[] bytes = codec.encode(PublishedSnapshot.unsigned(ring(4, 2), new byte[32], List.of()).signedBy(KEY));
    for (int n = 0; n < bytes.length; n++) {
      byte[] cut = Arrays.copyOf(bytes, n);
      assertThatThrownBy(() -> codec.decodePublished(cut)).as("first %d bytes", n)
          .isInstanceOf(CodecException.class);
    }
  }

  @Test
  void rejectsFillingThatNamesANonMember() {
    assertThatThrownBy(() -> PublishedSnapshot.unsigned(ring(4, 2), null,
        List.of(new FillingRange(1, 2, "node-9999"))))
        .isInstanceOfSatisfying(CodecException.class, e -> assertThat(e.reason()).isEqualTo(Reason.INVALID_CONTENT))
        .hasMessageContaining("node-9999");
  }

  @Test
  void shouldReadTheKeyFilesItWrites(@TempDir Path dir) throws IOException {
    Path key = dir.resolve("publisher.key");
    Path pub = dir.resolve("publisher.pub");
    KEY.write(key, pub);
    SigningKey read = SigningKey.read(key);
    assertThat(read.id()).isEqualTo(KEY.id());
    PublishedSnapshot signed = PublishedSnapshot.unsigned(ring(4, 1), null, List.of()).signedBy(read);
    TrustedKeys.read(List.of(pub)).verify(signed);
    Files.writeString(pub, "not a key");
    assertThatThrownBy(() -> TrustedKeys.read(List.of(pub)))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining(pub.toString());
  }
}
