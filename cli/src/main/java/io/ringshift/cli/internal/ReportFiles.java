package io.ringshift.cli.internal;

import io.ringshift.cli.BadInputException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;

/** Report files a command writes after a long run ({@code simulate --report}, {@code demo --report}). */
public final class ReportFiles {
  private ReportFiles() {}

  /**
   * Fails now, rather than after the run, when the report could not be written: the path must name a file in an
   * existing directory where this process can create files (a probe file is created and deleted there).
   *
   * @return the absolute path
   * @throws BadInputException naming {@code option}, its value and the rule
   */
  public static Path check(String option, String report) {
    Path path;
    try {
      path = Path.of(report).toAbsolutePath().normalize();
    } catch (InvalidPathException e) {
      throw new BadInputException(option + " was \"" + report + "\"; it is not a valid path: " + e.getReason());
    }
    Path dir = path.getParent();
    if (report.isBlank() || dir == null || path.getFileName() == null) {
      throw new BadInputException(option + " was \"" + report + "\"; " + option + " must name a file");
    }
    if (Files.isDirectory(path)) {
      throw new BadInputException(option + " was " + report + "; it is a directory, " + option + " must name a file");
    }
    if (!Files.isDirectory(dir)) {
      throw new BadInputException(option + " was " + report + "; directory " + dir + " does not exist");
    }
    if (Files.exists(path) && !Files.isWritable(path)) {
      throw new BadInputException(option + " was " + report + "; the file exists and is not writable");
    }
    try {
      Files.delete(Files.createTempFile(dir, ".ringshift-probe-", ".tmp"));
    } catch (IOException | SecurityException e) {
      throw new BadInputException(option + " was " + report + "; cannot write in " + dir + " (" + e + ")", e);
    }
    return path;
  }
}
