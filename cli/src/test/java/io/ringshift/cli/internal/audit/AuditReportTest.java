package io.ringshift.cli.internal.audit;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.ringshift.audit.WhatIf;
import io.ringshift.audit.AuditReplay;
import io.ringshift.audit.SnapshotRecord;
import io.ringshift.audit.History;
import io.ringshift.cli.internal.Golden;
import io.ringshift.cli.internal.JsonOutput;
import io.ringshift.audit.AuditReplay.Result;
import io.ringshift.protocol.SigningKey;
import io.ringshift.protocol.TrustedKeys;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

class AuditReportTest {
  private static final ObjectMapper JSON = new ObjectMapper();

  private static SigningKey key;
  private static History history;

  @BeforeAll
  static void buildHistory() {
    key = SigningKey.generate();
    history = History.standard("default", key);
  }

  @Test
  void shouldPrintOneLinePerPublishedEpochAndTheVerdict() {
    Result result = AuditReplay.verify(history.epochs(), history.snapshots().subList(4, 5),
        TrustedKeys.of(key.publicKey()));

    List<String> lines = AuditReport.auditText(result);

    assertThat(lines.get(0)).isEqualTo("cluster default: 5 published epochs of 15 epoch records on ring.epochs, "
        + "1 snapshot on ring.snapshots");
    assertThat(lines.get(1)).matches("EPOCH +STATE +CHECKSUM +KEY +MEMBERS +CAUSE +SNAPSHOT");
    String prefix = history.snapshot(1).ring().checksumHex().substring(0, 12);
    assertThat(lines.get(2)).matches("1 +ok +" + prefix + " +" + key.id() + " +9 +INIT +compacted");
    assertThat(lines.get(3)).matches("2 +ok +[0-9a-f]{12} +ed25519:[0-9a-f]{16} +10 +JOIN node-010 +compacted");
    assertThat(lines.get(6)).matches("5 +ok +[0-9a-f]{12} +ed25519:[0-9a-f]{16} +8 +DRAIN node-005 +match");
    assertThat(lines.get(7)).isEqualTo("audit passed: 5 published epochs verified in 1 cluster; snapshot bytes: "
        + "1 match, 4 compacted, 0 absent");
    assertThat(lines).hasSize(8);
  }

  @Test
  void shouldMarkTheFailingEpochAndPrintNoVerdict() throws Exception {
    List<SnapshotRecord> snapshots = new ArrayList<>(history.snapshots());
    byte[] flipped = History.withKeyIdAltered(snapshots.get(2).value(), key.id());
    snapshots.set(2, new SnapshotRecord("default", flipped, 0, 2));
    Result result = AuditReplay.verify(history.epochs(), snapshots, TrustedKeys.of(key.publicKey()));

    List<String> lines = AuditReport.auditText(result);
    JsonNode json = JSON.readTree(Golden.printed(out -> JsonOutput.print(out,
        AuditReport.auditJson(result))));

    assertThat(lines).hasSize(5);
    assertThat(lines.get(4)).matches("3 +FAIL +[0-9a-f]{12} +ed25519:[0-9a-f]{16} +9 +FAIL node-002 +-");
    assertThat(json.get("passed").asBoolean()).isFalse();
    assertThat(json.get("failure").get("epoch").asLong()).isEqualTo(3);
    assertThat(json.get("failure").get("check").asText()).isEqualTo("snapshot bytes");
    assertThat(json.get("failure").get("message").asText()).isEqualTo(result.failure().message());
    assertThat(json.get("clusters").get(0).get("epochs")).hasSize(3);
  }

  @Test
  void shouldPrintTheAuditJsonOfAPassedReplayByteForByte() {
    Result result = AuditReplay.verify(history.epochs(), history.snapshots().subList(4, 5),
        TrustedKeys.of(key.publicKey()));

    Golden.assertMatches("audit-passed.json", withFixedKeyId(Golden.printed(out -> JsonOutput.print(out,
        AuditReport.auditJson(result)))));
  }

  @Test
  void shouldPrintTheAuditJsonOfAFailedReplayByteForByte() {
    List<SnapshotRecord> snapshots = new ArrayList<>(history.snapshots());
    snapshots.set(2, new SnapshotRecord("default", History.withKeyIdAltered(snapshots.get(2).value(), key.id()), 0,
        2));
    Result result = AuditReplay.verify(history.epochs(), snapshots, TrustedKeys.of(key.publicKey()));

    Golden.assertMatches("audit-failed.json", withFixedKeyId(Golden.printed(out -> JsonOutput.print(out,
        AuditReport.auditJson(result)))));
  }

  @Test
  void shouldPrintTheAuditJsonOfAnUnreadableRecordByteForByte() {
    Result result = new Result(List.of(), AuditReplay.unreadable("default", "ring.epochs partition 0 offset 3",
        "not an Avro single-object message"));

    Golden.assertMatches("audit-unreadable.json", Golden.printed(out -> JsonOutput.print(out,
        AuditReport.auditJson(result))));
  }

  @Test
  void shouldPrintTheWhatIfJsonByteForByte() {
    Golden.assertMatches("what-if.json", Golden.printed(out -> JsonOutput.print(out,
        AuditReport.whatIfJson(WhatIf.replay(history.epochs(), 64, null)))));
    Golden.assertMatches("what-if-replicas.json", Golden.printed(out -> JsonOutput.print(out,
        AuditReport.whatIfJson(WhatIf.replay(history.epochs(), 32, 2)))));
  }

  /** The key is generated per run, so its id (16 hex digits) is replaced by one that is the same every run. */
  private static String withFixedKeyId(String json) {
    return json.replace(key.id(), "ed25519:0123456789abcdef");
  }

  @Test
  void shouldPrintWhatIfFiguresPerEpochAndATotal() {
    List<String> lines = AuditReport.whatIfText(WhatIf.replay(history.epochs(), 64, null));

    assertThat(lines.get(0)).isEqualTo("what-if for cluster default: 5 published epochs; recorded vnodes 16, "
        + "replicas 3; what-if vnodes 64, replicas 3");
    assertThat(lines.get(1)).matches("EPOCH +CAUSE +MEMBERS +MOVED ACTUAL +MOVED WHAT-IF +BALANCE ACTUAL +BALANCE "
        + "WHAT-IF");
    assertThat(lines.get(2)).matches("1 +INIT +9 +- +- +\\d\\.\\d{3} +\\d\\.\\d{3}");
    assertThat(lines.get(3)).matches("2 +JOIN node-010 +10 +\\d+\\.\\d\\d% +\\d+\\.\\d\\d% +\\d\\.\\d{3} +\\d\\.\\d{3}");
    assertThat(lines.get(5)).matches("4 +FAIL node-002 +9 +0\\.00% +0\\.00% .*");
    assertThat(lines.get(7)).matches("total +\\d+\\.\\d\\d% +\\d+\\.\\d\\d% +\\d\\.\\d{3} worst +\\d\\.\\d{3} worst");
  }
}
