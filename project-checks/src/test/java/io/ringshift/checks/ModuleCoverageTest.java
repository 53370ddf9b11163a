package io.ringshift.checks;

import static org.assertj.core.api.Assertions.assertThat;

import io.ringshift.checks.BuildLayout.Dependency;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The architecture rules see a module's classes only if project-checks depends on it, so a new module would escape
 * them silently. This test reads the parent POM's {@code <modules>} and fails for every module with main code
 * ({@code src/main/java}) that {@code project-checks/pom.xml} does not list as a test dependency, unless it is
 * named in {@link BuildLayout#NOT_CHECKED}.
 */
class ModuleCoverageTest {

  @Test
  void shouldDependOnEveryModuleWithMainCode() {
    assertThat(uncovered(BuildLayout.repositoryRoot()))
        .as("modules the architecture rules cannot see").isEmpty();
  }

  @Test
  void shouldExemptOnlyModulesThatExistAndHaveMainCode() {
    assertThat(BuildLayout.modulesWithMainCode(BuildLayout.repositoryRoot()))
        .as("BuildLayout.NOT_CHECKED names a module that is gone or has no main code: remove it from the list")
        .containsAll(BuildLayout.NOT_CHECKED);
  }

  @Test
  void rejectsAModuleWithMainCodeThatProjectChecksDoesNotDependOn(@TempDir Path root) throws IOException {
    writeBuild(root, "<dependency><groupId>io.ringshift</groupId><artifactId>ringshift-ring</artifactId>"
        + "<scope>test</scope></dependency>");
    module(root, "ring", "ringshift-ring", true);
    module(root, "gateway", "ringshift-gateway", true);
    module(root, "docs-only", "ringshift-docs-only", false);

    assertThat(uncovered(root)).singleElement().asString()
        .contains("module gateway", "ringshift-gateway", "project-checks/pom.xml",
            "<artifactId>ringshift-gateway</artifactId>", "<scope>test</scope>");
  }

  @Test
  void rejectsAModuleThatProjectChecksDependsOnOutsideTheTestScope(@TempDir Path root) throws IOException {
    writeBuild(root, "<dependency><groupId>io.ringshift</groupId><artifactId>ringshift-ring</artifactId></dependency>");
    module(root, "ring", "ringshift-ring", true);

    assertThat(uncovered(root)).singleElement().asString().contains("module ring", "<scope>test</scope>");
  }

  /** One message per module with main code that project-checks does not depend on in the test scope. */
  static List<String> uncovered(Path root) {
    Path checksPom = root.resolve("project-checks/pom.xml");
    Set<String> testDependencies = BuildLayout.dependencies(checksPom).stream()
        .filter(dependency -> dependency.groupId().equals(BuildLayout.GROUP_ID))
        .filter(dependency -> dependency.scope().equals("test"))
        .filter(dependency -> dependency.type().isEmpty() || dependency.type().equals("jar"))
        .map(Dependency::artifactId)
        .collect(Collectors.toSet());
    List<String> problems = new ArrayList<>();
    for (String module : BuildLayout.modulesWithMainCode(root)) {
      if (BuildLayout.NOT_CHECKED.contains(module)) {
        continue;
      }
      String artifactId = BuildLayout.artifactId(root.resolve(module).resolve("pom.xml"));
      if (!testDependencies.contains(artifactId)) {
        problems.add("module " + module + " has main code but project-checks/pom.xml has no test dependency on "
            + artifactId + ", so the architecture rules (ArchitectureTest) cannot see its classes: add "
            + "<dependency><groupId>" + BuildLayout.GROUP_ID + "</groupId><artifactId>" + artifactId
            + "</artifactId><scope>test</scope></dependency> to project-checks/pom.xml");
      }
    }
    return problems;
  }

  private static void writeBuild(Path root, String checksDependencies) throws IOException {
    Files.writeString(root.resolve("pom.xml"), "<project xmlns=\"http://maven.apache.org/POM/4.0.0\">"
        + "<artifactId>ringshift-parent</artifactId><modules><module>ring</module><module>gateway</module>"
        + "<module>docs-only</module><module>project-checks</module></modules></project>");
    Files.createDirectories(root.resolve("project-checks"));
    Files.writeString(root.resolve("project-checks/pom.xml"), "<project xmlns=\"http://maven.apache.org/POM/4.0.0\">"
        + "<parent><artifactId>ringshift-parent</artifactId></parent><artifactId>ringshift-project-checks</artifactId>"
        + "<dependencies>" + checksDependencies + "</dependencies></project>");
  }

  private static void module(Path root, String name, String artifactId, boolean mainCode) throws IOException {
    Path dir = Files.createDirectories(root.resolve(name));
    Files.writeString(dir.resolve("pom.xml"), "<project xmlns=\"http://maven.apache.org/POM/4.0.0\">"
        + "<parent><artifactId>ringshift-parent</artifactId></parent><artifactId>" + artifactId + "</artifactId>"
        + "</project>");
    if (mainCode) {
      Files.createDirectories(dir.resolve("src/main/java"));
    }
  }
}
