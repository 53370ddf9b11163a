package io.ringshift.demo.internal;

import java.lang.management.ManagementFactory;
import java.lang.management.OperatingSystemMXBean;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * Samples the process's CPU time (every thread: the broker, every role, the nodes and the application share the
 * demo's process) four times a second into the {@link Timeline}, so that each latency figure can be read against how
 * busy the machine was. Does nothing where the JVM does not tell its process CPU time.
 */
final class CpuSampler implements AutoCloseable {
  private static final long PERIOD_MILLIS = 250;

  private final Timeline timeline;
  private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor(r -> {
    Thread t = new Thread(r, "ringshift-demo-cpu");
    t.setDaemon(true);
    return t;
  });
  private long last = processCpuNanos();

  private CpuSampler(Timeline timeline) {
    this.timeline = timeline;
  }

  static CpuSampler start(Timeline timeline) {
    CpuSampler sampler = new CpuSampler(timeline);
    if (sampler.last >= 0) {
      sampler.timer.scheduleAtFixedRate(sampler::sample, PERIOD_MILLIS, PERIOD_MILLIS, TimeUnit.MILLISECONDS);
    }
    return sampler;
  }

  private void sample() {
    long now = processCpuNanos();
    if (now >= 0 && last >= 0) {
      timeline.cpu(System.currentTimeMillis(), now - last);
    }
    last = now;
  }

  /** The process's CPU time so far in ns, or -1 when the JVM does not tell it. */
  static long processCpuNanos() {
    OperatingSystemMXBean os = ManagementFactory.getOperatingSystemMXBean();
    return os instanceof com.sun.management.OperatingSystemMXBean sun ? sun.getProcessCpuTime() : -1;
  }

  @Override
  public void close() {
    timer.shutdownNow();
  }
}
