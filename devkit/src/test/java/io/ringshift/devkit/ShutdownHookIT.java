package io.ringshift.devkit;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * A JVM that exits without closing its broker (Ctrl-C on {@code ringshift dev}, a test run that ends) still
 * deletes the broker's temporary data dir: the shutdown hook runs on SIGTERM.
 */
class ShutdownHookIT {
  @Test
  void shouldDeleteTheTempDataDirWhenTheJvmIsTerminated() throws Exception {
    Path java = Paths.get(System.getProperty("java.home"), "bin", "java");
    Process child = new ProcessBuilder(java.toString(), "-Xmx512m",
        "-cp", System.getProperty("java.class.path"), TempDirBrokerMain.class.getName())
        .redirectErrorStream(true)
        .start();
    List<String> output = new ArrayList<>();
    try {
      CompletableFuture<Path> ready = CompletableFuture.supplyAsync(() -> awaitReady(child, output));
      Path dataDir = ready.get(90, TimeUnit.SECONDS);
      assertThat(dataDir).isDirectory();

      long signalled = System.nanoTime();
      child.destroy(); // SIGTERM, as Ctrl-C or a CI timeout would send
      assertThat(child.waitFor(60, TimeUnit.SECONDS)).as("child JVM exits on SIGTERM; it printed %s", output)
          .isTrue();
      System.out.printf("[devkit] child JVM with a broker exited %d ms after SIGTERM%n",
          TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - signalled));

      assertThat(dataDir).as("temp data dir after SIGTERM; child printed %s", output).doesNotExist();
    } finally {
      child.destroyForcibly();
    }
  }

  private static Path awaitReady(Process child, List<String> output) {
    try (BufferedReader lines = new BufferedReader(
        new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8))) {
      for (String line = lines.readLine(); line != null; line = lines.readLine()) {
        synchronized (output) {
          output.add(line);
        }
        if (line.startsWith(TempDirBrokerMain.READY)) {
          return Paths.get(line.substring(TempDirBrokerMain.READY.length()));
        }
      }
      throw new IllegalStateException("child exited before it was ready; it printed " + output);
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }
}
