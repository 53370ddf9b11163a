package io.ringshift.storage.internal.http;

import static java.nio.charset.StandardCharsets.UTF_8;

import io.ringshift.storage.Change;
import io.ringshift.storage.Entry;
import io.ringshift.storage.Store;
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
 * </pre>
 *
 * A stream ends with END or ERROR; a stream that stops without one was cut off.
 */
final class Frames {
  static final byte ENTRY = 1;
  static final byte CHANGE = 2;
  static final byte END = 3;
  static final byte ERROR = 4;
  /** The largest frame: a change with a key and a value at their limits. */
  static final int MAX_FRAME = 1 + 8 + 8 + 4 + Store.MAX_KEY_BYTES + 4 + Store.MAX_VALUE_BYTES;
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

  static void writeEntry(DataOutputStream out, Entry e) throws IOException {
    out.writeInt(1 + entryBodyLength(e));
    out.writeByte(ENTRY);
    writeEntryBody(out, e);
  }

  static void writeChange(DataOutputStream out, Change c) throws IOException {
    out.writeInt(1 + 8 + entryBodyLength(c.entry()));
    out.writeByte(CHANGE);
    out.writeLong(c.sequence());
    writeEntryBody(out, c.entry());
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
          default -> throw malformed(frameAt, "unknown frame type " + type);
        };
        return frame;
      } catch (EOFException e) {
        throw malformed(frameAt, "the input ends inside the frame");
      }
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
