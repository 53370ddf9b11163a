package io.ringshift.cli.internal.simulate;

import java.util.concurrent.Callable;
import picocli.CommandLine.Command;

/** {@code ringshift simulate}: the reference-scenario placement simulation. */
@Command(name = "simulate", mixinStandardHelpOptions = true, description = "Simulate the reference scenario.")
public final class SimulateCommand implements Callable<Integer> {
  @Override
  public Integer call() {
    throw new UnsupportedOperationException("simulate is not built yet");
  }
}
