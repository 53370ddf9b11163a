package io.ringshift.storage.internal.http;

import static java.nio.charset.StandardCharsets.UTF_8;

import io.ringshift.ring.RingRange;
import io.ringshift.storage.Change;
import io.ringshift.storage.Entry;
import io.ringshift.storage.Store;
import io.ringshift.storage.Version;
import io.ringshift.storage.WriteResult;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.util.Locale;

/**
 * The binary frames of scans, change feeds and applies (docs/storage.md, "Frames"). All integers are big endian.
 *
 * <pre>
 * frame  = length:u32 type:u8 body            length counts the type byte and the body
 * ENTRY  (1) = position:i64 keyLength:i32 key valueLength:i32 value    valueLength -1: a deletion, no value
 * CHANGE (2) = sequence:i64 ENTRY
 * END    (3) = count:i64                      the number of ENTRY or CHANGE frames before it
 * ERROR  (4) = status:i32 message:utf-8       the stream failed after it started; status as in HTTP
 * WRITE  (5) = epoch:i64 keyLength:i32 key valueLength:i32 value       a client write; valueLength -1: a delete
 * RESULT (6) = outcome:u8 fields                                       what one WRITE did, in the WRITEs' order
 *   outcome 0 APPLIED:            sequence:i64
 *   outcome 1 RETRY, fenced:       epoch:i64 start:i64 end:i64
 *   outcome 2 RETRY, not a replica: epoch:i64 start:i64 end:i64
 *   outcome 3 FAILED:             status:i32 codeLength:u8 code:ascii message:utf-8   as the single write's error
 * VERSIONED_ENTRY  (7) = version ENTRY body         version = millis:i64 logical:i32 writer:i64 (20 bytes)
 * VERSIONED_CHANGE (8) = sequence:i64 version ENTRY body
 * VERSIONED_WRITE  (9) = version WRITE body        a client write at the writer's own version
 * </pre>
 *
 * A node sends scans and feeds in VERSIONED frames (tombstones included) when the request asks for them with
 * {@code versions=1}, and in ENTRY and CHANGE frames (tombstones left out of scans) otherwise: what a client of
 * before versions reads. It accepts both kinds in request bodies; an unversioned ENTRY is of version 0, an
 * unversioned WRITE is stamped by the node.
 *
 * A stream ends with END or ERROR; a stream that stops without one was cut off.
 */
final class Frames {
  static final byte ENTRY = 1;
  static final byte CHANGE = 2;
  static final byte END = 3;
  static final byte ERROR = 4;
  static final byte WRITE = 5;
  static final byte RESULT = 6;
  static final byte VERSIONED_ENTRY = 7;
  static final byte VERSIONED_CHANGE = 8;
  static final byte VERSIONED_WRITE = 9;
  static final byte APPLIED = 0;
  static final byte RETRY_FENCED = 1;
  static final byte RETRY_NOT_A_REPLICA = 2;
  static final byte FAILED = 3;
  /** The largest frame: a change with a key and a value at their limits. */
  static final int MAX_FRAME = 1 + 8 + Version.BYTES + 8 + 4 + Store.MAX_KEY_BYTES + 4 + Store.MAX_VALUE_BYTES;
  private static final int MAX_MESSAGE_BYTES = 64 * 1024;

  private Frames() {}

  /** A stream or body that breaks the frame format; the message says where. */
  static final class MalformedFrameException extends IOException {
    MalformedFrameException(String message) {
      super(message);
    }
  }

  /** One decoded frame. */
  sealed interface Frame {}

  record EntryFrame(Entry entry) implements Frame {}

  record ChangeFrame(Change change) implements Frame {}

  record EndFrame(long count) implements Frame {}

  record ErrorFrame(int status, String message) implements Frame {}

  /** A client write of a batch: {@code value} null for a delete; {@code version} null for a node-stamped write. */
  record WriteFrame(long epoch, byte[] key, byte[] value, Version version) implements Frame {
    long size() {
      return key.length + (value == null ? 0 : value.length);
    }
  }

  /**
   * What one write of a batch did: {@code result} when it was answered, else the error the single write would have
   * answered ({@code status}, {@code code}, {@code message}).
   */
  record ResultFrame(WriteResult result, int status, String code, String message) implements Frame {}

  /** A WRITE, or a VERSIONED_WRITE when {@code version} is not null. */
  static void writeWrite(DataOutputStream out, long epoch, byte[] key, byte[] value, Version version)
      throws IOException {
    if (version == null) {
      writeEntry(out, new Entry(epoch, key, value), WRITE);
    } else {
      writeEntry(out, new Entry(epoch, key, value, version), VERSIONED_WRITE);
    }
  }

  static void writeResult(DataOutputStream out, WriteResult result) throws IOException {
    if (result instanceof WriteResult.Applied applied) {
      out.writeInt(1 + 1 + 8);
      out.writeByte(RESULT);
      out.writeByte(APPLIED);
      out.writeLong(applied.sequence());
    } else {
      WriteResult.RetryWithEpoch retry = (WriteResult.RetryWithEpoch) result;
      out.writeInt(1 + 1 + 24);
      out.writeByte(RESULT);
      out.writeByte(retry.reason() == WriteResult.Reason.FENCED ? RETRY_FENCED : RETRY_NOT_A_REPLICA);
      out.writeLong(retry.epoch());
      out.writeLong(retry.fencedRange().start());
      out.writeLong(retry.fencedRange().end());
    }
  }

  static void writeFailed(DataOutputStream out, int status, String code, String message) throws IOException {
    byte[] c = code.getBytes(java.nio.charset.StandardCharsets.US_ASCII);
    byte[] text = message.getBytes(UTF_8);
    int length = Math.min(text.length, MAX_MESSAGE_BYTES);
    out.writeInt(1 + 1 + 4 + 1 + c.length + length);
    out.writeByte(RESULT);
    out.writeByte(FAILED);
    out.writeInt(status);
    out.writeByte(c.length);
    out.write(c);
    out.write(text, 0, length);
  }

  /** An ENTRY, or a VERSIONED_ENTRY when {@code versioned}. */
  static void writeEntry(DataOutputStream out, Entry e, boolean versioned) throws IOException {
    writeEntry(out, e, versioned ? VERSIONED_ENTRY : ENTRY);
  }

  private static void writeEntry(DataOutputStream out, Entry e, byte type) throws IOException {
    boolean versioned = type >= VERSIONED_ENTRY;
    out.writeInt(1 + (versioned ? Version.BYTES : 0) + entryBodyLength(e));
    out.writeByte(type);
    if (versioned) {
      writeVersion(out, e.version());
    }
    writeEntryBody(out, e);
  }

  /** A CHANGE, or a VERSIONED_CHANGE when {@code versioned}. */
  static void writeChange(DataOutputStream out, Change c, boolean versioned) throws IOException {
    out.writeInt(1 + 8 + (versioned ? Version.BYTES : 0) + entryBodyLength(c.entry()));
    out.writeByte(versioned ? VERSIONED_CHANGE : CHANGE);
    out.writeLong(c.sequence());
    if (versioned) {
      writeVersion(out, c.entry().version());
    }
    writeEntryBody(out, c.entry());
  }

  private static void writeVersion(DataOutputStream out, Version v) throws IOException {
    out.writeLong(v.millis());
    out.writeInt(v.logical());
    out.writeLong(v.writer());
  }

  static void writeEnd(DataOutputStream out, long count) throws IOException {
    out.writeInt(1 + 8);
    out.writeByte(END);
    out.writeLong(count);
  }

  static void writeError(DataOutputStream out, int status, String message) throws IOException {
    byte[] text = message.getBytes(UTF_8);
    int length = Math.min(text.length, MAX_MESSAGE_BYTES);
    out.writeInt(1 + 4 + length);
    out.writeByte(ERROR);
    out.writeInt(status);
    out.write(text, 0, length);
  }

  private static int entryBodyLength(Entry e) {
    return 8 + 4 + e.key().length + 4 + (e.value() == null ? 0 : e.value().length);
  }

  private static void writeEntryBody(DataOutputStream out, Entry e) throws IOException {
    out.writeLong(e.position());
    out.writeInt(e.key().length);
    out.write(e.key());
    if (e.value() == null) {
      out.writeInt(-1);
    } else {
      out.writeInt(e.value().length);
      out.write(e.value());
    }
  }

  /** Reads frames one at a time; memory is one frame, at most {@link #MAX_FRAME} bytes. */
  static final class Reader {
    private final DataInputStream in;
    private long offset;

    Reader(InputStream in) {
      this.in = new DataInputStream(in);
    }

    /** The next frame, or null when the input ends cleanly between two frames. */
    Frame next() throws IOException {
      int first = in.read();
      if (first < 0) {
        return null;
      }
      long frameAt = offset;
      int length;
      byte type;
      try {
        length = (first << 24) | (in.readUnsignedByte() << 16) | (in.readUnsignedByte() << 8) | in.readUnsignedByte();
        if (length < 1 || length > MAX_FRAME) {
          throw malformed(frameAt, String.format(Locale.ROOT, "length %d is outside 1..%d", length & 0xFFFFFFFFL,
              MAX_FRAME));
        }
        type = in.readByte();
        offset += 5;
        Frame frame = switch (type) {
          case ENTRY -> new EntryFrame(entry(frameAt, length - 1));
          case CHANGE -> {
            long sequence = readLong(frameAt, length - 1, false);
            yield new ChangeFrame(new Change(sequence, entry(frameAt, length - 9)));
          }
          case END -> new EndFrame(readLong(frameAt, length - 1, true));
          case ERROR -> {
            if (length < 5) {
              throw malformed(frameAt, "an ERROR frame needs a status");
            }
            int status = in.readInt();
            byte[] message = in.readNBytes(length - 5);
            offset += length - 1;
            if (message.length < length - 5) {
              throw new EOFException();
            }
            yield new ErrorFrame(status, new String(message, UTF_8));
          }
          case WRITE -> {
            Entry e = entry(frameAt, length - 1);
            yield new WriteFrame(e.position(), e.key(), e.value(), null);
          }
          case VERSIONED_ENTRY -> {
            Version v = version(frameAt, length - 1);
            yield new EntryFrame(entry(frameAt, length - 1 - Version.BYTES).withVersion(v));
          }
          case VERSIONED_CHANGE -> {
            long sequence = readLong(frameAt, length - 1, false);
            Version v = version(frameAt, length - 9);
            yield new ChangeFrame(new Change(sequence, entry(frameAt, length - 9 - Version.BYTES).withVersion(v)));
          }
          case VERSIONED_WRITE -> {
            Version v = version(frameAt, length - 1);
            Entry e = entry(frameAt, length - 1 - Version.BYTES);
            yield new WriteFrame(e.position(), e.key(), e.value(), v);
          }
          case RESULT -> result(frameAt, length - 1);
          default -> throw malformed(frameAt, "unknown frame type " + type);
        };
        return frame;
      } catch (EOFException e) {
        throw malformed(frameAt, "the input ends inside the frame");
      }
    }

    /** Reads a version at the head of the rest of a frame body of {@code bodyLength} bytes. */
    private Version version(long frameAt, int bodyLength) throws IOException {
      if (bodyLength < Version.BYTES) {
        throw malformed(frameAt, "a body of " + bodyLength + " bytes has no room for a version");
      }
      long millis = in.readLong();
      int logical = in.readInt();
      long writer = in.readLong();
      offset += Version.BYTES;
      if (millis < 0 || logical < 0) {
        throw malformed(frameAt, "version (" + millis + " ms, logical " + logical + ") is negative");
      }
      return new Version(millis, logical, writer);
    }

    /** Reads a leading 8-byte field; {@code whole}: the field is the whole body. */
    private long readLong(long frameAt, int bodyLength, boolean whole) throws IOException {
      if (bodyLength < 8 || (whole && bodyLength != 8)) {
        throw malformed(frameAt, "a body of " + bodyLength + " bytes does not fit the frame's fields");
      }
      long v = in.readLong();
      offset += 8;
      return v;
    }

    private ResultFrame result(long frameAt, int bodyLength) throws IOException {
      if (bodyLength < 1) {
        throw malformed(frameAt, "a RESULT frame needs an outcome");
      }
      byte outcome = in.readByte();
      offset += 1;
      int rest = bodyLength - 1;
      switch (outcome) {
        case APPLIED -> {
          long sequence = readLong(frameAt, rest, true);
          return new ResultFrame(new WriteResult.Applied(sequence), 200, null, null);
        }
        case RETRY_FENCED, RETRY_NOT_A_REPLICA -> {
          if (rest != 24) {
            throw malformed(frameAt, "a RETRY result has an epoch and a range: 24 bytes, not " + rest);
          }
          long epoch = in.readLong();
          long start = in.readLong();
          long end = in.readLong();
          offset += 24;
          return new ResultFrame(new WriteResult.RetryWithEpoch(epoch, RingRange.of(start, end),
              outcome == RETRY_FENCED ? WriteResult.Reason.FENCED : WriteResult.Reason.NOT_A_REPLICA), 409, null, null);
        }
        case FAILED -> {
          if (rest < 5) {
            throw malformed(frameAt, "a FAILED result needs a status and a code length");
          }
          int status = in.readInt();
          int codeLength = in.readUnsignedByte();
          if (codeLength > rest - 5) {
            throw malformed(frameAt, "code length " + codeLength + " does not fit the frame");
          }
          byte[] code = in.readNBytes(codeLength);
          byte[] message = in.readNBytes(rest - 5 - codeLength);
          if (code.length < codeLength || message.length < rest - 5 - codeLength) {
            throw new EOFException();
          }
          offset += rest;
          return new ResultFrame(null, status, new String(code, java.nio.charset.StandardCharsets.US_ASCII),
              new String(message, UTF_8));
        }
        default -> throw malformed(frameAt, "unknown result outcome " + outcome);
      }
    }

    private Entry entry(long frameAt, int bodyLength) throws IOException {
      if (bodyLength < 16) {
        throw malformed(frameAt, "an entry needs a position, a key length and a value length");
      }
      long position = in.readLong();
      int keyLength = in.readInt();
      if (keyLength < 0 || keyLength > bodyLength - 16) {
        throw malformed(frameAt, "key length " + keyLength + " does not fit the frame");
      }
      byte[] key = new byte[keyLength];
      in.readFully(key);
      int valueLength = in.readInt();
      int rest = bodyLength - 16 - keyLength;
      if (valueLength == -1 ? rest != 0 : valueLength != rest) {
        throw malformed(frameAt, "value length " + valueLength + " does not match the frame (" + rest
            + " bytes left)");
      }
      byte[] value = null;
      if (valueLength >= 0) {
        value = new byte[valueLength];
        in.readFully(value);
      }
      offset += bodyLength;
      return new Entry(position, key, value);
    }

    private static MalformedFrameException malformed(long at, String what) {
      return new MalformedFrameException("malformed frame at byte " + at + ": " + what);
    }
  }
}
