package io.ringshift.cli.internal;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.LoggerFactory;

/**
 * Replaces the JVM's handling of SIGINT (Ctrl-C) and SIGTERM by an action, so that {@code ringshift dev} stops
 * its parts in order before the JVM starts shutting down; every long-running command uses it through {@link
 * RunUntilStopped}.
 *
 * <p>Why not only a shutdown hook: the JVM runs all shutdown hooks at once, in no order, and the embedded broker
 * registers its own (it must delete a temporary data directory even when its owner forgets to close it). On
 * Ctrl-C that hook would stop the broker while the orchestrator is still committing its last transaction and
 * leaving its group. Trapping the signal lets {@code dev} close the orchestrator, then the broker, and then exit;
 * the broker's hook then finds it closed.
 *
 * <p>{@code sun.misc.Signal} lives in the {@code jdk.unsupported} module, which stays exported because there is
 * no supported replacement; it is used reflectively (as Kafka's own {@code LoggingSignalHandler} does) so that
 * compiling needs no internal API and a JVM without it simply falls back to the shutdown hook.
 */
final class SignalTrap {
  private static final List<String> SIGNALS = List.of("INT", "TERM");

  private SignalTrap() {}

  /**
   * Runs {@code action} (on a JVM signal thread) at the first SIGINT or SIGTERM, and gives both signals back to
   * the JVM at once, so that a second Ctrl-C starts the JVM's own shutdown: its hooks still clean up (the
   * operating system's default action would kill the process and leave temporary data behind).
   *
   * @return false when signals cannot be trapped here (the caller relies on its shutdown hook)
   */
  static boolean install(Runnable action) {
    try {
      Class<?> signalClass = Class.forName("sun.misc.Signal");
      Class<?> handlerClass = Class.forName("sun.misc.SignalHandler");
      Method handle = signalClass.getMethod("handle", signalClass, handlerClass);
      Map<Object, Object> previous = new ConcurrentHashMap<>();
      Object handler = Proxy.newProxyInstance(SignalTrap.class.getClassLoader(), new Class<?>[] {handlerClass},
          (proxy, method, args) -> {
            switch (method.getName()) {
              case "handle" -> {
                for (Map.Entry<Object, Object> e : previous.entrySet()) {
                  handle.invoke(null, e.getKey(), e.getValue());
                }
                action.run();
                return null;
              }
              case "hashCode" -> {
                return System.identityHashCode(proxy);
              }
              case "equals" -> {
                return proxy == args[0];
              }
              case "toString" -> {
                return "ringshift signal handler";
              }
              default -> throw new UnsupportedOperationException(method.getName());
            }
          });
      for (String name : SIGNALS) {
        Object signal = signalClass.getConstructor(String.class).newInstance(name);
        previous.put(signal, handle.invoke(null, signal, handler));
      }
      return true;
    } catch (ReflectiveOperationException | IllegalArgumentException | SecurityException e) {
      // InvocationTargetException wraps the JVM's refusal ("Signal already used by VM or OS").
      Throwable cause = e instanceof InvocationTargetException ite ? ite.getCause() : e;
      LoggerFactory.getLogger(SignalTrap.class).debug("cannot trap SIGINT/SIGTERM, relying on the shutdown hook: {}",
          cause.toString());
      return false;
    }
  }
}
