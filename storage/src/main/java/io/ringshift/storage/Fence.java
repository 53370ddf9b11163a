package io.ringshift.storage;

import io.ringshift.ring.RingRange;

/**
 * A fence on a range: from {@code position} on, the store refuses writes to the range tagged with an epoch
 * below {@code epoch} (they get {@link WriteResult.RetryWithEpoch}), so the range's contents at
 * {@code position} are final for every writer of an older epoch. Fences survive a restart.
 *
 * @param range the fenced range
 * @param epoch the epoch the range moves in: writes tagged with it or a later one are accepted
 * @param position the store's sequence number when the fence took effect; every write to the range the store
 *     acknowledged for an older epoch has a sequence number at or below it
 */
public record Fence(RingRange range, long epoch, long position) {}
