package io.ringshift.storage.internal;

import io.ringshift.ring.RingRange;
import io.ringshift.storage.Entry;
import io.ringshift.storage.Store;
import io.ringshift.storage.StoreException;
import io.ringshift.storage.Version;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;

/**
 * The store's input rules, one place for every engine and for the network layer, so a rule is worded the same
 * wherever it is broken. Each check throws {@link StoreException.BadRequest} naming the value and the rule.
 */
public final class Checks {
  /** How many leading bytes of a key a message shows. */
  private static final int PREVIEW_BYTES = 16;

  private Checks() {}

  public static void key(byte[] key) {
    key("key", key);
  }

  static void key(String what, byte[] key) {
    if (key == null) {
      throw new StoreException.BadRequest(what + " is missing; a key must be 1 to " + Store.MAX_KEY_BYTES + " bytes");
    }
    if (key.length == 0) {
      throw new StoreException.BadRequest(what + " is empty (0 bytes); a key must be 1 to " + Store.MAX_KEY_BYTES
          + " bytes");
    }
    if (key.length > Store.MAX_KEY_BYTES) {
      throw new StoreException.BadRequest(String.format(Locale.ROOT, "%s %s is %d bytes; a key must be 1 to %d bytes",
          what, preview(key), key.length, Store.MAX_KEY_BYTES));
    }
  }

  public static void value(byte[] value) {
    value("value", value);
  }

  static void value(String what, byte[] value) {
    if (value == null) {
      throw new StoreException.BadRequest(what + " is missing; a put needs a value (delete removes a key)");
    }
    if (value.length > Store.MAX_VALUE_BYTES) {
      throw valueTooLarge(what, Long.toString(value.length));
    }
  }

  /** The refusal of a value of {@code length} bytes (a number, or "more than N" for a body cut short). */
  public static StoreException.BadRequest valueTooLarge(String what, String length) {
    return new StoreException.BadRequest(String.format(Locale.ROOT, "%s is %s bytes; a value must be at most %d bytes",
        what, length, Store.MAX_VALUE_BYTES));
  }

  /** Checks a client put the node stamps. */
  public static void put(byte[] key, byte[] value, long epoch) {
    key(key);
    value(value);
    epoch(epoch);
  }

  /** Checks a client put at the writer's {@code version}. */
  public static void put(byte[] key, byte[] value, long epoch, Version version) {
    put(key, value, epoch);
    version(version);
  }

  /** Checks a client delete the node stamps. */
  public static void delete(byte[] key, long epoch) {
    key(key);
    epoch(epoch);
  }

  /** Checks a client delete at the writer's {@code version}. */
  public static void delete(byte[] key, long epoch, Version version) {
    delete(key, epoch);
    version(version);
  }

  /** Refuses a missing version, and {@link Version#ZERO}: a writer that sends a version stamps it from its clock. */
  public static void version(Version version) {
    if (version == null) {
      throw new StoreException.BadRequest("version is missing; a versioned write needs one (a write without a "
          + "version is stamped by the node)");
    }
    if (!version.isAfter(Version.ZERO)) {
      throw new StoreException.BadRequest("version " + version + " is version 0, which only entries written before "
          + "versions have; a writer stamps its writes from a hybrid clock");
    }
  }

  public static void epoch(long epoch) {
    if (epoch < 0) {
      throw new StoreException.BadRequest("epoch " + epoch + " is negative; an epoch must be >= 0");
    }
  }

  public static void sequence(String name, long sequence) {
    if (sequence < 0) {
      throw new StoreException.BadRequest(name + " " + sequence + " is negative; a sequence number must be >= 0");
    }
  }

  public static void range(RingRange range) {
    if (range == null) {
      throw new StoreException.BadRequest("range is missing; give a ring range (start, end]");
    }
  }

  /** Checks the ranges of a change feed of several ranges: 1 to {@link Store#MAX_FEED_RANGES}, none missing. */
  public static void ranges(List<RingRange> ranges) {
    if (ranges == null || ranges.isEmpty()) {
      throw new StoreException.BadRequest("ranges are missing; give 1 to " + Store.MAX_FEED_RANGES
          + " ring ranges (start, end]");
    }
    if (ranges.size() > Store.MAX_FEED_RANGES) {
      throw new StoreException.BadRequest(ranges.size() + " ranges; a change feed follows at most "
          + Store.MAX_FEED_RANGES + " ranges: open several feeds");
    }
    for (int i = 0; i < ranges.size(); i++) {
      if (ranges.get(i) == null) {
        throw new StoreException.BadRequest("range " + i + " is missing; give a ring range (start, end]");
      }
    }
  }

  public static void cursor(RingRange range, Store.Cursor after) {
    if (after == null) {
      return;
    }
    if (after.key() == null) {
      throw new StoreException.BadRequest("cursor key is missing; a cursor is a position and a key (empty for "
          + "every key at the position)");
    }
    if (after.key().length > Store.MAX_KEY_BYTES) {
      throw new StoreException.BadRequest(String.format(Locale.ROOT,
          "cursor key %s is %d bytes; a cursor key must be 0 to %d bytes", preview(after.key()), after.key().length,
          Store.MAX_KEY_BYTES));
    }
    if (!range.contains(after.position())) {
      throw new StoreException.BadRequest(String.format(Locale.ROOT,
          "cursor position %016x is outside the scanned range %s; a scan resumes inside its own range",
          after.position(), range));
    }
  }

  /** Checks a whole apply batch before anything is written. */
  public static void entries(List<Entry> entries) {
    present(entries);
    if (entries.size() > Store.MAX_APPLY_ENTRIES) {
      throw applyTooMany(Integer.toString(entries.size()));
    }
    long bytes = 0;
    for (int i = 0; i < entries.size(); i++) {
      Entry e = entries.get(i);
      key("entry " + i + ": key", e.key());
      if (e.value() != null && e.value().length > Store.MAX_VALUE_BYTES) {
        value("entry " + i + ": value", e.value());
      }
      position(i, e);
      bytes += e.size();
      if (bytes > Store.MAX_APPLY_BYTES) {
        throw applyTooLarge(i, bytes);
      }
    }
  }

  /** Checks only that a batch and its entries are there (what a client needs before it can send them). */
  public static void present(List<Entry> entries) {
    if (entries == null) {
      throw new StoreException.BadRequest("entries are missing; apply takes a list of entries (it may be empty)");
    }
    for (int i = 0; i < entries.size(); i++) {
      if (entries.get(i) == null) {
        throw new StoreException.BadRequest("entry " + i + " is null; apply takes entries with a key");
      }
    }
  }

  public static StoreException.BadRequest applyTooMany(String count) {
    return new StoreException.BadRequest(String.format(Locale.ROOT,
        "apply of %s entries; a batch must have at most %d entries: split it", count, Store.MAX_APPLY_ENTRIES));
  }

  /** The refusal of a batch whose entry {@code index} brings its key and value bytes to {@code bytes}. */
  public static StoreException.BadRequest applyTooLarge(int index, long bytes) {
    return new StoreException.BadRequest(String.format(Locale.ROOT,
        "apply of more than %d key and value bytes (entry %d reaches %d); a batch must carry at most %d bytes: "
            + "split it", Store.MAX_APPLY_BYTES, index, bytes, Store.MAX_APPLY_BYTES));
  }

  /** The refusal of a load whose entry {@code index} brings its key and value bytes to {@code bytes}. */
  public static StoreException.BadRequest loadTooLarge(long index, long bytes) {
    return new StoreException.BadRequest(String.format(Locale.ROOT,
        "load of more than %d key and value bytes (entry %d reaches %d); a load must carry at most %d bytes: "
            + "load the range in chunks", Store.MAX_LOAD_BYTES, index, bytes, Store.MAX_LOAD_BYTES));
  }

  /** Checks entry {@code index} of a load as {@link #entries} checks an apply's, and refuses a deletion. */
  public static void loadEntry(long index, Entry e) {
    if (e == null) {
      throw new StoreException.BadRequest("entry " + index + " of a load is null; a load takes entries with a key");
    }
    key("entry " + index + ": key", e.key());
    if (e.isDeletion() && !e.version().isAfter(Version.ZERO)) {
      throw new StoreException.BadRequest("entry " + index + " of a load is a deletion of " + preview(e.key())
          + " of version 0; a load carries the values and tombstones of a snapshot copy, which have versions "
          + "(apply range deletions)");
    }
    if (!e.isDeletion() && e.value().length > Store.MAX_VALUE_BYTES) {
      value("entry " + index + ": value", e.value());
    }
    position(index, e);
  }

  /** Refuses entry {@code index} when its position is not its key's ring position. */
  private static void position(long index, Entry e) {
    long expected = Entry.positionOf(e.key());
    if (expected != e.position()) {
      throw new StoreException.BadRequest(String.format(Locale.ROOT,
          "entry %d: position %016x is not the ring position %016x of key %s; an entry's position is the "
              + "XXH3-64 of its key (copy entries as a scan returns them)", index, e.position(), expected,
          preview(e.key())));
    }
  }

  /** A short hex rendering of a key for messages: its first bytes, then an ellipsis. */
  public static String preview(byte[] key) {
    HexFormat hex = HexFormat.of();
    if (key.length <= PREVIEW_BYTES) {
      return "0x" + hex.formatHex(key);
    }
    return "0x" + hex.formatHex(key, 0, PREVIEW_BYTES) + "...";
  }
}
