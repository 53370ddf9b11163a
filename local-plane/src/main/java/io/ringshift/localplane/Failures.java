package io.ringshift.localplane;

/** Runs every step of a shutdown even when an earlier one fails, and throws the first failure at the end. */
final class Failures {
  private RuntimeException first;

  /** Runs {@code step}, keeping its failure. */
  void run(Runnable step) {
    try {
      step.run();
    } catch (RuntimeException e) {
      add(e);
    }
  }

  void add(RuntimeException e) {
    if (first == null) {
      first = e;
    } else if (first != e) {
      first.addSuppressed(e);
    }
  }

  /** Adds what was kept to {@code failure} (a failure that is being thrown already). */
  void addTo(Throwable failure) {
    if (first != null && first != failure) {
      failure.addSuppressed(first);
    }
  }

  void throwFirst() {
    if (first != null) {
      throw first;
    }
  }
}
