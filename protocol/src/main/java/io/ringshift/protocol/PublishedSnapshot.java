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
 */
public final class PublishedSnapshot {
  /** Domain separation: a signature over this payload can never be mistaken for one over other bytes. */
  static final String SIGNATURE_DOMAIN = "ringshift/snapshot-signature/v1";

  private final RingSnapshot ring;
  private final byte[] previousChecksum;
  private final List<FillingRange> filling;
  private final byte[] signature;
  private final String signingKeyId;

  private PublishedSnapshot(RingSnapshot ring, byte[] previousChecksum, List<FillingRange> filling,
      byte[] signature, String signingKeyId) {
    this.ring = Objects.requireNonNull(ring, "ring");
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
    return new PublishedSnapshot(ring, previousChecksum, filling, null, null);
  }

  /** The same snapshot with a signature by the given key (computed here over {@link #signingPayload()}). */
  public PublishedSnapshot signedBy(SigningKey key) {
    byte[] payload = signingPayload(ring.clusterId(), ring.epoch(), ring.checksum(), previousChecksum, key.id(),
        filling);
    return new PublishedSnapshot(ring, previousChecksum, filling, key.sign(payload), key.id());
  }

  /**
   * The same snapshot carrying the given signature, for example one recorded in a PUBLISHED epoch record. Not
   * checked here, as with {@link RingSnapshotCodec#decodePublished}: {@link TrustedKeys#verify} checks it.
   */
  public PublishedSnapshot withSignature(byte[] signature, String signingKeyId) {
    return new PublishedSnapshot(ring, previousChecksum, filling, signature, signingKeyId);
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

  /** Whether this snapshot names {@code previous} as the one it follows. */
  public boolean follows(PublishedSnapshot previous) {
    return previousChecksum != null && Arrays.equals(previousChecksum, previous.ring.checksum());
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
    return signingPayload(ring.clusterId(), ring.epoch(), ring.checksum(), previousChecksum, signingKeyId, filling);
  }

  /**
   * The signing payload of a snapshot given by its parts, as {@link #signingPayload()} lays it out. Lets a reader
   * that holds only an epoch record (cluster, epoch, target checksum, previous checksum, key id, filling) check the
   * signature without rebuilding the ring: the checksum stands for it.
   */
  public static byte[] signingPayload(String clusterId, long epoch, byte[] checksum, byte[] previousChecksum,
      String signingKeyId, List<FillingRange> filling) {
    Objects.requireNonNull(clusterId, "clusterId");
    Objects.requireNonNull(checksum, "checksum");
    Objects.requireNonNull(signingKeyId, "signingKeyId");
    ByteArrayOutputStream bytes = new ByteArrayOutputStream(128 + filling.size() * 40);
    try (DataOutputStream out = new DataOutputStream(bytes)) {
      string(out, SIGNATURE_DOMAIN);
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
        && Arrays.equals(signature, p.signature) && Objects.equals(signingKeyId, p.signingKeyId);
  }

  @Override
  public int hashCode() {
    return Objects.hash(ring, Arrays.hashCode(previousChecksum), filling, signingKeyId);
  }

  @Override
  public String toString() {
    return "PublishedSnapshot{cluster=" + ring.clusterId() + ", epoch=" + ring.epoch() + ", checksum="
        + ring.checksumHex() + ", previous=" + (previousChecksum == null ? "none" : HexFormat.of()
        .formatHex(previousChecksum)) + ", filling=" + filling.size() + ", key=" + signingKeyId + "}";
  }
}
