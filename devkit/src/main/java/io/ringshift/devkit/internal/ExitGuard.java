package io.ringshift.devkit.internal;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.function.Consumer;
import org.apache.kafka.common.utils.internals.Exit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps a fatal fault of an in-process broker from ending the JVM that hosts it. On a fatal fault (all log
 * directories failed, for instance when the disk is full, or a metadata fault) Kafka calls its {@code Exit.exit} or
 * {@code Exit.halt}, which end the JVM with status 1: in a test run that is a fork that "terminated without saying
 * goodbye" and no word of why, since the reason went to a log file. While a broker of this JVM runs, the guard
 * replaces both by a procedure that reports the fault (logged at ERROR, printed on standard error, handed to every
 * running broker) and returns, so the broker is left unusable and the test fails with the reason in its output.
 *
 * <p>The procedures are Kafka's global hooks for this (its own test harness sets them); they are installed when the
 * first broker starts and reset when the last one stops. A broker started as its own process is not affected.
 */
public final class ExitGuard {
  private static final Logger LOG = LoggerFactory.getLogger(ExitGuard.class);
  private static final List<Consumer<String>> BROKERS = new ArrayList<>();

  private ExitGuard() {}

  /** Reports the fatal faults Kafka raises while it is registered to {@code broker}; installs the guard if first. */
  public static synchronized void register(Consumer<String> broker) {
    if (BROKERS.isEmpty()) {
      Exit.setExitProcedure((status, message) -> refuse("exit", status, message));
      Exit.setHaltProcedure((status, message) -> refuse("halt", status, message));
    }
    BROKERS.add(broker);
  }

  /** Stops reporting to {@code broker}; resets Kafka's procedures when no broker is left. */
  public static synchronized void unregister(Consumer<String> broker) {
    if (BROKERS.remove(broker) && BROKERS.isEmpty()) {
      Exit.resetExitProcedure();
      Exit.resetHaltProcedure();
    }
  }

  private static void refuse(String how, int status, String message) {
    String fault = String.format(Locale.ROOT, "the embedded Kafka broker asked to %s the JVM with status %d (%s); "
        + "refused, so that this JVM goes on, but the broker may no longer serve (its log says why)", how, status,
        message == null ? "no message" : message);
    LOG.error(fault, new Throwable("asked from here"));
    System.err.println("ERROR " + fault);
    List<Consumer<String>> brokers;
    synchronized (ExitGuard.class) {
      brokers = List.copyOf(BROKERS);
    }
    brokers.forEach(b -> b.accept(fault));
  }
}
