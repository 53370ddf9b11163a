package io.ringshift.publisher.internal;

import io.ringshift.ring.RingSnapshot;
import io.ringshift.protocol.EpochRecords;
import io.ringshift.protocol.AvroBytes;
import io.ringshift.protocol.CodecException;
import io.ringshift.protocol.SigningKey;
import io.ringshift.protocol.TrustedKeys;
import io.ringshift.schemas.avro.EpochRecord;
import io.ringshift.schemas.avro.EpochState;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What the publisher knows, rebuilt from {@code ring.epochs} alone: per cluster, the checksum of every published
 * epoch and the record of the last one (its ring and filling marks say which replicas were complete); and the READY records that no PUBLISHED or
 * REJECTED record has answered yet. Pure: no Kafka; not thread-safe (the publisher's one thread owns it).
 *
 * <p>Design. The log is the only state. A publisher reads {@code ring.epochs} from the beginning on every start and
 * feeds every record to {@link #onRecord} in log order, deciding nothing until it has read to the end: by then a
 * READY that was already published has met its PUBLISHED record (which follows it in the same partition, since
 * both are keyed by cluster) and left the pending list, and so has one already rejected. Because the snapshot and
 * the PUBLISHED record are written in one transaction, "published" on {@code ring.epochs} means "published" on
 * {@code ring.snapshots}: a publisher killed anywhere and restarted publishes each epoch exactly once. Its own
 * PUBLISHED and REJECTED records come back through its consumer later; {@link #onRecord} finds them already
 * applied and changes nothing.
 *
 * <p>Only PUBLISHED records signed by a key of {@code historyKeys} (the publisher's own and its earlier ones) make
 * history. Kafka grants writes per topic, and the orchestrator must write {@code ring.epochs}: a PUBLISHED record
 * that does not verify (forged or altered by another writer) is logged as an error and ignored, so the publisher
 * never chains to a ring it did not publish; the READY it would have answered stays pending and is decided.
 */
public final class PublisherState {
  private static final Logger LOG = LoggerFactory.getLogger(PublisherState.class);

  /** One cluster's published history. */
  private static final class Cluster {
    final TreeMap<Long, byte[]> published = new TreeMap<>();
    EpochRecord lastPublished;
    RingSnapshot lastPublishedRing; // built from lastPublished when first needed
    long highestRejected = -1; // of REJECTED, CANCELLED and REVERTED records: numbers never used again
    long highestReverted = -1; // of REVERTED records: numbers readers saw in a stage
    final java.util.TreeSet<Long> dead = new java.util.TreeSet<>(); // numbers of REJECTED, CANCELLED, REVERTED records
  }

  private final Map<String, Cluster> clusters = new HashMap<>();
  private final List<EpochRecord> pending = new ArrayList<>();
  private final TrustedKeys historyKeys;
  private final Transitions transitions;
  private long ignored;

  /** @param historyKeys the keys a PUBLISHED record of the log must be signed by to count as published */
  public PublisherState(TrustedKeys historyKeys) {
    this(historyKeys, true);
  }

  /** @param stages whether changes are published in transition stages (false: every change at the fence) */
  public PublisherState(TrustedKeys historyKeys, boolean stages) {
    this.historyKeys = Objects.requireNonNull(historyKeys, "historyKeys");
    this.transitions = new Transitions(stages);
  }

  /** The staged epochs and the participants. */
  public Transitions transitions() {
    return transitions;
  }

  /**
   * Takes in one record of {@code ring.epochs}, in log order: READY waits to be decided; PUBLISHED becomes the
   * cluster's history and answers the matching READY; REJECTED answers the matching READY. Other states are the
   * orchestrator's business and change nothing.
   */
  public void onRecord(EpochRecord record) {
    onHistory(record);
    transitions.onRecord(record);
  }

  private void onHistory(EpochRecord record) {
    switch (record.getState()) {
      case PLANNED -> pending.add(record);
      case STAGED, FENCE_CUTOVER -> pending.removeIf(p -> p.getState() == EpochState.PLANNED
          && samePlan(p, record));
      case REVERTED -> {
        pending.removeIf(p -> p.getState() == EpochState.PLANNED && samePlan(p, record));
        Cluster c = clusters.computeIfAbsent(record.getClusterId(), id -> new Cluster());
        c.highestRejected = Math.max(c.highestRejected, record.getEpoch());
        c.highestReverted = Math.max(c.highestReverted, record.getEpoch());
        c.dead.add(record.getEpoch());
      }
      case READY -> {
        // A plan the orchestrator made READY needs no answer of its own any more (its READY gets one).
        pending.removeIf(p -> p.getState() == EpochState.PLANNED && p.getEpoch() == record.getEpoch()
            && p.getClusterId().equals(record.getClusterId()));
        pending.add(record);
      }
      case PUBLISHED -> {
        try {
          historyKeys.verify(record);
        } catch (CodecException e) {
          ignored++;
          LOG.error("ignoring a PUBLISHED record on ring.epochs that this publisher cannot have written: {}; only "
              + "the publisher's principal should be able to write PUBLISHED records (docs/publisher.md)",
              e.getMessage());
          return;
        }
        applyPublished(record);
        pending.removeIf(p -> p.getEpoch() == record.getEpoch() && p.getClusterId().equals(record.getClusterId())
            && Objects.equals(p.getTargetChecksum(), record.getTargetChecksum()));
      }
      case REJECTED -> {
        pending.removeIf(p -> answers(record, p));
        Cluster c = clusters.computeIfAbsent(record.getClusterId(), id -> new Cluster());
        c.highestRejected = Math.max(c.highestRejected, record.getEpoch());
        c.dead.add(record.getEpoch());
      }
      case CANCELLED -> {
        // The orchestrator never uses a cancelled epoch's number again: the next epoch comes after it, as after a
        // rejection. (The chain check still ties the next epoch to the last published one.)
        pending.removeIf(p -> p.getState() == EpochState.PLANNED && p.getEpoch() == record.getEpoch()
            && p.getClusterId().equals(record.getClusterId()));
        Cluster c = clusters.computeIfAbsent(record.getClusterId(), id -> new Cluster());
        c.highestRejected = Math.max(c.highestRejected, record.getEpoch());
        c.dead.add(record.getEpoch());
      }
      default -> {
        // PLANNED, SUPERSEDED and states of newer writers: nothing to publish.
      }
    }
  }

  /**
   * Whether {@code rejected} is the publisher's answer to {@code ready}: the READY record with only the state, the
   * reason and the time changed ({@link EpochCheck} writes it so).
   */
  private static boolean samePlan(EpochRecord plan, EpochRecord answer) {
    return plan.getEpoch() == answer.getEpoch() && plan.getClusterId().equals(answer.getClusterId())
        && Objects.equals(plan.getPlanVersion(), answer.getPlanVersion());
  }

  private static boolean answers(EpochRecord rejected, EpochRecord ready) {
    return ready.getEpoch() == rejected.getEpoch() && ready.getClusterId().equals(rejected.getClusterId())
        && asDecided(ready).equals(asDecided(rejected));
  }

  private static EpochRecord asDecided(EpochRecord r) {
    return EpochRecord.newBuilder(r).setState(EpochState.REJECTED).setReason(null).setTimestampMillis(0)
        .setSignature(null).setSigningKeyId(null).build();
  }

  /** The READY records not answered yet, in log order; the list is emptied. */
  public List<EpochRecord> takePending() {
    List<EpochRecord> out = List.copyOf(pending);
    pending.clear();
    return out;
  }

  /** How many PUBLISHED records were ignored because their signature does not verify with a history key. */
  public long ignoredPublished() {
    return ignored;
  }

  /** How many READY records wait to be decided. */
  public int pendingCount() {
    return pending.size();
  }

  /**
   * The verdict on a READY record ({@link EpochCheck#decide}), against the cluster's history as it stands. A
   * {@link Verdict.Publish} changes nothing here until its record is written and passed to {@link #onRecord}.
   */
  public Verdict decide(EpochRecord ready, TaskBook tasks, SigningKey key, long nowMillis) {
    EpochCheck.History history = history(ready.getClusterId());
    if (ready.getState() == EpochState.PLANNED) {
      return transitions.stageDecision(ready, history, key, nowMillis);
    }
    Verdict checked = EpochCheck.decide(ready, history, tasks.tasksOf(ready.getClusterId(), ready.getEpoch()), key,
        nowMillis);
    return transitions.onReady(ready, checked, key, nowMillis);
  }

  /** What to write besides the answers to queued records: reverts and barriers reached. */
  public List<Transitions.Housekeeping> housekeeping(long nowMillis) {
    return transitions.housekeeping(this::history, nowMillis);
  }

  /** The cluster's published history, as {@link EpochCheck} reads it. */
  EpochCheck.History history(String clusterId) {
    Cluster c = clusters.get(clusterId);
    if (c == null || c.published.isEmpty()) {
      return EpochCheck.History.none();
    }
    Map.Entry<Long, byte[]> last = c.published.lastEntry();
    return new EpochCheck.History(Collections.unmodifiableMap(c.published), last.getKey(), last.getValue(),
        c.lastPublished, () -> {
          // Rebuilt once per published epoch, when first needed: replaying a long log rebuilds nothing.
          if (c.lastPublishedRing == null && c.lastPublished != null) {
            c.lastPublishedRing = EpochRecords.rebuild(c.lastPublished);
          }
          return c.lastPublishedRing;
        }, c.highestRejected, c.highestReverted, Collections.unmodifiableNavigableSet(c.dead));
  }

  /** The last published epoch of the cluster, or -1. */
  public long lastPublished(String clusterId) {
    Cluster c = clusters.get(clusterId);
    return c == null || c.published.isEmpty() ? -1 : c.published.lastKey();
  }

  private void applyPublished(EpochRecord record) {
    Cluster c = clusters.computeIfAbsent(record.getClusterId(), id -> new Cluster());
    long epoch = record.getEpoch();
    byte[] checksum = AvroBytes.toArray(record.getTargetChecksum());
    if (!c.published.isEmpty() && epoch <= c.published.lastKey()) {
      byte[] known = c.published.get(epoch);
      if (known == null || !Arrays.equals(known, checksum)) {
        LOG.warn("ring.epochs holds a PUBLISHED record of epoch {} of cluster {} with checksum {}, after epoch {} "
            + "was published with checksum {}; keeping the first", epoch, record.getClusterId(),
            AvroBytes.hex(checksum), epoch, AvroBytes.hex(known));
      }
      return; // our own record read back, or a repeat: already applied
    }
    if (!c.published.isEmpty() && epoch != c.published.lastKey() + 1 && c.highestRejected <= c.published.lastKey()) {
      LOG.warn("ring.epochs holds PUBLISHED epoch {} of cluster {} after epoch {}: the published chain has a gap",
          epoch, record.getClusterId(), c.published.lastKey());
    }
    c.published.put(epoch, checksum);
    c.lastPublished = record;
    c.lastPublishedRing = null;
  }
}
