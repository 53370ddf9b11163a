package io.ringshift.checks;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.stream.Stream;
import javax.xml.XMLConstants;
import javax.xml.parsers.DocumentBuilder;
import javax.xml.parsers.DocumentBuilderFactory;
import javax.xml.parsers.ParserConfigurationException;
import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.Node;
import org.w3c.dom.NodeList;
import org.xml.sax.SAXException;

/**
 * What the checks know about the build: its modules (read from the POMs with the JDK's XML parser, so a new module
 * is seen without editing this class), which of them are roles, and which module owns a Java package. Kept in one
 * place so that the class rules ({@link ArchitectureTest}) and the POM rules ({@link RolePomDependenciesTest},
 * {@link ModuleCoverageTest}) cannot disagree about what a role is.
 */
final class BuildLayout {
  /**
   * The roles: separate processes that talk to each other only through the Kafka topics of {@code protocol}, so no
   * role may depend on another, in its classes or its POM.
   *
   * <p>{@code storage} is not a role here, although a storage node is a process: the module is both the node and the
   * data-plane library every role drives stores through (the {@code Store} SPI, {@code RemoteStore},
   * {@code RoutedWriter}); {@code migration-worker} and {@code health-manager} use that library and nothing else of it. Roles may therefore
   * use {@code storage}; the node's server side is guarded by its own rule
   * ({@link ArchitectureTest#STORAGE_SERVER_SIDE_IS_RUN_ONLY_BY_THE_CLI}), and {@code storage} itself may depend on
   * no role ({@link #ROLE_FREE_LIBRARIES}).
   */
  static final List<ModuleId> ROLES = List.of(
      new ModuleId("orchestrator", "ringshift-orchestrator", "io.ringshift.orchestrator"),
      new ModuleId("migration-worker", "ringshift-migration-worker", "io.ringshift.worker"),
      new ModuleId("snapshot-publisher", "ringshift-snapshot-publisher", "io.ringshift.publisher"),
      new ModuleId("health-manager", "ringshift-health-manager", "io.ringshift.health"));

  /** Libraries the roles use, which therefore may not depend on a role themselves (in their classes or their POM). */
  static final List<ModuleId> ROLE_FREE_LIBRARIES = List.of(
      new ModuleId("storage", "ringshift-storage", "io.ringshift.storage"));

  /**
   * Package roots ({@code io.ringshift.<root>}) that no module has under {@code src/main/java}, with the module that
   * owns them. {@code schemas} is the namespace of the Avro records, older than the {@code protocol} module that
   * generates them into {@code target/generated-sources}; without this entry the rules would see a module
   * {@code schemas}.
   */
  static final Map<String, String> GENERATED_PACKAGE_ROOTS = Map.of("schemas", "protocol");

  /**
   * Modules with main code that the architecture rules do not import. {@code benchmarks} is measurement code, like
   * tests: it drives the storage node's server side ({@code RocksStore}, {@code NodeServer}) directly, and its jar
   * is mostly JMH's generated harness.
   */
  static final Set<String> NOT_CHECKED = Set.of("benchmarks");

  static final String GROUP_ID = "io.ringshift";

  private BuildLayout() {}

  /** A module of the build: its directory, its artifact and the package root of its classes. */
  record ModuleId(String module, String artifactId, String packageRoot) {}

  /** A {@code <dependency>} of a POM, wherever it is declared (dependencies, dependency management, a plugin). */
  record Dependency(String groupId, String artifactId, String scope, String type) {}

  /** The repository root: the directory above the module the tests run in (surefire runs them in project-checks). */
  static Path repositoryRoot() {
    Path module = Path.of("").toAbsolutePath();
    Path root = module.getParent();
    if (root == null || !Files.isRegularFile(root.resolve("pom.xml"))) {
      throw new IllegalStateException("expected the parent pom.xml beside the module directory " + module);
    }
    return root;
  }

  /**
   * The module owning a package: {@code io.ringshift.<root>...} belongs to the module whose {@code src/main/java} has
   * {@code io/ringshift/<root>} (so {@code worker} is {@code migration-worker}), or to the one
   * {@link #GENERATED_PACKAGE_ROOTS} names; an unknown root (a module that is not in this tree) is its own name, and a
   * package outside {@code io.ringshift} belongs to none ({@code ""}).
   */
  static String moduleOf(String packageName) {
    String[] parts = packageName.split("\\.");
    if (parts.length < 3 || !parts[0].equals("io") || !parts[1].equals("ringshift")) {
      return "";
    }
    return PackageRoots.MODULES.getOrDefault(parts[2], parts[2]);
  }

  /**
   * Every package root of the tree with the modules that have it under {@code src/main/java}, plus
   * {@link #GENERATED_PACKAGE_ROOTS}. A root of two modules is listed with both (see
   * {@code ArchitectureTest.shouldGiveEveryPackageRootOneModule}).
   */
  static Map<String, Set<String>> packageRoots(Path root) {
    Map<String, Set<String>> owners = new TreeMap<>();
    GENERATED_PACKAGE_ROOTS.forEach((packageRoot, module) -> owners.computeIfAbsent(packageRoot,
        any -> new TreeSet<>()).add(module));
    for (String module : modulesWithMainCode(root)) {
      Path sources = root.resolve(module).resolve("src/main/java/io/ringshift");
      if (!Files.isDirectory(sources)) {
        continue;
      }
      try (Stream<Path> children = Files.list(sources)) {
        children.filter(Files::isDirectory).forEach(dir -> owners.computeIfAbsent(dir.getFileName().toString(),
            any -> new TreeSet<>()).add(module));
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
    return owners;
  }

  /** The package roots of this repository, read on first use only: the POM checks never need them. */
  private static final class PackageRoots {
    static final Map<String, String> MODULES = new TreeMap<>();

    static {
      packageRoots(repositoryRoot())
          .forEach((packageRoot, modules) -> MODULES.put(packageRoot, modules.iterator().next()));
    }
  }

  /** The {@code <modules>} of a parent POM, in order. */
  static List<String> modules(Path parentPom) {
    Element modules = child(parse(parentPom).getDocumentElement(), "modules");
    List<String> names = new ArrayList<>();
    if (modules != null) {
      for (Element module : children(modules, "module")) {
        names.add(module.getTextContent().strip());
      }
    }
    return names;
  }

  /** The modules of the build under {@code root} that have main code ({@code src/main/java}). */
  static List<String> modulesWithMainCode(Path root) {
    return modules(root.resolve("pom.xml")).stream()
        .filter(module -> Files.isDirectory(root.resolve(module).resolve("src/main/java")))
        .toList();
  }

  /** The project's own {@code <artifactId>} (not its parent's). */
  static String artifactId(Path pom) {
    Element artifactId = child(parse(pom).getDocumentElement(), "artifactId");
    if (artifactId == null) {
      throw new IllegalStateException(pom + " has no <artifactId>");
    }
    return artifactId.getTextContent().strip();
  }

  /** Every {@code <dependency>} element of a POM, in any section and any scope. */
  static List<Dependency> dependencies(Path pom) {
    NodeList elements = parse(pom).getElementsByTagName("dependency");
    List<Dependency> dependencies = new ArrayList<>();
    for (int i = 0; i < elements.getLength(); i++) {
      Element dependency = (Element) elements.item(i);
      dependencies.add(new Dependency(text(dependency, "groupId"), text(dependency, "artifactId"),
          text(dependency, "scope"), text(dependency, "type")));
    }
    return dependencies;
  }

  private static Document parse(Path pom) {
    try {
      DocumentBuilderFactory factory = DocumentBuilderFactory.newInstance();
      // A POM never needs a DTD or an external entity; refusing them keeps the parse local and deterministic.
      factory.setFeature("http://apache.org/xml/features/disallow-doctype-decl", true);
      factory.setAttribute(XMLConstants.ACCESS_EXTERNAL_DTD, "");
      factory.setAttribute(XMLConstants.ACCESS_EXTERNAL_SCHEMA, "");
      DocumentBuilder builder = factory.newDocumentBuilder();
      return builder.parse(pom.toFile());
    } catch (ParserConfigurationException | SAXException | IOException e) {
      throw new IllegalStateException("cannot parse " + pom + ": " + e.getMessage(), e);
    }
  }

  private static String text(Element parent, String name) {
    Element element = child(parent, name);
    return element == null ? "" : element.getTextContent().strip();
  }

  private static Element child(Element parent, String name) {
    List<Element> found = children(parent, name);
    return found.isEmpty() ? null : found.get(0);
  }

  private static List<Element> children(Element parent, String name) {
    List<Element> found = new ArrayList<>();
    for (Node node = parent.getFirstChild(); node != null; node = node.getNextSibling()) {
      if (node instanceof Element element && element.getTagName().equals(name)) {
        found.add(element);
      }
    }
    return found;
  }
}
