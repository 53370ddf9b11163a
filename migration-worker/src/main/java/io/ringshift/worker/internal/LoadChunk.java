package io.ringshift.worker.internal;

import io.ringshift.storage.Entry;
import java.util.Collections;
import java.util.Iterator;
import java.util.List;
import java.util.NoSuchElementException;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * One chunk of a bulk load (docs/worker.md, "Bulk load"): the task hands it the throttled pieces of its snapshot
 * batches, and the thread that sends the load to the target reads them as the body of one {@code Store.load}.
 *
 * <p>At most {@link #DEPTH} pieces wait, so a target that reads slowly slows the task (and a chunk holds a few MiB
 * in the worker whatever its size: the waiting pieces, the one being read and the client's fill buffer). The task {@link #end}s the chunk when it is full or the scan is over, or
 * {@link #abort}s it when the run stops or fails, which fails the load so the target loads nothing of it; the
 * sending side calls {@link #released} when its load returned or failed, after which {@link #put} refuses more.
 */
final class LoadChunk implements Iterator<Entry> {
  static final int DEPTH = 2;
  private static final long POLL_MILLIS = 100;
  private static final Object END = new Object();

  /** What the sending side's iterator throws when the task aborted the chunk. */
  static final class Aborted extends RuntimeException {
    Aborted(String why) {
      super(why);
    }
  }

  private final BlockingQueue<Object> queue = new ArrayBlockingQueue<>(DEPTH);
  private volatile String aborted;
  private volatile boolean released;
  private Iterator<Entry> current = Collections.emptyIterator();
  private boolean ended;

  // ---- the task's side

  /** Hands a piece over, waiting for room; false when the sending side is gone (its load ended or failed). */
  boolean put(List<Entry> piece, TaskControl control) {
    return offer(piece, control);
  }

  /** Ends the chunk: the load's body ends after the pieces handed over. */
  boolean end(TaskControl control) {
    return offer(END, control);
  }

  private boolean offer(Object item, TaskControl control) {
    try {
      while (!released) {
        control.check();
        if (queue.offer(item, POLL_MILLIS, TimeUnit.MILLISECONDS)) {
          return true;
        }
      }
      return false;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new TaskControl.Stopped(TaskControl.Stop.CANCEL);
    }
  }

  /** Fails the load that reads this chunk, so the target loads nothing of it; does nothing once it ended. */
  void abort(String why) {
    aborted = why;
  }

  // ---- the sending side

  /** Waits for the first piece: false when the chunk ended empty or was aborted first (no load to send). */
  boolean awaitFirst() {
    try {
      return hasNext();
    } catch (Aborted e) {
      return false;
    }
  }

  /** Called by the sending side once its load returned or failed: the task hands nothing more. */
  void released() {
    released = true;
  }

  @Override
  public boolean hasNext() {
    while (!current.hasNext()) {
      if (ended) {
        return false;
      }
      Object item;
      try {
        item = queue.poll(POLL_MILLIS, TimeUnit.MILLISECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new Aborted("interrupted while waiting for the copy's next entries");
      }
      if (aborted != null && item != END) {
        throw new Aborted(aborted);
      }
      if (released && item == null) {
        // The load this chunk feeds already returned or failed; a body still being read (the HTTP client's
        // thread) must not wait for pieces nobody will hand over.
        throw new Aborted("the load of this chunk already ended");
      }
      if (item == END) {
        ended = true;
        return false;
      }
      if (item != null) {
        @SuppressWarnings("unchecked")
        List<Entry> piece = (List<Entry>) item;
        current = piece.iterator();
      }
    }
    return true;
  }

  @Override
  public Entry next() {
    if (!hasNext()) {
      throw new NoSuchElementException();
    }
    return current.next();
  }
}
