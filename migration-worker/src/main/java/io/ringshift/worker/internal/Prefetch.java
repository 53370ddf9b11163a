package io.ringshift.worker.internal;

import java.util.List;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * Reads the next batches of a scan on its own thread while the task applies the current one, so reading the
 * source and writing the target overlap instead of taking turns (over HTTP each takes about as long as the
 * other). At most {@link #DEPTH} batches wait; the reader stops when closed. Errors of the reader, such as
 * {@link NodeDown} for the source, are thrown to the task by {@link #next}.
 */
final class Prefetch<T> implements AutoCloseable {
  static final int DEPTH = 2;
  private static final long JOIN_MILLIS = 10_000;
  private static final Object END = new Object();

  private record Failure(RuntimeException error) {}

  private final BlockingQueue<Object> queue = new ArrayBlockingQueue<>(DEPTH);
  private final Thread reader;
  /** Read on the caller's thread, when asked, instead (an inline run: the deterministic simulation); else null. */
  private final Supplier<List<T>> inline;
  private volatile boolean closed;

  /** Starts reading: {@code nextBatch} returns the next batch, empty at the end. */
  Prefetch(String name, Supplier<List<T>> nextBatch) {
    this(name, nextBatch, false);
  }

  /** As {@link #Prefetch(String, Supplier)}; with {@code inline}, each batch is read by {@link #next} itself. */
  Prefetch(String name, Supplier<List<T>> nextBatch, boolean inline) {
    if (inline) {
      this.inline = nextBatch;
      this.reader = null;
      return;
    }
    this.inline = null;
    reader = new Thread(() -> {
      try {
        while (!closed) {
          List<T> batch = nextBatch.get();
          if (batch.isEmpty()) {
            put(END);
            return;
          }
          put(batch);
        }
      } catch (RuntimeException e) {
        put(new Failure(e));
      }
    }, name);
    reader.setDaemon(true);
    reader.start();
  }

  /** The next batch (empty at the end), waiting for it while checking {@code control} for a stop. */
  @SuppressWarnings("unchecked")
  List<T> next(TaskControl control) {
    if (inline != null) {
      control.check();
      return inline.get();
    }
    while (true) {
      control.check();
      Object item;
      try {
        item = queue.poll(100, TimeUnit.MILLISECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new TaskControl.Stopped(TaskControl.Stop.CANCEL);
      }
      if (item == END) {
        queue.offer(END);
        return List.of();
      }
      if (item instanceof Failure f) {
        queue.offer(f);
        throw f.error();
      }
      if (item != null) {
        return (List<T>) item;
      }
    }
  }

  private void put(Object item) {
    try {
      while (!closed && !queue.offer(item, 100, TimeUnit.MILLISECONDS)) {
        // Full: the task is still applying; wait for room or for close.
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /** Stops the reader and waits for it, so the scan it reads may be closed. */
  @Override
  public void close() {
    closed = true;
    queue.clear();
    if (reader == null) {
      return;
    }
    try {
      reader.join(JOIN_MILLIS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
