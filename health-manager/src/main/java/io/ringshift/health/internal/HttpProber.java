package io.ringshift.health.internal;

import io.ringshift.health.internal.Debounce.Probe;
import io.ringshift.storage.RemoteStore;
import io.ringshift.storage.Store;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Probes nodes' {@code GET /health} on their client ports, all at once, each within the probe timeout. A probe is
 * answered only by a 200 that names the expected node id: a refused connection, a timeout, an error status, and a
 * different node on the address (a machine that was replaced) are missed probes, each with its reason.
 */
public final class HttpProber implements Decider.Prober, AutoCloseable {
  private final Map<String, Store> stores = new HashMap<>();
  private final Duration timeout;
  private final ExecutorService executor;

  /** @param addresses node id to the {@code host:port} of its client port */
  public HttpProber(Map<String, String> addresses, Duration timeout) {
    this.timeout = timeout;
    addresses.forEach((node, address) -> stores.put(node, RemoteStore.connect(address, timeout)));
    this.executor = Executors.newFixedThreadPool(Math.min(32, Math.max(1, addresses.size())), r -> {
      Thread t = new Thread(r, "ringshift-health-probe");
      t.setDaemon(true);
      return t;
    });
  }

  @Override
  public Map<String, Probe> probe(Set<String> nodes) {
    Map<String, Future<Probe>> running = new TreeMap<>();
    for (String node : nodes) {
      Store store = stores.get(node);
      if (store != null) {
        running.put(node, executor.submit(() -> probe(node, store)));
      }
    }
    long deadline = System.nanoTime() + timeout.toNanos() + TimeUnit.MILLISECONDS.toNanos(200);
    Map<String, Probe> results = new TreeMap<>();
    for (String node : nodes) {
      Future<Probe> f = running.get(node);
      if (f == null) {
        results.put(node, Probe.missed("no address"));
        continue;
      }
      try {
        results.put(node, f.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS));
      } catch (TimeoutException e) {
        f.cancel(true);
        results.put(node, Probe.missed("no answer within " + timeout.toMillis() + " ms"));
      } catch (ExecutionException e) {
        results.put(node, Probe.missed(String.valueOf(e.getCause())));
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        results.put(node, Probe.missed("interrupted"));
      }
    }
    return results;
  }

  private static Probe probe(String node, Store store) {
    try {
      Store.NodeInfo info = store.info();
      if (!node.equals(info.nodeId())) {
        return Probe.missed("the address answers as node " + info.nodeId() + ", not " + node);
      }
      return Probe.answered();
    } catch (RuntimeException e) {
      return Probe.missed(e.getMessage() == null ? e.toString() : e.getMessage());
    }
  }

  @Override
  public void close() {
    executor.shutdownNow();
    stores.values().forEach(s -> {
      try {
        s.close();
      } catch (RuntimeException e) {
        // closing a client of a node that is down: nothing to do
      }
    });
  }
}
