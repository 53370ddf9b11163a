package io.ringshift.audit;

import static org.assertj.core.api.Assertions.assertThat;

import io.ringshift.audit.AuditReplay.Check;
import io.ringshift.audit.AuditReplay.EpochResult;
import io.ringshift.audit.AuditReplay.Failure;
import io.ringshift.audit.AuditReplay.Result;
import io.ringshift.audit.AuditReplay.SnapshotBytes;
import io.ringshift.ring.Member;
import io.ringshift.ring.RingSnapshot;
import io.ringshift.ring.PlacementPolicy;
import io.ringshift.protocol.FillingRange;
import io.ringshift.protocol.PublishedSnapshot;
import io.ringshift.protocol.RingSnapshotCodec;
import io.ringshift.protocol.SigningKey;
import io.ringshift.protocol.TrustedKeys;
import io.ringshift.schemas.avro.EpochRecord;
import io.ringshift.schemas.avro.EpochState;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The replay against histories built with the ring library and signed with a fresh key: a good history passes, and
 * each kind of discrepancy is found at its epoch and named with both values.
 */
class AuditReplayTest {
  private static final String CLUSTER = "default";
  private static final HexFormat HEX = HexFormat.of();

  private static SigningKey key;
  private static TrustedKeys trusted;
  private static History history;

  @BeforeAll
  static void buildHistory() {
    key = SigningKey.generate();
    trusted = TrustedKeys.of(key.publicKey());
    history = History.standard(CLUSTER, key);
  }

  private static Result verify(List<EpochRecord> epochs, List<SnapshotRecord> snapshots) {
    return AuditReplay.verify(epochs, snapshots, trusted);
  }

  private static Failure failureOf(List<EpochRecord> epochs, List<SnapshotRecord> snapshots) {
    Result result = verify(epochs, snapshots);
    assertThat(result.failure()).as("the replay's failure").isNotNull();
    return result.failure();
  }

  /** The history's records with the PUBLISHED record of {@code epoch} replaced. */
  private static List<EpochRecord> withPublished(long epoch, EpochRecord replacement) {
    return history.epochs().stream()
        .map(r -> r.getEpoch() == epoch && r.getState() == EpochState.PUBLISHED ? replacement : r).toList();
  }

  @Test
  void shouldPassAGoodHistory() {
    Result result = verify(history.epochs(), history.snapshots());

    assertThat(result.failure()).isNull();
    assertThat(result.clusters()).singleElement().satisfies(c -> {
      assertThat(c.records()).isEqualTo(15);
      assertThat(c.published()).isEqualTo(5);
      assertThat(c.snapshots()).isEqualTo(5);
    });
    List<EpochResult> epochs = result.clusters().get(0).epochs();
    assertThat(epochs).extracting(EpochResult::epoch).containsExactly(1L, 2L, 3L, 4L, 5L);
    assertThat(epochs).allSatisfy(e -> {
      assertThat(e.ok()).isTrue();
      assertThat(e.snapshot()).isEqualTo(SnapshotBytes.MATCH);
      assertThat(e.signingKeyId()).isEqualTo(key.id());
    });
    assertThat(epochs).extracting(EpochResult::cause)
        .containsExactly("INIT", "JOIN node-010", "FAIL node-002", "FAIL node-002", "DRAIN node-005");
    assertThat(epochs).extracting(EpochResult::members).containsExactly(9, 10, 9, 9, 8);
    assertThat(epochs.get(4).checksum()).isEqualTo(history.snapshot(5).ring().checksumHex());
  }

  @Test
  void shouldPassABalancedHistoryAndReproduceItsTokens() {
    History balanced = new History(CLUSTER, key, 8, 3).policy(PlacementPolicy.BALANCED).init(9, 3)
        .join("node-010", "az-1").fail("node-002").repair().setWeight("node-004", 2.0).drain("node-005");

    Result result = verify(balanced.epochs(), balanced.snapshots());

    assertThat(result.failure()).isNull();
    assertThat(result.clusters().get(0).epochs()).hasSize(6).allSatisfy(e -> assertThat(e.ok()).isTrue());
    assertThat(balanced.snapshot(6).ring().policy()).isEqualTo(PlacementPolicy.BALANCED);
  }

  @Test
  void shouldFindTokensThatTheBalancedAllocatorDidNotChoose() {
    long[] own = new long[8];
    for (int i = 0; i < own.length; i++) {
      own[i] = 0x1000_0000_0000_0000L * i + 12_345;
    }
    History chosen = new History(CLUSTER, key, 8, 3).policy(PlacementPolicy.BALANCED).init(9, 3)
        .joinWithTokens("node-010", "az-1", own);

    Failure failure = failureOf(chosen.epochs(), chosen.snapshots());

    assertThat(failure.epoch()).isEqualTo(2);
    assertThat(failure.check()).isEqualTo(Check.TOKENS);
    assertThat(failure.expected()).contains("node-010").contains("published epoch 1");
    assertThat(failure.found()).contains("0000000000003039");
  }

  @Test
  void shouldRebuildTheFailureEpochWithItsFillingMarks() {
    assertThat(history.snapshot(3).filling()).as("the FAIL epoch's marks").isNotEmpty();
    assertThat(history.snapshot(4).filling()).as("the repair epoch's marks").isEmpty();

    assertThat(verify(history.epochs(), history.snapshots()).passed()).isTrue();
  }

  @Test
  void shouldReportEpochsWhoseSnapshotWasCompactedAway() {
    List<SnapshotRecord> compacted = List.of(history.snapshots().get(4));

    Result result = verify(history.epochs(), compacted);

    assertThat(result.passed()).isTrue();
    assertThat(result.clusters().get(0).epochs()).extracting(EpochResult::snapshot).containsExactly(
        SnapshotBytes.COMPACTED, SnapshotBytes.COMPACTED, SnapshotBytes.COMPACTED, SnapshotBytes.COMPACTED,
        SnapshotBytes.MATCH);
    assertThat(result.count(SnapshotBytes.COMPACTED)).isEqualTo(4);
  }

  @Test
  void shouldReportTheNewestEpochAsAbsentWhenNoSnapshotOfItOrLaterIsOnTheTopic() {
    Result result = verify(history.epochs(), history.snapshots().subList(0, 3));

    assertThat(result.passed()).isTrue();
    assertThat(result.clusters().get(0).epochs()).extracting(EpochResult::snapshot).containsExactly(
        SnapshotBytes.MATCH, SnapshotBytes.MATCH, SnapshotBytes.MATCH, SnapshotBytes.ABSENT, SnapshotBytes.ABSENT);
  }

  @Test
  void shouldIgnoreRecordsThatAreNotPublished() {
    List<EpochRecord> notPublished = new ArrayList<>(history.epochs());
    EpochRecord rejected = EpochRecord.newBuilder(history.publishedRecord(2)).setEpoch(6)
        .setState(EpochState.REJECTED).setTargetChecksum(ByteBuffer.wrap(new byte[32])).build();
    notPublished.add(rejected);

    assertThat(verify(notPublished, history.snapshots()).passed()).isTrue();
  }

  @Test
  void shouldFindSnapshotBytesThatDifferFromTheRebuild() {
    PublishedSnapshot latest = history.snapshot(5);
    Member first = latest.ring().members().get(0);
    byte[] forged = History.forgedWithWeight(latest, first.id(), 2.0);
    List<SnapshotRecord> snapshots = new ArrayList<>(history.snapshots());
    snapshots.add(new SnapshotRecord(CLUSTER, forged, 0, 5));

    Failure failure = failureOf(history.epochs(), snapshots);

    assertThat(failure.check()).isEqualTo(Check.SNAPSHOT_BYTES);
    assertThat(failure.epoch()).isEqualTo(5);
    assertThat(failure.message()).startsWith("cluster default epoch 5: snapshot bytes: expected ")
        .contains("bytes of the snapshot rebuilt from ring.epochs (checksum " + latest.ring().checksumHex()
            + ") and encoded", "at ring.snapshots partition 0 offset 5", "first difference at byte ");
    // The forged bytes name a consistent ring, so they decode; the signature gives them away to a client.
    assertThat(failure.found()).contains("they decode to epoch 5 with checksum ",
        "; its signature does not verify (BAD_SIGNATURE)");
  }

  @Test
  void shouldFindAChangedByteInASnapshot() {
    List<SnapshotRecord> snapshots = new ArrayList<>(history.snapshots());
    byte[] bytes = History.withKeyIdAltered(snapshots.get(1).value(), key.id());
    snapshots.set(1, new SnapshotRecord(CLUSTER, bytes, 0, 1));

    Failure failure = failureOf(history.epochs(), snapshots);

    assertThat(failure.check()).isEqualTo(Check.SNAPSHOT_BYTES);
    assertThat(failure.epoch()).isEqualTo(2);
    int at = Arrays.mismatch(bytes, history.snapshots().get(1).value());
    assertThat(failure.found()).contains("first difference at byte " + at + "; they decode to epoch 2")
        .endsWith("its signature does not verify (UNKNOWN_KEY)");
  }

  @Test
  void shouldSayWhenDifferentBytesCarryAValidSignatureByATrustedKey() {
    // The publisher's key signed a snapshot of epoch 2 with other filling marks than the log records.
    PublishedSnapshot recorded = history.snapshot(2);
    List<FillingRange> marks = FillingRange.between(history.snapshot(1).ring(), recorded.ring());
    byte[] signedElsewhere = new RingSnapshotCodec().encode(
        PublishedSnapshot.unsigned(recorded.ring(), recorded.previousChecksum(), marks).signedBy(key));
    List<SnapshotRecord> snapshots = new ArrayList<>(history.snapshots());
    snapshots.set(1, new SnapshotRecord(CLUSTER, signedElsewhere, 0, 1));

    Failure failure = failureOf(history.epochs(), snapshots);

    assertThat(failure.check()).isEqualTo(Check.SNAPSHOT_BYTES);
    assertThat(failure.found()).contains("and " + marks.size() + " filling marks; its signature verifies with "
        + "trusted key " + key.id());
  }

  @Test
  void shouldFindAWrongTargetChecksum() {
    byte[] wrong = new byte[32];
    wrong[0] = 0x42;
    EpochRecord record = history.publishedRecord(3);
    record.setTargetChecksum(ByteBuffer.wrap(wrong));

    Failure failure = failureOf(withPublished(3, record), history.snapshots());

    assertThat(failure.check()).isEqualTo(Check.CHECKSUM);
    assertThat(failure.epoch()).isEqualTo(3);
    assertThat(failure.expected()).isEqualTo(history.snapshot(3).ring().checksumHex()
        + " (the ring rebuilt from the record's members and parameters)");
    assertThat(failure.found()).isEqualTo(HEX.formatHex(wrong) + " (the record's targetChecksum)");
  }

  @Test
  void shouldFindAChangedMembershipThroughTheChecksum() {
    EpochRecord record = history.publishedRecord(2);
    record.getMembers().get(0).setWeight(1.5);

    Failure failure = failureOf(withPublished(2, record), history.snapshots());

    assertThat(failure.check()).isEqualTo(Check.CHECKSUM);
    assertThat(failure.epoch()).isEqualTo(2);
  }

  @Test
  void shouldFindABrokenHashChain() {
    EpochRecord record = history.publishedRecord(3);
    record.setPreviousChecksum(ByteBuffer.wrap(history.snapshot(1).checksum()));

    Failure failure = failureOf(withPublished(3, record), history.snapshots());

    assertThat(failure.check()).isEqualTo(Check.CHAIN);
    assertThat(failure.epoch()).isEqualTo(3);
    assertThat(failure.message()).isEqualTo("cluster default epoch 3: hash chain: expected "
        + history.snapshot(2).ring().checksumHex() + " (the checksum of published epoch 2), found "
        + history.snapshot(1).ring().checksumHex() + " (the record's previousChecksum)");
  }

  @Test
  void shouldFindAFirstEpochThatClaimsAPredecessor() {
    EpochRecord record = history.publishedRecord(1);
    record.setPreviousChecksum(ByteBuffer.wrap(new byte[32]));

    Failure failure = failureOf(withPublished(1, record), history.snapshots());

    assertThat(failure.check()).isEqualTo(Check.CHAIN);
    assertThat(failure.epoch()).isEqualTo(1);
    assertThat(failure.expected()).startsWith("no previous checksum");
  }

  @Test
  void shouldFindASkippedEpoch() {
    List<EpochRecord> skipped = history.epochs().stream()
        .filter(r -> !(r.getEpoch() == 3 && r.getState() == EpochState.PUBLISHED)).toList();

    Failure failure = failureOf(skipped, history.snapshots());

    assertThat(failure.check()).isEqualTo(Check.EPOCH_SEQUENCE);
    assertThat(failure.epoch()).isEqualTo(4);
    assertThat(failure.message()).isEqualTo("cluster default epoch 4: epoch sequence: expected epoch 3 (the "
        + "previous published epoch 2 + 1), found epoch 4");
  }

  @Test
  void shouldAcceptTheGapARejectedEpochLeavesAndStillFindAGapBelowIt() {
    History rolledBack = new History(CLUSTER, key, 16, 3).init(9, 3).rejectedJoin("node-010", "az-1")
        .join("node-010", "az-1");

    assertThat(verify(rolledBack.epochs(), rolledBack.snapshots()).failure()).isNull();
    List<EpochRecord> published = rolledBack.epochs().stream().filter(r -> r.getState() == EpochState.PUBLISHED)
        .toList();
    assertThat(published).extracting(EpochRecord::getEpoch).containsExactly(1L, 3L);

    List<EpochRecord> noRejection = rolledBack.epochs().stream()
        .filter(r -> r.getState() != EpochState.REJECTED).toList();
    assertThat(failureOf(noRejection, rolledBack.snapshots()).check()).isEqualTo(Check.EPOCH_SEQUENCE);
  }

  /** A change published in stages: every STAGED record is proved, and its stage snapshots are accepted. */
  @Test
  void shouldProveAChangePublishedInStagesAndOneRevertedAfterItsFirstStage() {
    History staged = new History(CLUSTER, key, 16, 3).init(9, 3).stagedJoin("node-010", "az-1", false)
        .stagedJoin("node-011", "az-2", true).join("node-011", "az-2");

    assertThat(verify(staged.epochs(), staged.snapshots()).failure()).isNull();
    assertThat(staged.epochs().stream().filter(r -> r.getState() == EpochState.PUBLISHED).map(EpochRecord::getEpoch))
        .as("epoch 3 was reverted: its number is skipped").containsExactly(1L, 2L, 4L);

    List<EpochRecord> forged = staged.epochs().stream().map(r -> r.getState() != EpochState.STAGED ? r
        : EpochRecord.newBuilder(r).setSignature(java.nio.ByteBuffer.wrap(new byte[64])).build()).toList();
    assertThat(failureOf(forged, staged.snapshots()).check()).isEqualTo(Check.SIGNATURE);
  }

  /** A cancelled epoch's number is never used again either: the next published epoch comes after it. */
  @Test
  void shouldAcceptTheGapACancelledEpochLeaves() {
    History skipped = new History(CLUSTER, key, 16, 3).init(9, 3).rejectedJoin("node-010", "az-1")
        .join("node-010", "az-1");
    List<EpochRecord> cancelled = skipped.epochs().stream().map(r -> r.getState() != EpochState.REJECTED ? r
        : EpochRecord.newBuilder(r).setState(EpochState.CANCELLED).setReason("cancelled by alice").build()).toList();
    assertThat(cancelled).extracting(EpochRecord::getState).contains(EpochState.CANCELLED)
        .doesNotContain(EpochState.REJECTED);

    assertThat(verify(cancelled, skipped.snapshots()).failure()).isNull();
  }

  @Test
  void shouldFindTwoPublishedRecordsForOneEpoch() {
    List<EpochRecord> duplicated = new ArrayList<>(history.epochs());
    int afterEpoch2 = duplicated.indexOf(history.publishedRecord(2)) + 1;
    duplicated.add(afterEpoch2, history.publishedRecord(2));

    Failure failure = failureOf(duplicated, history.snapshots());

    assertThat(failure.check()).isEqualTo(Check.DUPLICATE_EPOCH);
    assertThat(failure.epoch()).isEqualTo(2);
    Result result = verify(duplicated, history.snapshots());
    assertThat(result.clusters().get(0).epochs()).extracting(EpochResult::ok).containsExactly(true, true, false);
  }

  @Test
  void shouldFindASignatureThatDoesNotVerify() {
    EpochRecord record = history.publishedRecord(2);
    byte[] signature = history.snapshot(2).signature();
    signature[0] ^= 0x01;
    record.setSignature(ByteBuffer.wrap(signature));

    Failure failure = failureOf(withPublished(2, record), history.snapshots());

    assertThat(failure.check()).isEqualTo(Check.SIGNATURE);
    assertThat(failure.epoch()).isEqualTo(2);
    assertThat(failure.found()).startsWith("BAD_SIGNATURE: ");
  }

  @Test
  void shouldFindASignatureByAKeyThatIsNotTrusted() {
    SigningKey other = SigningKey.generate();

    Result result = AuditReplay.verify(history.epochs(), history.snapshots(), TrustedKeys.of(other.publicKey()));

    assertThat(result.failure().check()).isEqualTo(Check.SIGNATURE);
    assertThat(result.failure().epoch()).isEqualTo(1);
    assertThat(result.failure().expected()).isEqualTo("a key id among the trusted keys [" + other.id() + "]");
    assertThat(result.failure().found()).startsWith("UNKNOWN_KEY: ").contains(key.id());
  }

  @Test
  void shouldAcceptEpochsSignedByAnyOfTheTrustedKeysAfterARotation() {
    SigningKey rotated = SigningKey.generate();
    History rotation = new History(CLUSTER, key, 16, 3).init(6, 3).rotateTo(rotated).join("node-007", "az-1");

    Result both = AuditReplay.verify(rotation.epochs(), rotation.snapshots(),
        TrustedKeys.of(key.publicKey(), rotated.publicKey()));
    Result onlyNew = AuditReplay.verify(rotation.epochs(), rotation.snapshots(), TrustedKeys.of(rotated.publicKey()));

    assertThat(both.passed()).isTrue();
    assertThat(both.clusters().get(0).epochs()).extracting(EpochResult::signingKeyId)
        .containsExactly(key.id(), rotated.id());
    assertThat(onlyNew.failure().check()).isEqualTo(Check.SIGNATURE);
    assertThat(onlyNew.failure().epoch()).isEqualTo(1);
  }

  @Test
  void shouldFindAPublishedRecordWithoutSignature() {
    EpochRecord record = history.publishedRecord(4);
    record.setSignature(null);
    record.setSigningKeyId(null);

    Failure failure = failureOf(withPublished(4, record), history.snapshots());

    assertThat(failure.check()).isEqualTo(Check.SIGNATURE);
    assertThat(failure.epoch()).isEqualTo(4);
    assertThat(failure.found()).isEqualTo("neither");
  }

  @Test
  void shouldFindFillingMarksThatDoNotFollowFromTheLastCompleteEpoch() {
    // A publisher that dropped one mark, signed what it computed and published it consistently: only the
    // derivation from the log catches it.
    History wrong = new History(CLUSTER, key, 16, 3).init(9, 3).join("node-010", "az-1")
        .fail("node-002", marks -> marks.subList(1, marks.size()));

    Failure failure = failureOf(wrong.epochs(), wrong.snapshots());

    assertThat(failure.check()).isEqualTo(Check.FILLING);
    assertThat(failure.epoch()).isEqualTo(3);
    int derived = FillingRange.between(wrong.snapshot(2).ring(), wrong.snapshot(3).ring()).size();
    assertThat(failure.expected()).startsWith(derived + " marks [")
        .endsWith("(derived from published epoch 2, the last complete one)");
    assertThat(failure.found()).startsWith((derived - 1) + " marks [");
  }

  @Test
  void shouldFindAFailureEpochPublishedWithoutItsFillingMarks() {
    // Clients would read the failure's new replicas before the repair filled them.
    History unmarked = new History(CLUSTER, key, 16, 3).init(9, 3).join("node-010", "az-1")
        .fail("node-002", marks -> List.of());

    Failure failure = failureOf(unmarked.epochs(), unmarked.snapshots());

    assertThat(failure.check()).isEqualTo(Check.FILLING);
    assertThat(failure.epoch()).isEqualTo(3);
    assertThat(failure.found()).isEqualTo("0 marks [] (the record's filling)");
  }

  @Test
  void shouldDeriveFillingMarksFromTheLastCompleteEpochNotTheLastPublishedOne() {
    // Two failures in a row: the second failure epoch's marks are relative to epoch 2, the last complete ring,
    // because the replicas marked in epoch 3 were never filled.
    History twoFailures = new History(CLUSTER, key, 16, 3).init(9, 3).join("node-010", "az-1").fail("node-002")
        .fail("node-004").repair();

    Result result = verify(twoFailures.epochs(), twoFailures.snapshots());

    assertThat(result.passed()).as(String.valueOf(result.failure())).isTrue();
    assertThat(twoFailures.snapshot(4).filling())
        .isEqualTo(FillingRange.between(twoFailures.snapshot(2).ring(), twoFailures.snapshot(4).ring()));
  }

  @Test
  void shouldFindASnapshotWithoutAPublishedRecord() {
    PublishedSnapshot latest = history.snapshot(5);
    RingSnapshot next = latest.ring().toBuilder().epoch(6).build();
    byte[] rogue = new RingSnapshotCodec().encode(PublishedSnapshot.unsigned(next, latest.checksum(), List.of())
        .signedBy(key));
    List<SnapshotRecord> snapshots = new ArrayList<>(history.snapshots());
    snapshots.add(new SnapshotRecord(CLUSTER, rogue, 0, 5));

    Failure failure = failureOf(history.epochs(), snapshots);

    assertThat(failure.check()).isEqualTo(Check.UNPUBLISHED_SNAPSHOT);
    assertThat(failure.epoch()).isEqualTo(6);
    assertThat(failure.found()).isEqualTo("a snapshot of epoch 6 at ring.snapshots partition 0 offset 5 and no "
        + "PUBLISHED record of it");
    // Every published epoch itself passed.
    assertThat(verify(history.epochs(), snapshots).clusters().get(0).epochs()).allMatch(EpochResult::ok);
  }

  @Test
  void shouldFindASnapshotOfAClusterWithoutAnyEpochRecord() {
    List<SnapshotRecord> snapshots = new ArrayList<>(history.snapshots());
    snapshots.add(new SnapshotRecord("ghost", history.snapshots().get(0).value(), 0, 5));

    Failure failure = failureOf(history.epochs(), snapshots);

    assertThat(failure.cluster()).isEqualTo("ghost");
    assertThat(failure.check()).isEqualTo(Check.UNPUBLISHED_SNAPSHOT);
    assertThat(failure.epoch()).isEqualTo(1);
  }

  @Test
  void shouldFindASnapshotThatDoesNotDecode() {
    List<SnapshotRecord> snapshots = new ArrayList<>(history.snapshots());
    snapshots.add(new SnapshotRecord(CLUSTER, new byte[] {1, 2, 3}, 0, 5));

    Failure failure = failureOf(history.epochs(), snapshots);

    assertThat(failure.check()).isEqualTo(Check.UNREADABLE);
    assertThat(failure.epoch()).isNull();
    assertThat(failure.message()).startsWith("cluster default (epoch unknown): unreadable record: expected a "
        + "record this version can decode, found ring.snapshots partition 0 offset 5: ");
  }

  @Test
  void shouldFindARecordWhoseMembershipDoesNotBuildARing() {
    EpochRecord record = history.publishedRecord(2);
    record.setHashId("murmur3");

    Failure failure = failureOf(withPublished(2, record), history.snapshots());

    assertThat(failure.check()).isEqualTo(Check.REBUILD);
    assertThat(failure.found()).contains("names hash \"murmur3\"; this version implements only");
  }

  @Test
  void shouldReplayEveryClusterAndNamesTheOneThatFails() {
    History other = History.standard("eu-west", key);
    List<EpochRecord> epochs = Stream.concat(other.epochs().stream(), history.epochs().stream()).toList();
    List<SnapshotRecord> snapshots = new ArrayList<>(history.snapshots());
    byte[] tampered = History.withKeyIdAltered(other.snapshots().get(4).value(), key.id());
    snapshots.add(new SnapshotRecord("eu-west", tampered, 1, 0));

    Result result = verify(epochs, snapshots);

    // Clusters in id order: default passes first, then eu-west fails at its epoch 5.
    assertThat(result.clusters()).extracting(AuditReplay.ClusterResult::cluster).containsExactly("default", "eu-west");
    assertThat(result.failure().cluster()).isEqualTo("eu-west");
    assertThat(result.failure().epoch()).isEqualTo(5);
    assertThat(result.failure().check()).isEqualTo(Check.SNAPSHOT_BYTES);
  }

}
