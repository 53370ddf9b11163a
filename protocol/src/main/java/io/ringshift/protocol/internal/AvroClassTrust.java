package io.ringshift.protocol.internal;

import org.apache.avro.util.ClassSecurityValidator;
import org.apache.avro.util.ClassSecurityValidator.ClassSecurityPredicate;

/**
 * Lets Avro 1.12 instantiate ringshift's generated record classes.
 *
 * <p>Avro 1.12.2 refuses to load a generated class from a package it does not trust ({@code SecurityException:
 * Forbidden ...}) unless the application sets the {@code org.apache.avro.SERIALIZABLE_PACKAGES} system property.
 * Asking every user of the library to set a property is a trap, so the serde installs the trust itself, once
 * per class loader, the first time it is used. It <em>adds</em> exactly the generated package to whatever
 * predicate is installed (composing with it), so it never trusts anything else and never undoes a stricter or
 * wider policy that the application chose. An application that later replaces the global predicate outright
 * must include {@link #GENERATED_PACKAGE} in it; decoding then fails with a message saying so.
 */
public final class AvroClassTrust {
  /** The package of the classes generated from {@code protocol/src/main/avro}. */
  public static final String GENERATED_PACKAGE = "io.ringshift.schemas.avro";

  private AvroClassTrust() {}

  /** Installs the trust if it is not installed yet; cheap and idempotent. */
  public static void ensureInstalled() {
    Holder.touch();
  }

  /** True when Avro's current global predicate trusts the generated classes. */
  public static boolean isInstalled() {
    return ClassSecurityValidator.getGlobal().isTrusted(io.ringshift.schemas.avro.RingSnapshot.class);
  }

  static boolean isGenerated(Class<?> type) {
    Package p = type.getPackage();
    return p != null && p.getName().equals(GENERATED_PACKAGE);
  }

  // Class initialisation runs exactly once and is thread-safe, which makes the install idempotent for free.
  private static final class Holder {
    static {
      ClassSecurityPredicate existing = ClassSecurityValidator.getGlobal();
      if (!existing.isTrusted(io.ringshift.schemas.avro.RingSnapshot.class)) {
        ClassSecurityValidator.setGlobal(
            ClassSecurityValidator.composite(existing, AvroClassTrust::isGenerated));
      }
    }

    static void touch() {
      // Referencing the class is what runs the static initialiser above.
    }
  }
}
