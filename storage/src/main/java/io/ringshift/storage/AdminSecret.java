package io.ringshift.storage;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.util.Base64;
import java.util.Set;

/**
 * The shared secret of a node's admin listener (docs/storage.md, "Two listeners"): the migration and admin endpoints
 * answer only a request that carries it as {@code Authorization: Bearer <secret>}. One secret is shared by the
 * nodes of a fleet and the workers that drive them; it is kept in a file, never given on a command line (where
 * {@code ps} would show it).
 *
 * <p>A secret is 16 to 512 printable ASCII characters without spaces. {@link #generate()} draws 32 random bytes
 * (base64url, 43 characters). Its {@link #toString()} never shows it.
 */
public final class AdminSecret {
  /** The fewest characters a secret may have. */
  public static final int MIN_LENGTH = 16;
  /** The most characters a secret may have. */
  public static final int MAX_LENGTH = 512;

  private static final SecureRandom RANDOM = new SecureRandom();

  private final byte[] value;

  private AdminSecret(byte[] value) {
    this.value = value;
  }

  /**
   * A secret from its text.
   *
   * @throws IllegalArgumentException when it is shorter than {@value #MIN_LENGTH} or longer than {@value #MAX_LENGTH}
   *     characters, or holds a character that is not printable ASCII or a space (the message says which rule, never
   *     the secret)
   */
  public static AdminSecret of(String text) {
    if (text == null || text.length() < MIN_LENGTH || text.length() > MAX_LENGTH) {
      throw new IllegalArgumentException("the admin secret has " + (text == null ? 0 : text.length())
          + " characters; it must have " + MIN_LENGTH + " to " + MAX_LENGTH + " (a node writes one of 32 random bytes "
          + "in base64url when none is given)");
    }
    for (int i = 0; i < text.length(); i++) {
      char c = text.charAt(i);
      if (c <= ' ' || c > '~') {
        throw new IllegalArgumentException("the admin secret holds a character that is not printable ASCII (code "
            + (int) c + " at position " + (i + 1) + "); it must be printable ASCII without spaces");
      }
    }
    return new AdminSecret(text.getBytes(StandardCharsets.US_ASCII));
  }

  /** A new random secret: 32 bytes from {@link SecureRandom}, base64url without padding. */
  public static AdminSecret generate() {
    byte[] bytes = new byte[32];
    RANDOM.nextBytes(bytes);
    return of(Base64.getUrlEncoder().withoutPadding().encodeToString(bytes));
  }

  /**
   * Reads a secret file: its text with surrounding whitespace (a trailing newline) removed.
   *
   * @throws IllegalArgumentException when the file cannot be read or does not hold a valid secret; the message
   *     names the file and the rule
   */
  public static AdminSecret read(Path file) {
    String text;
    try {
      text = Files.readString(file, StandardCharsets.US_ASCII).strip();
    } catch (IOException e) {
      throw new IllegalArgumentException("cannot read the admin secret file " + file + ": " + e.getMessage(), e);
    }
    try {
      return of(text);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException("admin secret file " + file + ": " + e.getMessage(), e);
    }
  }

  /**
   * The secret in {@code file}, or a new one written there (owner read/write only where the file system has POSIX
   * permissions) when the file does not exist.
   *
   * @throws IllegalArgumentException as {@link #read}, or when the new file cannot be written
   */
  public static AdminSecret readOrCreate(Path file) {
    if (Files.exists(file)) {
      return read(file);
    }
    AdminSecret secret = generate();
    try {
      if (file.toAbsolutePath().getParent() != null) {
        Files.createDirectories(file.toAbsolutePath().getParent());
      }
      try {
        Set<PosixFilePermission> ownerOnly = PosixFilePermissions.fromString("rw-------");
        Files.createFile(file, PosixFilePermissions.asFileAttribute(ownerOnly));
      } catch (UnsupportedOperationException e) {
        Files.createFile(file);
      }
      Files.writeString(file, secret.text() + "\n", StandardCharsets.US_ASCII);
    } catch (FileAlreadyExistsException e) {
      return read(file); // written meanwhile by another process: use that one
    } catch (IOException e) {
      throw new IllegalArgumentException("cannot write a new admin secret to " + file + ": " + e.getMessage(), e);
    }
    return secret;
  }

  /** The value of the {@code Authorization} header that carries this secret. */
  public String authorization() {
    return "Bearer " + text();
  }

  /** Whether {@code header} (an {@code Authorization} header, or null) carries this secret; constant time. */
  public boolean matches(String header) {
    if (header == null || !header.startsWith("Bearer ")) {
      return false;
    }
    return MessageDigest.isEqual(value, header.substring("Bearer ".length()).getBytes(StandardCharsets.US_ASCII));
  }

  private String text() {
    return new String(value, StandardCharsets.US_ASCII);
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof AdminSecret other && MessageDigest.isEqual(value, other.value);
  }

  @Override
  public int hashCode() {
    return value.length;
  }

  @Override
  public String toString() {
    return "AdminSecret[" + value.length + " characters, not shown]";
  }
}
