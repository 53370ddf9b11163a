package io.ringshift.cli.internal.publisher;

import io.ringshift.cli.BadInputException;
import io.ringshift.protocol.SigningKey;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code ringshift keygen --out FILE}: a new Ed25519 signing key for the snapshot publisher, written as FILE (the
 * key pair, readable by its owner only) and FILE.pub (the public key that clients trust). An existing FILE is never
 * overwritten without {@code --force}: losing a key that clients trust means every client needs a new one.
 */
@Command(
    name = "keygen",
    mixinStandardHelpOptions = true,
    sortOptions = false,
    description = {
      "Writes a new Ed25519 signing key for the snapshot publisher: FILE holds the key pair (PEM, PRIVATE KEY and "
          + "PUBLIC KEY blocks, readable by its owner only), FILE.pub the public key alone (PEM), which clients "
          + "trust. Prints the key id (ed25519:<16 hex>) that every snapshot it signs carries.",
      "Run 'ringshift publisher --signing-key FILE' with it. To rotate keys, give clients the new FILE.pub next "
          + "to the old one, then restart the publisher with the new FILE."
    })
public final class KeygenCommand implements Callable<Integer> {
  @Spec private CommandSpec spec;

  @Option(names = "--out", required = true, paramLabel = "FILE",
      description = "The key file to write; the public key goes to FILE.pub.")
  private Path out;

  @Option(names = "--force", description = "Overwrite FILE and FILE.pub if they exist.")
  private boolean force;

  @Override
  public Integer call() {
    Path publicFile = publicFileOf(out);
    Path dir = out.toAbsolutePath().getParent();
    if (!Files.isDirectory(dir)) {
      throw new BadInputException("--out " + out + ": directory " + dir + " does not exist; create it first");
    }
    for (Path p : new Path[] {out, publicFile}) {
      if (Files.isDirectory(p)) {
        throw new BadInputException("--out " + out + ": " + p + " is a directory; give a file name");
      }
      if (Files.exists(p) && !force) {
        throw new BadInputException("--out " + out + ": " + p + " exists; a key that clients trust must not be "
            + "replaced by accident (give another name, or --force to overwrite it)");
      }
    }
    SigningKey key = SigningKey.generate();
    try {
      key.write(out, publicFile);
    } catch (IOException e) {
      throw new BadInputException("--out " + out + ": cannot write the key: " + e, e);
    } catch (UncheckedIOException e) {
      throw new BadInputException("--out " + out + ": cannot write the key: " + e.getCause(), e);
    }
    PrintWriter stdout = spec.commandLine().getOut();
    stdout.println("ringshift keygen: key " + key.id());
    stdout.println("  signing key: " + out + " (keep it secret; ringshift publisher --signing-key " + out + ")");
    stdout.println("  public key:  " + publicFile + " (give it to clients: they trust snapshots signed by it)");
    stdout.flush();
    return 0;
  }

  /** {@code FILE.pub}. */
  static Path publicFileOf(Path keyFile) {
    return keyFile.resolveSibling(keyFile.getFileName() + ".pub");
  }
}
