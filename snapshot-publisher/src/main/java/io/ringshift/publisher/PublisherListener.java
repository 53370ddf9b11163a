package io.ringshift.publisher;

import io.ringshift.schemas.avro.EpochRecord;
import java.time.Duration;

/**
 * Told of each decision a {@link SnapshotPublisher} has committed, on the publisher's thread, after the commit, and
 * of each READY epoch that waits for its tasks: a slow listener delays the next decision. A RuntimeException from
 * a listener ends the current session as a Kafka error would (a new one starts a second later and reads the log
 * again; during {@link SnapshotPublisher#start()}, start fails); an {@link Error} stops the publisher. The methods
 * do nothing by default.
 */
public interface PublisherListener {
  /** A listener that ignores everything. */
  PublisherListener NONE = new PublisherListener() { };

  /** {@code record} (state PUBLISHED, signed) and its snapshot are committed. */
  default void published(EpochRecord record) { }

  /** {@code record} (state REJECTED, with the reason) is committed; nothing was published. */
  default void rejected(EpochRecord record) { }

  /**
   * {@code ready} fails a check on its tasks as the publisher has read them so far, which may lag behind the READY
   * record; it reads them again and decides again for up to {@code patience}, and only then rejects the epoch,
   * with the reason of its last look. Called once per READY record, when it first waits. {@code reason} is what
   * the REJECTED record would say now.
   */
  default void waiting(EpochRecord ready, String reason, Duration patience) { }

  /**
   * This publisher became the one that publishes ({@code true}: it holds the lease of its transactional id) or
   * stands by ({@code false}: another publisher with the same id holds it). Called on the lease's thread.
   */
  default void activeChanged(boolean active) { }

  /**
   * This instance wrote a transition record (docs/protocol.md, "Transition stages"): STAGED (a stage published),
   * REVERTED (a staged plan abandoned, the previous snapshot published again), FENCE_CUTOVER (a change published
   * without stages, and why) or CONVERGED (every live participant reached a stage).
   */
  default void transition(EpochRecord record) { }

  /** {@code record}'s epoch waits for the participants to reach a stage; {@code reason} names the stragglers. */
  default void holding(EpochRecord record, String reason) { }
}
