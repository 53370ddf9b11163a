package io.ringshift.simulation.internal;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Kafka as the protocol relies on it: topics of ordered partitions of keyed records, compaction (the latest record of a
 * key stays, tombstones go after a while), transactions that make records of several topics visible together to
 * read_committed readers (their commit markers land partition by partition, at slightly different times, as Kafka's
 * do), fencing of an older producer of a transactional id by a newer one, and readers whose positions advance only
 * when their owner polls. Which partition a key goes to is a fixed function of the key. Single threaded: the event loop
 * drives it.
 */
public final class SimKafka {
  /** Thrown by a commit (or a begin) of a producer that a newer one of its transactional id fenced. */
  public static final class Fenced extends RuntimeException {
    Fenced(String message) {
      super(message, null, false, false);
    }
  }

  /** One record: where it is, what it holds, and the transaction it was written in (null: none). */
  public static final class Rec {
    public final String topic;
    public final int partition;
    public final long offset;
    public final String key;
    public final byte[] value;
    public final long timestamp;
    final Txn txn;
    /** The decoded value, cached by whoever decodes it first. */
    public Object decoded;

    Rec(String topic, int partition, long offset, String key, byte[] value, long timestamp, Txn txn) {
      this.topic = topic;
      this.partition = partition;
      this.offset = offset;
      this.key = key;
      this.value = value;
      this.timestamp = timestamp;
      this.txn = txn;
    }

    boolean aborted() {
      return txn != null && txn.state == TxnState.ABORTED;
    }
  }

  enum TxnState { OPEN, COMMITTED, ABORTED }

  /** A transaction of one producer of a transactional id. */
  public static final class Txn {
    final String transactionalId;
    final int producerEpoch;
    TxnState state = TxnState.OPEN;
    final Set<Partition> touched = new LinkedHashSet<>();
    final Set<Partition> markers = new HashSet<>();

    Txn(String transactionalId, int producerEpoch) {
      this.transactionalId = transactionalId;
      this.producerEpoch = producerEpoch;
    }
  }

  static final class Partition {
    final String topic;
    final int index;
    final ArrayList<Rec> recs = new ArrayList<>();
    long nextOffset;

    Partition(String topic, int index) {
      this.topic = topic;
      this.index = index;
    }

    /** The offset read_committed readers read up to (excluded): the first record of an unfinished transaction. */
    long visibleEnd() {
      for (Rec r : recs) {
        if (r.txn != null && (r.txn.state == TxnState.OPEN
            || (r.txn.state == TxnState.COMMITTED && !r.txn.markers.contains(this)))) {
          return r.offset;
        }
      }
      return nextOffset;
    }

    /** Index of the first record at or after {@code offset}. */
    int indexOf(long offset) {
      int lo = 0;
      int hi = recs.size();
      while (lo < hi) {
        int mid = (lo + hi) >>> 1;
        if (recs.get(mid).offset < offset) {
          lo = mid + 1;
        } else {
          hi = mid;
        }
      }
      return lo;
    }

    @Override
    public String toString() {
      return topic + "-" + index;
    }
  }

  /** A topic and its partitions. */
  public static final class Topic {
    final String name;
    final boolean compacted;
    final List<Partition> partitions = new ArrayList<>();

    Topic(String name, int partitions, boolean compacted) {
      this.name = name;
      this.compacted = compacted;
      for (int i = 0; i < partitions; i++) {
        this.partitions.add(new Partition(name, i));
      }
    }
  }

  private final EventLoop loop;
  private final SimRandom random;
  private final Trace trace;
  private final Map<String, Topic> topics = new LinkedHashMap<>();
  private final Map<String, Integer> producerEpochs = new HashMap<>();
  private final Map<String, Txn> openTxns = new HashMap<>();
  private final Map<String, List<Runnable>> listeners = new HashMap<>();
  /** The longest a commit marker takes to land on one partition after the commit. */
  private final long maxMarkerDelay;

  public SimKafka(EventLoop loop, SimRandom random, Trace trace, long maxMarkerDelay) {
    this.loop = loop;
    this.random = random;
    this.trace = trace;
    this.maxMarkerDelay = maxMarkerDelay;
  }

  public void create(String name, int partitions, boolean compacted) {
    topics.put(name, new Topic(name, partitions, compacted));
  }

  Topic topic(String name) {
    Topic t = topics.get(name);
    if (t == null) {
      throw new IllegalArgumentException("no topic " + name);
    }
    return t;
  }

  /** Calls {@code listener} whenever records of {@code topic} become visible to read_committed readers. */
  public void onVisible(String topic, Runnable listener) {
    listeners.computeIfAbsent(topic, t -> new ArrayList<>()).add(listener);
  }

  private void visible(String topic) {
    for (Runnable l : listeners.getOrDefault(topic, List.of())) {
      l.run();
    }
  }

  private Partition partitionFor(Topic topic, String key) {
    int h = key == null ? 0 : key.hashCode();
    return topic.partitions.get(Math.floorMod(h, topic.partitions.size()));
  }

  private Rec add(String topicName, String key, byte[] value, long timestamp, Txn txn) {
    Topic topic = topic(topicName);
    Partition p = partitionFor(topic, key);
    Rec r = new Rec(topicName, p.index, p.nextOffset++, key, value, timestamp, txn);
    p.recs.add(r);
    trace.mix(topicName);
    trace.mix(key == null ? "" : key);
    trace.mix(value);
    return r;
  }

  /** Writes a record outside any transaction (an idempotent producer): visible at once. */
  public Rec append(String topic, String key, byte[] value, long timestamp) {
    Rec r = add(topic, key, value, timestamp, null);
    visible(topic);
    return r;
  }

  /**
   * A new producer of {@code transactionalId}: fences every earlier one, aborts the transaction an earlier one left
   * open, and returns its producer epoch.
   */
  public int initTransactions(String transactionalId) {
    Txn open = openTxns.remove(transactionalId);
    if (open != null) {
      abort(open);
    }
    return producerEpochs.merge(transactionalId, 1, Integer::sum);
  }

  private void checkNotFenced(String transactionalId, int epoch) {
    Integer current = producerEpochs.get(transactionalId);
    if (current == null || current != epoch) {
      throw new Fenced("producer epoch " + epoch + " of transactional id " + transactionalId + " was fenced by epoch "
          + current);
    }
  }

  /** Begins a transaction of the producer {@code (transactionalId, epoch)}. */
  public Txn begin(String transactionalId, int epoch) {
    checkNotFenced(transactionalId, epoch);
    Txn txn = new Txn(transactionalId, epoch);
    openTxns.put(transactionalId, txn);
    return txn;
  }

  /** Writes a record in {@code txn}: invisible until it commits. */
  public void send(Txn txn, String topic, String key, byte[] value, long timestamp) {
    if (txn.state != TxnState.OPEN) {
      throw new IllegalStateException("transaction of " + txn.transactionalId + " is " + txn.state);
    }
    Rec r = add(topic, key, value, timestamp, txn);
    txn.touched.add(topic(topic).partitions.get(r.partition));
  }

  /**
   * Commits {@code txn}: every record of it becomes visible, partition by partition as its commit markers land (each
   * within the maximum marker delay). Throws {@link Fenced}, aborting it, when a newer producer fenced this one.
   */
  public void commit(Txn txn) {
    try {
      checkNotFenced(txn.transactionalId, txn.producerEpoch);
    } catch (Fenced f) {
      abort(txn);
      throw f;
    }
    txn.state = TxnState.COMMITTED;
    openTxns.remove(txn.transactionalId, txn);
    for (Partition p : txn.touched) {
      long delay = maxMarkerDelay == 0 ? 0 : random.between(0, maxMarkerDelay);
      loop.after(delay, "marker " + p, () -> {
        txn.markers.add(p);
        visible(p.topic);
      });
    }
  }

  /** Aborts {@code txn}: none of its records is ever visible. */
  public void abort(Txn txn) {
    if (txn.state == TxnState.OPEN) {
      txn.state = TxnState.ABORTED;
      openTxns.remove(txn.transactionalId, txn);
      for (Partition p : txn.touched) {
        visible(p.topic);
      }
    }
  }

  /**
   * Compacts {@code topic} below what readers can see: keeps the latest record of each key, and drops a tombstone once it
   * is older than {@code tombstoneRetention}.
   */
  public void compact(String topicName, long tombstoneRetention) {
    Topic topic = topic(topicName);
    if (!topic.compacted) {
      return;
    }
    long now = loop.now();
    for (Partition p : topic.partitions) {
      long end = p.visibleEnd();
      Map<String, Long> latest = new HashMap<>();
      for (Rec r : p.recs) {
        if (r.offset < end && !r.aborted()) {
          latest.put(r.key, r.offset);
        }
      }
      p.recs.removeIf(r -> r.offset < end && (r.aborted() || !Long.valueOf(r.offset).equals(latest.get(r.key))
          || (r.value == null && now - r.timestamp > tombstoneRetention)));
    }
  }

  /** Every record of a topic that committed, in partition then offset order (for the checks). */
  public List<Rec> committed(String topicName) {
    List<Rec> out = new ArrayList<>();
    for (Partition p : topic(topicName).partitions) {
      for (Rec r : p.recs) {
        if (r.txn == null || r.txn.state == TxnState.COMMITTED) {
          out.add(r);
        }
      }
    }
    return out;
  }

  /** A read_committed reader of some partitions, with its own positions. */
  public final class Reader {
    private final LinkedHashMap<Partition, Long> positions = new LinkedHashMap<>();

    /** Assigns every partition of {@code topicNames}, from the beginning. */
    public Reader assignAll(String... topicNames) {
      for (String name : topicNames) {
        for (Partition p : topic(name).partitions) {
          positions.put(p, 0L);
        }
      }
      return this;
    }

    /** Assigns partition {@code index} of {@code topicName} from the beginning. */
    public void assign(String topicName, int index) {
      positions.put(topic(topicName).partitions.get(index), 0L);
    }

    /** Stops reading partition {@code index} of {@code topicName}. */
    public void unassign(String topicName, int index) {
      positions.remove(topic(topicName).partitions.get(index));
    }

    /**
     * Up to {@code max} visible records after the positions, taken partition by partition from a random one (so
     * partitions interleave as a consumer's fetches do, each in its order), advancing the positions.
     */
    public List<Rec> poll(int max) {
      return poll(max, true);
    }

    private List<Rec> poll(int max, boolean interleave) {
      List<Rec> out = new ArrayList<>();
      List<Partition> parts = new ArrayList<>(positions.keySet());
      if (parts.isEmpty()) {
        return out;
      }
      int start = interleave ? random.nextInt(parts.size()) : 0;
      for (int k = 0; k < parts.size() && out.size() < max; k++) {
        Partition p = parts.get((start + k) % parts.size());
        long pos = positions.get(p);
        long end = p.visibleEnd();
        int i = p.indexOf(pos);
        while (i < p.recs.size() && out.size() < max) {
          Rec r = p.recs.get(i);
          if (r.offset >= end) {
            break;
          }
          if (!r.aborted()) {
            out.add(r);
          }
          pos = r.offset + 1;
          i++;
        }
        if (i >= p.recs.size() || (i < p.recs.size() && p.recs.get(i).offset >= end)) {
          pos = Math.max(pos, Math.min(end, p.nextOffset));
        }
        positions.put(p, pos);
      }
      return out;
    }

    /** The positions now (a copy), to {@link #restore} later: what a consumer commits. */
    public Map<String, Long> positions() {
      Map<String, Long> out = new LinkedHashMap<>();
      positions.forEach((p, pos) -> out.put(p.toString(), pos));
      return out;
    }

    /** Puts the positions back to {@code saved} ({@link #positions}); a partition not in it starts from 0. */
    public void restore(Map<String, Long> saved) {
      positions.replaceAll((p, pos) -> saved.getOrDefault(p.toString(), 0L));
    }

    /** Whether every position is at what is visible now. */
    public boolean caughtUp() {
      for (Map.Entry<Partition, Long> e : positions.entrySet()) {
        if (e.getValue() < e.getKey().visibleEnd()) {
          return false;
        }
      }
      return true;
    }

    /**
     * Reads every visible record in partition order, drawing nothing from the scenario's random source: for an observer
     * whose presence must not change the run.
     */
    public void observeToEnd(java.util.function.Consumer<Rec> handler) {
      List<Rec> batch;
      while (!(batch = poll(Integer.MAX_VALUE, false)).isEmpty()) {
        batch.forEach(handler);
      }
    }

    /** Reads every visible record, handing each to {@code handler}. */
    public void readToEnd(java.util.function.Consumer<Rec> handler) {
      List<Rec> batch;
      while (!(batch = poll(Integer.MAX_VALUE)).isEmpty()) {
        batch.forEach(handler);
      }
    }
  }

  public Reader reader() {
    return new Reader();
  }
}
