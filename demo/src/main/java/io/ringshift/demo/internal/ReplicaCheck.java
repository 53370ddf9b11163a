package io.ringshift.demo.internal;

import io.ringshift.ring.ReplicaSet;
import io.ringshift.ring.RingRange;
import io.ringshift.ring.RingSnapshot;
import io.ringshift.schemas.avro.TaskKind;
import io.ringshift.storage.Entry;
import io.ringshift.storage.RangeScan;
import io.ringshift.storage.Store;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.function.Function;

/**
 * The demo's checks after the workload stopped: every acknowledged write is on every replica of the final ring, and
 * no read was served by a replica before its copy was verified.
 *
 * <p><b>Every replica.</b> Each member of the final ring is read whole, one consistent scan through its admin
 * listener (a read of every key it holds, far cheaper than a request per key), and for every key the ring gives it
 * the scan must hold the key's last acknowledged write or a later one ({@link KeySpace#sequenceOf}): a later one is
 * a write that was sent but never acknowledged, which a replica may keep.
 *
 * <p><b>No read from a filling replica.</b> A COPY or REPAIR task fills its target with a range the target did not
 * replicate when the task was planned; until its worker verified the copy, the target may miss writes. Checked
 * against the tasks' own record (not the client's placement, which this would only repeat): no read logged by the
 * workload was served by a task's target, in its range, between the task's plan and its verification (never, for a
 * task that was cancelled).
 */
public final class ReplicaCheck {
  private static final int EXAMPLES = 10;

  private ReplicaCheck() {}

  /** What the read-back found: (key, replica) pairs read and those missing their last acknowledged write. */
  public record Outcome(long pairs, long missing, List<String> examples) {}

  /**
   * Reads every member of {@code ring} whole and checks each key it replicates.
   *
   * @param admin the admin-listener store of a member
   */
  public static Outcome everyReplica(KeySpace keys, RingSnapshot ring, Function<String, Store> admin) {
    long pairs = 0;
    long missing = 0;
    List<String> examples = new ArrayList<>();
    long[] held = new long[keys.size()];
    for (String node : ring.memberIds()) {
      Arrays.fill(held, KeySpace.NONE);
      try (RangeScan scan = admin.apply(node).scan(RingRange.whole(), null)) {
        while (scan.hasNext()) {
          Entry entry = scan.next();
          int i = entry.isDeletion() ? -1 : keys.indexOf(entry.key());
          if (i >= 0) {
            held[i] = KeySpace.sequenceOf(entry.value());
          }
        }
      }
      for (int i = 0; i < keys.size(); i++) {
        long acked = keys.ackedSequence(i);
        if (acked == KeySpace.NONE) {
          continue;
        }
        ReplicaSet replicas = ring.replicasOf(keys.key(i));
        if (!replicas.contains(node)) {
          continue;
        }
        pairs++;
        if (held[i] < acked) {
          missing++;
          if (examples.size() < EXAMPLES) {
            examples.add(String.format(Locale.ROOT, "%s on %s: %s, but write %d was acknowledged at epoch %d",
                new String(keys.key(i), StandardCharsets.UTF_8), node,
                held[i] == KeySpace.NONE ? "absent" : "write " + held[i], acked, keys.ackedEpoch(i)));
          }
        }
      }
    }
    return new Outcome(pairs, missing, examples);
  }

  /** What the filling check found: reads served by a task's target in its range before it was verified. */
  public record FillingReads(long count, List<String> examples) {}

  /**
   * Counts the reads of {@code log} served by a COPY or REPAIR task's target, in its range, from when the task was
   * planned until its worker verified it.
   */
  public static FillingReads fillingReads(List<PlaneWatch.TaskFacts> tasks, DemoApplication.ReadLog log) {
    long count = 0;
    List<String> examples = new ArrayList<>();
    for (PlaneWatch.TaskFacts task : tasks) {
      if (task.kind() == TaskKind.CLEANUP) {
        continue;
      }
      RingRange range = RingRange.of(task.rangeStart(), task.rangeEnd());
      long until = task.verifiedMillis() < 0 ? Long.MAX_VALUE : task.verifiedMillis();
      long n = log.count(task.target(), range::contains, task.plannedMillis(), until);
      if (n > 0) {
        count += n;
        if (examples.size() < EXAMPLES) {
          examples.add(String.format(Locale.ROOT, "%d reads from %s in %s (task %s of epoch %d, %s) before it was "
              + "verified", n, task.target(), range, task.id(), task.epoch(), task.kind()));
        }
      }
    }
    return new FillingReads(count, examples);
  }
}
