package io.ringshift.cli.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.ringshift.ring.RingSnapshot;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class RingLookupCommandTest {
  @TempDir Path dir;

  private final RingSnapshot ring = Fixtures.ring(12, 3).build();

  @Test
  void shouldAnswerEveryKeyWithItsReplicasInPreferenceAndInputOrder() {
    Path file = Fixtures.snapshot(dir.resolve("ring.snapshot"), ring);
    List<String> keys = List.of("user:42", "a", "ключ", "order/2024/17", "a");

    Cli.Result result = Cli.run(bytes(String.join("\n", keys) + "\n"), "ring", "lookup", "--snapshot",
        file.toString());

    assertThat(result.exitCode()).as(result.toString()).isZero();
    assertThat(result.stderr()).isEmpty();
    StringBuilder expected = new StringBuilder();
    for (String key : keys) {
      expected.append(key).append('\t').append(String.join(",", ring.replicasOf(key).ids())).append('\n');
    }
    assertThat(result.stdout()).isEqualTo(expected.toString());
  }

  @Test
  void shouldTakeThePrefixWhenAskedForFewerReplicas() {
    Path file = Fixtures.snapshot(dir.resolve("ring.snapshot"), ring);

    Cli.Result result = Cli.run(bytes("user:42\n"), "ring", "lookup", "--snapshot", file.toString(),
        "--replicas", "2");

    assertThat(result.exitCode()).as(result.toString()).isZero();
    assertThat(result.stdout()).isEqualTo("user:42\t" + String.join(",", ring.replicasOf("user:42").ids().subList(0, 2))
        + "\n");
    assertThat(result.stdout()).isEqualTo("user:42\t"
        + String.join(",", ring.toBuilder().replicas(2).build().replicasOf("user:42").ids()) + "\n");
  }

  @Test
  void shouldRebuildTheRingAndSaySoWhenAskedForMoreReplicas() {
    Path file = Fixtures.snapshot(dir.resolve("ring.snapshot"), ring);

    Cli.Result result = Cli.run(bytes("user:42\n"), "ring", "lookup", "--snapshot", file.toString(),
        "--replicas", "5");

    assertThat(result.exitCode()).as(result.toString()).isZero();
    assertThat(result.stdout()).isEqualTo("user:42\t"
        + String.join(",", ring.toBuilder().replicas(5).build().replicasOf("user:42").ids()) + "\n");
    assertThat(result.stderr()).isEqualTo("ringshift: the snapshot places 3 replicas per key; rebuilt its ring "
        + "with --replicas 5 for this lookup (not the published placement)\n"
        + "ringshift: warning: under-replicated: 5 replicas requested but only 3 zones [az-1, az-2, az-3]\n");
  }

  @Test
  void shouldKeepTabsAnswerEmptyLinesAndDropTheCarriageReturnOfCrlf() {
    Path file = Fixtures.snapshot(dir.resolve("ring.snapshot"), ring);

    Cli.Result result = Cli.run(bytes("a\tb\r\n\n\r\nlast without newline"), "ring", "lookup", "--snapshot",
        file.toString());

    assertThat(result.exitCode()).as(result.toString()).isZero();
    assertThat(result.stdout()).isEqualTo(
        "a\tb\t" + owners("a\tb") + "\n"
            + "\t" + owners("") + "\n"
            + "\t" + owners("") + "\n"
            + "last without newline\t" + owners("last without newline") + "\n");
  }

  @Test
  void shouldPrintNothingForNoInput() {
    Path file = Fixtures.snapshot(dir.resolve("ring.snapshot"), ring);

    Cli.Result result = Cli.run(new byte[0], "ring", "lookup", "--snapshot", file.toString());

    assertThat(result.exitCode()).isZero();
    assertThat(result.stdoutBytes()).isEmpty();
  }

  @Test
  void shouldHandleKeysLongerThanTheReadBuffer() {
    Path file = Fixtures.snapshot(dir.resolve("ring.snapshot"), ring);
    String longKey = "k".repeat(300_000);

    Cli.Result result = Cli.run(bytes("short\n" + longKey + "\nafter\n"), "ring", "lookup", "--snapshot",
        file.toString());

    assertThat(result.exitCode()).as(result.toString()).isZero();
    assertThat(result.stdout()).isEqualTo("short\t" + owners("short") + "\n" + longKey + "\t" + owners(longKey)
        + "\nafter\t" + owners("after") + "\n");
  }

  /**
   * One million keys through the real command. The elapsed time is printed, not asserted: a shared two-core
   * machine makes timings noisy, and the measured figure belongs in the docs.
   */
  @Test
  void shouldLookUpOneMillionKeys() {
    RingSnapshot reference = Fixtures.ring(120, 3).build();
    Path file = Fixtures.snapshot(dir.resolve("ring.snapshot"), reference);
    int count = 1_000_000;
    ByteArrayOutputStream input = new ByteArrayOutputStream(count * 16);
    for (int i = 0; i < count; i++) {
      input.writeBytes(key(i).getBytes(StandardCharsets.UTF_8));
      input.write('\n');
    }

    long start = System.nanoTime();
    Cli.Result result = Cli.run(input.toByteArray(), "ring", "lookup", "--snapshot", file.toString());
    long millis = (System.nanoTime() - start) / 1_000_000;

    System.out.printf(Locale.ROOT, "ring lookup: %,d keys at 120 nodes x 256 tokens, R=3, in %d ms in-process%n",
        count, millis);
    assertThat(result.exitCode()).as(result.stderr()).isZero();
    String[] lines = result.stdout().split("\n", -1);
    assertThat(lines).hasSize(count + 1);
    assertThat(lines[count]).isEmpty();
    for (int i = 0; i < count; i += 997) {
      assertThat(lines[i]).isEqualTo(key(i) + "\t" + String.join(",", reference.replicasOf(key(i)).ids()));
    }
  }

  @Test
  void shouldStopReadingWhenStdoutIsClosed() {
    Path file = Fixtures.snapshot(dir.resolve("ring.snapshot"), ring);
    byte[] keys = bytes("user:0123456789\n".repeat(1_000_000));
    CountingInput stdin = new CountingInput(keys);
    OutputStream closedAfter100k = new OutputStream() {
      private int written;

      @Override
      public void write(int b) throws IOException {
        if (++written > 100_000) {
          throw new IOException("Broken pipe");
        }
      }
    };

    Cli.Result result = Cli.run(stdin, closedAfter100k, "ring", "lookup", "--snapshot", file.toString());

    assertThat(result.exitCode()).as(result.toString()).isEqualTo(1);
    assertThat(result.stderr()).isEqualTo("ringshift: stopped: could not write to stdout (was the pipe closed?)\n");
    assertThat(stdin.read).as("bytes of stdin read before stopping").isLessThan(keys.length / 10);
  }

  private static final class CountingInput extends ByteArrayInputStream {
    long read;

    CountingInput(byte[] bytes) {
      super(bytes);
    }

    @Override
    public synchronized int read(byte[] b, int off, int len) {
      int n = super.read(b, off, len);
      read += Math.max(0, n);
      return n;
    }
  }

  private static String key(int i) {
    return "user:" + Integer.toHexString(i * 0x9E3779B1);
  }

  private String owners(String key) {
    return String.join(",", ring.replicasOf(key).ids());
  }

  private static byte[] bytes(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }
}
