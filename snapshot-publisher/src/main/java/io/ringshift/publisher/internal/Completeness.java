package io.ringshift.publisher.internal;

import io.ringshift.protocol.FillingRange;
import io.ringshift.ring.ReplicaSet;
import io.ringshift.ring.RingRange;
import io.ringshift.ring.RingSnapshot;
import io.ringshift.schemas.avro.RangeCopyTask;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Which (range, node) pairs of an epoch's ring hold all of the range's data, derived epoch by epoch from the
 * published history rather than from one earlier ring.
 *
 * <p>The rule, for epoch k with ring {@code ring_k} and the VERIFIED COPY/REPAIR tasks of the epoch:
 * {@code complete_k = (ring_k ∩ complete_{k-1}) ∪ (ring_k ∩ verified_k)}, where {@code verified_k} are the
 * (task range, task target) pairs. A replica stays complete only while it stays a replica: a node that leaves a
 * range (a failure epoch removes it, a removal moves it out) misses the range's writes from then on, so when a later
 * epoch gives the range back, it is complete only if a task of that epoch filled it. Every published epoch's filling
 * marks must be exactly {@code ring_k − complete_k}, so the marks of the last published epoch say what was complete
 * after it: {@code complete_{k-1} = ring_{k-1} − marks_{k-1}}, and the publisher needs only the last published ring
 * and its marks, which every PUBLISHED record carries. A cluster's first published epoch holds no data yet: all of
 * it is complete, and it carries no marks.
 *
 * <p>Also checked: every source a task of epoch k names is a complete replica, in epoch k-1, of every position of
 * the task's range; a copy from a replica that was itself still filling would copy its gaps.
 *
 * <p>How. Every range boundary involved (both rings' tokens, both epochs' marks, the tasks' ranges) cuts the ring
 * into elementary intervals that each of those ranges holds wholly or not at all, so one position per interval (its
 * end) decides the interval: the replicas of both rings there, the marks and the verified targets covering it. The
 * work is proportional to the number of tokens plus what the marks and tasks cover; at 120 x 256 it is a few ms.
 * Pure: no Kafka, no clock.
 */
final class Completeness {
  /**
   * A finding on one node over a run of consecutive intervals.
   *
   * @param node the node
   * @param range the positions found, as one range
   * @param firstPosition the first position of {@code range} (where the finding starts)
   * @param detail what the finding is about (a mark, a task id), or empty
   */
  record Finding(String node, RingRange range, long firstPosition, String detail) {}

  /**
   * What the check found.
   *
   * @param unmarked replicas of the ring that are not complete and that no mark covers, per node, merged
   * @param marksOnComplete marks (with the first position where it is so) on a pair that is no replica of the
   *     ring, or that was complete already in the previous epoch (or in a cluster's first epoch, where all is)
   * @param marksOnFilled marks on a pair that a VERIFIED task of the epoch filled, with the task's id
   * @param incompleteSources task sources that were no complete replica of the task's range in the previous
   *     epoch, with the task's id
   */
  record Result(List<Finding> unmarked, List<Finding> marksOnComplete, List<Finding> marksOnFilled,
      List<Finding> incompleteSources) {}

  private final long[] points; // unsigned-sorted boundaries, stored with the sign bit flipped (signed order)
  private final int size;

  private Completeness(long[] flipped) {
    this.points = flipped;
    this.size = flipped.length;
  }

  /**
   * Checks epoch k's marks and tasks.
   *
   * @param previous the last published ring (epoch k-1), or null for a cluster's first publication
   * @param previousMarks its filling marks (empty when {@code previous} is null)
   * @param ring epoch k's ring
   * @param marks epoch k's filling marks
   * @param verified the VERIFIED COPY/REPAIR tasks of epoch k
   */
  static Result check(RingSnapshot previous, List<FillingRange> previousMarks, RingSnapshot ring,
      List<FillingRange> marks, List<RangeCopyTask> verified) {
    List<Long> all = new ArrayList<>();
    addTokens(all, ring);
    if (previous != null) {
      addTokens(all, previous);
    }
    for (FillingRange f : previousMarks) {
      all.add(f.start());
      all.add(f.end());
    }
    for (FillingRange f : marks) {
      all.add(f.start());
      all.add(f.end());
    }
    for (RangeCopyTask t : verified) {
      all.add(t.getRangeStart());
      all.add(t.getRangeEnd());
    }
    long[] flipped = all.stream().mapToLong(p -> p ^ Long.MIN_VALUE).sorted().distinct().toArray();
    return new Completeness(flipped).run(previous, previousMarks, ring, marks, verified);
  }

  private static void addTokens(List<Long> into, RingSnapshot ring) {
    for (int r = 0; r < ring.tokenCount(); r++) {
      into.add(ring.rangeEnd(r));
    }
  }

  private Result run(RingSnapshot previous, List<FillingRange> previousMarks, RingSnapshot ring,
      List<FillingRange> marks, List<RangeCopyTask> verified) {
    Map<Integer, Set<String>> previouslyMarked = covering(previousMarks);
    Map<Integer, Set<String>> marked = covering(marks);
    Map<Integer, Map<String, String>> filledBy = new HashMap<>(); // interval -> target -> task id
    for (RangeCopyTask t : verified) {
      for (int i : intervals(RingRange.of(t.getRangeStart(), t.getRangeEnd()))) {
        filledBy.computeIfAbsent(i, x -> new HashMap<>()).putIfAbsent(t.getTarget(), t.getTaskId());
      }
    }

    // complete_{k-1} = ring_{k-1} − marks_{k-1}, per interval, once; null for a cluster's first publication.
    List<Set<String>> completeBefore = null;
    if (previous != null) {
      completeBefore = new ArrayList<>(size);
      for (int i = 0; i < size; i++) {
        Set<String> complete = new HashSet<>(previous.replicasAt(position(i)).ids());
        complete.removeAll(previouslyMarked.getOrDefault(i, Set.of()));
        completeBefore.add(complete);
      }
    }

    // Replicas of ring_k that are not complete and not marked, merged into runs per node.
    Runs unmarked = new Runs();
    for (int i = 0; i < size; i++) {
      long at = position(i);
      Set<String> marksHere = marked.getOrDefault(i, Set.of());
      Map<String, String> filledHere = filledBy.getOrDefault(i, Map.of());
      for (String node : ring.replicasAt(at).ids()) {
        boolean complete = completeBefore == null || completeBefore.get(i).contains(node)
            || filledHere.containsKey(node);
        if (!complete && !marksHere.contains(node)) {
          unmarked.add(node, i);
        } else {
          unmarked.end(node, i);
        }
      }
      unmarked.endAllBut(ring.replicasAt(at), i);
    }

    // Each mark: on an incomplete replica, and on one no task filled.
    List<Finding> onComplete = new ArrayList<>();
    List<Finding> onFilled = new ArrayList<>();
    for (FillingRange f : marks) {
      Finding complete = null;
      Finding filled = null;
      for (int i : intervals(f.range())) {
        long at = position(i);
        boolean replica = ring.replicasAt(at).contains(f.node());
        if (!replica || completeBefore == null || completeBefore.get(i).contains(f.node())) {
          complete = new Finding(f.node(), f.range(), firstPosition(i), f.toString());
          break;
        }
        String task = filledBy.getOrDefault(i, Map.of()).get(f.node());
        if (task != null && filled == null) {
          filled = new Finding(f.node(), f.range(), firstPosition(i), task);
        }
      }
      if (complete != null) {
        onComplete.add(complete);
      } else if (filled != null) {
        onFilled.add(filled);
      }
    }

    // Each task's sources: complete replicas of its whole range in epoch k-1.
    List<Finding> sources = new ArrayList<>();
    if (completeBefore != null) {
      for (RangeCopyTask t : verified) {
        RingRange range = RingRange.of(t.getRangeStart(), t.getRangeEnd());
        for (String source : t.getSources()) {
          for (int i : intervals(range)) {
            if (!completeBefore.get(i).contains(source)) {
              sources.add(new Finding(source, range, firstPosition(i), t.getTaskId()));
              break;
            }
          }
        }
      }
    }
    return new Result(unmarked.findings(), onComplete, onFilled, sources);
  }


  /** Interval -> the nodes whose marks cover it. */
  private Map<Integer, Set<String>> covering(List<FillingRange> marks) {
    Map<Integer, Set<String>> covering = new HashMap<>();
    for (FillingRange f : marks) {
      for (int i : intervals(f.range())) {
        covering.computeIfAbsent(i, x -> new HashSet<>()).add(f.node());
      }
    }
    return covering;
  }

  /** The intervals a range holds (its ends are boundaries), in walk order from its start. */
  private int[] intervals(RingRange range) {
    int from = index(range.start());
    int to = index(range.end());
    int count = range.isWhole() ? size : Math.floorMod(to - from, size);
    int[] out = new int[count];
    for (int k = 0; k < count; k++) {
      out[k] = (from + 1 + k) % size;
    }
    return out;
  }

  private int index(long position) {
    int i = Arrays.binarySearch(points, position ^ Long.MIN_VALUE);
    if (i < 0) {
      throw new IllegalStateException("position " + Long.toUnsignedString(position) + " is no boundary");
    }
    return i;
  }

  /** Interval i is {@code (boundary i-1, boundary i]}; interval 0 wraps from the last boundary. */
  private long position(int i) {
    return points[i] ^ Long.MIN_VALUE;
  }

  private long start(int i) {
    return position(Math.floorMod(i - 1, size));
  }

  private long firstPosition(int i) {
    return start(i) + 1;
  }

  /** Runs of consecutive intervals per node; a run through the last interval joins one from interval 0. */
  private final class Runs {
    private final Map<String, Integer> open = new LinkedHashMap<>();
    private final List<int[]> done = new ArrayList<>(); // first, last interval
    private final List<String> doneNodes = new ArrayList<>();

    void add(String node, int i) {
      open.putIfAbsent(node, i);
    }

    void end(String node, int i) {
      Integer first = open.remove(node);
      if (first != null) {
        done.add(new int[] {first, i - 1});
        doneNodes.add(node);
      }
    }

    void endAllBut(ReplicaSet replicas, int i) {
      for (String node : List.copyOf(open.keySet())) {
        if (!replicas.contains(node)) {
          end(node, i);
        }
      }
    }

    List<Finding> findings() {
      Map<String, Integer> throughTheEnd = new LinkedHashMap<>(open);
      open.clear();
      List<Finding> out = new ArrayList<>();
      for (int k = 0; k < done.size(); k++) {
        String node = doneNodes.get(k);
        int first = done.get(k)[0];
        int last = done.get(k)[1];
        Integer wrapFirst = first == 0 ? throughTheEnd.remove(node) : null;
        if (wrapFirst != null) {
          first = wrapFirst; // one run across the top of the interval list
        }
        out.add(new Finding(node, RingRange.of(start(first), position(last)), firstPosition(first), ""));
      }
      throughTheEnd.forEach((node, first) -> out.add(new Finding(node, RingRange.of(start(first),
          position(size - 1)), firstPosition(first), "")));
      return out;
    }
  }
}
