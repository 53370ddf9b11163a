package io.ringshift.client.internal;

import io.ringshift.client.RefusalReason;
import io.ringshift.client.internal.GateOutcome.Accepted;
import io.ringshift.client.internal.GateOutcome.Duplicate;
import io.ringshift.client.internal.GateOutcome.Refused;
import io.ringshift.protocol.AvroSerde;
import io.ringshift.protocol.CodecException;
import io.ringshift.protocol.PublishedSnapshot;
import io.ringshift.protocol.RingSnapshotCodec;
import io.ringshift.protocol.TrustedKeys;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.Locale;
import java.util.Objects;

/**
 * Decides whether the bytes of a published snapshot may replace the current one: a pure function of the bytes,
 * the current snapshot, the cluster id and the trusted keys, with no Kafka in sight, so every rule is tested
 * without a broker.
 *
 * <p>Design: the checks run from the cheapest to the dearest, and authenticity before ordering, because the
 * epoch and chain of an unauthenticated snapshot mean nothing:
 * <ol>
 *   <li>a tombstone (no bytes): {@link RefusalReason#MALFORMED};
 *   <li>bytes equal to the current snapshot's: {@link Duplicate} (a producer retry, a re-read after a
 *       restart), without decoding anything;
 *   <li>the single-object frame and the Avro body: {@link RefusalReason#MALFORMED};
 *   <li>the cluster id inside: {@link RefusalReason#WRONG_CLUSTER}, before the dear part;
 *   <li>the ring rebuilt from membership and parameters has the stated checksum ({@link
 *       RefusalReason#CHECKSUM}), and the content obeys the ring's rules ({@link RefusalReason#MALFORMED});
 *   <li>the signature by a trusted key ({@link RefusalReason#UNSIGNED}, {@link RefusalReason#UNKNOWN_KEY},
 *       {@link RefusalReason#BAD_SIGNATURE});
 *   <li>the epoch is not below the floor epoch, the latest signed PUBLISHED on the epochs topic, and is newer
 *       than the current one, or the same epoch and ring in a later transition stage ({@link
 *       RefusalReason#OLDER_EPOCH});
 *   <li>the next epoch names the current checksum as its previous one ({@link RefusalReason#BROKEN_CHAIN}). A
 *       later epoch (a gap) cannot be chained to the current one: {@code ring.snapshots} is compacted and
 *       keeps only the latest snapshot per cluster, so a client that was away misses epochs. It is accepted on
 *       its signature alone and reported as a gap.
 * </ol>
 * With no current snapshot, the first one that passes steps 3 to 6 is accepted. docs/client.md lists the same
 * steps in the same order. The signature proves who published a snapshot, not that it is the latest: an old,
 * genuinely signed snapshot replayed on the topic fails only step 7 (docs/client.md, "Replays, and who may
 * write"). Thread-safe.
 */
public final class SnapshotGate {
  private static final HexFormat HEX = HexFormat.of();

  private final String clusterId;
  private final TrustedKeys trustedKeys;
  private final AvroSerde<io.ringshift.schemas.avro.RingSnapshot> serde;
  private final RingSnapshotCodec codec;

  public SnapshotGate(String clusterId, TrustedKeys trustedKeys) {
    this.clusterId = Objects.requireNonNull(clusterId, "clusterId");
    this.trustedKeys = Objects.requireNonNull(trustedKeys, "trustedKeys");
    this.serde = RingSnapshotCodec.singleObjectSerde();
    this.codec = new RingSnapshotCodec(serde);
  }

  /**
   * Checks {@code bytes} against {@code current}.
   *
   * @param bytes the value of a {@code ring.snapshots} record, or {@code null} for a tombstone
   * @param current the snapshot routed by now, or {@code null} before the first one
   */
  public GateOutcome check(byte[] bytes, AcceptedSnapshot current) {
    return check(bytes, current, -1);
  }

  /**
   * Checks {@code bytes} against {@code current} and a floor epoch: a snapshot of an epoch below {@code floor} is
   * refused with {@link RefusalReason#OLDER_EPOCH} even when the client routes by nothing yet. The floor is the
   * latest epoch a trusted publisher signed PUBLISHED on {@code ring.epochs} ({@link EpochFloor}): it keeps a client
   * that starts cold, without a persist file, from accepting an old genuine snapshot replayed on the compacted
   * snapshots topic, which compaction may have left as the only record of the cluster.
   *
   * @param floor the floor epoch, or -1 for none
   */
  public GateOutcome check(byte[] bytes, AcceptedSnapshot current, long floor) {
    if (bytes == null) {
      return refused(RefusalReason.MALFORMED, -1, "a tombstone (null value) for cluster %s: there is no snapshot "
          + "in it, and the snapshots topic must never delete a cluster's last snapshot", clusterId);
    }
    if (current != null && Arrays.equals(bytes, current.bytes())) {
      return new Duplicate(current.epoch());
    }
    io.ringshift.schemas.avro.RingSnapshot record;
    try {
      record = serde.deserialize(bytes);
    } catch (CodecException e) {
      return refused(RefusalReason.MALFORMED, -1, "%s (%d bytes): %s", e.reason(), bytes.length, e.getMessage());
    } catch (RuntimeException e) {
      return refused(RefusalReason.MALFORMED, -1, "undecodable (%d bytes): %s", bytes.length, e);
    }
    long epoch = record.getEpoch();
    if (!clusterId.equals(record.getClusterId())) {
      return refused(RefusalReason.WRONG_CLUSTER, epoch, "epoch %d is a snapshot of cluster \"%s\"; this client "
          + "follows cluster \"%s\"", epoch, record.getClusterId(), clusterId);
    }
    PublishedSnapshot snapshot;
    try {
      snapshot = codec.fromPublishedRecord(record);
    } catch (CodecException e) {
      RefusalReason reason = e.reason() == CodecException.Reason.CHECKSUM_MISMATCH
          ? RefusalReason.CHECKSUM : RefusalReason.MALFORMED;
      return refused(reason, epoch, "epoch %d: %s: %s", epoch, e.reason(), e.getMessage());
    } catch (RuntimeException e) {
      return refused(RefusalReason.MALFORMED, epoch, "epoch %d does not rebuild: %s", epoch, e);
    }
    try {
      trustedKeys.verify(snapshot);
    } catch (CodecException e) {
      return refused(signatureReason(e.reason()), epoch, "%s", e.getMessage());
    } catch (RuntimeException e) {
      return refused(RefusalReason.BAD_SIGNATURE, epoch, "epoch %d: the signature by key %s cannot be checked: %s",
          epoch, snapshot.signingKeyId(), e);
    }
    if (epoch < floor) {
      return refused(RefusalReason.OLDER_EPOCH, epoch, "epoch %d is older than epoch %d, the latest a trusted "
          + "publisher signed PUBLISHED on the epochs topic: an old snapshot replayed on the snapshots topic", epoch,
          floor);
    }
    if (current == null) {
      return new Accepted(snapshot, false);
    }
    long currentEpoch = current.epoch();
    PublishedSnapshot routed = current.snapshot();
    if (!snapshot.isAfter(routed)) {
      if (epoch == currentEpoch && snapshot.stage() != routed.stage()) {
        return refused(RefusalReason.OLDER_EPOCH, epoch, "epoch %d in stage %s does not come after the current "
            + "epoch %d in stage %s: the stages of an epoch move forward, of one ring (docs/protocol.md)", epoch,
            snapshot.stage(), currentEpoch, routed.stage());
      }
      return refused(RefusalReason.OLDER_EPOCH, epoch, "epoch %d is not newer than the current epoch %d (and is "
          + "not a byte-identical copy of it); epochs only move forward", epoch, currentEpoch);
    }
    if (epoch == currentEpoch) {
      return new Accepted(snapshot, false); // a later stage of the same ring, from the same previous ring
    }
    if (epoch == currentEpoch + 1 && !snapshot.follows(current.snapshot())) {
      byte[] previous = snapshot.previousChecksum();
      return refused(RefusalReason.BROKEN_CHAIN, epoch, "epoch %d names previous checksum %s, but the current "
          + "epoch %d has checksum %s; the next epoch must carry the checksum of the one it follows", epoch,
          previous == null ? "none" : HEX.formatHex(previous), currentEpoch, current.snapshot().ring().checksumHex());
    }
    return new Accepted(snapshot, epoch > currentEpoch + 1);
  }

  private static RefusalReason signatureReason(CodecException.Reason reason) {
    switch (reason) {
      case UNSIGNED:
        return RefusalReason.UNSIGNED;
      case UNKNOWN_KEY:
        return RefusalReason.UNKNOWN_KEY;
      case BAD_SIGNATURE:
        return RefusalReason.BAD_SIGNATURE;
      default:
        // TrustedKeys.verify documents only the three above; anything else is a malformed signature field.
        return RefusalReason.MALFORMED;
    }
  }

  private static Refused refused(RefusalReason reason, long epoch, String format, Object... args) {
    return new Refused(reason, epoch, String.format(Locale.ROOT, format, args));
  }
}
