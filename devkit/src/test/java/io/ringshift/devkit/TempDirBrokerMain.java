package io.ringshift.devkit;

import java.util.concurrent.CountDownLatch;

/**
 * Run by {@link ShutdownHookIT} in a child JVM: starts a broker on a temporary data dir, prints where, and
 * waits to be killed without {@code close()} ever being called.
 */
public final class TempDirBrokerMain {
  static final String READY = "READY ";

  private TempDirBrokerMain() {}

  public static void main(String[] args) throws InterruptedException {
    EmbeddedKafka kafka = EmbeddedKafka.builder().build().start();
    System.out.println(READY + kafka.dataDir());
    System.out.flush();
    new CountDownLatch(1).await();
  }
}
