package io.ringshift.checks;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The documentation stands on its own: every Markdown link in the repository resolves to a file (and, with a
 * {@code #fragment}, to a heading of that file), no file under {@code docs/} is larger than 200 KB (a document
 * of megabytes is a broken edit, not a document), and nothing points at design notes that are not part of the
 * repository.
 */
class DocumentationTest {
  static final long MAX_DOCS_FILE_BYTES = 200 * 1024;

  private static final Path ROOT = repositoryRoot();
  /** {@code [text](target)} and {@code ![alt](target)}, the target without a title. */
  private static final Pattern LINK = Pattern.compile("\\[[^\\]]*\\]\\(([^)\\s]+)(?:\\s+\"[^\"]*\")?\\)");
  private static final Pattern HEADING = Pattern.compile("^#{1,6}\\s+(.*?)\\s*#*\\s*$");
  private static final Pattern CODE_SPAN = Pattern.compile("`[^`]*`");
  private static final Set<String> SKIPPED_DIRECTORIES = Set.of(".git", "target", "node_modules", ".mvn");

  @Test
  void shouldKeepEveryFileUnderDocsBelow200Kilobytes() throws IOException {
    List<String> tooLarge = new ArrayList<>();
    try (Stream<Path> files = Files.walk(ROOT.resolve("docs"))) {
      files.filter(Files::isRegularFile).forEach(file -> {
        long size = size(file);
        if (size > MAX_DOCS_FILE_BYTES) {
          tooLarge.add(ROOT.relativize(file) + " is " + size + " bytes");
        }
      });
    }
    assertThat(tooLarge)
        .as("files under docs/ may be at most %d bytes; a larger one is usually a broken edit (restore it "
            + "from git) or a picture that should be made smaller", MAX_DOCS_FILE_BYTES)
        .isEmpty();
  }

  @Test
  void shouldResolveEveryMarkdownLinkToAnExistingFileAndHeading() {
    List<String> broken = new ArrayList<>();
    Map<Path, Set<String>> anchors = new HashMap<>();
    List<Path> documents = markdownFiles();
    assertThat(documents).as("Markdown files found under %s", ROOT).isNotEmpty();
    for (Path document : documents) {
      List<String> lines = lines(document);
      boolean inFence = false;
      for (int i = 0; i < lines.size(); i++) {
        String line = lines.get(i);
        if (line.strip().startsWith("```")) {
          inFence = !inFence;
          continue;
        }
        if (inFence) {
          continue;
        }
        Matcher link = LINK.matcher(CODE_SPAN.matcher(line).replaceAll(""));
        while (link.find()) {
          String problem = check(document, link.group(1), anchors);
          if (problem != null) {
            broken.add(ROOT.relativize(document) + ":" + (i + 1) + ": " + link.group(1) + " " + problem);
          }
        }
      }
    }
    assertThat(broken).as("Markdown links that do not resolve (fix the path or the heading)").isEmpty();
  }

  @Test
  void shouldNotPointAtDesignNotesOutsideTheRepository() throws IOException {
    Pattern outside = Pattern.compile("\\b(DESIGN|PLATFORM|STYLE)\\.md\\b|\\.\\./shared/");
    List<String> citations = new ArrayList<>();
    try (Stream<Path> files = walk()) {
      files.filter(file -> isText(file)).forEach(file -> {
        List<String> lines = lines(file);
        for (int i = 0; i < lines.size(); i++) {
          if (outside.matcher(lines.get(i)).find()) {
            citations.add(ROOT.relativize(file) + ":" + (i + 1) + ": " + lines.get(i).strip());
          }
        }
      });
    }
    assertThat(citations)
        .as("citations of files that are not in this repository; point them at docs/architecture.md or "
            + "docs/development.md instead")
        .isEmpty();
  }

  @Test
  void shouldDeriveGithubAnchorsFromHeadings() {
    assertThat(anchor("Options they share")).isEqualTo("options-they-share");
    assertThat(anchor("`ringshift dev`: a local control plane")).isEqualTo("ringshift-dev-a-local-control-plane");
    assertThat(anchor("Join, drain & fail (R = 3)")).isEqualTo("join-drain--fail-r--3");
  }

  private static String check(Path document, String target, Map<Path, Set<String>> anchors) {
    if (target.matches("^[a-zA-Z][a-zA-Z0-9+.-]*:.*")) {
      return null; // http:, https:, mailto:: outside the repository
    }
    int hash = target.indexOf('#');
    String path = hash < 0 ? target : target.substring(0, hash);
    String fragment = hash < 0 ? null : target.substring(hash + 1);
    Path file = path.isEmpty() ? document : document.getParent().resolve(path).normalize();
    if (!file.startsWith(ROOT)) {
      return "points outside the repository";
    }
    if (!Files.exists(file)) {
      return "names a file that does not exist";
    }
    if (fragment != null && !fragment.isEmpty() && file.toString().endsWith(".md")) {
      Set<String> known = anchors.computeIfAbsent(file, DocumentationTest::anchorsOf);
      if (!known.contains(fragment)) {
        return "names a heading that " + ROOT.relativize(file) + " does not have";
      }
    }
    return null;
  }

  /** The anchors GitHub gives the headings of a document, with -1, -2... for repeated headings. */
  private static Set<String> anchorsOf(Path document) {
    Set<String> anchors = new HashSet<>();
    Map<String, Integer> seen = new HashMap<>();
    boolean inFence = false;
    for (String line : lines(document)) {
      if (line.strip().startsWith("```")) {
        inFence = !inFence;
        continue;
      }
      Matcher heading = HEADING.matcher(line);
      if (!inFence && heading.matches()) {
        String base = anchor(heading.group(1));
        int count = seen.merge(base, 1, Integer::sum);
        anchors.add(count == 1 ? base : base + "-" + (count - 1));
      }
    }
    return anchors;
  }

  static String anchor(String heading) {
    String text = heading.replaceAll("\\[([^\\]]*)\\]\\([^)]*\\)", "$1").toLowerCase(Locale.ROOT);
    StringBuilder anchor = new StringBuilder();
    text.codePoints().forEach(c -> {
      if (Character.isLetterOrDigit(c) || c == '-' || c == '_') {
        anchor.appendCodePoint(c);
      } else if (c == ' ') {
        anchor.append('-');
      }
    });
    return anchor.toString();
  }

  private static List<Path> markdownFiles() {
    try (Stream<Path> files = walk()) {
      return files.filter(file -> file.toString().endsWith(".md")).sorted().toList();
    }
  }

  private static Stream<Path> walk() {
    try {
      return Files.walk(ROOT)
          .filter(file -> ROOT.relativize(file).toString().isEmpty()
              || SKIPPED_DIRECTORIES.stream().noneMatch(skipped -> isUnder(file, skipped)))
          .filter(Files::isRegularFile);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static boolean isUnder(Path file, String directory) {
    for (Path part : ROOT.relativize(file)) {
      if (part.toString().equals(directory)) {
        return true;
      }
    }
    return false;
  }

  private static boolean isText(Path file) {
    String name = file.getFileName().toString();
    return name.endsWith(".md") || name.endsWith(".java") || name.endsWith(".xml") || name.endsWith(".avsc")
        || name.endsWith(".properties") || name.endsWith(".yaml") || name.endsWith(".yml")
        || name.equals("ringshift") || name.equals("run") || name.endsWith(".sh") || name.endsWith(".html")
        || name.endsWith(".js") || name.endsWith(".css");
  }

  private static List<String> lines(Path file) {
    try {
      return Files.readAllLines(file, StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read " + file, e);
    }
  }

  private static long size(Path file) {
    try {
      return Files.size(file);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** This module sits directly under the repository root, beside {@code docs/}. */
  private static Path repositoryRoot() {
    Path module = Path.of("").toAbsolutePath();
    Path root = module.getParent();
    if (root == null || !Files.isDirectory(root.resolve("docs"))) {
      throw new IllegalStateException("expected docs/ beside the module directory " + module);
    }
    return root;
  }
}
