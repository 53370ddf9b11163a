package io.ringshift.cli.internal.data;

import io.ringshift.cli.internal.control.KafkaOptions;
import io.ringshift.storage.RoutedWriter;
import io.ringshift.storage.StoreException;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.util.Locale;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/** {@code ringshift put KEY VALUE}: one write through the client path, acknowledged by every replica. */
@Command(
    name = "put",
    mixinStandardHelpOptions = true,
    sortOptions = false,
    description = {
      "Writes VALUE under KEY (both UTF-8 text) the way an application does: routes the key by the cluster's "
          + "published ring (verified with --trusted-key) and writes every replica in parallel, tagged with the "
          + "ring's epoch; a replica that refuses it for a newer epoch makes it wait for that ring and write again.",
      "Prints the epoch and the replicas that acknowledged it. Exit code 0 when every replica did, 2 when not (the "
          + "message names each replica that failed; nothing is rolled back) or for bad input."
    })
public final class PutCommand implements Callable<Integer> {
  @Spec private CommandSpec spec;

  @Parameters(index = "0", paramLabel = "KEY", description = "The key.")
  private String key;

  @Parameters(index = "1", paramLabel = "VALUE", description = "The value.")
  private String value;

  @Mixin private KafkaOptions kafka;

  @Mixin private DataOptions data;

  @Override
  public Integer call() {
    PrintWriter out = spec.commandLine().getOut();
    PrintWriter err = spec.commandLine().getErr();
    try (DataPlane plane = DataPlane.open(kafka, data)) {
      RoutedWriter.Written written;
      try {
        written = plane.writer().put(key.getBytes(StandardCharsets.UTF_8), value.getBytes(StandardCharsets.UTF_8));
      } catch (StoreException e) {
        err.println("ringshift: put of " + key + " not acknowledged: " + e.getMessage());
        err.flush();
        return 2;
      }
      out.printf(Locale.ROOT, "put %s at epoch %d on %s%s%n", key, written.epoch(),
          String.join(", ", written.replicas()), written.retried() ? " (after a refusal: routed again)" : "");
      out.flush();
      return 0;
    }
  }
}
