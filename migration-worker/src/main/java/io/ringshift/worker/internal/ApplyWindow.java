package io.ringshift.worker.internal;

import java.util.ArrayDeque;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.LinkedTransferQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Up to {@code width} applies of one snapshot copy in flight at once, finished in the order they were sent.
 *
 * <p>Why: one apply is a round trip through the worker, the network and the target's write path, and each side
 * idles while another works; with a single apply in flight a copy ran at a fraction of what either node could
 * do. The batches of a snapshot copy hold disjoint keys, so the order in which the target applies them does not
 * matter; what matters is that a checkpoint names only a position below which every batch was applied. So the
 * window keeps its pieces in sending order and hands a batch's end ({@link #endBatch}) back to the task only
 * when every piece before it finished: the task's progress (copied bytes, last copied position) advances over
 * a contiguous prefix, exactly as if the batches had been applied one at a time.
 *
 * <p>The change feed is never sent through a window: its changes must reach the target in log order.
 *
 * <p>The applies run on a pool shared by every task of the process: an apply takes an idle thread, else a new one
 * up to {@link #POOL_THREADS}, else waits for the next free one; a thread idle for {@link #IDLE_SECONDS} ends, so
 * a process holds no apply thread while nothing copies (the node's handler pool works the same way). {@link #close}
 * waits for every apply still in flight (a stopped or failed run must not write after it ends).
 */
final class ApplyWindow<B> implements AutoCloseable {
  static final int POOL_THREADS = 32;
  static final int IDLE_SECONDS = 10;
  private static final ThreadPoolExecutor POOL = pool();

  /** Receives the end of a batch once it and every piece sent before it were applied. */
  @FunctionalInterface
  interface BatchDone<B> {
    void done(B batch);
  }

  /** A piece in flight, or (future null) the end of a batch. */
  private record Slot<B>(Future<?> applied, B batchEnd) {}

  private final int width;
  private final BatchDone<B> done;
  /** Applies on the caller's thread, one at a time, instead of the pool (an inline run). */
  private final boolean inline;
  private final ArrayDeque<Slot<B>> slots = new ArrayDeque<>();
  private int pieces;

  ApplyWindow(int width, BatchDone<B> done) {
    this(width, done, false);
  }

  /** As {@link #ApplyWindow(int, BatchDone)}; with {@code inline}, each apply runs at once on the caller's thread. */
  ApplyWindow(int width, BatchDone<B> done, boolean inline) {
    if (width < 1) {
      throw new IllegalArgumentException("width was " + width + "; it must be >= 1");
    }
    this.width = width;
    this.done = done;
    this.inline = inline;
  }

  /**
   * Starts {@code apply} once fewer than {@code width} pieces are in flight, first finishing the oldest (which
   * throws its failure: a {@link RuntimeException} thrown by an apply is thrown here as it is).
   */
  void send(Runnable apply) {
    while (pieces >= width) {
      finishOldest();
    }
    if (inline) {
      java.util.concurrent.FutureTask<Void> now = new java.util.concurrent.FutureTask<>(apply, null);
      now.run();
      slots.add(new Slot<>(now, null));
    } else {
      slots.add(new Slot<>(POOL.submit(apply), null));
    }
    pieces++;
  }

  /**
   * Marks the end of a batch: {@code batch} goes to the callback when every piece sent so far was applied. Hands
   * over, without waiting, every batch end whose pieces have all finished by now (a failed piece throws here), so
   * progress advances as pieces finish even while the window is not full (a few large pieces, such as load chunks).
   */
  void endBatch(B batch) {
    slots.add(new Slot<>(null, batch));
    while (!slots.isEmpty() && (slots.peekFirst().applied() == null || slots.peekFirst().applied().isDone())) {
      finishOldest();
    }
  }

  /** Waits until everything sent was applied, handing each batch end to the callback in order. */
  void finish() {
    while (!slots.isEmpty()) {
      finishOldest();
    }
  }

  private void finishOldest() {
    Slot<B> slot = slots.removeFirst();
    if (slot.applied() == null) {
      done.done(slot.batchEnd());
      return;
    }
    pieces--;
    await(slot.applied());
    while (!slots.isEmpty() && slots.peekFirst().applied() == null) {
      done.done(slots.removeFirst().batchEnd());
    }
  }

  /** Waits for every apply still in flight, ignoring their outcome (the run already ends with its own reason). */
  @Override
  public void close() {
    Error error = null;
    for (Slot<B> slot : slots) {
      if (slot.applied() != null) {
        try {
          awaitUninterruptibly(slot.applied());
        } catch (RuntimeException ignored) {
          // The run ends with the failure that closed the window; this apply's own failure adds nothing.
        } catch (Error e) {
          // Thrown after every apply has ended, so that none writes after the run.
          error = error == null ? e : error;
        }
      }
    }
    slots.clear();
    pieces = 0;
    if (error != null) {
      throw error;
    }
  }

  private static void await(Future<?> applied) {
    try {
      applied.get();
    } catch (InterruptedException e) {
      // Wait for the apply anyway, so nothing writes after the run ends, then report the stop.
      awaitUninterruptibly(applied);
      Thread.currentThread().interrupt();
      throw new TaskControl.Stopped(TaskControl.Stop.CANCEL);
    } catch (ExecutionException e) {
      throw unwrap(e);
    }
  }

  private static void awaitUninterruptibly(Future<?> applied) {
    boolean interrupted = false;
    while (true) {
      try {
        applied.get();
        break;
      } catch (InterruptedException e) {
        interrupted = true;
      } catch (ExecutionException e) {
        if (interrupted) {
          Thread.currentThread().interrupt();
        }
        throw unwrap(e);
      }
    }
    if (interrupted) {
      Thread.currentThread().interrupt();
    }
  }

  private static RuntimeException unwrap(ExecutionException e) {
    Throwable cause = e.getCause();
    if (cause instanceof RuntimeException r) {
      return r;
    }
    if (cause instanceof Error error) {
      throw error;
    }
    return new IllegalStateException("an apply failed: " + cause, cause);
  }

  private static ThreadPoolExecutor pool() {
    AtomicInteger n = new AtomicInteger();
    // A queue that accepts a task only by handing it to an idle thread, so the executor starts a thread otherwise
    // (a fixed core size would start one per task up to the core size even while others idle).
    LinkedTransferQueue<Runnable> queue = new LinkedTransferQueue<>() {
      private static final long serialVersionUID = 1L;

      @Override
      public boolean offer(Runnable task) {
        return tryTransfer(task);
      }
    };
    return new ThreadPoolExecutor(0, POOL_THREADS, IDLE_SECONDS, TimeUnit.SECONDS, queue, r -> {
      Thread t = new Thread(r, "ringshift-worker-apply-" + n.incrementAndGet());
      t.setDaemon(true);
      return t;
    }, (task, executor) -> queue.add(task)); // every thread busy: wait in line for the next free one
  }
}
