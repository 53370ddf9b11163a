package io.ringshift.protocol;

import io.ringshift.ring.RingSnapshot;
import java.io.ByteArrayOutputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.Objects;

/**
 * A ring snapshot as the publisher publishes it on {@code ring.snapshots}: the verified ring, the checksum of the
 * snapshot it follows (the hash chain), the replicas still being filled after a failure, and the publisher's
 * Ed25519 signature with the id of the key that made it. Immutable; byte arrays are copied in and out.
 *
 * <p>The signature covers {@link #signingPayload()}: a canonical encoding of the cluster id, epoch, ring checksum
 * (which covers membership, parameters and the derived token table), previous checksum, key id and filling marks.
 * It is defined over these values rather than over the Avro bytes so that a reader on any schema version computes
 * the same payload; docs/protocol.md gives the exact layout.
 *
 * <p>A snapshot in a {@linkplain TransitionStage transition stage} other than {@code FINAL} also carries the ring the
 * transition starts from ({@link #previous()}), whose checksum is {@link #previousChecksum()}, and its payload (v2)
 * adds the stage, so a stage can be neither forged nor replayed as another.
 */
public final class PublishedSnapshot {
  /** Domain separation: a signature over this payload can never be mistaken for one over other bytes. */
  static final String SIGNATURE_DOMAIN = "ringshift/snapshot-signature/v1";
  /** The payload of a snapshot in a transition stage: v1's fields, then the stage. */
  static final String STAGE_SIGNATURE_DOMAIN = "ringshift/snapshot-signature/v2";

  private final RingSnapshot ring;
  private final byte[] previousChecksum;
  private final List<FillingRange> filling;
  private final byte[] signature;
  private final String signingKeyId;
  private final TransitionStage stage;
  /** The ring a transition starts from; null for a FINAL snapshot. */
  private final RingSnapshot previous;

  private PublishedSnapshot(RingSnapshot ring, byte[] previousChecksum, List<FillingRange> filling,
      byte[] signature, String signingKeyId, TransitionStage stage, RingSnapshot previous) {
    this.ring = Objects.requireNonNull(ring, "ring");
    this.stage = Objects.requireNonNull(stage, "stage");
    this.previous = previous;
    if (stage != TransitionStage.FINAL) {
      checkTransition(ring, previousChecksum, filling, stage, previous);
    } else if (previous != null) {
      throw new IllegalArgumentException("a FINAL snapshot carries no previous ring; epoch " + ring.epoch());
    }
    this.previousChecksum = previousChecksum == null ? null : previousChecksum.clone();
    this.filling = List.copyOf(filling);
    for (FillingRange mark : this.filling) {
      if (ring.memberIndex(mark.node()) < 0) {
        throw CodecException.of(CodecException.Reason.INVALID_CONTENT,
            "filling range %s names node \"%s\", which is not a member of epoch %d of cluster %s",
            mark, mark.node(), ring.epoch(), ring.clusterId());
      }
    }
    if ((signature == null) != (signingKeyId == null)) {
      throw new IllegalArgumentException("signature and signingKeyId must both be set or both be null");
    }
    this.signature = signature == null ? null : signature.clone();
    this.signingKeyId = signingKeyId;
  }

  /**
   * An unsigned snapshot ready to be signed.
   *
   * @param previousChecksum checksum of the snapshot of {@code ring.epoch() - 1}, or {@code null} for the first
   * @param filling (range, node) pairs not read from yet; empty outside failure epochs
   * @throws CodecException ({@code INVALID_CONTENT}) when a filling mark names a node that is not a member
   */
  public static PublishedSnapshot unsigned(RingSnapshot ring, byte[] previousChecksum, List<FillingRange> filling) {
    return new PublishedSnapshot(ring, previousChecksum, filling, null, null, TransitionStage.FINAL, null);
  }

  /**
   * An unsigned snapshot of {@code ring} in transition stage {@code stage} (not {@code FINAL}) from {@code previous}:
   * its previous checksum is {@code previous}'s.
   *
   * @throws CodecException ({@code INVALID_CONTENT}) when {@code previous} is of another cluster, hash, policy,
   *     vnodes or replicas, or not of an earlier epoch
   */
  public static PublishedSnapshot transition(RingSnapshot ring, RingSnapshot previous, TransitionStage stage) {
    if (stage == TransitionStage.FINAL) {
      throw new IllegalArgumentException("a transition snapshot is in stage WRITE_BOTH_READ_OLD or "
          + "WRITE_BOTH_READ_NEW; FINAL is published with unsigned(...)");
    }
    Objects.requireNonNull(previous, "previous");
    return new PublishedSnapshot(ring, previous.checksum(), List.of(), null, null, stage, previous);
  }

  private static void checkTransition(RingSnapshot ring, byte[] previousChecksum, List<FillingRange> filling,
      TransitionStage stage, RingSnapshot previous) {
    if (previous == null) {
      throw CodecException.of(CodecException.Reason.INVALID_CONTENT,
          "epoch %d of cluster %s is in stage %s but carries no previous ring", ring.epoch(), ring.clusterId(), stage);
    }
    if (!filling.isEmpty()) {
      throw CodecException.of(CodecException.Reason.INVALID_CONTENT, "epoch %d of cluster %s is in stage %s and has "
          + "%d filling marks; a failure epoch is published FINAL, never in stages", ring.epoch(), ring.clusterId(),
          stage, filling.size());
    }
    if (!previous.clusterId().equals(ring.clusterId()) || !previous.hashId().equals(ring.hashId())
        || !previous.policyId().equals(ring.policyId()) || previous.vnodes() != ring.vnodes()
        || previous.replicas() != ring.replicas() || previous.epoch() >= ring.epoch()) {
      throw CodecException.of(CodecException.Reason.INVALID_CONTENT, "epoch %d of cluster %s (%s, %s, vnodes %d, "
          + "replicas %d) cannot be a transition from epoch %d of cluster %s (%s, %s, vnodes %d, replicas %d): a "
          + "transition keeps the cluster, hash, policy, vnodes and replicas and moves to a later epoch",
          ring.epoch(), ring.clusterId(), ring.hashId(), ring.policyId(), ring.vnodes(), ring.replicas(),
          previous.epoch(), previous.clusterId(), previous.hashId(), previous.policyId(), previous.vnodes(),
          previous.replicas());
    }
    if (previousChecksum == null || !Arrays.equals(previousChecksum, previous.checksum())) {
      throw CodecException.of(CodecException.Reason.CHECKSUM_MISMATCH, "epoch %d of cluster %s names previous "
          + "checksum %s, but its previous members rebuild epoch %d with checksum %s", ring.epoch(),
          ring.clusterId(), previousChecksum == null ? "none" : HexFormat.of().formatHex(previousChecksum),
          previous.epoch(), previous.checksumHex());
    }
  }

  /** The same snapshot with a signature by the given key (computed here over {@link #signingPayload()}). */
  public PublishedSnapshot signedBy(SigningKey key) {
    byte[] payload = signingPayload(ring.clusterId(), ring.epoch(), ring.checksum(), previousChecksum, key.id(),
        filling, stage);
    return new PublishedSnapshot(ring, previousChecksum, filling, key.sign(payload), key.id(), stage, previous);
  }

  /**
   * The same snapshot carrying the given signature, for example one recorded in a PUBLISHED epoch record. Not
   * checked here, as with {@link RingSnapshotCodec#decodePublished}: {@link TrustedKeys#verify} checks it.
   */
  public PublishedSnapshot withSignature(byte[] signature, String signingKeyId) {
    return new PublishedSnapshot(ring, previousChecksum, filling, signature, signingKeyId, stage, previous);
  }

  /** The transition stage: {@link TransitionStage#FINAL} for a ring that alone places keys. */
  public TransitionStage stage() {
    return stage;
  }

  /** The ring the transition starts from, or {@code null} for a {@code FINAL} snapshot. */
  public RingSnapshot previous() {
    return previous;
  }

  /**
   * Whether this snapshot comes after {@code current} in the order readers route by: a later epoch, or the same
   * epoch, ring and previous checksum in a later stage, or the {@linkplain #isRevertOf revert} of a transition that
   * still reads the previous ring. (Whether a later epoch chains to {@code current} is {@link #follows}.)
   */
  public boolean isAfter(PublishedSnapshot current) {
    if (isRevertOf(current)) {
      return true;
    }
    if (ring.epoch() != current.ring.epoch()) {
      return ring.epoch() > current.ring.epoch();
    }
    return stage.order() > current.stage.order() && Arrays.equals(ring.checksum(), current.ring.checksum())
        && Arrays.equals(previousChecksum, current.previousChecksum);
  }

  /**
   * Whether this snapshot reverts the transition {@code current} is in (docs/protocol.md, "The reverse path"): it is
   * the {@code FINAL} snapshot of the ring the transition started from ({@code current}'s previous checksum), published
   * again, while {@code current} is in {@link TransitionStage#WRITE_BOTH_READ_OLD}. Safe from that stage only: its
   * readers read the previous ring, which its writers keep writing. No revert exists from
   * {@code WRITE_BOTH_READ_NEW}: the publisher publishes that stage only once the epoch can no longer be abandoned.
   */
  public boolean isRevertOf(PublishedSnapshot current) {
    return stage == TransitionStage.FINAL && current.stage == TransitionStage.WRITE_BOTH_READ_OLD
        && current.previousChecksum != null && Arrays.equals(ring.checksum(), current.previousChecksum);
  }

  public RingSnapshot ring() {
    return ring;
  }

  public String clusterId() {
    return ring.clusterId();
  }

  public long epoch() {
    return ring.epoch();
  }

  /** The ring checksum (32 bytes, a copy). */
  public byte[] checksum() {
    return ring.checksum();
  }

  /** Checksum of the snapshot this one follows (a copy), or {@code null} for a chain's first snapshot. */
  public byte[] previousChecksum() {
    return previousChecksum == null ? null : previousChecksum.clone();
  }

  /** Replicas placed but not complete yet, sorted by {@link FillingRange#ORDER}; empty outside failure epochs. */
  public List<FillingRange> filling() {
    return filling;
  }

  /** The Ed25519 signature (a copy), or {@code null} when unsigned. */
  public byte[] signature() {
    return signature == null ? null : signature.clone();
  }

  /** Id of the signing key ({@link SigningKey#id()}), or {@code null} when unsigned. */
  public String signingKeyId() {
    return signingKeyId;
  }

  public boolean isSigned() {
    return signature != null;
  }

  /**
   * Whether this snapshot names {@code previous} as the one it follows (any stage of it: one ring), or, when
   * {@code previous} is in {@link TransitionStage#WRITE_BOTH_READ_OLD}, the ring that transition started from: the
   * transition was reverted (its epoch number is never used again) and this snapshot follows the revert.
   */
  public boolean follows(PublishedSnapshot previous) {
    if (previousChecksum == null) {
      return false;
    }
    return Arrays.equals(previousChecksum, previous.ring.checksum())
        || previous.stage == TransitionStage.WRITE_BOTH_READ_OLD && previous.previousChecksum != null
            && Arrays.equals(previousChecksum, previous.previousChecksum);
  }

  /**
   * The bytes the signature covers: the domain string, then cluster id, epoch, checksum, previous checksum,
   * signing key id and the filling marks, big-endian, strings and byte arrays as a u32 length and the bytes, an
   * absent previous checksum as length -1.
   *
   * @throws IllegalStateException when the snapshot has no signing key id yet
   */
  public byte[] signingPayload() {
    if (signingKeyId == null) {
      throw new IllegalStateException("an unsigned snapshot has no signing payload: its key id is not set");
    }
    return signingPayload(ring.clusterId(), ring.epoch(), ring.checksum(), previousChecksum, signingKeyId, filling,
        stage);
  }

  /**
   * The signing payload of a snapshot given by its parts, as {@link #signingPayload()} lays it out. Lets a reader
   * that holds only an epoch record (cluster, epoch, target checksum, previous checksum, key id, filling) check the
   * signature without rebuilding the ring: the checksum stands for it.
   */
  public static byte[] signingPayload(String clusterId, long epoch, byte[] checksum, byte[] previousChecksum,
      String signingKeyId, List<FillingRange> filling) {
    return signingPayload(clusterId, epoch, checksum, previousChecksum, signingKeyId, filling, TransitionStage.FINAL);
  }

  /**
   * As {@link #signingPayload(String, long, byte[], byte[], String, List)} for a snapshot in {@code stage}: a
   * {@code FINAL} one is laid out as v1, any other as v2, which has its own domain string and ends with the stage's
   * {@linkplain TransitionStage#order() number} as an i32.
   */
  public static byte[] signingPayload(String clusterId, long epoch, byte[] checksum, byte[] previousChecksum,
      String signingKeyId, List<FillingRange> filling, TransitionStage stage) {
    Objects.requireNonNull(clusterId, "clusterId");
    Objects.requireNonNull(checksum, "checksum");
    Objects.requireNonNull(signingKeyId, "signingKeyId");
    ByteArrayOutputStream bytes = new ByteArrayOutputStream(128 + filling.size() * 40);
    try (DataOutputStream out = new DataOutputStream(bytes)) {
      string(out, stage == TransitionStage.FINAL ? SIGNATURE_DOMAIN : STAGE_SIGNATURE_DOMAIN);
      string(out, clusterId);
      out.writeLong(epoch);
      bytes(out, checksum);
      if (previousChecksum == null) {
        out.writeInt(-1);
      } else {
        bytes(out, previousChecksum);
      }
      string(out, signingKeyId);
      out.writeInt(filling.size());
      for (FillingRange mark : filling) {
        out.writeLong(mark.start());
        out.writeLong(mark.end());
        string(out, mark.node());
      }
      if (stage != TransitionStage.FINAL) {
        out.writeInt(stage.order());
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return bytes.toByteArray();
  }

  private static void string(DataOutputStream out, String s) throws IOException {
    bytes(out, s.getBytes(StandardCharsets.UTF_8));
  }

  private static void bytes(DataOutputStream out, byte[] b) throws IOException {
    out.writeInt(b.length);
    out.write(b);
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof PublishedSnapshot p && ring.equals(p.ring)
        && Arrays.equals(previousChecksum, p.previousChecksum) && filling.equals(p.filling)
        && Arrays.equals(signature, p.signature) && Objects.equals(signingKeyId, p.signingKeyId) && stage == p.stage
        && Objects.equals(previous, p.previous);
  }

  @Override
  public int hashCode() {
    return Objects.hash(ring, Arrays.hashCode(previousChecksum), filling, signingKeyId, stage);
  }

  @Override
  public String toString() {
    return "PublishedSnapshot{cluster=" + ring.clusterId() + ", epoch=" + ring.epoch() + ", checksum="
        + ring.checksumHex() + ", previous=" + (previousChecksum == null ? "none" : HexFormat.of()
        .formatHex(previousChecksum)) + ", filling=" + filling.size() + ", key=" + signingKeyId
        + (stage == TransitionStage.FINAL ? "" : ", stage=" + stage + " from epoch " + previous.epoch()) + "}";
  }
}
