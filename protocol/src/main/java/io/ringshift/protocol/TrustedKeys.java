package io.ringshift.protocol;

import io.ringshift.protocol.CodecException.Reason;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.PublicKey;
import java.security.spec.X509EncodedKeySpec;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.Collection;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The publisher public keys a reader trusts, by key id. Verifies that a {@link PublishedSnapshot} is signed by one
 * of them. Immutable and thread-safe.
 */
public final class TrustedKeys {
  private final Map<String, PublicKey> keys;
  /** Signatures that verified, with their payloads (key id and signature to payload); null when not remembered. */
  private final Map<String, byte[]> verified;

  private TrustedKeys(Map<String, PublicKey> keys, int remembered) {
    if (keys.isEmpty()) {
      throw new IllegalArgumentException("no trusted publisher key: a reader must trust at least one, or it "
          + "would accept no snapshot");
    }
    this.keys = Map.copyOf(keys);
    this.verified = remembered == 0 ? null : Collections.synchronizedMap(
        new LinkedHashMap<String, byte[]>(16, 0.75f, true) {
          @Override
          protected boolean removeEldestEntry(Map.Entry<String, byte[]> eldest) {
            return size() > remembered;
          }
        });
  }

  /**
   * These keys, remembering the last {@code entries} signatures that verified with their payloads, so that the same
   * signature over the same bytes is checked once (Ed25519 signatures are deterministic: a signature that verified
   * for one payload is compared byte for byte, never trusted for another). For a process that verifies each record
   * many times over: the deterministic simulation, whose every role and client checks every snapshot.
   */
  public TrustedKeys remembering(int entries) {
    if (entries < 1) {
      throw new IllegalArgumentException("entries was " + entries + "; it must be >= 1");
    }
    return new TrustedKeys(keys, entries);
  }

  private boolean verifies(String keyId, PublicKey key, byte[] payload, byte[] signature) {
    if (verified == null) {
      return SigningKey.verify(key, payload, signature);
    }
    String id = keyId + ':' + Base64.getEncoder().encodeToString(signature);
    byte[] known = verified.get(id);
    if (known != null && Arrays.equals(known, payload)) {
      return true;
    }
    if (!SigningKey.verify(key, payload, signature)) {
      return false;
    }
    verified.put(id, payload.clone());
    return true;
  }

  public static TrustedKeys of(PublicKey... keys) {
    return of(List.of(keys));
  }

  public static TrustedKeys of(Collection<PublicKey> keys) {
    Map<String, PublicKey> byId = new LinkedHashMap<>();
    for (PublicKey k : keys) {
      if (!SigningKey.ALGORITHM.equalsIgnoreCase(k.getAlgorithm()) && !"EdDSA".equalsIgnoreCase(k.getAlgorithm())) {
        throw new IllegalArgumentException("trusted key " + SigningKey.keyId(k) + " is a " + k.getAlgorithm()
            + " key; publishers sign with Ed25519");
      }
      byId.put(SigningKey.keyId(k), k);
    }
    return new TrustedKeys(byId, 0);
  }

  /**
   * Reads the {@code PUBLIC KEY} blocks of the given PEM files (a public key file, or a signing key file, whose
   * public block is used).
   *
   * @throws IllegalArgumentException naming the file when it holds no public key or one that is not Ed25519
   */
  public static TrustedKeys read(Collection<Path> files) throws IOException {
    List<PublicKey> keys = new ArrayList<>();
    for (Path file : files) {
      byte[] der = SigningKey.pemBlocks(file, Files.readString(file, StandardCharsets.US_ASCII)).get("PUBLIC KEY");
      if (der == null) {
        throw new IllegalArgumentException("trusted key file " + file + " holds no PUBLIC KEY PEM block");
      }
      try {
        keys.add(KeyFactory.getInstance(SigningKey.ALGORITHM).generatePublic(new X509EncodedKeySpec(der)));
      } catch (GeneralSecurityException e) {
        throw new IllegalArgumentException("trusted key file " + file + " does not hold an Ed25519 public key: "
            + e.getMessage(), e);
      }
    }
    return of(keys);
  }

  /** The trusted keys. */
  public java.util.Collection<PublicKey> publicKeys() {
    return keys.values();
  }

  /** The ids of the trusted keys. */
  public Set<String> ids() {
    return keys.keySet();
  }

  /**
   * Checks the snapshot's signature.
   *
   * @throws CodecException with {@link Reason#UNSIGNED} when it carries no signature, {@link Reason#UNKNOWN_KEY}
   *     when its key id is not trusted, {@link Reason#BAD_SIGNATURE} when the signature does not verify; the
   *     message names the epoch and key
   */
  public void verify(PublishedSnapshot snapshot) {
    if (!snapshot.isSigned()) {
      throw CodecException.of(Reason.UNSIGNED, "epoch %d of cluster %s is not signed; only snapshots signed by a "
          + "trusted publisher key are accepted", snapshot.epoch(), snapshot.clusterId());
    }
    PublicKey key = keys.get(snapshot.signingKeyId());
    if (key == null) {
      throw CodecException.of(Reason.UNKNOWN_KEY, "epoch %d of cluster %s is signed by key %s, which is not "
          + "trusted (trusted: %s)", snapshot.epoch(), snapshot.clusterId(), snapshot.signingKeyId(), keys.keySet());
    }
    if (!verifies(snapshot.signingKeyId(), key, snapshot.signingPayload(), snapshot.signature())) {
      throw CodecException.of(Reason.BAD_SIGNATURE, "epoch %d of cluster %s: the signature by key %s does not "
          + "verify; the snapshot was altered or forged", snapshot.epoch(), snapshot.clusterId(),
          snapshot.signingKeyId());
    }
  }

  /**
   * Checks the signature of a PUBLISHED epoch record ({@code ring.epochs}): the payload is computed from the
   * record's cluster, epoch, target checksum, previous checksum, key id and filling marks, exactly as for the
   * snapshot the record describes, so a forged or altered record is found without rebuilding its ring (whether its
   * members rebuild to the target checksum is a separate check).
   *
   * @throws CodecException with {@link Reason#UNSIGNED}, {@link Reason#UNKNOWN_KEY} or {@link
   *     Reason#BAD_SIGNATURE} as {@link #verify(PublishedSnapshot)}, and {@link Reason#INVALID_CONTENT} for filling
   *     marks out of order
   */
  public void verify(io.ringshift.schemas.avro.EpochRecord published) {
    String what = "PUBLISHED record of epoch " + published.getEpoch() + " of cluster " + published.getClusterId();
    if (published.getSignature() == null || published.getSigningKeyId() == null) {
      throw CodecException.of(Reason.UNSIGNED, "%s is not signed", what);
    }
    PublicKey key = keys.get(published.getSigningKeyId());
    if (key == null) {
      throw CodecException.of(Reason.UNKNOWN_KEY, "%s is signed by key %s, which is not trusted (trusted: %s)",
          what, published.getSigningKeyId(), keys.keySet());
    }
    byte[] payload = PublishedSnapshot.signingPayload(published.getClusterId(), published.getEpoch(),
        AvroBytes.toArray(published.getTargetChecksum()),
        published.getPreviousChecksum() == null ? null : AvroBytes.toArray(published.getPreviousChecksum()),
        published.getSigningKeyId(), RingSnapshotCodec.fromAvro(published.getFilling()));
    if (!verifies(published.getSigningKeyId(), key, payload, AvroBytes.toArray(published.getSignature()))) {
      throw CodecException.of(Reason.BAD_SIGNATURE, "%s: the signature by key %s does not verify; the record was "
          + "altered or forged", what, published.getSigningKeyId());
    }
  }

  @Override
  public String toString() {
    return "TrustedKeys" + keys.keySet();
  }
}
