package io.ringshift.protocol;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.ringshift.ring.Member;
import io.ringshift.ring.PlacementPolicy;
import io.ringshift.ring.RingSnapshot;
import io.ringshift.protocol.CodecException.Reason;
import io.ringshift.schemas.avro.RingMember;
import io.ringshift.schemas.avro.RingMemberState;
import io.ringshift.protocol.internal.SingleObjectSerde;
import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HexFormat;
import java.util.List;
import java.util.Random;
import java.util.function.Consumer;
import org.apache.avro.SchemaNormalization;
import org.apache.avro.message.BinaryMessageDecoder;
import org.apache.avro.specific.SpecificData;
import org.junit.jupiter.api.Test;

class RingSnapshotCodecTest {
  private final RingSnapshotCodec codec = new RingSnapshotCodec();

  @Test
  void shouldRoundTripMembershipParametersAndChecksum() {
    RingSnapshot ring = Rings.varied();

    RingSnapshot decoded = codec.decode(codec.encode(ring));

    assertThat(decoded.checksumHex()).isEqualTo(ring.checksumHex());
    assertThat(decoded.clusterId()).isEqualTo("eu-west/cache");
    assertThat(decoded.epoch()).isEqualTo(42);
    assertThat(decoded.vnodes()).isEqualTo(64);
    assertThat(decoded.replicas()).isEqualTo(3);
    assertThat(decoded.hashId()).isEqualTo(ring.hashId());
    assertThat(decoded.policyId()).isEqualTo(ring.policyId());
    assertThat(decoded.members()).containsExactlyElementsOf(ring.members());
    assertThat(decoded.tokenCount()).isEqualTo(ring.tokenCount());
    for (String key : List.of("a", "user:1", "", "ключ")) {
      assertThat(decoded.replicasOf(key).ids()).isEqualTo(ring.replicasOf(key).ids());
    }
  }

  @Test
  void shouldRoundTripABalancedRingWithEveryMembersTokens() {
    RingSnapshot ring = Rings.varied().toBuilder().policy(PlacementPolicy.BALANCED).build();

    RingSnapshot decoded = codec.decode(codec.encode(ring));

    assertThat(decoded.policy()).isEqualTo(PlacementPolicy.BALANCED);
    assertThat(decoded.policyId()).isEqualTo("balanced-tokens/zone-aware-walk/v1");
    assertThat(decoded.checksumHex()).isEqualTo(ring.checksumHex());
    assertThat(decoded.tokensByMember()).isDeepEqualTo(ring.tokensByMember());
  }

  @Test
  void shouldRefuseABalancedSnapshotWhoseMemberListsTooFewTokens() {
    RingSnapshot ring = Rings.varied().toBuilder().policy(PlacementPolicy.BALANCED).build();
    io.ringshift.schemas.avro.RingSnapshot record = codec.toRecord(ring);
    List<RingMember> members = new ArrayList<>(record.getMembers());
    RingMember first = members.get(0);
    members.set(0, RingMember.newBuilder(first).setTokens(first.getTokens().subList(0, 1)).build());
    record.setMembers(members);

    assertThatThrownBy(() -> codec.fromRecord(record)).isInstanceOf(CodecException.class)
        .hasMessageContaining(first.getId()).hasMessageContaining("lists 1 tokens");
  }

  @Test
  void shouldEncodeEqualRingsToEqualBytes() {
    List<Member> members = new ArrayList<>(Rings.varied().members());
    Collections.shuffle(members, new Random(7));
    RingSnapshot shuffled = Rings.varied().toBuilder().members(members).build();

    byte[] first = codec.encode(Rings.varied());
    byte[] second = codec.encode(shuffled);

    assertThat(second).isEqualTo(first);
    assertThat(codec.encode(codec.decode(first))).as("re-encoding a decoded snapshot").isEqualTo(first);
  }

  @Test
  void shouldWriteTheStandardSingleObjectFrame() {
    byte[] bytes = codec.encode(Rings.varied());
    long fingerprint = SchemaNormalization.parsingFingerprint64(io.ringshift.schemas.avro.RingSnapshot.getClassSchema());

    assertThat(Arrays.copyOf(bytes, 2)).containsExactly(0xC3, 0x01);
    assertThat(ByteBuffer.wrap(bytes, 2, 8).order(java.nio.ByteOrder.LITTLE_ENDIAN).getLong()).isEqualTo(fingerprint);
  }

  @Test
  void shouldInteroperateWithAvrosOwnMessageEncoderAndDecoder() throws Exception {
    RingSnapshot ring = Rings.varied();
    io.ringshift.schemas.avro.RingSnapshot record = codec.toRecord(ring);

    BinaryMessageDecoder<io.ringshift.schemas.avro.RingSnapshot> avroDecoder =
        new BinaryMessageDecoder<>(new SpecificData(), io.ringshift.schemas.avro.RingSnapshot.getClassSchema());
    assertThat(avroDecoder.decode(codec.encode(ring))).isEqualTo(record);

    byte[] fromAvro = io.ringshift.schemas.avro.RingSnapshot.getEncoder().encode(record).array();
    assertThat(codec.decode(fromAvro).checksumHex()).isEqualTo(ring.checksumHex());
  }

  @Test
  void shouldStayFarUnderTheKafkaMessageLimitAtOneThousandNodes() {
    RingSnapshot ring = Rings.builder(1000, 3).vnodes(256).build();

    long start = System.nanoTime();
    byte[] bytes = codec.encode(ring);
    RingSnapshot decoded = codec.decode(bytes);
    long millis = (System.nanoTime() - start) / 1_000_000;

    System.out.printf("1000 nodes x 256 tokens: %d tokens, snapshot %d bytes, encode + decode (rebuild) %d ms%n",
        ring.tokenCount(), bytes.length, millis);
    assertThat(decoded.checksumHex()).isEqualTo(ring.checksumHex());
    assertThat(bytes.length).as("snapshot bytes; Kafka's default limit is 1,048,588").isLessThan(100_000);
  }

  @Test
  void rejectsBytesWithoutTheSingleObjectMarker() {
    byte[] bytes = codec.encode(Rings.varied());
    bytes[0] = '{';

    assertRefused(bytes, Reason.BAD_HEADER, "starts with 7B 01, expected the marker C3 01");
    assertRefused("{\"members\":[]}".getBytes(java.nio.charset.StandardCharsets.UTF_8), Reason.BAD_HEADER,
        "not an Avro single-object message");
  }

  @Test
  void rejectsBytesTooShortForTheHeader() {
    assertRefused(new byte[0], Reason.BAD_HEADER, "0 bytes is too short");
    assertRefused(new byte[] {(byte) 0xC3, 0x01, 1, 2}, Reason.BAD_HEADER, "4 bytes is too short");
  }

  @Test
  void rejectsTruncatedBytesAtEveryLength() {
    byte[] bytes = codec.encode(Rings.varied());

    for (int length = SingleObjectSerde.HEADER_LENGTH; length < bytes.length; length++) {
      byte[] truncated = Arrays.copyOf(bytes, length);
      assertThatThrownBy(() -> codec.decode(truncated))
          .as("truncated to %d of %d bytes", length, bytes.length)
          .isInstanceOfSatisfying(CodecException.class, e -> assertThat(e.reason()).isEqualTo(Reason.MALFORMED));
    }
    assertRefused(Arrays.copyOf(bytes, bytes.length - 1), Reason.MALFORMED, "truncated RingSnapshot");
  }

  @Test
  void rejectsTrailingBytes() {
    byte[] bytes = codec.encode(Rings.varied());
    byte[] longer = Arrays.copyOf(bytes, bytes.length + 3);

    assertRefused(longer, Reason.MALFORMED, "3 unexpected bytes after the end of the RingSnapshot record");
  }

  @Test
  void rejectsAnUnknownWriterSchema() {
    byte[] bytes = codec.encode(Rings.varied());
    bytes[5] ^= 0x55;

    assertRefused(bytes, Reason.UNKNOWN_SCHEMA, "unknown writer schema: fingerprint 0x");
    assertRefused(bytes, Reason.UNKNOWN_SCHEMA, "is not a known version of io.ringshift.schemas.avro.RingSnapshot");
  }

  @Test
  void rejectsAnotherFormatVersion() {
    assertRefusedRecord(r -> r.setFormatVersion(3), Reason.UNSUPPORTED_FORMAT,
        "snapshot format version 3 is not supported; this reader implements versions 1 and 2");
  }

  @Test
  void rejectsAnUnknownHash() {
    assertRefusedRecord(r -> r.setHashId("murmur3-128/seed=0"), Reason.UNKNOWN_HASH,
        "unknown hash algorithm \"murmur3-128/seed=0\"; this reader implements only xxh3-64/seed=0/utf-8");
  }

  @Test
  void rejectsAnUnknownPolicy() {
    assertRefusedRecord(r -> r.setPolicyId("jump/v1"), Reason.UNKNOWN_POLICY,
        "unknown placement policy \"jump/v1\"; this reader implements only vnode-ring/zone-aware-walk/v1");
  }

  @Test
  void rejectsInvalidMembers() {
    assertRefusedRecord(r -> r.getMembers().get(2).setWeight(-1.0), Reason.INVALID_CONTENT,
        "members[2]: member node-0003: weight was -1.0; weight must be finite and > 0");
    assertRefusedRecord(r -> r.getMembers().get(0).setId(" "), Reason.INVALID_CONTENT,
        "members[0]: member id was \" \"; id must not be blank");
    assertRefusedRecord(r -> r.getMembers().get(1).setZone(""), Reason.INVALID_CONTENT,
        "members[1]: member zone was \"\"; zone must not be blank");
    assertRefusedRecord(r -> r.getMembers().get(1).setId(r.getMembers().get(0).getId()), Reason.INVALID_CONTENT,
        "invalid snapshot: member id \"node-0001\" appears twice; member ids must be unique");
    assertRefusedRecord(r -> r.getMembers().clear(), Reason.INVALID_CONTENT,
        "invalid snapshot: members was empty; a ring needs at least one member");
    assertRefusedRecord(r -> r.setVnodes(0), Reason.INVALID_CONTENT, "invalid snapshot: vnodes was 0");
  }

  @Test
  void rejectsAMemberStateFromANewerSchema() {
    assertRefusedRecord(r -> r.getMembers().get(3).setState(RingMemberState.UNKNOWN), Reason.INVALID_CONTENT,
        "members[3] (id \"node-0004\"): state is one this reader does not know (written by a newer schema)");
  }

  @Test
  void rejectsAChecksumMismatchNamingBothChecksums() {
    RingSnapshot ring = Rings.varied();
    String actual = ring.checksumHex();
    byte[] forged = ring.checksum();
    forged[0] ^= 1;
    String stated = HexFormat.of().formatHex(forged);

    assertRefusedRecord(r -> r.setChecksum(ByteBuffer.wrap(forged)), Reason.CHECKSUM_MISMATCH,
        "checksum mismatch: the snapshot states " + stated + " but its membership and parameters rebuild to "
            + actual);
  }

  @Test
  void rejectsAlteredMembershipWithTheOriginalChecksum() {
    RingSnapshot ring = Rings.varied();

    assertRefusedRecord(r -> r.getMembers().get(0).setWeight(1.0000001), Reason.CHECKSUM_MISMATCH,
        "the snapshot states " + ring.checksumHex());
    assertRefusedRecord(r -> r.setEpoch(43), Reason.CHECKSUM_MISMATCH, "the snapshot states " + ring.checksumHex());
    assertRefusedRecord(r -> r.getMembers().remove(4), Reason.CHECKSUM_MISMATCH, "rebuild to");
  }

  @Test
  void rejectsToEncodeARingThatNoReaderCouldRebuild() {
    RingSnapshot testHashed = Rings.builder(3, 3).hash(new io.ringshift.ring.RingHash() {
      @Override
      public String id() {
        return "test/constant";
      }

      @Override
      public long hash(byte[] bytes, int offset, int length) {
        return length;
      }
    }).build();

    assertThatThrownBy(() -> codec.encode(testHashed))
        .isInstanceOfSatisfying(CodecException.class, e -> assertThat(e.reason()).isEqualTo(Reason.UNKNOWN_HASH))
        .hasMessageContaining("cannot encode a ring placed with hash \"test/constant\"");
  }

  /**
   * Random corruption never escapes as anything but a {@link CodecException}, and never yields a ring other
   * than the one written. Prints its seed; rerun a failure with -Dringshift.seed=SEED.
   *
   * <p>A corrupted weight can claim millions of tokens, and rebuilding such a ring (needed to compare checksums)
   * takes seconds to minutes (see {@link #rebuildCost}); those cases stop after framing and Avro decoding, which
   * is what this test is about, and the checksum refusal is covered by the explicit tests above.
   */
  @Test
  void shouldRefuseRandomCorruptionOrDecodeTheSameRing() {
    long seed = Long.getLong("ringshift.seed", System.nanoTime());
    System.out.println("shouldRefuseRandomCorruptionOrDecodeTheSameRing seed=" + seed);
    Random random = new Random(seed);
    RingSnapshot ring = Rings.builder(12, 3).vnodes(16).build();
    byte[] original = codec.encode(ring);
    AvroSerde<io.ringshift.schemas.avro.RingSnapshot> serde = RingSnapshotCodec.singleObjectSerde();
    int refused = 0;
    for (int trial = 0; trial < 2_000; trial++) {
      byte[] corrupt = original.clone();
      int flips = 1 + random.nextInt(3);
      for (int f = 0; f < flips; f++) {
        int at = SingleObjectSerde.HEADER_LENGTH + random.nextInt(corrupt.length - SingleObjectSerde.HEADER_LENGTH);
        corrupt[at] = (byte) random.nextInt(256);
      }
      try {
        io.ringshift.schemas.avro.RingSnapshot record = serde.deserialize(corrupt);
        if (rebuildCost(record) > 100_000) {
          refused++;
          continue;
        }
        RingSnapshot decoded = codec.fromRecord(record);
        assertThat(decoded.checksumHex()).as("seed %d trial %d decoded a different ring", seed, trial)
            .isEqualTo(ring.checksumHex());
      } catch (CodecException e) {
        refused++;
      }
    }
    assertThat(refused).as("seed %d: most corruptions are refused", seed).isGreaterThan(1_000);
  }

  /** Tokens the record's members claim: what rebuilding it would cost. */
  private static double rebuildCost(io.ringshift.schemas.avro.RingSnapshot record) {
    double tokens = 0;
    for (RingMember m : record.getMembers()) {
      tokens += Math.abs(m.getWeight()) * Math.abs((double) record.getVnodes());
    }
    return Double.isNaN(tokens) ? 0 : tokens;
  }

  @Test
  void shouldNotAllocateWhatACorruptLengthClaims() throws Exception {
    // A cluster id claiming 2^30 bytes, followed by one byte: a stream decoder would allocate 1 GiB first.
    byte[] corrupt = withBody(body -> {
      body.writeInt(RingSnapshotCodec.FORMAT_VERSION);
      body.writeLong(1L << 30);
      body.writeFixed(new byte[] {'c'});
    });

    long before = allocatedBytes();
    assertRefused(corrupt, Reason.MALFORMED, "truncated RingSnapshot");
    long allocated = allocatedBytes() - before;

    assertThat(allocated).as("bytes allocated while refusing a claimed 1 GiB string").isLessThan(16L << 20);
  }

  @Test
  void shouldNotPresizeWhatACorruptItemCountClaims() throws Exception {
    // A member array claiming 20 million items but holding none. Avro 1.12.2 checks item counts against the
    // bytes left before pre-sizing; this guards that behaviour across Avro upgrades.
    byte[] corrupt = withBody(body -> {
      body.writeInt(RingSnapshotCodec.FORMAT_VERSION);
      body.writeString("c");
      body.writeLong(0);
      body.writeString(io.ringshift.ring.RingHash.Xxh3.ID);
      body.writeString(RingSnapshot.POLICY_ID);
      body.writeInt(256);
      body.writeInt(3);
      body.writeLong(20_000_000);
    });

    long before = allocatedBytes();
    assertRefused(corrupt, Reason.MALFORMED, "truncated RingSnapshot");
    long allocated = allocatedBytes() - before;

    assertThat(allocated).as("bytes allocated while refusing a claimed 20 million members").isLessThan(16L << 20);
  }

  private interface BodyWriter {
    void write(org.apache.avro.io.Encoder body) throws java.io.IOException;
  }

  /** The real single-object header followed by a hand-written body. */
  private byte[] withBody(BodyWriter writer) throws java.io.IOException {
    java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
    out.write(codec.encode(Rings.varied()), 0, SingleObjectSerde.HEADER_LENGTH);
    org.apache.avro.io.BinaryEncoder body = org.apache.avro.io.EncoderFactory.get().binaryEncoder(out, null);
    writer.write(body);
    body.flush();
    return out.toByteArray();
  }

  private static long allocatedBytes() {
    return ((com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean()).getCurrentThreadAllocatedBytes();
  }

  private void assertRefused(byte[] bytes, Reason reason, String messagePart) {
    assertThatThrownBy(() -> codec.decode(bytes))
        .isInstanceOfSatisfying(CodecException.class, e -> assertThat(e.reason()).isEqualTo(reason))
        .hasMessageContaining(messagePart);
  }

  /** Encodes a valid record altered by {@code change} through the real serde, then decodes it. */
  private void assertRefusedRecord(
      Consumer<io.ringshift.schemas.avro.RingSnapshot> change, Reason reason, String messagePart) {
    io.ringshift.schemas.avro.RingSnapshot record = codec.toRecord(Rings.varied());
    List<RingMember> members = new ArrayList<>(record.getMembers());
    record.setMembers(members);
    change.accept(record);
    assertRefused(RingSnapshotCodec.singleObjectSerde().serialize(record), reason, messagePart);
  }
}
