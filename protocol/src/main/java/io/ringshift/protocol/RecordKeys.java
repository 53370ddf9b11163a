package io.ringshift.protocol;

import io.ringshift.protocol.CodecException.Reason;
import io.ringshift.schemas.avro.MembershipEvent;
import io.ringshift.schemas.avro.TaskKind;
import java.util.HexFormat;
import java.util.Locale;
import java.util.Objects;

/**
 * The Kafka record keys and task ids of ringshift's topics, built in one place so that every writer and reader
 * agrees on them byte for byte.
 *
 * <p>Why the escaping: cluster ids may contain {@code '/'} (for example {@code eu-west/cache}), so a plain
 * {@code clusterId + "/" + nodeId} would give cluster {@code a/b} with node {@code c} and cluster {@code a} with
 * node {@code b/c} the same key, and compaction of {@code ring.membership} would then drop one cluster's event
 * for the other's. The cluster id is therefore written with {@code '%'} as {@code %25} and {@code '/'} as
 * {@code %2F}, so the first {@code '/'} of a key always ends it; every other character, and the node id, is
 * written as is. A cluster id without those two characters appears unchanged.
 *
 * <p>Keys of {@code ring.epochs} and {@code ring.snapshots} are the plain cluster id and need no helper.
 */
public final class RecordKeys {
  private static final HexFormat HEX = HexFormat.of();

  private RecordKeys() {}

  /**
   * Key of a {@code ring.membership} event: {@code <clusterId>/<nodeId>}, with the cluster id escaped.
   *
   * @throws CodecException with {@link Reason#INVALID_CONTENT} when the cluster id is blank
   */
  public static String membershipKey(String clusterId, String nodeId) {
    Objects.requireNonNull(nodeId, "nodeId");
    return escapedClusterId(clusterId) + "/" + nodeId;
  }

  /**
   * Key of an INIT event, which concerns the whole cluster: {@code <clusterId>/}, the membership key of the
   * empty node id that INIT events carry.
   *
   * @throws CodecException with {@link Reason#INVALID_CONTENT} when the cluster id is blank
   */
  public static String initKey(String clusterId) {
    return membershipKey(clusterId, "");
  }

  /**
   * Key of {@code event} on {@code ring.membership}.
   *
   * @throws CodecException with {@link Reason#INVALID_CONTENT} when the cluster id is blank
   */
  public static String membershipKey(MembershipEvent event) {
    Objects.requireNonNull(event, "event");
    return membershipKey(event.getClusterId(), event.getNodeId());
  }

  /**
   * The deterministic id of a task, and its key on {@code ring.tasks} and {@code ring.task-status}:
   * {@code <clusterId>/<epoch>/<kind>/<rangeStart>-<rangeEnd>/<target>}, with the cluster id escaped, the epoch
   * in decimal, the kind in lower case and the range ends as 16 lowercase hex digits of their unsigned value.
   * Planning the same change twice gives the same ids, which makes re-emitted tasks harmless. The id names what
   * is copied where, not how: when a re-plan of the epoch (after a failure) keeps a task, the task keeps its id
   * and its progress, and the re-emitted record may name other sources; a worker whose checkpoint came from a
   * source that is no longer listed ({@code TaskStatus.source}) starts that copy over.
   *
   * @throws CodecException with {@link Reason#INVALID_CONTENT} when the cluster id or target is blank, the
   *     epoch is negative or the kind is {@link TaskKind#UNKNOWN}
   */
  public static String taskId(String clusterId, long epoch, TaskKind kind, long rangeStart, long rangeEnd,
      String target) {
    Objects.requireNonNull(kind, "kind");
    Objects.requireNonNull(target, "target");
    if (epoch < 0) {
      throw CodecException.of(Reason.INVALID_CONTENT, "epoch was %d; a task's epoch must be >= 0", epoch);
    }
    if (kind == TaskKind.UNKNOWN) {
      throw CodecException.of(Reason.INVALID_CONTENT,
          "task kind was UNKNOWN; UNKNOWN only stands for a kind this version cannot read and is never written");
    }
    if (target.isBlank()) {
      throw CodecException.of(Reason.INVALID_CONTENT, "target was \"%s\"; a task's target must not be blank",
          target);
    }
    return escapedClusterId(clusterId) + "/" + epoch + "/" + kind.name().toLowerCase(Locale.ROOT)
        + "/" + HEX.toHexDigits(rangeStart) + "-" + HEX.toHexDigits(rangeEnd) + "/" + target;
  }

  /** What the kind field of a cancel's cleanup id starts with, followed by the cancelled epoch. */
  private static final String CANCEL_CLEANUP = "cleanup-cancel-";

  /**
   * The id of a CLEANUP task that a CANCEL of epoch {@code cancelledEpoch} emits, as a task of epoch {@code epoch} (the
   * active one), for what the cancelled tasks may have copied: {@code <clusterId>/<epoch>/cleanup-cancel-<cancelled>/
   * <rangeStart>-<rangeEnd>/<target>}. A cancel's cleanups are of another class than the cleanups an epoch emits when
   * it becomes READY (they wait for the cancelled copies to settle, not for a grace period), and the same range and
   * target can have both (a drain of a node, published, then a join of it again that is cancelled): with the plain
   * {@link #taskId} they would share an id, and a worker would take one for the other.
   *
   * @throws CodecException with {@link Reason#INVALID_CONTENT} as {@link #taskId}, or when {@code cancelledEpoch} is
   *     not above {@code epoch}
   */
  public static String cancelCleanupTaskId(String clusterId, long epoch, long cancelledEpoch, long rangeStart,
      long rangeEnd, String target) {
    String plain = taskId(clusterId, epoch, TaskKind.CLEANUP, rangeStart, rangeEnd, target);
    if (cancelledEpoch <= epoch) {
      throw CodecException.of(Reason.INVALID_CONTENT, "cancelled epoch was %d; a cancel's cleanup of epoch %d names "
          + "a later epoch, the one it cancelled", cancelledEpoch, epoch);
    }
    String cleanup = "/" + TaskKind.CLEANUP.name().toLowerCase(Locale.ROOT) + "/";
    int at = plain.indexOf(cleanup);
    return plain.substring(0, at) + "/" + CANCEL_CLEANUP + cancelledEpoch + "/" + plain.substring(at + cleanup.length());
  }

  /**
   * The parts of a task id built by {@link #taskId} or {@link #cancelCleanupTaskId}: its epoch, kind, range and
   * target (the cluster id is left escaped), and the cancelled epoch of a cancel's cleanup. Only the epoch, the range
   * and the target are needed to read a task back from its id.
   *
   * @param cancelledEpoch the epoch a cancel's cleanup follows; null for any other task
   */
  public record TaskIdParts(long epoch, TaskKind kind, long rangeStart, long rangeEnd, String target,
      Long cancelledEpoch) {
    /** The parts of an id of {@link #taskId}. */
    public TaskIdParts(long epoch, TaskKind kind, long rangeStart, long rangeEnd, String target) {
      this(epoch, kind, rangeStart, rangeEnd, target, null);
    }
  }

  /**
   * Reads a task id built by {@link #taskId} or {@link #cancelCleanupTaskId} back into its parts: the escaped cluster id holds no {@code '/'}, so
   * the first four {@code '/'} separate the fields and the rest is the target.
   *
   * @throws CodecException with {@link Reason#INVALID_CONTENT} when {@code taskId} is not of that form; the message
   *     names the id and the field
   */
  public static TaskIdParts parseTaskId(String taskId) {
    Objects.requireNonNull(taskId, "taskId");
    String[] parts = taskId.split("/", 5);
    if (parts.length != 5 || parts[0].isBlank() || parts[4].isBlank()) {
      throw CodecException.of(Reason.INVALID_CONTENT, "task id \"%s\" is not <cluster>/<epoch>/<kind>/<start>-<end>/"
          + "<target>", taskId);
    }
    long epoch;
    try {
      epoch = Long.parseLong(parts[1]);
    } catch (NumberFormatException e) {
      throw CodecException.of(Reason.INVALID_CONTENT, "task id \"%s\": epoch \"%s\" is not a number", taskId,
          parts[1]);
    }
    TaskKind kind;
    Long cancelled = null;
    try {
      if (parts[2].startsWith(CANCEL_CLEANUP)) {
        kind = TaskKind.CLEANUP;
        cancelled = Long.parseLong(parts[2].substring(CANCEL_CLEANUP.length()));
      } else {
        kind = TaskKind.valueOf(parts[2].toUpperCase(Locale.ROOT));
      }
    } catch (IllegalArgumentException e) {
      throw CodecException.of(Reason.INVALID_CONTENT, "task id \"%s\": kind \"%s\" is not a task kind", taskId,
          parts[2]);
    }
    String[] range = parts[3].split("-", -1);
    if (epoch < 0 || kind == TaskKind.UNKNOWN || range.length != 2 || range[0].length() != 16
        || range[1].length() != 16) {
      throw CodecException.of(Reason.INVALID_CONTENT, "task id \"%s\": epoch, kind or range \"%s\" out of rule "
          + "(epoch >= 0, a known kind, a range of two 16-digit hex tokens)", taskId, parts[3]);
    }
    try {
      return new TaskIdParts(epoch, kind, HexFormat.fromHexDigitsToLong(range[0]),
          HexFormat.fromHexDigitsToLong(range[1]), parts[4], cancelled);
    } catch (IllegalArgumentException e) {
      throw CodecException.of(Reason.INVALID_CONTENT, "task id \"%s\": range \"%s\" is not two hex tokens", taskId,
          parts[3]);
    }
  }

  private static String escapedClusterId(String clusterId) {
    Objects.requireNonNull(clusterId, "clusterId");
    if (clusterId.isBlank()) {
      throw CodecException.of(Reason.INVALID_CONTENT, "clusterId was \"%s\"; clusterId must not be blank",
          clusterId);
    }
    // '%' first, so the '%' that escapes a '/' is not escaped again.
    return clusterId.replace("%", "%25").replace("/", "%2F");
  }
}
