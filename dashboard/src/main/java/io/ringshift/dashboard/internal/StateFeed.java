package io.ringshift.dashboard.internal;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.ringshift.dashboard.DashboardConfig;
import io.ringshift.orchestrator.admin.ClusterView;
import io.ringshift.orchestrator.admin.ControlPlaneAdmin;
import io.ringshift.protocol.EpochRecords;
import io.ringshift.ring.RingSnapshot;
import io.ringshift.schemas.avro.EpochRecord;
import java.time.Duration;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The dashboard's one reader of the topics: a follower of every control-plane topic polled on a thread of its own
 * (the first poll reads the history, each later one what was appended), plus the nodes' health every two seconds.
 * After each poll it rebuilds the state of every cluster a page asked for ({@link StateModel}) and, when the JSON
 * changed, bumps that cluster's version and wakes the pages' event streams. Ring geometries are built once per
 * epoch and kept.
 */
public final class StateFeed implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(StateFeed.class);
  private static final Duration POLL = Duration.ofMillis(500);
  /** While records stream in, the state is rebuilt at most once per this (ControlPlaneAdmin.Follower#poll). */
  private static final Duration GATHER = Duration.ofMillis(250);
  private static final long HEALTH_MILLIS = 2_000;
  private static final ObjectMapper JSON = new ObjectMapper();

  /** One cluster's latest state as JSON, and its version (bumped when the JSON changes). */
  public record Snapshot(long version, byte[] json) {}

  private final DashboardConfig config;
  private final ControlPlaneAdmin admin;
  private final NodeHealth health;
  private final Thread thread;
  private final Set<String> watched = ConcurrentHashMap.newKeySet();
  private final Map<String, Snapshot> snapshots = new ConcurrentHashMap<>();
  private final Map<String, byte[]> rings = new ConcurrentHashMap<>();
  private volatile ControlPlaneAdmin.Contents contents;
  private volatile String problem;
  private volatile boolean running = true;

  public StateFeed(DashboardConfig config) {
    this.config = config;
    this.admin = ControlPlaneAdmin.connect(config.bootstrap(), config.kafka(), config.topics(), Duration.ofSeconds(10));
    this.health = new NodeHealth(config.nodes());
    watched.add(config.cluster());
    this.thread = new Thread(this::run, "ringshift-dashboard-feed");
    thread.setDaemon(true);
    thread.start();
  }

  private void run() {
    long lastHealth = 0;
    try (ControlPlaneAdmin.Follower follower = admin.follow(EnumSet.allOf(ControlPlaneAdmin.Part.class))) {
      while (running) {
        try {
          contents = follower.poll(POLL, GATHER);
          problem = null;
        } catch (RuntimeException e) {
          problem = "cannot read the control plane's topics at " + config.bootstrap() + ": " + e.getMessage();
          LOG.warn("{}; trying again", problem);
        }
        long now = System.currentTimeMillis();
        if (now - lastHealth >= HEALTH_MILLIS && !config.nodes().isEmpty()) {
          health.probe();
          lastHealth = now;
        }
        watched.forEach(this::rebuild);
      }
    } catch (RuntimeException e) {
      LOG.error("the dashboard's reader of the topics stopped", e);
      problem = "the dashboard's reader stopped: " + e;
    }
  }

  private synchronized void rebuild(String cluster) {
    ControlPlaneAdmin.Contents now = contents;
    if (now == null) {
      return;
    }
    try {
      byte[] json = JSON.writeValueAsBytes(state(cluster, now));
      Snapshot previous = snapshots.get(cluster);
      if (previous == null || !java.util.Arrays.equals(previous.json(), json)) {
        snapshots.put(cluster, new Snapshot(previous == null ? 1 : previous.version() + 1, json));
        notifyAll();
      }
    } catch (RuntimeException | JsonProcessingException e) {
      LOG.warn("cannot build the state of cluster {}", cluster, e);
    }
  }

  private Map<String, Object> state(String cluster, ControlPlaneAdmin.Contents now) {
    ClusterView view = ClusterView.of(cluster, now, 20);
    Set<String> clusters = new TreeSet<>();
    now.epochs().forEach(e -> clusters.add(e.getClusterId()));
    Map<String, Object> state = new java.util.LinkedHashMap<>(StateModel.of(view, List.copyOf(clusters),
        System.currentTimeMillis(), health.latest(), config.workers().get(), config.clients().get()));
    state.put("participants", StateModel.participants(cluster, now.participants(), System.currentTimeMillis()));
    state.put("problem", problem);
    state.put("unreadable", now.unreadable().size());
    return state;
  }

  /** The latest state of {@code cluster}, starting to watch it; null before the first poll. */
  public Snapshot snapshot(String cluster) {
    if (watched.add(cluster)) {
      rebuild(cluster);
    }
    return snapshots.get(cluster);
  }

  /** Waits until {@code cluster}'s version is above {@code version}, at most {@code millis}; the latest snapshot. */
  public Snapshot awaitNewer(String cluster, long version, long millis) throws InterruptedException {
    long deadline = System.currentTimeMillis() + millis;
    synchronized (this) {
      Snapshot s;
      while (((s = snapshot(cluster)) == null || s.version() <= version) && running) {
        long left = deadline - System.currentTimeMillis();
        if (left <= 0) {
          break;
        }
        wait(left);
      }
      return snapshot(cluster);
    }
  }

  /**
   * The geometry of {@code cluster}'s published ring, and of the ring of the epoch in flight (marking what it
   * changes), as JSON; null when nothing is published yet.
   */
  public byte[] ring(String cluster) throws JsonProcessingException {
    ControlPlaneAdmin.Contents now = contents;
    if (now == null) {
      return null;
    }
    ClusterView view = ClusterView.of(cluster, now, 0);
    EpochRecord published = view.published();
    if (published == null) {
      return null;
    }
    EpochRecord inFlight = view.inFlight();
    String key = cluster + "/" + published.getEpoch() + "/" + (inFlight == null ? "-" : inFlight.getEpoch() + "."
        + inFlight.getPlanVersion());
    byte[] cached = rings.get(key);
    if (cached != null) {
      return cached;
    }
    RingSnapshot ring = EpochRecords.ring(published);
    Map<String, Object> out = new java.util.LinkedHashMap<>();
    out.put("published", RingGeometry.of(ring, null));
    out.put("target", inFlight == null ? null : RingGeometry.of(EpochRecords.ring(inFlight), ring));
    byte[] json = JSON.writeValueAsBytes(out);
    if (rings.size() > 64) {
      rings.clear();
    }
    rings.put(key, json);
    return json;
  }

  /** The topics' problem, if reading them fails now. */
  public String problem() {
    return problem;
  }

  @Override
  public void close() {
    running = false;
    synchronized (this) {
      notifyAll();
    }
    try {
      thread.join(5_000);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    admin.close();
  }
}
