package io.ringshift.worker.internal;

import io.ringshift.protocol.AvroBytes;
import io.ringshift.schemas.avro.RangeCopyTask;
import io.ringshift.schemas.avro.TaskState;
import io.ringshift.schemas.avro.TaskStatus;
import io.ringshift.storage.Store;
import java.nio.ByteBuffer;

/**
 * A task's progress as this worker knows it: what {@code ring.task-status} records (the checkpoint) plus the
 * exact key of the last copied entry, which a status does not carry. Confined to the task's thread, except
 * {@link #toStatus}, which the dispatcher calls under the run's lock to re-publish.
 */
final class Progress {
  TaskState state = TaskState.PENDING;
  /** Read by the dispatcher to decide whether a re-plan restarts the task. */
  volatile String source;
  Long watermark;
  Long lastCopiedToken;
  /** The key at {@link #lastCopiedToken} when this worker copied it; null when resumed from a status. */
  byte[] lastCopiedKey;
  long copiedBytes;
  Long caughtUpPosition;
  Long fencePosition;
  byte[] digest;
  byte[] targetDigest;
  /** VERIFIED: the target store's incarnation when it verified. */
  String targetIncarnation;
  String blockedReason;
  String error;
  /** The range's bytes on the source, from its digest when the copy (re)started; null before. */
  Long rangeBytes;
  Long startedMillis;

  /** The checkpoint of a previous status, or a fresh task when there is none. */
  static Progress from(TaskStatus previous) {
    Progress p = new Progress();
    if (previous == null) {
      return p;
    }
    p.state = previous.getState();
    p.source = previous.getSource();
    p.watermark = previous.getWatermark();
    p.lastCopiedToken = previous.getLastCopiedToken();
    p.copiedBytes = previous.getCopiedBytes();
    p.caughtUpPosition = previous.getCaughtUpPosition();
    p.fencePosition = previous.getFencePosition();
    p.digest = AvroBytes.toArray(previous.getDigest());
    p.targetDigest = AvroBytes.toArray(previous.getTargetDigest());
    p.targetIncarnation = previous.getTargetIncarnation();
    p.blockedReason = previous.getBlockedReason();
    p.error = previous.getError();
    p.startedMillis = previous.getStartedMillis();
    p.rangeBytes = previous.getRangeBytes();
    if (p.source == null || p.watermark == null) {
      p.forgetSource();
    }
    return p;
  }

  /** Whether a copy from {@code node} can continue from this checkpoint instead of starting over. */
  boolean canResumeFrom(String node) {
    return node.equals(source) && watermark != null;
  }

  /** Whether the snapshot copy is done: catch-up runs from {@link #caughtUpPosition}. */
  boolean snapshotCopied() {
    return watermark != null && caughtUpPosition != null;
  }

  /** Where a resumed scan continues: after the exact key when known, else at the position itself. */
  Store.Cursor cursor() {
    if (lastCopiedToken == null) {
      return null;
    }
    return new Store.Cursor(lastCopiedToken, lastCopiedKey == null ? new byte[0] : lastCopiedKey);
  }

  /** Starts over (another source, or the source's log no longer reaches back to W): nothing carries over. */
  void forgetSource() {
    source = null;
    watermark = null;
    lastCopiedToken = null;
    lastCopiedKey = null;
    caughtUpPosition = null;
    fencePosition = null;
    copiedBytes = 0;
    digest = null;
    targetDigest = null;
    rangeBytes = null;
  }

  /** The status to publish: this progress, stamped with the worker and the time. */
  TaskStatus toStatus(RangeCopyTask task, String workerId, long nowMillis) {
    return TaskStatus.newBuilder()
        .setTaskId(task.getTaskId())
        .setClusterId(task.getClusterId())
        .setEpoch(task.getEpoch())
        .setState(state)
        .setCopiedBytes(copiedBytes)
        .setLastCopiedToken(lastCopiedToken)
        .setWatermark(watermark)
        .setCaughtUpPosition(caughtUpPosition)
        .setFencePosition(fencePosition)
        .setDigest(digest == null ? null : ByteBuffer.wrap(digest.clone()))
        .setTargetDigest(targetDigest == null ? null : ByteBuffer.wrap(targetDigest.clone()))
        .setTargetIncarnation(targetIncarnation)
        .setBlockedReason(blockedReason)
        .setError(error)
        .setWorkerId(workerId)
        .setTimestampMillis(nowMillis)
        .setSource(source)
        .setStartedMillis(startedMillis)
        .setRangeBytes(rangeBytes)
        .build();
  }

}
