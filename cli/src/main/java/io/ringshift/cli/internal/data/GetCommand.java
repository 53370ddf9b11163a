package io.ringshift.cli.internal.data;

import io.ringshift.cli.internal.control.KafkaOptions;
import io.ringshift.client.Placement;
import io.ringshift.ring.Member;
import io.ringshift.storage.StoreException;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/** {@code ringshift get KEY}: one read from a read-eligible replica, as an application reads. */
@Command(
    name = "get",
    mixinStandardHelpOptions = true,
    sortOptions = false,
    description = {
      "Reads KEY (UTF-8 text) the way an application does: from the first read-eligible replica of the key in the "
          + "cluster's published ring (a replica still filling after a failure is not read), the next one if that "
          + "one does not answer.",
      "Writes the value and a newline on stdout, and the epoch, the replicas and the one read on stderr. Exit code "
          + "0 with a value, " + GetCommand.EXIT_NOT_FOUND + " when the key has none, 2 when no replica answered "
          + "or for bad input."
    })
public final class GetCommand implements Callable<Integer> {
  /** The key has no value on the replica read. */
  public static final int EXIT_NOT_FOUND = 4;

  @Spec private CommandSpec spec;

  @Parameters(index = "0", paramLabel = "KEY", description = "The key.")
  private String key;

  @Mixin private KafkaOptions kafka;

  @Mixin private DataOptions data;

  @Override
  public Integer call() {
    PrintWriter err = spec.commandLine().getErr();
    try (DataPlane plane = DataPlane.open(kafka, data)) {
      byte[] bytes = key.getBytes(StandardCharsets.UTF_8);
      Placement placement = plane.client().placement(bytes);
      List<String> owners = placement.owners().stream().map(Member::id).toList();
      StringBuilder failures = new StringBuilder();
      for (Member replica : placement.readable()) {
        Optional<byte[]> value;
        try {
          value = plane.store(replica.id()).get(bytes);
        } catch (StoreException e) {
          failures.append("; ").append(replica.id()).append(": ").append(e.getMessage());
          continue;
        }
        err.printf(Locale.ROOT, "epoch %d; replicas %s; read from %s%s%n", placement.epoch(),
            String.join(", ", owners), replica.id(), failures);
        err.flush();
        if (value.isEmpty()) {
          err.println("ringshift: " + key + " has no value");
          err.flush();
          return EXIT_NOT_FOUND;
        }
        write(value.get());
        return 0;
      }
      err.printf(Locale.ROOT, "ringshift: no read-eligible replica of %s answered at epoch %d (replicas %s, readable "
          + "%s)%s%n", key, placement.epoch(), String.join(", ", owners),
          String.join(", ", placement.readable().stream().map(Member::id).toList()), failures);
      err.flush();
      return 2;
    }
  }

  private static void write(byte[] value) {
    try {
      OutputStream out = System.out;
      out.write(value);
      out.write('\n');
      out.flush();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
