package io.ringshift.storage.internal.http;

import java.util.concurrent.LinkedTransferQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A node's handler threads, sized by its load: a request goes to an idle thread when there is one, else to a new
 * thread up to the maximum, else it waits for the next free thread; a thread idle for the keep-alive ends. A quiet
 * node holds no handler thread, a node answering one request at a time holds one or a few (a request can arrive
 * before the previous one's thread is back waiting), and a node streaming many scans at once grows to the maximum
 * (every open scan or feed holds a thread while it streams).
 *
 * <p>A plain {@link ThreadPoolExecutor} with a fixed core size starts a new thread for each of its first core-size
 * requests even while others are idle, and keeps them all: 32 threads per node, forever, on a node that served 32
 * requests one after another. Here the queue accepts a request only by handing it to a thread already waiting
 * ({@link LinkedTransferQueue#tryTransfer}), which makes the executor start a thread otherwise; at the maximum the
 * request is queued for the next thread that frees up.
 */
public final class HandlerPool {
  private HandlerPool() {}

  /** The queue: offers succeed only when an idle thread takes the task at once. */
  private static final class HandOffQueue extends LinkedTransferQueue<Runnable> {
    private static final long serialVersionUID = 1L;

    @Override
    public boolean offer(Runnable task) {
      return tryTransfer(task);
    }
  }

  /**
   * A pool of up to {@code maxThreads} daemon threads named {@code namePrefix-N}, each ending after {@code
   * keepAlive} idle.
   */
  public static ThreadPoolExecutor create(String namePrefix, int maxThreads, long keepAlive, TimeUnit unit) {
    if (maxThreads < 1) {
      throw new IllegalArgumentException("maxThreads was " + maxThreads + "; a pool needs at least 1");
    }
    AtomicInteger count = new AtomicInteger();
    HandOffQueue queue = new HandOffQueue();
    ThreadPoolExecutor pool = new ThreadPoolExecutor(0, maxThreads, keepAlive, unit, queue, r -> {
      Thread t = new Thread(r, namePrefix + "-" + count.incrementAndGet());
      t.setDaemon(true);
      return t;
    }, (task, executor) -> {
      if (executor.isShutdown()) {
        throw new RejectedExecutionException("the node server is stopping");
      }
      // Every thread is busy: wait in line for the next one that frees up (it polls this queue).
      queue.add(task);
    });
    return pool;
  }
}
