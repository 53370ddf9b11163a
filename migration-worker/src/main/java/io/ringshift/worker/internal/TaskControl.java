package io.ringshift.worker.internal;

import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * How the dispatcher steers a running task from other threads: stop it (writing its last checkpoint, or not),
 * restart it (a re-plan dropped its source), or wake it early (the fence was requested). The task calls
 * {@link #check()} at every batch boundary; inside a step it waits only through {@link #sleep} and
 * {@link #sleepNanos}, which return early on any of these, so a stop takes effect at the next checkpoint boundary.
 * Between steps it holds no thread, and any of these runs its next step at once ({@link #onWake}).
 */
final class TaskControl implements Sleeper {
  /** Why a task stops. */
  enum Stop {
    /** Worker closing or partition revoked: write the last checkpoint, then end. */
    CHECKPOINT,
    /** Another worker may already own the task (a stop that timed out, a revocation without checkpoint): end
     * without writing. */
    CANCEL,
    /**
     * The task was dropped by a re-plan (a tombstone on ring.tasks): end without writing a status, and lift the
     * fences the run set, since the range no longer moves and no other worker continues the task.
     */
    DROPPED
  }

  /** Thrown inside the task to unwind it to its run loop. */
  static final class Stopped extends RuntimeException {
    final Stop mode;

    Stopped(Stop mode) {
      super("task stopped: " + mode, null, false, false);
      this.mode = mode;
    }
  }

  /** Thrown inside the task when it must start over (its source was dropped by a re-plan). */
  static final class Restart extends RuntimeException {
    Restart(String why) {
      super(why, null, false, false);
    }
  }

  private Stop stop;
  private String restart;
  private boolean woken;
  /** A run driven on its stepper's thread (the deterministic simulation): it must never wait inside a step. */
  private volatile boolean inline;

  /** Marks the run as driven inline: a wait inside a step is then refused instead of blocking the driver. */
  void inline(boolean inline) {
    this.inline = inline;
  }
  /** Runs the task's next step at once when it waits between steps ({@link TaskScheduler}); null when none. */
  private volatile Runnable waker;

  /** What runs the task's next step now; called on a stop, a restart and a wake, outside this control's lock. */
  void onWake(Runnable next) {
    waker = next;
  }

  void stop(Stop mode) {
    synchronized (this) {
      // A cancel or a drop is final: a later checkpoint request must not turn it back into a write.
      if (stop == null || stop == Stop.CHECKPOINT) {
        stop = mode;
      }
      notifyAll();
    }
    wakeStepper();
  }

  void restart(String why) {
    synchronized (this) {
      restart = why;
      notifyAll();
    }
    wakeStepper();
  }

  void wake() {
    synchronized (this) {
      woken = true;
      notifyAll();
    }
    wakeStepper();
  }

  /** Forgets a wake that came between two steps: the step about to run sees whatever it announced. */
  synchronized void clearWoken() {
    woken = false;
  }

  private void wakeStepper() {
    Runnable w = waker;
    if (w != null) {
      w.run();
    }
  }

  synchronized Stop stopRequested() {
    return stop;
  }

  /** Unwinds the task when a stop or a restart was asked for. */
  synchronized void check() {
    if (stop != null) {
      throw new Stopped(stop);
    }
    if (restart != null) {
      String why = restart;
      restart = null;
      throw new Restart(why);
    }
  }

  /**
   * Unwinds when a stop was asked for; leaves a restart for the task's own next {@link #check()} (an apply on a
   * pool thread must not consume it: the task would never see it if that apply's failure were ignored).
   */
  synchronized void checkStopped() {
    if (stop != null) {
      throw new Stopped(stop);
    }
  }

  /** Waits {@code duration}, or until stopped, restarted or woken; then {@link #check()}s. */
  void sleep(Duration duration) {
    sleepNanosUnchecked(duration.toNanos());
  }

  @Override
  public void sleepNanos(long nanos) {
    sleepNanosUnchecked(nanos);
  }

  private synchronized void sleepNanosUnchecked(long nanos) {
    if (inline) {
      check();
      // A step of an inline run that would wait (a drain that made no progress, a throttle) ends with an error instead:
      // the run retries after its retry interval, and the driver keeps its thread.
      throw new IllegalStateException("a step of an inline run would wait " + nanos + " ns; it retries later");
    }
    long deadline = System.nanoTime() + nanos;
    try {
      while (stop == null && restart == null && !woken) {
        long left = deadline - System.nanoTime();
        if (left <= 0) {
          break;
        }
        TimeUnit.NANOSECONDS.timedWait(this, left);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      stop = stop == null ? Stop.CANCEL : stop;
    }
    woken = false;
    check();
  }
}
