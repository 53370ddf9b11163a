package io.ringshift.storage.internal.http;

import io.ringshift.storage.StoreException;
import io.ringshift.storage.Version;
import java.util.HexFormat;
import java.util.Locale;

/** Names and encodings shared by the node's server and its client (docs/storage.md, "The HTTP API"). */
final class HttpApi {
  static final String HEALTH = "/health";
  static final String KEYS = "/v1/keys/";
  static final String WRITES = "/v1/writes";
  /** Most writes one {@code POST /v1/writes} carries. */
  static final int MAX_WRITE_BATCH = 1024;
  /** Most key plus value bytes one {@code POST /v1/writes} carries (16 MiB). */
  static final long MAX_WRITE_BATCH_BYTES = 16L * 1024 * 1024;
  static final String SCAN = "/v1/scan";
  static final String CHANGES = "/v1/changes";
  /** Bytes of one range in the body of {@code POST /v1/changes}: start and end, 8 bytes each, big-endian. */
  static final int RANGE_BYTES = 16;
  static final String APPLY = "/v1/apply";
  static final String LOAD = "/v1/load";
  static final String DIGEST = "/v1/digest";
  static final String FENCES = "/v1/fences";
  static final String RANGE = "/v1/range";

  static final String FRAMES_TYPE = "application/x-ringshift-frames";
  static final String JSON_TYPE = "application/json; charset=utf-8";
  static final String BYTES_TYPE = "application/octet-stream";
  static final String SEQUENCE_HEADER = "Ringshift-Sequence";
  static final String UP_TO_HEADER = "Ringshift-Up-To";

  /** The {@code error} field of a JSON error body, one per outcome a client tells apart. */
  static final String BAD_REQUEST = "bad-request";
  static final String RETRY_WITH_EPOCH = "retry-with-epoch";
  /** The {@code reason} of a retry-with-epoch answer; an answer without one (an older node) is a fence's. */
  static final String REASON_FENCED = "fenced";
  static final String REASON_NOT_A_REPLICA = "not-a-replica";
  static final String FEED_UNAVAILABLE = "feed-unavailable";
  static final String REFUSED = "refused";
  static final String EPOCH_AHEAD = "epoch-ahead";
  static final String UNAVAILABLE = "unavailable";
  static final String NO_SUCH_KEY = "no-such-key";
  static final String UNKNOWN_PATH = "unknown-path";
  /** An admin endpoint asked on the client port. */
  static final String ADMIN_ENDPOINT = "admin-endpoint";
  /** An admin listener's answer to a request without the right secret. */
  static final String UNAUTHORIZED = "unauthorized";
  static final String METHOD_NOT_ALLOWED = "method-not-allowed";
  static final String STORE_ERROR = "store-error";
  static final String INTERNAL = "internal";

  private HttpApi() {}

  /** A ring position as the API writes it: 16 lower-case hex digits. */
  static String position(long position) {
    return String.format(Locale.ROOT, "%016x", position);
  }

  /** Reads a ring position: 1 to 16 hex digits, an unsigned 64-bit number. */
  static long parsePosition(String name, String text) {
    if (text == null || text.isEmpty() || text.length() > 16 || !isHex(text)) {
      throw new StoreException.BadRequest(name + " '" + shorten(text) + "' is not a ring position; give 1 to 16 "
          + "hex digits");
    }
    return Long.parseUnsignedLong(text, 16);
  }

  /** Reads a signed decimal number (the store checks its range and names the rule). */
  static long parseNumber(String name, String text) {
    try {
      return Long.parseLong(text);
    } catch (NumberFormatException e) {
      throw new StoreException.BadRequest(name + " '" + shorten(text) + "' is not a number; give a decimal integer");
    }
  }

  /** A version as a query parameter: {@code millis.logical.writer}, the writer as 16 hex digits. */
  static String versionText(Version v) {
    return v.millis() + "." + v.logical() + "." + String.format("%016x", v.writer());
  }

  /** Reads {@link #versionText}; null for an absent parameter (a write the node stamps). */
  static Version parseVersion(String text) {
    if (text == null) {
      return null;
    }
    String[] parts = text.split("\\.", -1);
    if (parts.length == 3 && parts[2].length() == 16 && isHex(parts[2])) {
      try {
        return new Version(Long.parseLong(parts[0]), Integer.parseInt(parts[1]), Long.parseUnsignedLong(parts[2], 16));
      } catch (IllegalArgumentException e) {
        // named below
      }
    }
    throw new StoreException.BadRequest("version '" + shorten(text) + "' is not MILLIS.LOGICAL.WRITER (two "
        + "non-negative decimal numbers and 16 hex digits)");
  }

  /** Reads bytes written as hex (an even number of hex digits; empty for no bytes). */
  static byte[] parseHex(String name, String text) {
    if (text.length() % 2 != 0 || !isHex(text)) {
      throw new StoreException.BadRequest(name + " '" + shorten(text) + "' is not hex; give an even number of hex "
          + "digits (two per byte)");
    }
    return HexFormat.of().parseHex(text);
  }

  private static boolean isHex(String text) {
    for (int i = 0; i < text.length(); i++) {
      if (Character.digit(text.charAt(i), 16) < 0) {
        return false;
      }
    }
    return true;
  }

  static String shorten(String text) {
    if (text == null) {
      return "";
    }
    return text.length() > 40 ? text.substring(0, 40) + "..." : text;
  }
}
