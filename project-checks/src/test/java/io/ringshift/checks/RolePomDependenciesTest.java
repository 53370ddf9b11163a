package io.ringshift.checks;

import static org.assertj.core.api.Assertions.assertThat;

import io.ringshift.checks.BuildLayout.Dependency;
import io.ringshift.checks.BuildLayout.ModuleId;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Roles do not depend on roles, checked in the POMs as well as in the classes: a role module
 * ({@link BuildLayout#ROLES}: orchestrator, migration-worker, snapshot-publisher, health-manager) and the storage library
 * ({@link BuildLayout#ROLE_FREE_LIBRARIES}) may not list another role's artifact as a dependency, in any scope (a
 * test dependency on a role still builds one role against another's code), anywhere in the POM.
 *
 * <p>Why storage is not a role here: {@code migration-worker} depends on {@code ringshift-storage}, and what it
 * imports from it is the storage SPI and its client side only ({@code Store}, {@code RemoteStore}, {@code Entry},
 * {@code Change}, {@code ChangeFeed}, {@code Fence}, {@code RangeDigest}, {@code RangeScan},
 * {@code StoreException}). The module is both the storage node and the data-plane library the roles drive stores
 * through, so roles may depend on it, while it may depend on no role; the node's server side ({@code NodeServer},
 * {@code RocksStore}, {@code OwnershipCheckedStore}, {@code RingView}) is kept to the CLI by
 * {@link ArchitectureTest#STORAGE_SERVER_SIDE_IS_RUN_ONLY_BY_THE_CLI}.
 */
class RolePomDependenciesTest {
  static final String RULE = "a role (orchestrator, migration-worker, snapshot-publisher, health-manager) and the "
      + "storage library depend on no other role, in any scope: roles talk through the topics of protocol, so move "
      + "what they share into ring, protocol or storage's SPI; only the CLI, system-tests and benchmarks combine roles";

  @Test
  void shouldKeepEveryRolePomAndTheStoragePomFreeOfOtherRoles() {
    assertThat(violations(BuildLayout.repositoryRoot())).isEmpty();
  }

  @Test
  void shouldCheckEveryRoleAndLibraryModuleOfTheBuild() {
    // A renamed module would otherwise leave its POM unchecked without a word.
    assertThat(BuildLayout.modules(BuildLayout.repositoryRoot().resolve("pom.xml")))
        .containsAll(checked().stream().map(ModuleId::module).toList());
  }

  @Test
  void rejectsARolePomThatListsAnotherRoleEvenInTheTestScope(@TempDir Path root) throws IOException {
    writeBuild(root);
    writePom(root, "migration-worker", "ringshift-migration-worker",
        dependency("ringshift-storage", null) + dependency("ringshift-orchestrator", "test"));

    assertThat(violations(root)).singleElement().asString()
        .contains("migration-worker/pom.xml", "io.ringshift:ringshift-orchestrator", "scope test", RULE);
  }

  @Test
  void rejectsTheStoragePomListingARole(@TempDir Path root) throws IOException {
    writeBuild(root);
    writePom(root, "storage", "ringshift-storage", dependency("ringshift-snapshot-publisher", null));

    assertThat(violations(root)).singleElement().asString()
        .contains("storage/pom.xml", "io.ringshift:ringshift-snapshot-publisher", "scope compile", RULE);
  }

  @Test
  void shouldLetRolesUseTheStorageLibraryAndTheCliCombineRoles(@TempDir Path root) throws IOException {
    writeBuild(root);
    writePom(root, "migration-worker", "ringshift-migration-worker", dependency("ringshift-storage", null));
    writePom(root, "cli", "ringshift-cli", dependency("ringshift-orchestrator", null)
        + dependency("ringshift-migration-worker", null) + dependency("ringshift-snapshot-publisher", null));

    assertThat(violations(root)).isEmpty();
  }

  /** One message per forbidden dependency: the POM, the dependency and the rule. */
  static List<String> violations(Path root) {
    List<String> problems = new ArrayList<>();
    for (String module : BuildLayout.modules(root.resolve("pom.xml"))) {
      ModuleId own = checked().stream().filter(role -> role.module().equals(module)).findFirst().orElse(null);
      Path pom = root.resolve(module).resolve("pom.xml");
      if (own == null || !Files.isRegularFile(pom)) {
        continue;
      }
      Set<String> forbidden = BuildLayout.ROLES.stream().map(ModuleId::artifactId)
          .filter(artifactId -> !artifactId.equals(own.artifactId())).collect(Collectors.toSet());
      for (Dependency dependency : BuildLayout.dependencies(pom)) {
        if (isRingshift(dependency) && forbidden.contains(dependency.artifactId())) {
          problems.add(root.relativize(pom) + " lists " + BuildLayout.GROUP_ID + ":" + dependency.artifactId()
              + " (scope " + (dependency.scope().isEmpty() ? "compile" : dependency.scope()) + "): " + RULE);
        }
      }
    }
    return problems;
  }

  private static List<ModuleId> checked() {
    return Stream.concat(BuildLayout.ROLES.stream(), BuildLayout.ROLE_FREE_LIBRARIES.stream()).toList();
  }

  private static boolean isRingshift(Dependency dependency) {
    return dependency.groupId().equals(BuildLayout.GROUP_ID) || dependency.groupId().equals("${project.groupId}");
  }

  private static void writeBuild(Path root) throws IOException {
    Files.writeString(root.resolve("pom.xml"), "<project xmlns=\"http://maven.apache.org/POM/4.0.0\">"
        + "<artifactId>ringshift-parent</artifactId><modules><module>storage</module>"
        + "<module>migration-worker</module><module>cli</module></modules></project>");
  }

  private static void writePom(Path root, String module, String artifactId, String dependencies)
      throws IOException {
    Path dir = Files.createDirectories(root.resolve(module));
    Files.writeString(dir.resolve("pom.xml"), "<project xmlns=\"http://maven.apache.org/POM/4.0.0\">"
        + "<parent><artifactId>ringshift-parent</artifactId></parent><artifactId>" + artifactId + "</artifactId>"
        + "<dependencies>" + dependencies + "</dependencies></project>");
  }

  private static String dependency(String artifactId, String scope) {
    return "<dependency><groupId>io.ringshift</groupId><artifactId>" + artifactId + "</artifactId>"
        + (scope == null ? "" : "<scope>" + scope + "</scope>") + "</dependency>";
  }
}
