package io.ringshift.protocol;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.MessageDigest;
import java.security.PrivateKey;
import java.security.PublicKey;
import java.security.SecureRandom;
import java.security.Signature;
import java.security.spec.NamedParameterSpec;
import java.security.spec.PKCS8EncodedKeySpec;
import java.security.spec.X509EncodedKeySpec;
import java.util.Base64;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The publisher's Ed25519 key pair (the JDK's own implementation, no provider needed). Stored as one PEM file
 * holding a {@code PRIVATE KEY} block (PKCS#8) and a {@code PUBLIC KEY} block (X.509), because the JDK cannot
 * derive an Ed25519 public key from a PKCS#8 private key; clients trust the public key alone, as a PEM file with
 * just the {@code PUBLIC KEY} block ({@link TrustedKeys}).
 *
 * <p>A key is named by {@link #id()}, {@code ed25519:} and the first 8 bytes of the SHA-256 of the public key's
 * X.509 encoding in hex, so keys can rotate: a snapshot carries the id of the key that signed it, and a client
 * trusting several keys picks the right one.
 */
public final class SigningKey {
  /** The JCA algorithm name. */
  public static final String ALGORITHM = "Ed25519";

  private static final Pattern PEM = Pattern.compile(
      "-----BEGIN ([A-Z ]+)-----\\s*([A-Za-z0-9+/=\\s]+?)\\s*-----END \\1-----");

  private final PrivateKey privateKey;
  private final PublicKey publicKey;
  private final String id;

  private SigningKey(PrivateKey privateKey, PublicKey publicKey) {
    this.privateKey = Objects.requireNonNull(privateKey, "privateKey");
    this.publicKey = Objects.requireNonNull(publicKey, "publicKey");
    this.id = keyId(publicKey);
  }

  /** A new random key pair. */
  public static SigningKey generate() {
    try {
      KeyPair pair = KeyPairGenerator.getInstance(ALGORITHM).generateKeyPair();
      return new SigningKey(pair.getPrivate(), pair.getPublic());
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("this JDK has no " + ALGORITHM + " key pair generator", e);
    }
  }

  /**
   * A key pair drawn from {@code random}: the same random source in the same state gives the same key. For the
   * deterministic simulation (its scenarios sign with a key every run derives alike); anything real uses
   * {@link #generate()}.
   */
  public static SigningKey generate(SecureRandom random) {
    try {
      KeyPairGenerator generator = KeyPairGenerator.getInstance(ALGORITHM);
      generator.initialize(NamedParameterSpec.ED25519, random);
      KeyPair pair = generator.generateKeyPair();
      return new SigningKey(pair.getPrivate(), pair.getPublic());
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("this JDK has no " + ALGORITHM + " key pair generator", e);
    }
  }

  /**
   * Reads a key file written by {@link #write}.
   *
   * @throws IllegalArgumentException naming the file when it is missing a block, is not PEM, or holds a key
   *     that is not Ed25519 or a public key that does not match the private key
   * @throws IOException when the file cannot be read
   */
  public static SigningKey read(Path file) throws IOException {
    Map<String, byte[]> blocks = pemBlocks(file, Files.readString(file, StandardCharsets.US_ASCII));
    byte[] priv = blocks.get("PRIVATE KEY");
    byte[] pub = blocks.get("PUBLIC KEY");
    if (priv == null || pub == null) {
      throw new IllegalArgumentException("signing key file " + file + " must hold a PRIVATE KEY and a PUBLIC KEY "
          + "PEM block (as written by ringshift keygen or ringshift dev); it holds " + blocks.keySet());
    }
    SigningKey key;
    try {
      KeyFactory factory = KeyFactory.getInstance(ALGORITHM);
      key = new SigningKey(factory.generatePrivate(new PKCS8EncodedKeySpec(priv)),
          factory.generatePublic(new X509EncodedKeySpec(pub)));
    } catch (GeneralSecurityException e) {
      throw new IllegalArgumentException("signing key file " + file + " does not hold an Ed25519 key pair: "
          + e.getMessage(), e);
    }
    byte[] probe = "ringshift key check".getBytes(StandardCharsets.US_ASCII);
    if (!verify(key.publicKey, probe, key.sign(probe))) {
      throw new IllegalArgumentException("signing key file " + file + ": its PUBLIC KEY does not belong to its "
          + "PRIVATE KEY");
    }
    return key;
  }

  /**
   * Writes the key pair to {@code file} (owner read/write only where the file system supports it) and the public
   * key alone to {@code publicFile}, each atomically.
   */
  public void write(Path file, Path publicFile) throws IOException {
    String both = pem("PRIVATE KEY", privateKey.getEncoded()) + pem("PUBLIC KEY", publicKey.getEncoded());
    writeAtomically(file, both, true);
    writeAtomically(publicFile, publicPem(), false);
  }

  /** The public key as a PEM {@code PUBLIC KEY} block. */
  public String publicPem() {
    return pem("PUBLIC KEY", publicKey.getEncoded());
  }

  public PublicKey publicKey() {
    return publicKey;
  }

  /** {@code ed25519:} and 16 hex digits: the first 8 bytes of SHA-256 over the public key's X.509 encoding. */
  public String id() {
    return id;
  }

  /** Signs the bytes. */
  public byte[] sign(byte[] payload) {
    try {
      Signature s = Signature.getInstance(ALGORITHM);
      s.initSign(privateKey);
      s.update(payload);
      return s.sign();
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("cannot sign with key " + id + ": " + e.getMessage(), e);
    }
  }

  /** The id of a public key, as {@link #id()} defines it. */
  public static String keyId(PublicKey key) {
    try {
      byte[] digest = MessageDigest.getInstance("SHA-256").digest(key.getEncoded());
      return "ed25519:" + HexFormat.of().formatHex(digest, 0, 8);
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("this JDK has no SHA-256", e);
    }
  }

  /** Whether {@code signature} is a valid Ed25519 signature of {@code payload} by {@code key}. */
  static boolean verify(PublicKey key, byte[] payload, byte[] signature) {
    try {
      Signature s = Signature.getInstance(ALGORITHM);
      s.initVerify(key);
      s.update(payload);
      return s.verify(signature);
    } catch (java.security.SignatureException e) {
      return false;
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("cannot verify with key " + keyId(key) + ": " + e.getMessage(), e);
    }
  }

  /** The PEM blocks of a file by label; fails naming the file when there is none. */
  static Map<String, byte[]> pemBlocks(Path file, String text) {
    Map<String, byte[]> blocks = new LinkedHashMap<>();
    Matcher m = PEM.matcher(text);
    while (m.find()) {
      try {
        blocks.put(m.group(1), Base64.getMimeDecoder().decode(m.group(2)));
      } catch (IllegalArgumentException e) {
        throw new IllegalArgumentException("key file " + file + ": the " + m.group(1) + " block is not base64", e);
      }
    }
    if (blocks.isEmpty()) {
      throw new IllegalArgumentException("key file " + file + " holds no PEM block (-----BEGIN ...-----)");
    }
    return blocks;
  }

  private static String pem(String label, byte[] der) {
    return "-----BEGIN " + label + "-----\n" + Base64.getMimeEncoder(64, new byte[] {'\n'}).encodeToString(der)
        + "\n-----END " + label + "-----\n";
  }

  private static void writeAtomically(Path file, String text, boolean secret) throws IOException {
    AtomicFiles.write(file, text.getBytes(StandardCharsets.US_ASCII), secret);
  }

  @Override
  public String toString() {
    return "SigningKey{" + id + "}";
  }
}
